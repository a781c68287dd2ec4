"""Writers: subtitle formats, the streamed JSONL, atomic final files. No video needed."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowocr.cues import Cue, FrameText, frame_at_or_after
from flowocr.ocr.types import TextLine
from flowocr.output import (
    JsonlWriter,
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
from flowocr.output.writers import ass_text, srt_text

NTSC = Fraction(1001, 30000)  # one frame at 30000/1001 fps


def cue(start, end, text, box=(100.0, 300.0, 540.0, 330.0), track=0) -> Cue:
    return Cue(Fraction(start), Fraction(end), text, box, 0.9, track)


CUES = [
    cue("0.5", "2.002", "The train leaves at noon."),
    cue("2.002", "3.503", "欢迎观看本期节目\nWelcome to today's show", box=(100, 270, 540, 336)),
    cue("3.503", "3.903", "Caption", box=(200, 20, 440, 50), track=1),
]


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_srt_round_trips_cues_at_millisecond_precision(tmp_path):
    path = tmp_path / "out.srt"
    write_srt(CUES, path)
    assert read_srt(path) == [(c.start, c.end, c.text) for c in CUES]
    assert path.read_text(encoding="utf-8").startswith("1\n00:00:00,500 --> 00:00:02,002\nThe train leaves at noon.\n")


def test_srt_times_are_floored_so_they_name_the_same_frame():
    frames = [k * NTSC for k in range(60)]
    cues = [Cue(frames[16], frames[40], "Mind the gap", (0, 0, 1, 1), 0.9)]  # 0.53387 s .. 1.33467 s
    (entry,) = parse_srt(srt_text(cues))
    assert (entry.start, entry.end) == (Fraction("0.533"), Fraction("1.334"))
    assert frame_at_or_after(frames, entry.start) == 16  # rounding to nearest (0.534) would name frame 17
    assert frame_at_or_after(frames, entry.end) == 40


def test_a_cue_shorter_than_a_millisecond_still_ends_after_it_starts():
    (entry,) = parse_srt(srt_text([cue(Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10_000), "blink")]))
    assert (entry.start, entry.end) == (Fraction("0.333"), Fraction("0.334"))


@given(st.integers(0, 100 * 3_600_000 - 1))
def test_srt_and_vtt_time_formats_round_trip_every_millisecond(ms):
    text = f"1\n{format_srt_time(ms)} --> {format_vtt_time(ms + 1)}\nx\n"
    (entry,) = parse_srt(text)
    assert (entry.start, entry.end) == (Fraction(ms, 1000), Fraction(ms + 1, 1000))


@given(st.fractions(min_value=0, max_value=10_000), st.fractions(min_value=Fraction(1, 10**6), max_value=60))
def test_written_times_are_the_exact_times_floored_and_never_empty(start, length):
    (entry,) = parse_srt(srt_text([cue(start, start + length, "x")]))
    assert start - Fraction(1, 1000) < entry.start <= start
    assert entry.end > entry.start
    assert entry.end <= max(start + length, entry.start + Fraction(1, 1000))


def test_ass_time_format_is_hours_minutes_seconds_centiseconds():
    assert format_ass_time(0) == "0:00:00.00"
    assert format_ass_time(360_000 + 6000 + 100 + 7) == "1:01:01.07"
    assert format_srt_time(3_600_000 + 60_000 + 1000 + 7) == "01:01:01,007"


def test_vtt_has_its_header_dotted_times_and_escaped_text(tmp_path):
    path = tmp_path / "out.vtt"
    write_vtt([cue("1.25", "2.5", "a < b & c")], path)
    assert path.read_text(encoding="utf-8") == "WEBVTT\n\n00:00:01.250 --> 00:00:02.500\na &lt; b &amp; c\n"


def test_ass_has_the_frame_size_as_play_res_and_keeps_each_cue_where_it_was(tmp_path):
    path = tmp_path / "out.ass"
    write_ass(CUES, path, 640, 360)
    text = path.read_text(encoding="utf-8")
    assert "PlayResX: 640\n" in text and "PlayResY: 360\n" in text
    dialogues = [ln for ln in text.splitlines() if ln.startswith("Dialogue:")]
    assert len(dialogues) == 3
    assert dialogues[0].startswith("Dialogue: 0,0:00:00.50,0:00:02.00,Default,")
    assert "{\\an2\\pos(320,330)" in dialogues[0]  # bottom centre of its box
    assert dialogues[1].endswith("}欢迎观看本期节目\\NWelcome to today's show")
    assert dialogues[2].startswith("Dialogue: 1,") and "\\pos(320,50)" in dialogues[2]  # layer = track


def test_ass_text_cannot_open_override_blocks():
    (dialogue,) = [ln for ln in ass_text([cue(0, 1, "{\\b1}x\\Ny")], 640, 360).splitlines() if "Dialogue" in ln]
    body = dialogue.split("}", 1)[1]
    assert body == "\\{\\b1\\}x\\\u2060Ny"  # shows "{\\b1}x\\Ny" literally


def test_txt_has_one_paragraph_per_cue_in_start_order(tmp_path):
    path = tmp_path / "out.txt"
    write_txt(list(reversed(CUES)), path)
    assert path.read_text(encoding="utf-8") == (
        "The train leaves at noon.\n\n欢迎观看本期节目\nWelcome to today's show\n\nCaption\n"
    )


def frame(k: int, *texts: str) -> FrameText:
    lines = tuple(TextLine(t, 0.91, ((10, 20), (110, 20), (110, 50), (10, 50))) for t in texts)
    return FrameText(index=k, pts=k * 512, time=Fraction(k, 25), lines=lines, reused=k % 2 == 1)


def test_jsonl_lines_are_readable_while_the_writer_is_open_and_the_final_file_appears_at_close(tmp_path):
    path = tmp_path / "v.frames.jsonl"
    writer = JsonlWriter(path)
    writer.write(frame(0, "你好"))
    writer.write(frame(1))
    part = tmp_path / "v.frames.jsonl.part"
    records = [json.loads(ln) for ln in part.read_text(encoding="utf-8").splitlines()]
    assert not path.exists()
    assert records[0] == {"index": 0, "pts": 0, "time": 0.0, "boxes": [[[10, 20], [110, 20], [110, 50], [10, 50]]],
                          "texts": ["你好"], "scores": [0.91], "reused": False}  # fmt: skip
    assert records[1]["time"] == 0.04 and records[1]["texts"] == [] and records[1]["reused"] is True
    writer.close(complete=True)
    assert files_in(tmp_path) == ["v.frames.jsonl"]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_an_incomplete_jsonl_stays_a_part_file_and_never_takes_the_final_name(tmp_path):
    path = tmp_path / "v.frames.jsonl"
    with pytest.raises(KeyboardInterrupt):
        with JsonlWriter(path) as writer:
            writer.write(frame(0, "x"))
            raise KeyboardInterrupt
    assert files_in(tmp_path) == ["v.frames.jsonl.part"]
    with pytest.raises(ValueError, match="after close"):
        writer.write(frame(1))


def test_atomic_write_replaces_the_file_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "out.srt"
    path.write_text("old")
    atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n"
    assert files_in(tmp_path) == ["out.srt"]


def test_a_failed_atomic_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "out.srt"
    path.write_text("old")

    def disk_full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_srt(CUES, path)
    assert path.read_text() == "old"
    assert files_in(tmp_path) == ["out.srt"]


def test_write_json_writes_fractions_as_seconds_and_dataclasses_as_objects(tmp_path):
    path = tmp_path / "v.report.json"
    write_json(path, {"duration": Fraction(1001, 1000), "cue": CUES[0], "path": tmp_path, "complete": True})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["duration"] == 1.001 and data["complete"] is True and data["path"] == str(tmp_path)
    assert data["cue"]["text"] == "The train leaves at noon." and data["cue"]["start"] == 0.5
    assert files_in(tmp_path) == ["v.report.json"]


def test_read_srt_accepts_bom_crlf_dots_and_missing_numbers(tmp_path):
    path = tmp_path / "in.srt"
    text = "\ufeff1\r\n00:00:01,000 --> 00:00:02.5\r\nOne\r\ntwo\r\n\r\n00:00:03,000 --> 00:00:04,000\r\nThree\r\n"
    path.write_bytes(text.encode())
    assert read_srt(path) == [(1, Fraction(5, 2), "One\ntwo"), (3, 4, "Three")]


def test_read_srt_names_the_file_and_line_of_a_broken_timing(tmp_path):
    path = tmp_path / "bad.srt"
    path.write_text("1\n00:00:01 --> soon\nx\n")
    with pytest.raises(ValueError, match=r"bad\.srt:2"):
        read_srt(path)


def test_final_files_follow_the_umask_like_any_new_file(tmp_path):
    import os
    import stat

    from flowocr.output.writers import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.srt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.srt").stat().st_mode) == 0o644
