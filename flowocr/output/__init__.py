"""Output stage: subtitle and text writers, the streamed per-frame JSONL, the JSON report; all atomic."""

from flowocr.output.writers import (
    JsonlWriter,
    SrtEntry,
    atomic_write_text,
    format_ass_time,
    format_srt_time,
    format_vtt_time,
    parse_srt,
    read_srt,
    write_ass,
    write_json,
    write_srt,
    write_txt,
    write_vtt,
)

__all__ = [
    "JsonlWriter",
    "SrtEntry",
    "atomic_write_text",
    "format_ass_time",
    "format_srt_time",
    "format_vtt_time",
    "parse_srt",
    "read_srt",
    "write_ass",
    "write_json",
    "write_srt",
    "write_txt",
    "write_vtt",
]
