"""Beyond one machine (DESIGN §11): a batch on an existing Ray cluster, one task per video; long videos split
into block ranges read by several workers and stitched back into exactly the single-machine result.

Batches. ``flowocr run DIR --executor ray`` submits one task per video (:func:`video_task`); each writes its
outputs exactly as a local run does (the same :class:`~flowocr.pipeline.VideoRun`, the same output folder, which
workers must share with the driver), and the driver lists failures the same way. Tasks always run with
``--resume`` semantics: the driver removes stale checkpoints first (unless the user asked to resume), so a task
that Ray retries after its worker died continues from the checkpoint the dead attempt left and writes the same
files, nothing twice. OCR models live in a per-process cache (:func:`flowocr.ocr.engine.get_engine`), and Ray
reuses its worker processes, so a worker loads them once for all its tasks.

Split videos. ``--split-minutes M`` cuts the video into ranges of about M minutes at keyframes, with the same
planner as the decoder's blocks. Range k is read by one task from ``CONTEXT_SEC`` before its first frame (its
left context, re-read but never emitted) to ``CONTEXT_SEC`` after its last one (an overlap), and records the
reader's whole state (the cue builder's open cues, the reuse reference and the last lines:
:meth:`~flowocr.cues.builder.CueBuilder.snapshot`) after each frame it feeds around the split points. The driver
stitches at the first frame at or after each split point where the two neighbours' states are equal: from there
on both would read and emit exactly the same, so the frames and cues before it come from the left range and the
rest from the right one (the left-context rule of DESIGN §6–7). With the detector's receptive field of one frame
and OCR that depends on the frame alone, states meet as soon as the right range has seen the cue in progress at
the split point from its start. If they never meet inside the overlap (a cue longer than the context), that
split cannot be stitched exactly and the video is read whole by one task instead (said in the report).
"""

from __future__ import annotations

import bisect
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from flowocr.cues.model import Cue, FrameText
from flowocr.errors import ExecutorUnavailable, UsageError, one_line
from flowocr.pipeline import RunOptions, Segment, SegmentTrace, VideoRun

#: Left context and overlap of a split range, in seconds of video (at most the range's own length).
CONTEXT_SEC = Fraction(30)


class StitchError(Exception):
    """Two neighbouring ranges never reach the same state inside their overlap."""


# --- tasks (plain functions: Ray runs them remotely, the local executor calls them) ----------------------------


def video_task(video: str, options: RunOptions) -> dict[str, Any]:
    """One video, outputs written as a local run writes them. Never raises for a bad video, nor for a bug one video
    meets: the failure is the result, listed as a local batch lists it (an exception would stop the whole batch
    in ``gather``; a bad input fails the same way every time)."""
    from flowocr.batch import failure_reason
    from flowocr.ocr.engine import engine_loaded

    warm = engine_loaded(options.engine, lang=options.lang, device=options.device)
    run = VideoRun(video, replace(options, resume=True))
    try:
        for _ in run.cues():
            pass
    except Exception as exc:  # noqa: BLE001 - the video's failure, with the traceback in its report
        return {"video": video, "error": failure_reason(video, exc), "pid": os.getpid(), "engine_was_loaded": warm}
    return {"video": video, "report": run.report, "pid": os.getpid(), "engine_was_loaded": warm}


def segment_task(video: str, options: RunOptions, segment: Segment) -> dict[str, Any]:
    """One range of a split video: its trace (no file written)."""
    from flowocr.ocr.engine import engine_loaded

    warm = engine_loaded(options.engine, lang=options.lang, device=options.device)
    run = VideoRun(video, options, segment=segment)
    for _ in run.cues():
        pass
    stats = run.stats
    return {"trace": run.trace, "pid": os.getpid(), "engine_was_loaded": warm, "ocr_calls": stats.ocr_calls,
            "decode": run.report.get("decode"), "device": run.report.get("device")}  # fmt: skip


# --- split ranges --------------------------------------------------------------------------------------------


