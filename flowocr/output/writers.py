"""Writers of the per-video outputs: SRT, WebVTT, ASS, TXT, the streamed per-frame JSONL and the JSON report.

Every final file is written atomically: into a temporary file in the same folder, fsynced, then renamed over
the final path (``os.replace``), so a reader sees the old file or the complete new one, never half of one, and a
failure (disk full, Ctrl-C) leaves no temporary file behind. The JSONL stream is written to ``<path>.part`` as
frames come and renamed to ``<path>`` only when the run completed. The final files of a run are replaced together
(:func:`atomic_write_texts`, the finished ``.part`` among them): none before every new one is written.

**Time rounding.** Cue times are exact fractions of a second; subtitle formats count whole milliseconds (SRT,
VTT) or centiseconds (ASS). Times are rounded *down* (floored) to that unit. Players and libass show a cue on a
frame when ``start <= t < end`` on a clock that is itself the frame time truncated to the unit, so a floored time
lands on the same frame the exact time names whenever frames are more than one unit apart; rounding to the
nearest unit would move a cue by one frame when a frame time lies in the upper half of a unit (30000/1001 fps:
frame 16 is at 0.53387 s, written as 0.534 it would start on frame 17). A cue that would come out empty after
rounding (shorter than one unit) ends one unit after its start, so ``end > start`` always holds in the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import IO, Any, NamedTuple

from flowocr.cues.model import Cue, FrameText
from flowocr.errors import OutputError

PathLike = str | os.PathLike[str]


def cannot_write(path: PathLike, exc: OSError) -> OutputError:
    """The one-line error for an output that cannot be written: the path, the system's reason, what to do."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return OutputError(f"{os.fspath(path)}: cannot write ({reason}); check that its folder can be made, is writable "
                       "and has free space (-o chooses the output folder)")  # fmt: skip


@contextlib.contextmanager
def writing(path: PathLike) -> Iterator[None]:
    """Turn an :class:`OSError` raised inside into :class:`OutputError` naming ``path``."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        raise cannot_write(path, exc) from exc


def make_output_dir(path: PathLike) -> None:
    """Create the output folder (and its parents) unless it exists; :class:`OutputError` when that fails (a file
    in the way, no permission, a read-only file system)."""
    with writing(path):
        os.makedirs(path, exist_ok=True)


def atomic_write_text(path: PathLike, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, ``\\n`` line ends) atomically: temp file in the same folder, fsync,
    ``os.replace``. On any failure the temp file is removed and ``path`` is untouched (:class:`OutputError`
    when the file system refused)."""
    atomic_write_texts({path: text})


