"""Which inputs a run reads, which of them are done, and why one failed: the batch around single videos
(``flowocr run`` with a folder, several paths or a glob)."""

from __future__ import annotations

import os
from pathlib import Path

VIDEO_SUFFIXES = {".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v", ".ts", ".mts", ".m2ts", ".flv", ".wmv", ".mpg",
                  ".mpeg", ".3gp", ".ogv"}  # fmt: skip


def expand_inputs(inputs: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Videos named by paths, folders (their video files, sorted, not recursive) and quoted globs.

    Returns the videos and the inputs that name nothing usable, each with its reason.
    """
    import glob

    videos: list[str] = []
    problems: list[tuple[str, str]] = []
    for item in inputs:
        if os.path.isdir(item):
            found = sorted(str(p) for p in Path(item).iterdir() if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
            if not found:
                problems.append((item, f"{item}: a folder with no video files ({', '.join(sorted(VIDEO_SUFFIXES))})"))
            videos += found
        elif os.path.exists(item):
            videos.append(item)
        elif any(ch in item for ch in "*?["):
            found = sorted(glob.glob(item))
            if not found:
                problems.append((item, f"{item}: the pattern matches no file"))
            videos += found
        else:
            problems.append((item, f"{item}: no such file; check the path"))
    return videos, problems


def report_says_complete(path: Path) -> bool:
    import json

    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("complete"))
    except (OSError, ValueError):
        return False


def failure_reason(video: str, error: BaseException) -> str:
    """The one line a batch lists for a video that failed: flowocr's own message (it names the file), or for any
    other error the video, the error's type and its message (a bug: the traceback is in the video's report)."""
    from flowocr.errors import FlowOcrError, one_line

    if isinstance(error, FlowOcrError):
        return one_line(error)
    return f"{video}: {type(error).__name__}: {one_line(error)}"