def plan_segments(times: Sequence[Fraction], ranges: Sequence[tuple[int, int]], context: Fraction) -> list[Segment]:
    """Segments for ranges ``[lo, hi)`` that tile the video (``times[i]``: seconds of frame i): each reads from
    ``context`` seconds before its range to ``context`` after it (at most its own length), and
    watches its state from each split point for ``context`` seconds."""
    n = len(times)
    segments = []
    for k, (lo, hi) in enumerate(ranges):
        reach = min(context, times[hi - 1] - times[lo]) if hi > lo else context
        start = 0 if k == 0 else bisect.bisect_left(times, times[lo] - reach)
        stop = n if k == len(ranges) - 1 else min(n, bisect.bisect_left(times, times[hi] + reach) + 1)
        watch = []
        if k > 0:
            watch.append((lo, min(n, bisect.bisect_left(times, times[lo] + reach) + 1)))
        if k < len(ranges) - 1:
            watch.append((hi, stop))
        segments.append(Segment(start, stop, tuple(watch)))
    return segments


@dataclass
class Stitched:
    frames: list[FrameText]
    cues: list[Cue]
    points: list[int]  # the frame each split was stitched at
    crops: dict[Cue, bytes]  # the review page's crop of each cue that has one, from the range that emitted it


def stitch_point(left: SegmentTrace, right: SegmentTrace, split: int) -> int:
    """The first frame at or after ``split`` fed by both neighbours with equal reader states."""
    for index in sorted(i for i in left.states if i >= split):
        if index in right.states and right.states[index] == left.states[index]:
            return index
    raise StitchError(f"the ranges around frame {split} never reach the same state in their overlap")


def stitch(traces: Sequence[SegmentTrace], splits: Sequence[int]) -> Stitched:
    """One reading of the whole video from the ranges' traces (module docstring); ``splits[k]`` is the first
    frame of range k + 1."""
    frames: list[FrameText] = []
    cues: list[Cue] = []
    points: list[int] = []
    crops: dict[Cue, bytes] = {}
    prev = -1
    for k, trace in enumerate(traces):
        q = stitch_point(trace, traces[k + 1], splits[k]) if k < len(traces) - 1 else math.inf
        kept = [cue for at, cue in trace.cues if prev < at <= q]
        frames += [f for f in trace.frames if prev < f.index <= q]
        cues += kept
        crops.update((cue, trace.crops[cue]) for cue in kept if cue in trace.crops)
        if k < len(traces) - 1:
            points.append(int(q))
        prev = q
    return Stitched(frames, cues, points, crops)


def run_split(video: str, options: RunOptions, minutes: Fraction, submit: Callable, gather: Callable) -> dict:
    """A video read as ranges of about ``minutes``, by tasks ``submit(segment_task, ...)`` → futures that
    ``gather`` waits for; outputs written by this process. Returns the report."""
    from flowocr.cues.overlay import mark_overlays, written_cues
    from flowocr.output.writers import atomic_write_texts, json_text, jsonl_text, make_output_dir, subtitle_texts
    from flowocr.plan.stream import plan_video
    from flowocr.probe import probe

    started = time.monotonic()
    info = probe(video)
    blocks, index = plan_video(info, block_sec=minutes * 60, first_block_sec=Fraction(0))
    times = [index.seconds(i) for i in range(len(index))]
    ranges = [(b.lo, b.hi) for b in blocks]
    segments = plan_segments(times, ranges, CONTEXT_SEC)
    results = gather([submit(segment_task, video, options, seg) for seg in segments])
    note = None
    try:
        stitched = stitch([r["trace"] for r in results], [lo for lo, _ in ranges[1:]])
    except StitchError as exc:
        note = f"{exc}: read whole by one task"
        whole = gather([submit(segment_task, video, options, Segment(0, len(index)))])
        results = [*results, *whole]
        stitched = stitch([whole[0]["trace"]], [])
    make_output_dir(options.out_dir)
    unmarked = sorted(stitched.cues, key=lambda c: (c.start, c.track))
    marked, overlays = mark_overlays(unmarked, index.duration)
    crops = {after: stitched.crops[before] for before, after in zip(unmarked, marked) if before in stitched.crops}
    cues = written_cues(marked, options.keep_overlays)
    paths = {f: options.output(video, f) for f in options.formats}
    files = subtitle_texts(cues, paths, info.display_width, info.display_height)
    if "jsonl" in paths:
        files[paths["jsonl"]] = jsonl_text(stitched.frames) + "".join(
            json.dumps(o.to_json(), ensure_ascii=False) + "\n" for o in overlays)
    report = {
        "video": video,
        "complete": True,
        "error": None,
        "executor": "split",
        "cues": len(cues),
        "overlays": [o.to_json() for o in overlays],
        # where the tasks' models ran ("cpu" or "cuda"; the first task's, for workers alike)
        "device": next((r.get("device") for r in results if r.get("device")), None),
        "ocr": {"calls": sum(not f.reused for f in stitched.frames),
                "reused": sum(f.reused for f in stitched.frames), "engine": options.engine, "lang": options.lang},
        "timing": {"total_s": round(time.monotonic() - started, 3), "first_cue_s": None},
        "split": {"minutes": float(minutes), "ranges": ranges, "segments": [[s.start, s.stop] for s in segments],
                  "stitched_at": stitched.points, "note": note,
                  "workers": sorted({r["pid"] for r in results})},
        "frames_sampled": len(stitched.frames),
        "facts": info.to_json(),
        "review_page": str(paths["html"]) if "html" in paths else None,
    }  # fmt: skip
    if "json" in paths:
        files[paths["json"]] = json_text(report)
    if "html" in paths:  # with the crops the tasks kept (the stitched cues' own)
        from flowocr.output.review import run_review_html

        files[paths["html"]] = run_review_html(marked, video=video, page=paths["html"], index=index, crops=crops,
                                               keep_overlays=options.keep_overlays)
    atomic_write_texts(files)  # all replaced together, once every one is written (as a local run's)
    return report