def atomic_write_texts(files: Mapping[PathLike, str], *, ready: Mapping[PathLike, PathLike] | None = None) -> None:
    """Replace several files atomically as one step as far as a file system allows: every text is written to a
    temp file beside its target and fsynced first, and only then are they renamed over their targets, together
    with the ``ready`` files (``{written file: target}``: complete and fsynced already, as a finished JSONL
    ``.part``). A failure while writing (disk full) removes the temp files, keeps the ready files where they are
    and leaves every target untouched (:class:`OutputError`)."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            target = Path(path)
            with writing(target):
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
                temps.append((tmp, target))
                os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it 0600; outputs follow the umask like any file
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                    out.write(text)
                    out.flush()
                    os.fsync(out.fileno())
        for tmp, target in [*temps, *((os.fspath(f), Path(t)) for f, t in (ready or {}).items())]:
            with writing(target):
                os.replace(tmp, target)
    except BaseException:
        # Also on KeyboardInterrupt: a stray temp file beside the outputs is worse than a missing output.
        for tmp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    for folder in {target.parent for _, target in temps} | {Path(t).parent for t in (ready or {}).values()}:
        _fsync_dir(folder)


def subtitle_texts(cues: Sequence[Cue], paths: Mapping[str, PathLike], width: int, height: int) -> dict[PathLike, str]:
    """The subtitle and text outputs among ``paths`` (format -> path: srt, vtt, ass, txt; others are ignored): path
    -> its text, for :func:`atomic_write_texts`."""
    texts = {
        "srt": lambda: srt_text(cues),
        "vtt": lambda: vtt_text(cues),
        "ass": lambda: ass_text(cues, width, height),
        "txt": lambda: txt_text(cues),
    }
    return {paths[f]: texts[f]() for f in texts if f in paths}


def write_subtitles(cues: Sequence[Cue], paths: Mapping[str, PathLike], width: int, height: int) -> None:
    """The outputs of :func:`subtitle_texts`, replaced as one step: a write that fails (disk full) leaves every
    earlier final file as it was."""
    atomic_write_texts(subtitle_texts(cues, paths, width, height))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; some file systems cannot open a folder, then the rename is all we get."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _floor_units(seconds: Fraction, per_second: int) -> int:
    if seconds < 0:
        raise ValueError(f"a subtitle time cannot be negative, got {seconds} s")
    return math.floor(Fraction(seconds) * per_second)


def _cue_units(cue: Cue, per_second: int) -> tuple[int, int]:
    """(start, end) floored to the unit, with ``end >= start + 1`` (see the module docstring)."""
    start = _floor_units(cue.start, per_second)
    return start, max(_floor_units(cue.end, per_second), start + 1)


def format_srt_time(ms: int) -> str:
    """``HH:MM:SS,mmm`` from whole milliseconds."""
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def format_vtt_time(ms: int) -> str:
    """``HH:MM:SS.mmm`` from whole milliseconds."""
    return format_srt_time(ms).replace(",", ".")


def format_ass_time(cs: int) -> str:
    """``H:MM:SS.cc`` from whole centiseconds."""
    h, rest = divmod(cs, 360_000)
    m, rest = divmod(rest, 6000)
    s, cs = divmod(rest, 100)
    return f"{h:d}:{m:02d}:{s:02d}.{cs:02d}"


def _ordered(cues: Iterable[Cue]) -> list[Cue]:
    return sorted(cues, key=lambda c: (c.start, c.track, c.end))


def _lines(text: str) -> list[str]:
    """A cue's text lines without blank ones: a blank line would end the cue in SRT and VTT."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def srt_text(cues: Iterable[Cue]) -> str:
    """The SRT document of ``cues``, numbered from 1 in start order."""
    blocks = []
    for n, cue in enumerate(_ordered(cues), 1):
        start, end = _cue_units(cue, 1000)
        body = "\n".join(_lines(cue.text))
        blocks.append(f"{n}\n{format_srt_time(start)} --> {format_srt_time(end)}\n{body}\n")
    return "\n".join(blocks)


def write_srt(cues: Iterable[Cue], path: PathLike) -> None:
    """SRT, UTF-8, cues in start order (ties: lower track first); times floored to ms."""
    atomic_write_text(path, srt_text(cues))


def _vtt_escape(line: str) -> str:
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def vtt_text(cues: Iterable[Cue]) -> str:
    """The WebVTT document of ``cues``, in start order, text escaped (``&``, ``<``, ``>``)."""
    parts = ["WEBVTT\n"]
    for cue in _ordered(cues):
        start, end = _cue_units(cue, 1000)
        body = "\n".join(_vtt_escape(line) for line in _lines(cue.text))
        parts.append(f"{format_vtt_time(start)} --> {format_vtt_time(end)}\n{body}\n")
    return "\n".join(parts)


def write_vtt(cues: Iterable[Cue], path: PathLike) -> None:
    """WebVTT, UTF-8, cues in start order; times floored to ms."""
    atomic_write_text(path, vtt_text(cues))


_ASS_SPECIAL = re.compile(r"\\(?=[Nnh{}])")


def _ass_escape(line: str) -> str:
    """Literal text for a Dialogue line: braces escaped as libass reads them (``\\{``, ``\\}``); a backslash that
    would form ``\\N``/``\\n``/``\\h`` gets a word joiner after it so it stays a backslash."""
    line = _ASS_SPECIAL.sub("\\\\\u2060", line)
    return line.replace("{", "\\{").replace("}", "\\}")


