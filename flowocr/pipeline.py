"""One OCR run of one video, end to end: probe → sharded frames → OCR only what changed → cues → writers.

:class:`VideoRun` is the controller behind ``flowocr run`` and the Python API (:func:`flowocr.ocr_video`,
:func:`flowocr.iter_cues`). It streams: per-frame results go to the JSONL as they are produced, cues are handed
out as soon as they are final, and the final files (SRT, VTT, ASS, TXT, the report) are written atomically at
the end. A run that fails or is interrupted writes its report with ``complete: false`` and why, keeps what it
streamed in ``<stem>.frames.jsonl.part``, and never writes a partial subtitle file under a final name.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flowocr.cues.model import Cue, FrameText
from flowocr.errors import FlowOcrError, UsageError

if TYPE_CHECKING:
    from flowocr.resume import Checkpoint

FORMATS = ("srt", "vtt", "ass", "txt", "jsonl", "json")
EXTENSIONS = {"srt": ".srt", "vtt": ".vtt", "ass": ".ass", "txt": ".txt", "jsonl": ".frames.jsonl",
              "json": ".report.json"}  # fmt: skip


@dataclass(frozen=True)
class RunOptions:
    """Everything a run can be told. ``formats`` are among :data:`FORMATS`; times are exact seconds."""

    fps: Fraction = Fraction(2)
    area: str = "full"
    whole_area: bool = False
    lang: str = "ch"
    engine: str = "rapidocr"
    formats: tuple[str, ...] = FORMATS
    out_dir: str = "flowocr-out"
    lanes: str | None = None
    decode_shards: int | None = None
    hwaccel: str = "auto"
    block_sec: Fraction = Fraction(20)
    first_block_sec: Fraction = Fraction(2)
    budget_mb: float = 1024.0
    ahead: int | None = None
    no_aux: bool = False
    aux_scale: float = 0.35
    aux_connect: str | None = None
    resume: bool = False

    def __post_init__(self) -> None:
        unknown = [f for f in self.formats if f not in FORMATS]
        if unknown or not self.formats:
            supported = ", ".join(FORMATS)
            raise UsageError(f"invalid format ({', '.join(unknown) or 'none'}); supported values are {supported}")
        if self.fps <= 0:
            raise UsageError(f"--fps must be positive, got {self.fps}")

    def output(self, video: str, fmt: str) -> Path:
        return Path(self.out_dir) / (Path(video).stem + EXTENSIONS[fmt])


@dataclass(frozen=True)
class Segment:
    """A range of a video read on its own: frames ``[start, stop)``; ``watch`` are the frame ranges where the
    reader's state is recorded after each fed frame (around the split points, to stitch there)."""

    start: int
    stop: int
    watch: tuple[tuple[int, int], ...] = ()


@dataclass
class SegmentTrace:
    """What a segment run fed and found: every fed frame, every cue with the fed frame it became final at (the
    stop of the range for those its end forced), and the reader's state at the watched frames."""

    frames: list[FrameText] = field(default_factory=list)
    cues: list[tuple[int, Cue]] = field(default_factory=list)
    states: dict[int, tuple] = field(default_factory=dict)


@dataclass
class RunStats:
    """Counters of one run, for the report and the progress display."""

    frames: int = 0
    ocr_calls: int = 0
    ocr_reused: int = 0
    cues: int = 0
    first_cue_s: float | None = None
    ocr_s: float = 0.0
    decode_wait_s: float = 0.0
    blocks_done: int = 0


Listener = Callable[[str, dict[str, Any]], None]


def _silent(event: str, data: dict[str, Any]) -> None:
    pass


def _error_text(error: BaseException | None) -> str | None:
    """Why a run did not complete, in one line, for its report."""
    from flowocr.errors import Terminated, one_line

    if error is None:
        return None
    if isinstance(error, Terminated):
        return "terminated (SIGTERM) before the end"
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (Ctrl-C) before the end"
    if isinstance(error, FlowOcrError):
        return one_line(error)
    return f"{type(error).__name__}: {one_line(error)}"


