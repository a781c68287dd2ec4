"""What a run shows while it works: cues as they become final, and where the run stands.

``--progress`` chooses how (``auto``: ``rich`` on a terminal, else ``plain``):

- ``rich``: a live display on stderr (video x/y, position in the video, block x/y, frames per second, OCR calls
  made and results reused, buffered MB, time to the first cue, ETA); cues printed above it.
- ``plain``: cues on stdout; on stderr a line when a video starts and ends (with the path of its review page), a
  status line at most every ``PLAIN_EVERY_S`` seconds, and after a batch the path of its review index.
- ``json``: for scripts, one JSON object per line on stdout and nothing else there: ``{"event": "start"}`` per
  video, ``"progress"`` at most every ``JSON_EVERY_S`` seconds (the fields of :class:`Status`), ``"cue"`` per
  final cue, ``"done"`` or ``"failed"`` per video (``done`` names the video's review page, ``review_page``, null
  without one), and after a batch that wrote review pages ``"review_index"`` with the ``path`` of its index.
- ``--quiet``: nothing but errors and the final failure list.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

PLAIN_EVERY_S = 10.0
JSON_EVERY_S = 0.5
MODES = ("auto", "rich", "plain", "json")


def _clock(seconds: float) -> str:
    ms = int(round(seconds * 1000))
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _short(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds}s"


def cue_line(cue) -> str:
    text = " | ".join(cue.text.splitlines())
    return f"{_clock(float(cue.start))} --> {_clock(float(cue.end))}  {text}"


@dataclass
class Status:
    """Where one video's run stands, from the pipeline's ``frame`` events."""

    video: str
    n: int
    total: int
    time: float = 0.0  # seconds into the video of the last sampled frame
    duration: float | None = None
    block: int = 0
    blocks: int = 0
    planned_all: bool = False
    frames: int = 0
    frames_per_s: float = 0.0
    ocr_calls: int = 0
    ocr_reused: int = 0
    cues: int = 0
    buffered_mb: float = 0.0
    elapsed_s: float = 0.0
    first_cue_s: float | None = None
    eta_s: float | None = None

    def update(self, data: dict[str, Any]) -> None:
        for key in ("time", "duration", "block", "blocks", "planned_all", "ocr_calls", "ocr_reused", "cues",
                    "buffered_mb", "elapsed_s", "first_cue_s"):  # fmt: skip
            if key in data:
                setattr(self, key, data[key])
        self.frames += 1
        self.frames_per_s = self.frames / max(1e-6, self.elapsed_s)
        self.eta_s = eta(self.time, self.duration, self.elapsed_s)

    def line(self) -> str:
        where = f"{_short(self.time)}/{_short(self.duration)}" if self.duration else _short(self.time)
        blocks = f"{self.block}/{self.blocks}{'' if self.planned_all else '+'}"
        return (f"{where} block {blocks} {self.frames_per_s:.1f} frames/s OCR {self.ocr_calls} "
                f"reused {self.ocr_reused} cues {self.cues} buffered {self.buffered_mb:.0f} MB "
                f"first cue {_short(self.first_cue_s)} ETA {_short(self.eta_s)}")  # fmt: skip


def eta(position: float, duration: float | None, elapsed: float) -> float | None:
    """Seconds left if the rest of the video goes as fast as what was done so far; None while unknown."""
    if not duration or position <= 0 or elapsed <= 0:
        return None
    done = min(1.0, position / duration)
    return elapsed * (1.0 - done) / done


class QuietProgress:
    def listener(self, n: int, video: str):
        return None

    def note(self, message: str) -> None:
        pass

    def failed(self, video: str, reason: str) -> None:
        pass

    def finished(self, video: str, report: dict[str, Any]) -> None:
        pass

    def review_index(self, path) -> None:
        """A batch wrote its review index (``index.html``) at ``path``."""

    def close(self) -> None:
        pass


class PlainProgress(QuietProgress):
    """Plain lines: one when a video starts and ends, a status line now and then; cues on stdout."""

    def __init__(self, total: int, *, every_s: float = PLAIN_EVERY_S) -> None:
        self.total = total
        self.every_s = every_s

    def listener(self, n: int, video: str):
        self._log(f"[{n}/{self.total}] {video}")
        status = Status(video, n, self.total)
        last = [time.monotonic()]

        def on(event: str, data: dict[str, Any]) -> None:
            if event == "cue":
                sys.stdout.write(cue_line(data["cue"]) + "\n")
                sys.stdout.flush()
            elif event == "area":
                self._log(f"  text area {data['area']}{' (auto)' if data['auto'] else ''}")
            elif event == "note":
                self._log(f"  {data['message']}")
            elif event == "frame":
                status.update(data)
                if time.monotonic() - last[0] >= self.every_s:
                    last[0] = time.monotonic()
                    self._log(f"  {status.line()}")

        return on

    def note(self, message: str) -> None:
        self._log(message)

    def failed(self, video: str, reason: str) -> None:
        self._log(f"  failed: {reason}")

    def finished(self, video: str, report: dict[str, Any]) -> None:
        ocr, timing = report["ocr"], report["timing"]
        first = timing.get("first_cue_s")
        self._log(f"  {report['cues']} cues, {ocr['calls']} OCR calls, {ocr['reused']} results reused, "
                  f"{timing['total_s']:.1f} s (first cue after {_short(first)})")  # fmt: skip
        if report.get("review_page"):
            self._log(f"  review page: {report['review_page']}")

    def review_index(self, path) -> None:
        self._log(f"review pages: {path}")

    def _log(self, message: str) -> None:
        sys.stderr.write(f"flowocr: {message}\n")
        sys.stderr.flush()


class JsonProgress(QuietProgress):
    """One JSON object per line on stdout (module docstring)."""

    def __init__(self, total: int, *, every_s: float = JSON_EVERY_S) -> None:
        self.total = total
        self.every_s = every_s

    def listener(self, n: int, video: str):
        self._write({"event": "start", "video": video, "n": n, "total": self.total})
        status = Status(video, n, self.total)
        last = [0.0]

        def on(event: str, data: dict[str, Any]) -> None:
            if event == "cue":
                cue = data["cue"]
                self._write({"event": "cue", "video": video, "start": float(cue.start), "end": float(cue.end),
                             "text": cue.text})  # fmt: skip
            elif event in ("area", "note"):
                self._write({"event": event, "video": video, **data})
            elif event == "frame":
                status.update(data)
                if time.monotonic() - last[0] >= self.every_s:
                    last[0] = time.monotonic()
                    self._write({"event": "progress", **asdict(status)})

        return on

    def note(self, message: str) -> None:
        self._write({"event": "note", "message": message})

    def failed(self, video: str, reason: str) -> None:
        self._write({"event": "failed", "video": video, "reason": reason})

    def finished(self, video: str, report: dict[str, Any]) -> None:
        self._write({"event": "done", "video": video, "complete": report.get("complete"), "cues": report.get("cues"),
                     "ocr": report.get("ocr"), "timing": report.get("timing"),
                     "review_page": report.get("review_page")})  # fmt: skip

    def review_index(self, path) -> None:
        self._write({"event": "review_index", "path": str(path)})

    @staticmethod
    def _write(obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
        sys.stdout.flush()


class RichProgress(PlainProgress):
    """A live display on a terminal; cues printed above it."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        super().__init__(total)
        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(), console=self.console, transient=False,
        )  # fmt: skip
        self.progress.start()
        self.task = None

    def listener(self, n: int, video: str):
        self.task = self.progress.add_task(f"{n}/{self.total} {video}", total=None, status="starting")
        status = Status(video, n, self.total)

        def on(event: str, data: dict[str, Any]) -> None:
            if event == "cue":
                self.progress.console.print(cue_line(data["cue"]), markup=False, highlight=False)
            elif event == "area":
                self.progress.console.print(f"text area {data['area']}", style="dim")
            elif event == "note":
                self.progress.console.print(data["message"], style="dim", markup=False)
            elif event == "frame":
                status.update(data)
                total = status.duration or None
                self.progress.update(self.task, total=total, completed=status.time, status=status.line())

        return on

    def failed(self, video: str, reason: str) -> None:
        self.progress.console.print(f"failed: {reason}", style="red", markup=False)

    def finished(self, video: str, report: dict[str, Any]) -> None:
        if self.task is not None:
            self.progress.update(self.task, total=1, completed=1)
        if report.get("review_page"):
            self.progress.console.print(f"review page: {report['review_page']}", markup=False, highlight=False)

    def review_index(self, path) -> None:
        self.console.print(f"review pages: {path}", markup=False, highlight=False)

    def close(self) -> None:
        self.progress.stop()


def make_progress(*, quiet: bool, total: int, mode: str = "auto"):
    if quiet:
        return QuietProgress()
    if mode == "json":
        return JsonProgress(total)
    if mode == "rich" or (mode == "auto" and sys.stderr.isatty()):
        return RichProgress(total)
    return PlainProgress(total)