def ass_text(cues: Iterable[Cue], width: int, height: int) -> str:
    """The ASS document: PlayRes = frame size, so cue boxes (frame pixels) are script coordinates as they are.

    Each cue is placed where it was seen: ``\\an2\\pos(x, y)`` at the bottom centre of its box, font size from the
    box height per line (boxes are about 1.25 font sizes tall per line); the layer is the track.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"frame size must be positive, got {width}x{height}")
    default_size = max(8, round(height / 18))
    head = (
        "[Script Info]\n"
        "; written by flowocr\n"
        "ScriptType: v4.00+\n"
        f"PlayResX: {width}\n"
        f"PlayResY: {height}\n"
        "WrapStyle: 2\n"  # lines break only where the OCR saw them break
        "ScaledBorderAndShadow: yes\n"
        "\n"
        "[V4+ Styles]\n"
        "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, "
        "Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, "
        "MarginR, MarginV, Encoding\n"
        f"Style: Default,Sans,{default_size},&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,"
        "10,10,10,1\n"
        "\n"
        "[Events]\n"
        "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    )
    events = []
    for cue in _ordered(cues):
        start, end = _cue_units(cue, 100)
        lines = _lines(cue.text)
        x0, y0, x1, y1 = cue.box
        size = max(1, round((y1 - y0) / max(1, len(lines)) / 1.25))
        tags = f"{{\\an2\\pos({(x0 + x1) / 2:.0f},{y1:.0f})\\fs{size}}}"
        body = "\\N".join(_ass_escape(line) for line in lines)
        events.append(
            f"Dialogue: {cue.track},{format_ass_time(start)},{format_ass_time(end)},Default,,0,0,0,,{tags}{body}\n"
        )
    return head + "".join(events)


def write_ass(cues: Iterable[Cue], path: PathLike, width: int, height: int) -> None:
    """ASS keeping each cue's position (see :func:`ass_text`); times floored to centiseconds."""
    atomic_write_text(path, ass_text(cues, width, height))


def txt_text(cues: Iterable[Cue]) -> str:
    """Plain text: one paragraph per cue (its lines), paragraphs separated by a blank line, in start order."""
    paragraphs = ["\n".join(_lines(cue.text)) for cue in _ordered(cues)]
    return "".join(f"{p}\n\n" for p in paragraphs if p).rstrip("\n") + ("\n" if paragraphs else "")


def write_txt(cues: Iterable[Cue], path: PathLike) -> None:
    """Plain text of the cues (see :func:`txt_text`)."""
    atomic_write_text(path, txt_text(cues))


def frame_record(frame: FrameText) -> dict[str, Any]:
    """The JSONL record of one frame: index, pts (stream time base), time (s from the first frame, float rounded
    to µs), and per line its box (4 points), text and score, plus ``reused``."""
    return {
        "index": frame.index,
        "pts": frame.pts,
        "time": round(float(frame.time), 6),
        "boxes": [[[round(x, 1), round(y, 1)] for x, y in line.box] for line in frame.lines],
        "texts": [line.text for line in frame.lines],
        "scores": [round(line.score, 4) for line in frame.lines],
        "reused": frame.reused,
    }


def jsonl_text(frames: Iterable[FrameText]) -> str:
    """The per-frame JSONL of ``frames`` as one text (the lines :class:`JsonlWriter` streams)."""
    return "".join(json.dumps(frame_record(frame), ensure_ascii=False) + "\n" for frame in frames)


def part_path(path: PathLike) -> Path:
    """Where :class:`JsonlWriter` streams ``path`` until the run is complete: ``<path>.part``."""
    path = Path(path)
    return path.with_name(path.name + ".part")


class JsonlWriter:
    """Streams per-frame OCR results as JSON lines into ``<path>.part``, flushed after every frame (a user can
    follow it while the video is still read). ``close(complete=True)`` fsyncs and renames it to ``path``;
    ``close(complete=False)`` leaves the data in ``<path>.part`` and ``path`` untouched, so nothing partial is
    ever found under the final name. :meth:`finish` fsyncs and closes it without the rename, for a caller that
    replaces it together with other files (:func:`atomic_write_texts` ``ready``). Usable as a context manager
    (complete when no exception escaped)."""

    def __init__(self, path: PathLike, *, resume_at: int | None = None) -> None:
        """``resume_at``: continue the ``.part`` file of a stopped run, cut to that many bytes (the lines of the
        frames before its checkpoint); else start it afresh."""
        self.path = Path(path)
        self.part_path = part_path(self.path)
        with writing(self.part_path):
            if resume_at is None:
                self._out: IO[str] | None = open(self.part_path, "w", encoding="utf-8", newline="\n")
            else:
                self._out = open(self.part_path, "r+", encoding="utf-8", newline="\n")
                self._out.truncate(resume_at)
                self._out.seek(resume_at)
        self.count = 0

    def sync(self) -> int:
        """Flush and fsync what was written; the byte length of the complete lines in the ``.part`` file."""
        if self._out is None:
            raise ValueError(f"{self.path}: sync() after close()")
        with writing(self.part_path):
            self._out.flush()
            os.fsync(self._out.fileno())
            return self._out.tell()

    def write(self, frame: FrameText) -> None:
        if self._out is None:
            raise ValueError(f"{self.path}: write() after close()")
        with writing(self.part_path):
            self._out.write(jsonl_text([frame]))
            self._out.flush()
        self.count += 1

    def write_record(self, record: Mapping[str, Any]) -> None:
        """One line that is not a frame's (an overlay's, ``"kind": "overlay"``), after the frames."""
        if self._out is None:
            raise ValueError(f"{self.path}: write_record() after close()")
        with writing(self.part_path):
            self._out.write(json.dumps(record, ensure_ascii=False, default=_json_default) + "\n")
            self._out.flush()

    def finish(self) -> Path:
        """Flush, fsync and close the ``.part`` file, which stays under that name; returns its path. Idempotent;
        :class:`OutputError` when what was written cannot be made durable."""
        if self._out is not None:
            out, self._out = self._out, None
            with writing(self.part_path):
                try:
                    out.flush()
                    os.fsync(out.fileno())
                finally:
                    out.close()
        return self.part_path

    def close(self, complete: bool) -> None:
        """Finish the stream; idempotent. See the class docstring for what ``complete`` decides."""
        if not complete:
            # An unfinished stream keeps what reached the disk; the run's own error (often this same one) is
            # what gets reported, not a second failure to flush.
            with contextlib.suppress(OutputError):
                self.finish()
            return
        if self._out is None:
            return
        self.finish()
        with writing(self.path):
            os.replace(self.part_path, self.path)
        _fsync_dir(self.path.parent)

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(complete=exc_type is None)