def in_background(work: Callable[[], Any], name: str = "flowocr-engine-load"):
    """``work()`` (a model load) on a daemon thread of its own; returns its Future.

    Before the interpreter exits it waits up to 10 s for the thread: ONNX Runtime aborts the process ("terminate
    called without an active exception") when it exits while a session is being created. Bounded, so that a slow
    load (PaddleOCR) cannot hold the exit long."""
    import atexit
    from concurrent.futures import Future

    future: Future = Future()

    def target() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:
            future.set_exception(exc)

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    atexit.register(thread.join, 10.0)
    return future


class VideoRun:
    """One video through the whole pipeline. Iterate :meth:`cues` once; :attr:`report` is set afterwards
    (also after a failure, then with ``complete: false``)."""

    def __init__(
        self, video: str, options: RunOptions, *, listener: Listener | None = None, segment: Segment | None = None,
        detector: str | None = None,
    ) -> None:
        """``segment``: read only a range of the video, write no file, and keep a :class:`SegmentTrace` in
        :attr:`trace` (a task of a split run, :mod:`flowocr.cluster`). ``detector``: the address of a change
        detector the caller started (a batch shares one); without it (and without ``options.aux_connect``) the
        run starts its own."""
        self.video = video
        self.detector_address = detector
        self.options = options
        self.listener = listener or _silent
        self.stats = RunStats()
        self.report: dict[str, Any] = {}
        self.all_cues: list[Cue] = []
        self.segment = segment
        self.trace = None if segment is None else SegmentTrace()
        self._last_fed = -1

    def cues(self) -> Iterator[Cue]:
        from flowocr.cues.builder import CueBuilder
        from flowocr.decode.hwaccel import resolve_lanes
        from flowocr.decode.lane import AuxSpec, main_format_for
        from flowocr.decode.sharded import ShardedSource, ShardOptions
        from flowocr.ocr.area import parse_area
        from flowocr.ocr.engine import check_engine, get_engine
        from flowocr.output.writers import JsonlWriter, make_output_dir
        from flowocr.probe import probe

        opts = self.options
        started = time.monotonic()
        self._started = started
        area_spec = parse_area(opts.area)
        info = probe(self.video)
        self.info = info
        # The models load (about 0.3 s) while the decoders and the detector start: first text comes sooner.
        check_engine(opts.engine, lang=opts.lang)
        self._engine_loading = in_background(lambda: get_engine(opts.engine, lang=opts.lang))
        lanes, notes = resolve_lanes(self.video, lanes=opts.lanes, shards=opts.decode_shards, hwaccel=opts.hwaccel)
        self.hw_notes = notes
        rect = area_spec.rect(info.display_width, info.display_height)
        if area_spec.is_auto:
            rect = self._auto_area(info, self.engine)
        self.area = rect
        self.listener("area", {"area": str(rect), "auto": area_spec.is_auto})
        if self.segment is None:
            make_output_dir(opts.out_dir)
        state = self._resume_state()
        aux = None
        if not opts.no_aux:
            from flowocr.ocr.reuse import STROKE_WIDTH

            # The detector reads stroke maps at most STROKE_WIDTH wide: the aux stream is never sent wider.
            aux = AuxSpec(scale=opts.aux_scale, area=(rect.x, rect.y, rect.w, rect.h), max_width=STROKE_WIDTH)
        source = ShardedSource(info, lanes, ShardOptions(
            fps=opts.fps, block_sec=opts.block_sec, first_block_sec=opts.first_block_sec,
            budget_mb=opts.budget_mb, ahead=opts.ahead, aux=aux,
            from_index=self.segment.start if self.segment else 0 if state is None else state.frame,
            until_index=self.segment.stop if self.segment else None, main_format=main_format_for(info),
        ))  # fmt: skip
        self.source = source
        self.jsonl = None
        if "jsonl" in opts.formats and self.segment is None:
            resume_at = None if state is None else state.jsonl_bytes
            self.jsonl = JsonlWriter(opts.output(self.video, "jsonl"), resume_at=resume_at)
        self.builder = CueBuilder()
        complete = False
        error: BaseException | None = None
        sampler = None
        try:
            # Decoding starts before the change detector: its process takes a moment to start listening.
            source.start()
            sampler = self.sampler = _PixelSampler(self) if aux is None else _ChangeSampler(self, aux)
            if state is not None:
                sampler.resume(state)
            waited = time.monotonic()
            for frame in source:
                self.stats.decode_wait_s += time.monotonic() - waited
                if not self._engine_loading.done():
                    # The decoders are running now; let the models finish loading before this thread takes the
                    # GIL to forward frames.
                    self._engine_loading.exception()
                yield from sampler.take(frame)
                waited = time.monotonic()
            yield from sampler.finish()
            index = source.index
            stop = len(index) if self.segment is None else min(self.segment.stop, len(index))
            self._last_fed = stop
            if stop == len(index):
                for cue in self.builder.finish(index.duration, len(index)):
                    yield self._emit(sampler.refine(cue))
            else:  # the end of a range, not of the video: these cues are never used (see flowocr.cluster)
                for cue in self.builder.finish(index.seconds(stop), stop):
                    yield self._emit(cue)
            complete = True
        except BaseException as exc:
            error = exc
            raise
        finally:
            if sampler is not None:
                sampler.close()
            source.close()
            if self.jsonl is not None:
                self.jsonl.close(complete=complete)
            self._finish(complete, error, started)

    def _resume_state(self):
        """The checkpoint to continue from (``--resume``), after checking it fits; a fresh run drops any."""
        from flowocr import resume as resuming
        from flowocr.output.writers import part_path

        opts = self.options
        self.resumed_from = None
        if self.segment is not None:
            return None
        self._checkpoint_file = resuming.checkpoint_path(opts.output(self.video, "json"))
        self._checkpoint_at = time.monotonic()
        if not opts.resume:
            resuming.remove(self._checkpoint_file)
            return None
        state, why = resuming.load(self._checkpoint_file, video=self.video, options=opts)
        if state is not None and ("jsonl" in opts.formats) != (state.jsonl_bytes is not None):
            state, why = None, "the stopped run wrote per-frame JSONL and this one does not, or the reverse: " \
                               "starting from the beginning"  # fmt: skip
        part = part_path(opts.output(self.video, "jsonl"))
        if state is not None and state.jsonl_bytes is not None and (
            not part.exists() or part.stat().st_size < state.jsonl_bytes
        ):
            state, why = None, f"{part} is missing or shorter than the checkpoint says: starting from the beginning"
        self.listener("note", {"message": f"{self.video}: {why}"})
        if state is None:
            resuming.remove(self._checkpoint_file)
            return None
        self.resumed_from = state.frame
        self.all_cues = list(state.cues)
        for key, value in state.stats.items():
            setattr(self.stats, key, value)
        return state

    def checkpoint(self, index: int, lines: tuple, ref_index: int | None) -> None:
        """After frame ``index`` was fed (and its cues emitted): write a checkpoint if this is a quiet point (no
        text on the frame, no open cue) and the last one is ``CHECKPOINT_EVERY_S`` old (:mod:`flowocr.resume`).
        A segment run writes none; it records the reader's state at its watched frames instead."""
        from flowocr import resume as resuming

        if self.trace is not None:
            if any(lo <= index < hi for lo, hi in self.segment.watch):
                self.trace.states[index] = (self.builder.snapshot(), self.sampler.snapshot())
            return
        if lines or not self.builder.idle:
            return
        now = time.monotonic()
        if index == 0 or now - self._checkpoint_at < resuming.checkpoint_every_s():
            return  # nothing done yet worth keeping, or the last one is recent
        self._checkpoint_at = now
        stats = self.stats
        aux = getattr(self, "aux_stats", None) or {}
        resuming.save(self._checkpoint_file, resuming.Checkpoint(
            video=resuming.video_identity(self.video), options=resuming.result_options(self.options), frame=index,
            ref_index=ref_index, jsonl_bytes=None if self.jsonl is None else self.jsonl.sync(),
            cues=list(self.all_cues),
            stats={"frames": stats.frames, "ocr_calls": stats.ocr_calls, "ocr_reused": stats.ocr_reused,
                   "cues": stats.cues},
            aux={"extra_frames": aux.get("extra_frames", 0), "change_points": aux.get("change_points", 0)},
        ))  # fmt: skip

    def fetch(self, i: int):
        """Frame ``i`` decoded on its own (full size, as the source delivers it), or None when the source does
        not yield it."""
        from flowocr.decode.lane import BlockDecoder
        from flowocr.plan import Block
        from flowocr.probe import keyframe_at_or_before

        index = self.source.index
        block = Block(0, i, i + 1, keyframe_at_or_before(index, i))
        decoder = BlockDecoder(self.info, index, block, [i], main_format=self.source.options.main_format)
        for frame in decoder.frames():
            return frame
        return None

    def area_strokes(self, frame):
        """The stroke map of ``frame``'s text area (:func:`flowocr.ocr.reuse.strokes`); none for a missing frame."""
        from flowocr.ocr.reuse import frame_strokes

        if frame is None:
            return None
        rect = self.area
        return frame_strokes(frame, (rect.x, rect.y, rect.w, rect.h))

    @property
    def engine(self):
        """The OCR engine, once its models are loaded (raises what loading raised)."""
        return self._engine_loading.result()

    def ocr(self, image, strokes=None) -> tuple:
        """OCR one full frame inside the text area; lines in frame pixels.

        With the area's stroke map (:func:`flowocr.ocr.reuse.strokes`), only the bands of the area that hold
        strokes are read (:func:`flowocr.ocr.area.stroke_bands`), in one engine call; ``--whole-area`` reads the
        whole area always.
        """
        from flowocr.ocr.area import crop, result_to_frame, stroke_bands

        rect, info = self.area, self.info
        t = time.monotonic()
        if strokes is None or self.options.whole_area:
            bands = [rect]
        else:
            bands = stroke_bands(strokes.mask.any(axis=1), strokes.scale, rect, info.display_height)
        if bands == [rect] and rect.is_full(info.display_width, info.display_height):
            lines = self.engine.recognize([image])[0].lines
        else:
            results = self.engine.recognize([crop(image, band) for band in bands])
            lines = tuple(line for band, result in zip(bands, results) for line in result_to_frame(result, band).lines)
        self.stats.ocr_s += time.monotonic() - t
        self.stats.ocr_calls += 1
        return lines

    def feed(self, index: int, pts: int, lines: tuple, reused: bool) -> list[Cue]:
        """One OCR'd (or reused) frame into the JSONL and the cue builder; the cues that became final."""
        text = FrameText(index, pts, self.source.index.seconds(index), lines, reused)
        self._last_fed = index
        if self.trace is not None:
            self.trace.frames.append(text)
        self.stats.frames += 1
        if reused:
            self.stats.ocr_reused += 1
        if self.jsonl is not None:
            self.jsonl.write(text)
        if self.listener is not _silent:
            stats, duration = self.stats, self.info.duration
            self.listener("frame", {
                "index": index, "time": float(text.time), "reused": reused,
                "duration": None if duration is None else float(duration),
                "elapsed_s": time.monotonic() - self._started, "ocr_calls": stats.ocr_calls,
                "ocr_reused": stats.ocr_reused, "cues": stats.cues, "first_cue_s": stats.first_cue_s,
                **self.source.progress(),
            })  # fmt: skip
        return self.builder.feed(text)

    def _emit(self, cue: Cue) -> Cue:
        if self.trace is not None:
            self.trace.cues.append((self._last_fed, cue))
        self.stats.cues += 1
        if self.stats.first_cue_s is None:
            self.stats.first_cue_s = time.monotonic() - self._started
        self.all_cues.append(cue)
        self.listener("cue", {"cue": cue})
        return cue

    def _auto_area(self, info, engine):
        """``--area auto``: OCR a few full frames spread over the video, keep the band where text recurs."""
        from flowocr.decode.lane import BlockDecoder
        from flowocr.ocr.area import find_text_band
        from flowocr.plan import Block
        from flowocr.probe import keyframe_at_or_before, sample_grid, scan_index

        index = scan_index(info)
        grid = sample_grid(index, self.options.fps)
        picks = sorted({grid[round(k * (len(grid) - 1) / 7)] for k in range(1, 7)}) if len(grid) > 2 else grid
        images = []
        for i in picks:
            block = Block(0, i, i + 1, keyframe_at_or_before(index, i))
            images += [f.image for f in BlockDecoder(info, index, block, [i]).frames()]
        results = engine.recognize(images) if images else []
        self.stats.ocr_calls += len(images)
        return find_text_band(results, info.display_width, info.display_height)

    def _finish(self, complete: bool, error: BaseException | None, started: float) -> None:
        from flowocr.errors import OutputError
        from flowocr.output.writers import write_json, write_subtitles

        opts = self.options
        output_failure: OutputError | None = None
        if complete and self.segment is None:
            info = self.info
            try:
                write_subtitles(self.all_cues, {f: opts.output(self.video, f) for f in opts.formats},
                                info.display_width, info.display_height)  # fmt: skip
            except OutputError as exc:
                complete, error, output_failure = False, exc, exc
        if complete:
            if hasattr(self, "_checkpoint_file"):
                from flowocr import resume as resuming

                resuming.remove(self._checkpoint_file)
        source = getattr(self, "source", None)
        self.report = {
            "video": self.video,
            "complete": complete,
            "error": _error_text(error),
            "facts": self.info.to_json() if hasattr(self, "info") else None,
            "options": {k: (float(v) if isinstance(v, Fraction) else v) for k, v in asdict(opts).items()},
            "area": str(self.area) if hasattr(self, "area") else None,
            "cues": self.stats.cues,
            "ocr": {"calls": self.stats.ocr_calls, "reused": self.stats.ocr_reused, "engine": opts.engine,
                    "lang": opts.lang},  # fmt: skip
            "timing": {
                "total_s": round(time.monotonic() - started, 3),
                "first_cue_s": None if self.stats.first_cue_s is None else round(self.stats.first_cue_s, 3),
                "ocr_s": round(self.stats.ocr_s, 3),
                "decode_wait_s": round(self.stats.decode_wait_s, 3),
            },
            "frames_sampled": self.stats.frames,
            "timing_accuracy": "sample" if opts.no_aux else "frame",
            "resumed_from": getattr(self, "resumed_from", None),
            "aux": getattr(self, "aux_stats", None),
            "decode": source.report() if source is not None else None,
            "hw_notes": getattr(self, "hw_notes", []),
        }
        if "json" in opts.formats and (hasattr(self, "info") or complete) and self.segment is None:
            try:
                write_json(opts.output(self.video, "json"), self.report)
            except OSError:
                if complete:
                    raise
        if output_failure is not None:
            raise output_failure