# --- executors -------------------------------------------------------------------------------------------------


class LocalExecutor:
    """Tasks called in this process, one after the other (``--split-minutes`` without Ray)."""

    def submit(self, func: Callable, *args: Any) -> Any:
        return (func, args)

    def gather(self, futures: list) -> list:
        return [func(*args) for func, args in futures]

    def close(self) -> None:
        pass


class RayExecutor:
    """Tasks on Ray: the cluster at ``address``, or a local instance with ``workers`` CPUs started here and stopped
    by :meth:`close`. A task whose worker dies is retried by Ray (``MAX_RETRIES``)."""

    MAX_RETRIES = 3

    def __init__(self, *, address: str | None, workers: int | None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise ExecutorUnavailable(
                "--executor ray needs Ray, which is not installed: pip install 'flowocr[ray]'"
            ) from exc
        import logging

        self.ray = ray
        self.started_here = not ray.is_initialized()
        if self.started_here:
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "logging_level": logging.ERROR, "configure_logging": False}  # fmt: skip
            try:
                if address:
                    ray.init(address=address, **kwargs)
                else:
                    ray.init(num_cpus=workers or os.cpu_count() or 1, **kwargs)
            except Exception as exc:  # noqa: BLE001 - Ray's own error types vary by version
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                raise ExecutorUnavailable(f"cannot start {where}: {type(exc).__name__}: {one_line(exc)}") from exc
        self._remote: dict[Callable, Any] = {}

    def submit(self, func: Callable, *args: Any) -> Any:
        remote = self._remote.get(func)
        if remote is None:
            remote = self._remote[func] = self.ray.remote(max_retries=self.MAX_RETRIES, num_cpus=1)(func)
        return remote.remote(*args)

    def gather(self, futures: list) -> list:
        return self.ray.get(futures)

    def wait_one(self, futures: list) -> tuple[Any, list]:
        done, rest = self.ray.wait(futures, num_returns=1)
        return done[0], rest

    def close(self) -> None:
        if self.started_here:
            self.ray.shutdown()


def make_executor(name: str, *, address: str | None = None, workers: int | None = None):
    if name == "ray":
        return RayExecutor(address=address, workers=workers)
    if name == "local":
        if address:
            raise UsageError("--ray-address needs --executor ray")
        return LocalExecutor()
    raise UsageError(f"unknown executor {name!r}; supported values are local, ray")


def clear_checkpoints(videos: Sequence[str], options: RunOptions) -> None:
    """Before a batch that does not resume: no task may continue an older run's checkpoint."""
    from flowocr.output.writers import part_path
    from flowocr.resume import checkpoint_path, remove

    for video in videos:
        remove(checkpoint_path(options.output(video, "json")))
        part_path(options.output(video, "jsonl")).unlink(missing_ok=True)