def _json_default(value: object) -> Any:
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def json_text(data: Any) -> str:
    """``data`` as indented JSON. Fractions become float seconds, paths strings, dataclasses dicts, sets sorted
    lists."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=_json_default) + "\n"


def write_json(path: PathLike, data: Any) -> None:
    """``data`` as indented UTF-8 JSON (:func:`json_text`), atomically."""
    atomic_write_text(path, json_text(data))


class SrtEntry(NamedTuple):
    """One cue read back from an SRT file: exact start and end (s) and its text (lines joined by ``\\n``)."""

    start: Fraction
    end: Fraction
    text: str


_SRT_TIMING = re.compile(
    r"^\s*(\d+):(\d{1,2}):(\d{1,2})[,.](\d{1,3})\s*-->\s*(\d+):(\d{1,2}):(\d{1,2})[,.](\d{1,3})(?:\s.*)?$"
)


def _srt_seconds(h: str, m: str, s: str, frac: str) -> Fraction:
    return int(h) * 3600 + int(m) * 60 + int(s) + Fraction(int(frac.ljust(3, "0")), 1000)


def read_srt(path: PathLike) -> list[SrtEntry]:
    """The cues of an SRT file in file order. Tolerates a BOM, CRLF, ``.`` for ``,``, missing cue numbers and
    text-less cues (skipped). Raises ValueError naming the file and line when a timing line is malformed."""
    text = Path(path).read_text(encoding="utf-8-sig")
    return parse_srt(text, source=str(path))


def parse_srt(text: str, *, source: str = "<srt>") -> list[SrtEntry]:
    """The cues of an SRT document (see :func:`read_srt`)."""
    entries: list[SrtEntry] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    timing: tuple[Fraction, Fraction] | None = None
    body: list[str] = []

    def close() -> None:
        if timing is not None and body:
            entries.append(SrtEntry(timing[0], timing[1], "\n".join(body)))

    for n, line in enumerate(lines, 1):
        match = _SRT_TIMING.match(line)
        if match:
            close()
            g = match.groups()
            timing, body = (_srt_seconds(*g[:4]), _srt_seconds(*g[4:])), []
        elif "-->" in line:
            raise ValueError(f"{source}:{n}: malformed SRT timing line {line!r}")
        elif not line.strip():
            close()
            timing, body = None, []
        elif timing is not None:
            body.append(line.strip())
        # anything else outside a cue is its number
    close()
    return entries


__all__ = [
    "JsonlWriter",
    "SrtEntry",
    "ass_text",
    "atomic_write_text",
    "format_ass_time",
    "format_srt_time",
    "format_vtt_time",
    "frame_record",
    "json_text",
    "jsonl_text",
    "parse_srt",
    "read_srt",
    "srt_text",
    "subtitle_texts",
    "txt_text",
    "vtt_text",
    "write_ass",
    "write_json",
    "write_srt",
    "write_txt",
    "write_vtt",
]