@dataclass
class BatchResult:
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


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


class _PixelSampler:
    """``--no-aux``: a sampled frame is OCR'd unless the pixel test on its own text area says nothing changed
    since the last OCR'd frame (:mod:`flowocr.ocr.reuse`). Cue times are those of the samples."""

    def __init__(self, run: VideoRun) -> None:
        from flowocr.ocr.reuse import ChangeTest

        self.run = run
        self.test = ChangeTest()
        self.ref = None
        self.ref_index: int | None = None  # the frame whose strokes are ``ref``
        self.ref_lines: tuple = ()
        self.after = -1  # a resumed run skips the main frames up to its checkpoint

    def resume(self, state: Checkpoint) -> None:
        self.after, self.ref_index = state.frame, state.ref_index

    def snapshot(self) -> tuple:
        """What decides this sampler's later choices (with the frames themselves)."""
        return self.ref_index, self.ref_lines

    def take(self, frame) -> Iterator[Cue]:
        if frame.stream != "main" or frame.index <= self.after:
            return
        if self.ref is None and self.ref_index is not None:
            self.ref = self.run.area_strokes(self.run.fetch(self.ref_index))
        rect = self.run.area
        now = self.run.area_strokes(frame)
        if self.ref is not None and not self.test.changed(now, self.ref, self.ref_lines, (rect.x, rect.y)):
            lines, reused = self.ref_lines, True
        else:
            lines, reused = self.run.ocr(frame.image, now), False
            self.ref, self.ref_index, self.ref_lines = now, frame.index, lines
        for cue in self.run.feed(frame.index, frame.pts, lines, reused):
            yield self.run._emit(cue)
        self.run.checkpoint(frame.index, lines, self.ref_index)

    def finish(self) -> Iterator[Cue]:
        return iter(())

    def refine(self, cue: Cue) -> Cue:
        return cue

    def close(self) -> None:
        pass


