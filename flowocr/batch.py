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


def write_review_index(videos: list[str], options, failed: dict[str, str]) -> Path:
    """A batch's ``index.html`` in the output folder: one row per video linking its review page (a relative link),
    with its cue count from its report (when written) and whether it failed (``failed``: video -> reason).
    Written atomically; returns its path."""
    from urllib.parse import quote

    from flowocr.output.review import IndexEntry, index_html
    from flowocr.output.writers import atomic_write_text, make_output_dir

    entries = []
    for video in videos:
        page = options.output(video, "html")
        entries.append(IndexEntry(
            video=video, page=quote(page.name) if page.exists() and video not in failed else None,
            cues=_report_cues(options.output(video, "json")),
            status=f"failed: {failed[video]}" if video in failed else "complete",
        ))  # fmt: skip
    make_output_dir(options.out_dir)
    path = Path(options.out_dir) / "index.html"
    atomic_write_text(path, index_html(entries, title=f"flowocr review: {len(videos)} videos"))
    return path


def _report_cues(path: Path) -> int | None:
    import json

    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report.get("cues") if report.get("complete") else None
