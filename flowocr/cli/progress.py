"""What a run shows while it works: cues on stdout as they become final, progress on stderr.

On a terminal, a live rich display (video x/y, frames, blocks, OCR calls and reuses, elapsed time); when stderr
is not a terminal, plain log lines; with ``--quiet``, nothing but errors.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def _clock(seconds: float) -> str:
    ms = int(round(seconds * 1000))
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def cue_line(cue) -> str:
    text = " | ".join(cue.text.splitlines())
    return f"{_clock(float(cue.start))} --> {_clock(float(cue.end))}  {text}"


class QuietProgress:
    def listener(self, n: int, video: str):
        return lambda event, data: None

    def note(self, message: str) -> None:
        pass

    def failed(self, video: str, reason: str) -> None:
        pass

    def finished(self, video: str, report: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


class PlainProgress(QuietProgress):
    """Plain lines: one when a video starts and ends; cues on stdout."""

    def __init__(self, total: int) -> None:
        self.total = total

    def listener(self, n: int, video: str):
        self._log(f"[{n}/{self.total}] {video}")

        def on(event: str, data: dict[str, Any]) -> None:
            if event == "cue":
                sys.stdout.write(cue_line(data["cue"]) + "\n")
                sys.stdout.flush()
            elif event == "area":
                self._log(f"  text area {data['area']}{' (auto)' if data['auto'] else ''}")

        return on

    def note(self, message: str) -> None:
        self._log(message)

    def failed(self, video: str, reason: str) -> None:
        self._log(f"  failed: {reason}")

    def finished(self, video: str, report: dict[str, Any]) -> None:
        ocr, timing = report["ocr"], report["timing"]
        self._log(f"  {report['cues']} cues, {ocr['calls']} OCR calls, {ocr['reused']} results reused, "
                  f"{timing['total_s']:.1f} s")  # fmt: skip

    def _log(self, message: str) -> None:
        sys.stderr.write(f"flowocr: {message}\n")
        sys.stderr.flush()


class RichProgress(PlainProgress):
    """A live display on a terminal; cues printed above it."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        super().__init__(total)
        self.console = Console(stderr=True)
        self.out = Console()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(), console=self.console, transient=False,
        )  # fmt: skip
        self.progress.start()
        self.task = None

    def listener(self, n: int, video: str):
        self.task = self.progress.add_task(f"{n}/{self.total} {video}", total=None, status="starting")
        counts = {"frames": 0, "calls": 0, "reused": 0, "cues": 0}
        started = time.monotonic()

        def on(event: str, data: dict[str, Any]) -> None:
            if event == "cue":
                counts["cues"] += 1
                self.progress.console.print(cue_line(data["cue"]), markup=False, highlight=False)
            elif event == "frame":
                counts["frames"] += 1
                counts["reused" if data["reused"] else "calls"] += 1
            elif event == "area":
                self.progress.console.print(f"text area {data['area']}", style="dim")
            fps = counts["frames"] / max(1e-6, time.monotonic() - started)
            status = (f"t={data.get('time', 0):.1f}s frames {counts['frames']} ({fps:.1f}/s) OCR {counts['calls']} "
                      f"reused {counts['reused']} cues {counts['cues']}")  # fmt: skip
            self.progress.update(self.task, status=status)

        return on

    def failed(self, video: str, reason: str) -> None:
        self.progress.console.print(f"failed: {reason}", style="red", markup=False)

    def finished(self, video: str, report: dict[str, Any]) -> None:
        if self.task is not None:
            self.progress.update(self.task, total=1, completed=1)

    def close(self) -> None:
        self.progress.stop()


def make_progress(*, quiet: bool, total: int):
    if quiet:
        return QuietProgress()
    if sys.stderr.isatty():
        return RichProgress(total)
    return PlainProgress(total)