class _ChangeSampler:
    """With the aux stream: every frame goes (small, grey, cropped to the text area) to the change detector
    process over TCP, in block order; its per-frame changes decide everything else.

    - A sampled frame is OCR'd only when the pixel test of its text area against the last OCR'd frame says the
      text changed (:mod:`flowocr.ocr.reuse`, at full size with the last boxes), or when the detector saw a
      change since the last fed frame that the pixel test cannot vouch for (text it barely sees, or an empty
      area: :meth:`~flowocr.ocr.reuse.ChangeTest.unchanged`); otherwise the result is reused.
    - When the text changed twice or more between two samples (a cue shorter than the sampling step), the frame
      after each intermediate change is decoded at full size and OCR'd too, so no cue falls between samples.
    - A final cue's start moves to the frame where its text appeared (the strongest change between the previous
      fed frame and its first reading; for a text replacing another in its place, anchored where that one
      vanished: :func:`~flowocr.aux.detector.appeared_at`) and its end to where the text vanished
      (:func:`~flowocr.aux.detector.vanished_at`): frame-exact times.
    """

    MIN_STATE_FRAMES = 3  # a text state shorter than this between two samples is a transition, not a cue

    def __init__(self, run: VideoRun, aux) -> None:
        from flowocr.aux.client import AuxLink, Detector

        self.run = run
        self.aux = aux
        self.detector = None
        address = run.options.aux_connect or run.detector_address
        if address is None:
            self.detector = Detector()
            address = self.detector.address
        try:
            self.link = AuxLink(address)
        except BaseException:
            self.close()
            raise
        from flowocr.ocr.reuse import ChangeTest

        self.test = ChangeTest()
        self.ref = None
        self.ref_index: int | None = None  # the frame whose strokes are ``ref``
        self.after = -1  # a resumed run skips the main frames up to its checkpoint
        self.pending: list = []  # main frames waiting for the detector to cover them
        self.next_aux = 0
        self.fed: list[int] = []  # indices fed to the cue builder, in order
        self.places: dict[int, tuple] = {}  # fed index -> the boxes of its lines (frame pixels)
        self.last_lines: tuple = ()
        self.extra_frames = 0
        self.change_points = 0
        run.aux_stats = {"detector": address, "frames_sent": 0, "change_points": 0, "extra_frames": 0,
                         "frame_size": "x".join(str(v) for v in aux.size(run.info))}  # fmt: skip

    def resume(self, state: Checkpoint) -> None:
        """Continue after ``state.frame``: the aux stream starts there (its change is never read), the last fed
        frame is that one, the reference strokes are those of ``state.ref_index`` (decoded again)."""
        self.after = self.next_aux = state.frame
        self.fed = [state.frame]
        self.ref_index = state.ref_index
        self.extra_frames, self.change_points = state.aux.get("extra_frames", 0), state.aux.get("change_points", 0)
        self.run.aux_stats.update(extra_frames=self.extra_frames, change_points=self.change_points)

    def snapshot(self) -> tuple:
        """What decides this sampler's later choices (with the frames and the detector's changes after them)."""
        return self.ref_index, self.last_lines

    def take(self, frame) -> Iterator[Cue]:
        from flowocr.aux.client import AuxError

        index = self.run.source.index
        if frame.stream == "aux":
            # A forward jump skips frames the source itself lacks (the sharded source checked them before it handed
            # this frame on; a lost one would have stopped it): the detector compares across the gap.
            if frame.index < self.next_aux:
                raise AuxError(
                    f"{self.run.video}: the aux stream went back from frame {self.next_aux - 1} to {frame.index}"
                )
            if frame.pts != index.pts_of(frame.index):
                raise AuxError(f"{self.run.video}: aux frame {frame.index} has pts {frame.pts}, the index says "
                               f"{index.pts_of(frame.index)}")  # fmt: skip
            self.link.send(frame.index, frame.pts, frame.data)  # the text area only, scaled (AuxSpec)
            self.next_aux = frame.index + 1
            self.run.aux_stats["frames_sent"] += 1
        elif frame.index > self.after:
            self.pending.append(frame)
        yield from self._decide_ready(wait=False)

    def finish(self) -> Iterator[Cue]:
        from flowocr.aux.client import AuxError

        if self.pending and self.next_aux <= self.pending[-1].index:
            raise AuxError(f"{self.run.video}: the aux stream ended at frame {self.next_aux}, before main frame "
                           f"{self.pending[-1].index}")  # fmt: skip
        self.link.finish()
        yield from self._decide_ready(wait=True)

    def _decide_ready(self, wait: bool) -> Iterator[Cue]:
        while self.pending:
            frame = self.pending[0]
            if frame.index >= self.next_aux:
                return  # its aux frame has not arrived yet
            if not wait and frame.index not in self.link.results:
                return
            self.link.wait_for(frame.index)
            self.pending.pop(0)
            yield from self._decide(frame)

    def _changes(self, lo: int, hi: int) -> list:
        """The detector's changes at frames (lo, hi] (frames the source lacks have none)."""
        results = self.link.results
        return [results[j] for j in range(lo + 1, hi + 1) if j in results]

    def _decide(self, frame) -> Iterator[Cue]:
        from flowocr.aux.detector import spikes

        run = self.run
        rect = run.area
        if self.ref is None and self.ref_index is not None:
            self.ref = run.area_strokes(run.fetch(self.ref_index))
        now = run.area_strokes(frame)
        previous = self.fed[-1] if self.fed else None
        peaks: list = []
        if previous is not None:
            peaks = spikes(self._changes(previous, frame.index))
            self.change_points += len(peaks)
            run.aux_stats["change_points"] = self.change_points
            # Text states between two samples (a cue shorter than the step): read the frame after each change.
            for a, b in zip(peaks, peaks[1:]):
                if b.index - a.index >= self.MIN_STATE_FRAMES:
                    extra = run.fetch(a.index)
                    if extra is not None:
                        self.extra_frames += 1
                        run.aux_stats["extra_frames"] = self.extra_frames
                        self.ref, self.ref_index = run.area_strokes(extra), a.index
                        lines = run.ocr(extra.image, self.ref)
                        yield from self._feed(a.index, run.source.index.pts_of(a.index), lines, False)
        origin = (rect.x, rect.y)
        if self.ref is None and now.count == 0:
            # Not one stroke pixel (bright next to dark) in the area: nothing to read, and the pixel test will
            # see the first strokes that appear. No OCR call for a blank opening.
            self.ref, self.ref_index = now, frame.index
            yield from self._feed(frame.index, frame.pts, (), True)
            return
        if self.ref is not None and self.test.unchanged(now, self.ref, self.last_lines, origin, spiked=bool(peaks)):
            yield from self._feed(frame.index, frame.pts, self.last_lines, True)
            return
        if self.ref is not None and self.test.vanished(now, self.ref, self.last_lines, origin):
            self.ref, self.ref_index = now, frame.index  # the text is gone, nothing replaced it: empty, no OCR
            yield from self._feed(frame.index, frame.pts, (), True)
            return
        self.ref, self.ref_index = now, frame.index
        yield from self._feed(frame.index, frame.pts, run.ocr(frame.image, now), False)

    def _feed(self, index: int, pts: int, lines: tuple, reused: bool) -> Iterator[Cue]:
        self.fed.append(index)
        if lines:
            self.places[index] = tuple(line.bounds for line in lines)
        self.last_lines = lines
        for cue in self.run.feed(index, pts, lines, reused):
            yield self.run._emit(self.refine(cue))
        self.run.checkpoint(index, lines, self.ref_index)

    def refine(self, cue: Cue) -> Cue:
        """Frame-exact start and end from the detector's changes around the cue's first and last readings."""
        from dataclasses import replace

        from flowocr.aux.detector import appeared_at, vanished_at

        index = self.run.source.index
        start_index, end_index = cue.start_index, cue.end_index
        pos = bisect_left(self.fed, start_index)
        if pos > 0:
            before = self.fed[pos - 1]
            found = appeared_at(self._changes(before, start_index), replacing=self._shown_in_place(before, cue.box))
            start_index = start_index if found is None else found
        pos = bisect_left(self.fed, end_index)
        if pos > 0:
            # Lasting to the end of the stream, the text may still vanish after the last sample.
            window = self._changes(self.fed[pos - 1], min(end_index, len(index) - 1))
            found = vanished_at(window, at_end=end_index == len(index))
            end_index = end_index if found is None else found
        start = index.seconds(start_index)
        end = index.seconds(end_index) if end_index < len(index) else cue.end
        if end <= start:
            return cue
        return replace(cue, start=start, end=end, start_index=start_index, end_index=end_index)

    def _shown_in_place(self, fed_index: int, box) -> bool:
        """Whether the fed frame ``fed_index`` showed a line in the place of ``box`` (:func:`same_place`)."""
        from flowocr.cues.builder import same_place

        return any(same_place(place, box) for place in self.places.get(fed_index, ()))

    def close(self) -> None:
        link = getattr(self, "link", None)
        if link is not None:
            link.close()
        if self.detector is not None:
            self.detector.stop()
