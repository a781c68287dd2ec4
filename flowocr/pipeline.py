"""One OCR run of one video, end to end: probe → sharded frames → OCR only what changed → cues → writers.

:class:`VideoRun` is the controller behind ``flowocr run`` and the Python API (:func:`flowocr.ocr_video`,
:func:`flowocr.iter_cues`). It streams: per-frame results go to the JSONL as they are produced, cues are handed
out as soon as they are final, and the final files (SRT, VTT, ASS, TXT, the report) are written atomically at
the end. A run that fails or is interrupted writes its report with ``complete: false`` and why, keeps what it
streamed in ``<stem>.frames.jsonl.part``, and never writes a partial subtitle file under a final name.
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from flowocr.cues.model import Cue, FrameText
from flowocr.errors import FlowOcrError, UsageError, raise_if_stopped, stop_delivered

FORMATS = ("srt", "vtt", "ass", "txt", "jsonl", "json", "html")
EXTENSIONS = {"srt": ".srt", "vtt": ".vtt", "ass": ".ass", "txt": ".txt", "jsonl": ".frames.jsonl",
              "json": ".report.json", "html": ".review.html"}  # fmt: skip


@dataclass(frozen=True)
class RunOptions:
    """Everything a run can be told. ``formats`` are among :data:`FORMATS`; times are exact seconds."""

    fps: Fraction = Fraction(2)
    area: str = "full"
    whole_area: bool = False
    lang: str = "ch"
    engine: str = "auto"  # resolved to the engine that reads ``lang`` (flowocr.ocr.langs)
    device: str = "auto"  # where the OCR models run: auto, cpu, cuda (flowocr.ocr.device)
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
    reader_log: bool = False  # write the reader's decisions to <stem>.reader.jsonl
    keep_overlays: bool = False  # write overlays (flowocr.cues.overlay) as cues in the subtitle files too
    exact_boundaries: bool = False  # check placed boundaries by looks at full size (ChangeReader.VERIFY_PLACED)

    def __post_init__(self) -> None:
        unknown = [f for f in self.formats if f not in FORMATS]
        if unknown or not self.formats:
            supported = ", ".join(FORMATS)
            raise UsageError(f"invalid format ({', '.join(unknown) or 'none'}); supported values are {supported}")
        if self.fps <= 0:
            raise UsageError(f"--fps must be positive, got {self.fps}")
        from flowocr.ocr.device import check_device
        from flowocr.ocr.engine import resolve_engine

        check_device(self.device)
        object.__setattr__(self, "engine", resolve_engine(self.engine, self.lang))  # "auto" -> the engine for lang

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
    #: with the review page: the JPEG crop of each cue that has one (:class:`~flowocr.output.review.CropKeeper`)
    crops: dict[Cue, bytes] = field(default_factory=dict)


@dataclass
class RunStats:
    """Counters of one run, for the report and the progress display."""

    frames: int = 0
    ocr_calls: int = 0
    ocr_reused: int = 0
    ocr_probes: int = 0  # detections alone (a reading reused on their boxes: flowocr.read.reader.ChangeReader)
    cues: int = 0
    first_cue_s: float | None = None
    first_block_s: float | None = None  # the first decoded frame handed over (from the first block)
    first_ocr_s: float | None = None  # the first OCR call done
    ocr_s: float = 0.0
    ocr_det_cpu_s: float = 0.0  # CPU of the run's thread in the OCR models' detection and recognition
    ocr_rec_cpu_s: float = 0.0
    detector_cpu_s: float | None = None  # the change detector's process, when this run started it
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


#: Engines (by ``id``; they live as long as the process) whose model load a run report has counted already.
_reported_loads: set[int] = set()
_reported_lock = threading.Lock()


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


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
        self.overlays: list[dict[str, Any]] = []  # flowocr.cues.overlay, set when a run ends
        self.crops = None  # with the review page: crops of the text read (flowocr.output.review.CropKeeper)
        # a split run's task hands its cues' crops to the driver in its trace
        self.cue_crops: dict[Cue, bytes] = {} if self.trace is None else self.trace.crops

    def cues(self) -> Iterator[Cue]:
        from flowocr.cues.builder import CueBuilder
        from flowocr.ocr.area import parse_area
        from flowocr.probe import probe

        started = time.monotonic()
        self._started = started
        from flowocr.system import process_cpu_s

        self._process_cpu0 = process_cpu_s()
        area_spec = parse_area(self.options.area)
        info = probe(self.video)
        self.info = info
        self.source = self.jsonl = self.detector = self.link = None
        self.builder = CueBuilder()
        complete = False
        error: BaseException | None = None
        try:  # from here on every failure, expected or not, is in the run's report (_finish)
            aux, state = self._prepare(info, area_spec)
            source = self.source
            # Decoding starts before the change detector: its process takes a moment to start listening.
            source.start()
            gate = self._open_reader(aux, state)
            reader = self.reader
            waited = time.monotonic()
            for frame in source:
                raise_if_stopped()
                self.stats.decode_wait_s += time.monotonic() - waited
                if self.stats.first_block_s is None:
                    self.stats.first_block_s = time.monotonic() - started
                if not self._engine_loading.done():
                    # The decoders are running now; let the models finish loading before this thread takes the
                    # GIL to forward frames.
                    self._engine_loading.exception()
                for ready in [frame] if gate is None else gate.take(frame):
                    yield from self._take(reader.read(ready))
                waited = time.monotonic()
            if gate is not None:
                for ready in gate.finish():
                    yield from self._take(reader.read(ready))
            yield from self._take(reader.finish())
            index = source.index
            stop = len(index) if self.segment is None else min(self.segment.stop, len(index))
            self._last_fed = stop
            if stop == len(index):
                for cue in self.builder.finish(index.duration, len(index)):
                    settled = reader.settle(cue)
                    if settled is not None:
                        yield self._emit(settled)
                self._count_aux()
            else:  # the end of a range, not of the video: these cues are never used (see flowocr.cluster)
                for cue in self.builder.finish(index.seconds(stop), stop):
                    yield self._emit(cue)
            complete = True
        except BaseException as exc:
            error = exc
            if isinstance(exc, KeyboardInterrupt):
                stop_delivered()
            raise
        finally:
            self._close_aux()
            if self.source is not None:
                self.source.close()
            self._finish(complete, error, started)

    def _prepare(self, info, area_spec):
        """Everything a run needs before its first frame: the engine loading, the lanes, the text area, the output
        folder, the checkpoint to resume from, the sharded source (:attr:`source`, not started) and the JSONL
        stream (:attr:`jsonl`). Returns the aux stream's spec and the checkpoint (each None when there is none)."""
        from flowocr.decode.hwaccel import resolve_lanes
        from flowocr.decode.lane import AuxSpec, main_format_for
        from flowocr.decode.sharded import ShardedSource, ShardOptions
        from flowocr.ocr.engine import check_engine, get_engine
        from flowocr.output.writers import JsonlWriter, make_output_dir

        opts = self.options
        # The models load (about 0.3 s) while the decoders and the detector start: first text comes sooner.
        check_engine(opts.engine, lang=opts.lang, device=opts.device)
        self._engine_loading = in_background(lambda: get_engine(opts.engine, lang=opts.lang, device=opts.device))
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
        start = self.segment.start if self.segment else 0 if state is None else state.frame
        if not opts.no_aux:
            from flowocr.ocr.strokes import STROKE_WIDTH
            from flowocr.read.events import CONTEXT

            # The detector reads stroke maps at most STROKE_WIDTH wide: the aux stream is never sent wider.
            aux = AuxSpec(scale=opts.aux_scale, area=(rect.x, rect.y, rect.w, rect.h), max_width=STROKE_WIDTH)
            if state is not None:
                # The reader's first window after the checkpoint compares the frames just before it: the detector
                # sees them again (and one more, its own left context), so it answers as in one reading.
                start = max(0, start - CONTEXT - 1)
        self.source = ShardedSource(info, lanes, ShardOptions(
            fps=opts.fps, block_sec=opts.block_sec, first_block_sec=opts.first_block_sec,
            budget_mb=opts.budget_mb, ahead=opts.ahead, aux=aux,
            from_index=start,
            until_index=self.segment.stop if self.segment else None, main_format=main_format_for(info),
        ))  # fmt: skip
        if "html" in opts.formats:  # a split run's page too: its tasks keep the crops of their cues
            from flowocr.output.review import CropKeeper

            self.crops = CropKeeper()
        if "jsonl" in opts.formats and self.segment is None:
            resume_at = None if state is None else state.jsonl_bytes
            self.jsonl = JsonlWriter(opts.output(self.video, "jsonl"), resume_at=resume_at)
        return aux, state

    def _open_reader(self, aux, state):
        """The reader (:mod:`flowocr.read`) for this run, and with the aux stream the gate that forwards it to the
        change detector (started here unless the run was given one); None without it."""
        from flowocr.aux.client import AuxGate, AuxLink, Detector
        from flowocr.read.events import CONTEXT, CellMap
        from flowocr.read.reader import ChangeReader, PixelReader, ReadTools, box_grey

        rect = self.area
        tools = ReadTools(strokes=self.area_strokes, ocr=self.ocr, fetch=self.fetch, index=self.source.index,
                          origin=(rect.x, rect.y), probe=None if self.options.whole_area else self.probe,
                          crop=box_grey, crops=self.box_greys)  # fmt: skip
        after = -1 if state is None else state.frame
        log = None
        if self.options.reader_log:
            import json

            path = Path(self.options.out_dir) / (Path(self.video).stem + ".reader.jsonl")
            path.parent.mkdir(parents=True, exist_ok=True)
            sink = self._reader_log = open(path, "w", encoding="utf-8")  # noqa: SIM115

            def log(record: dict) -> None:
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")

        if aux is None:
            self.reader = PixelReader(tools, log=log)
            gate = None
        else:
            address = self.options.aux_connect or self.detector_address
            if address is None:
                self.detector = Detector()
                address = self.detector.address
            self.link = AuxLink(address)
            aux_w, aux_h = aux.size(self.info)
            cells = CellMap(rect.x, rect.y, rect.w, rect.h, aux_w, aux_h)
            self.reader = ChangeReader(tools, self.link.results, cells, log=log, forget=self.link.forget_before)
            self.reader.VERIFY_PLACED = self.options.exact_boundaries
            gate = AuxGate(self.link, self.source.index, self.video, after=after, lookahead=CONTEXT)
            self.aux_stats = {"detector": address, "frames_sent": 0, "change_points": 0, "extra_frames": 0,
                              "unsteady_letters": 0, "sought_frames": 0,
                              "frame_size": "x".join(str(v) for v in aux.size(self.info))}  # fmt: skip
            if state is not None:
                self.reader.extra_frames = state.aux.get("extra_frames", 0)
                self.reader.change_points = state.aux.get("change_points", 0)
                self.reader.unsteady = state.aux.get("unsteady_letters", 0)
                self.reader.sought = state.aux.get("sought_frames", 0)
        self._gate = gate
        if state is not None:
            self.reader.resume(state.frame, state.ref_index)
        return gate

    def _take(self, readings) -> Iterator[Cue]:
        """Readings into the JSONL and the cue builder; the cues that became final, refined by the reader."""
        reader = self.reader
        for r in readings:
            if self.crops is not None and not r.reused:
                self.crops.settle(r.index)  # one reading per OCR call, in the order of the calls
            for cue in self.feed(r.index, r.pts, r.lines, r.reused):
                settled = reader.settle(cue)  # refined, or None: a lone letter that did not hold still
                if settled is not None:
                    yield self._emit(settled)
            self._count_aux()
            self.checkpoint(r.index, r.lines, r.ref_index)
        oldest = self.builder.oldest_open()
        reader.forget_before(oldest)
        if self.crops is not None:
            self.crops.discard_pending()
            self.crops.forget_before(self._last_fed + 1 if oldest is None else oldest)

    def _count_aux(self) -> None:
        """The change reader's counters into the report's ``aux`` (with the detector only)."""
        if self._gate is not None:
            reader = self.reader
            self.aux_stats.update(frames_sent=self._gate.sent, change_points=reader.change_points,
                                  extra_frames=reader.extra_frames, unsteady_letters=reader.unsteady,
                                  sought_frames=reader.sought)  # fmt: skip

    def _close_aux(self) -> None:
        if getattr(self, "_reader_log", None) is not None:
            self._reader_log.close()
        if self.link is not None:
            self.link.close()
        if self.detector is not None:
            from flowocr.system import process_cpu_s

            # every result is in: what it does from here on is shutting down
            self.stats.detector_cpu_s = process_cpu_s(self.detector.proc.pid)
            self.detector.stop()

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
                self.trace.states[index] = (self.builder.snapshot(), self.reader.snapshot())
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
                   "ocr_probes": stats.ocr_probes, "cues": stats.cues},
            aux={"extra_frames": aux.get("extra_frames", 0), "change_points": aux.get("change_points", 0),
                 "unsteady_letters": aux.get("unsteady_letters", 0), "sought_frames": aux.get("sought_frames", 0)},
        ))  # fmt: skip

    def fetch(self, i: int):
        """Frame ``i`` decoded on its own (full size, as the source delivers it), or None when the source does
        not yield it."""
        return next(self._decoded([i]), None)

    def _decoded(self, indices: list[int]):
        """The frames ``indices`` (sorted, full size, as the source delivers them), decoded by one process from the
        keyframe before the first."""
        from flowocr.decode.lane import BlockDecoder
        from flowocr.plan import Block
        from flowocr.probe import keyframe_at_or_before

        index = self.source.index
        block = Block(0, indices[0], indices[-1] + 1, keyframe_at_or_before(index, indices[0]))
        decoder = BlockDecoder(self.info, index, block, indices, main_format=self.source.options.main_format)
        return iter(decoder.frames())

    def box_greys(self, indices: list[int], box: tuple[int, int, int, int]) -> dict:
        """The grey levels of ``box`` (x0 y0 x1 y1, frame pixels) on the frames ``indices`` (sorted), decoded by one
        process from the keyframe before the first (:func:`flowocr.read.reader.box_grey`); a frame the source does
        not yield is left out."""
        from flowocr.read.reader import box_grey

        wanted = [i for i in indices if 0 <= i < len(self.source.index)]
        return {frame.index: box_grey(frame, box) for frame in self._decoded(wanted)} if wanted else {}

    def area_strokes(self, frame):
        """The stroke map of ``frame``'s text area (:func:`flowocr.ocr.strokes.frame_strokes`); none for a missing
        frame."""
        from flowocr.ocr.strokes import frame_strokes

        if frame is None:
            return None
        rect = self.area
        return frame_strokes(frame, (rect.x, rect.y, rect.w, rect.h))

    @property
    def engine(self):
        """The OCR engine, once its models are loaded (raises what loading raised)."""
        return self._engine_loading.result()

    def ocr(self, image, strokes=None, rows=(), lines=(), slop=0, whole=False, known=()) -> tuple:
        """OCR one full frame inside the text area; lines in frame pixels. ``known``: lines read before that a box
        the detector finds keeps, unrecognised (:func:`flowocr.ocr.area.read_frame`).

        With the area's stroke map (:func:`flowocr.ocr.strokes.frame_strokes`), only the bands of the area that hold
        strokes, the row spans ``lines`` of lines read before and the parts of the cell spans ``rows`` where the change
        detector saw text change that are ``slop`` tall (frame pixels) are read (:func:`flowocr.ocr.area.read_bands`),
        by :func:`flowocr.ocr.area.read_frame` (a band read empty, or over a busy picture, is read again with its
        background isolated); without one, and with ``--whole-area``, the whole area. ``whole``: the whole area, and
        on a large frame its stroke bands too (:func:`flowocr.ocr.area.read_whole`).
        """
        from flowocr.ocr.area import read_bands, read_frame, read_whole
        from flowocr.ocr.langs import as_written  # marks the model cannot read, words it glued
        from flowocr.ocr.types import plausible

        rect, info = self.area, self.info
        with self._ocr_stage():
            if strokes is None or self.options.whole_area:
                found = read_frame(self.engine, image, rect, [rect])
            elif whole:
                found = read_whole(self.engine, image, rect, strokes, info.display_height)
            else:
                bands = read_bands(strokes, rect, info.display_height, rows, lines, slop)
                found = read_frame(self.engine, image, rect, bands, known)
            lines = tuple(line for line in found if plausible(line))
        marked = [as_written(self.options.lang, line.text) for line in lines]
        lines = tuple(line if text == line.text else replace(line, text=text) for line, text in zip(lines, marked))
        self.stats.ocr_calls += 1
        if self.stats.first_ocr_s is None:
            self.stats.first_ocr_s = time.monotonic() - self._started
        if self.crops is not None:
            self.crops.offer(image, lines)
        return lines

    def probe(self, image, strokes, rows=(), lines=(), slop=0.0, whole=False):
        """The text boxes the OCR detector finds in the bands :meth:`ocr` would read with the same arguments, without
        recognising them (:func:`flowocr.ocr.detect.probe_frame`; None where they cannot stand for a reading)."""
        from flowocr.ocr.area import read_bands, whole_bands
        from flowocr.ocr.detect import probe_frame

        rect, info = self.area, self.info
        with self._ocr_stage():
            if whole:
                bands = whole_bands(rect, strokes, info.display_height)
            else:
                bands = read_bands(strokes, rect, info.display_height, rows, lines, slop)
            boxes = probe_frame(self.engine, image, rect, bands)
        self.stats.ocr_probes += 1
        return boxes

    @contextlib.contextmanager
    def _ocr_stage(self):
        """Count the wall time and the models' detection and recognition CPU of the OCR work inside."""
        from flowocr.ocr.engine import stage_cpu

        t = time.monotonic()
        det0, rec0 = stage_cpu()
        yield
        self.stats.ocr_s += time.monotonic() - t
        det1, rec1 = stage_cpu()
        self.stats.ocr_det_cpu_s += det1 - det0
        self.stats.ocr_rec_cpu_s += rec1 - rec0

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
        if self.crops is not None:
            image = self.crops.crop(cue)
            if image is not None:
                self.cue_crops[cue] = image
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
        """Set :attr:`report`; write a complete run's final files, or an incomplete run's report.

        The final files (subtitles, the JSONL finished in its ``.part``, the report) are replaced together, only
        once every new one is written: a failure (disk full) leaves an earlier run's outputs as they were, this
        run's per-frame lines in the ``.part`` file, and raises :class:`OutputError` after the report is set."""
        from flowocr.cues.overlay import mark_overlays, written_cues
        from flowocr.errors import OutputError
        from flowocr.output.writers import atomic_write_texts, json_text, subtitle_texts, write_json

        opts = self.options
        output_failure: OutputError | None = None
        if complete and self.segment is None:
            unmarked = self.all_cues
            self.all_cues, overlays = mark_overlays(unmarked, self.source.index.duration)
            self.overlays = [o.to_json() for o in overlays]
            for before, after in zip(unmarked, self.all_cues):  # an overlay's cue is a new Cue (kind="overlay")
                if before is not after and before in self.cue_crops:
                    self.cue_crops[after] = self.cue_crops.pop(before)
        report = self._report(True, None, started) if complete else None
        if complete and self.segment is None:
            paths = {f: opts.output(self.video, f) for f in opts.formats}
            try:
                cues = written_cues(self.all_cues, opts.keep_overlays)
                files = subtitle_texts(cues, paths, self.info.display_width, self.info.display_height)
                if "json" in paths:
                    files[paths["json"]] = json_text(report)
                if self.jsonl is not None:
                    for overlay in self.overlays:
                        self.jsonl.write_record(overlay)
                if "html" in paths:
                    files[paths["html"]] = self._review_page(paths["html"])
                ready = {} if self.jsonl is None else {self.jsonl.finish(): self.jsonl.path}
                atomic_write_texts(files, ready=ready)
            except OutputError as exc:
                complete, error, output_failure = False, exc, exc
        if self.jsonl is not None:
            self.jsonl.close(complete=False)  # closed already when committed; else its lines stay in the .part
        if complete:
            self.report = report
            if hasattr(self, "_checkpoint_file"):
                from flowocr import resume as resuming

                resuming.remove(self._checkpoint_file)
            return
        self.report = self._report(False, error, started)
        if "json" in opts.formats and self.segment is None:
            # The run's own error is what is raised; a report that cannot be written either adds nothing to it.
            with contextlib.suppress(OSError):
                write_json(opts.output(self.video, "json"), self.report)
        if output_failure is not None:
            raise output_failure

    def _review_page(self, page: Path) -> str:
        """The review page (:mod:`flowocr.output.review`) of this run's cues, with the crops kept while reading."""
        from flowocr.output.review import run_review_html

        return run_review_html(self.all_cues, video=self.video, page=page, index=self.source.index,
                               crops=self.cue_crops, keep_overlays=self.options.keep_overlays)  # fmt: skip

    def _loaded_engine(self):
        """The OCR engine if its models loaded (None while loading, after a failure, or before the run got there)."""
        loading = getattr(self, "_engine_loading", None)
        if loading is None or not loading.done() or loading.exception() is not None:
            return None
        return loading.result()

    def _device(self) -> str | None:
        """Where the OCR models run ("cpu" or "cuda"; None for an engine that chooses its own, or none loaded)."""
        engine = self._loaded_engine()
        return None if engine is None else engine.device

    def _startup_timing(self) -> dict[str, float | None]:
        """``startup_s``: from the process's start to the start of the model load; ``model_load_s``: how long the
        load took. The first run of a process that reports on its engine counts the load (the CLI starts it before
        the run); both are None for the runs after it (a batch's later videos, a Ray worker's later tasks)."""
        from flowocr.system import process_started

        engine = self._loaded_engine()
        with _reported_lock:
            counted = engine is None or engine.load_started is None or id(engine) in _reported_loads
            if not counted:
                _reported_loads.add(id(engine))
        if counted:
            return {"startup_s": None, "model_load_s": None}
        return {"startup_s": _rounded(max(0.0, engine.load_started - process_started())),
                "model_load_s": _rounded(engine.load_s)}  # fmt: skip

    def _cpu_report(self, decode: dict[str, Any] | None) -> dict[str, float | None]:
        """CPU seconds by where they went (README, "Run report keys"): this process over the run (every thread:
        OCR, the reader, the frame pipes), the OCR models' detection and recognition in it, the ffmpeg lanes
        (decoding and the aux stream's scaling, with their tail checks), the packet scans, and the change detector
        when the run started it. None where it cannot be known (off Linux; a detector the run was given)."""
        from flowocr.system import process_cpu_s

        now, before = process_cpu_s(), getattr(self, "_process_cpu0", None)
        decode = decode or {}
        stats = self.stats
        return {
            "process_s": None if now is None or before is None else round(now - before, 3),
            "ocr_det_s": round(stats.ocr_det_cpu_s, 3),
            "ocr_rec_s": round(stats.ocr_rec_cpu_s, 3),
            "lanes_s": decode.get("lanes_cpu_s"),
            "scan_s": decode.get("scan_cpu_s"),
            "detector_s": _rounded(stats.detector_cpu_s),
        }

    def _report(self, complete: bool, error: BaseException | None, started: float) -> dict[str, Any]:
        """The run report (README, "Run report keys"); ``traceback`` only for an error that is not flowocr's own
        (nor a stop): the bug behind a failure that has no message for the user."""
        from flowocr.errors import FlowOcrError

        opts = self.options
        source = self.source
        unexpected = error is not None and not isinstance(error, (FlowOcrError, KeyboardInterrupt))
        decode = source.report() if source is not None else None
        return {
            "video": self.video,
            "complete": complete,
            "error": _error_text(error),
            "traceback": "".join(traceback.format_exception(error)) if unexpected else None,
            "facts": self.info.to_json(),
            "options": {k: (float(v) if isinstance(v, Fraction) else v) for k, v in asdict(opts).items()},
            "area": str(self.area) if hasattr(self, "area") else None,
            # the cues of the subtitle files (an overlay's cues only with --keep-overlays)
            "cues": self.stats.cues - (0 if opts.keep_overlays else sum(o["cues"] for o in self.overlays)),
            "overlays": self.overlays,
            "device": self._device(),
            "ocr": {"calls": self.stats.ocr_calls, "reused": self.stats.ocr_reused, "probes": self.stats.ocr_probes,
                    "engine": opts.engine, "lang": opts.lang},  # fmt: skip
            "timing": {
                "total_s": round(time.monotonic() - started, 3),
                "first_cue_s": None if self.stats.first_cue_s is None else round(self.stats.first_cue_s, 3),
                "ocr_s": round(self.stats.ocr_s, 3),
                "decode_wait_s": round(self.stats.decode_wait_s, 3),
                **self._startup_timing(),
                "first_block_s": _rounded(self.stats.first_block_s),
                "first_ocr_s": _rounded(self.stats.first_ocr_s),
            },
            "cpu": self._cpu_report(decode),
            "frames_sampled": self.stats.frames,
            "timing_accuracy": "sample" if opts.no_aux else "frame",
            "resumed_from": getattr(self, "resumed_from", None),
            "review_page": str(opts.output(self.video, "html"))
            if complete and "html" in opts.formats and self.segment is None else None,
            "aux": getattr(self, "aux_stats", None),
            "decode": decode,
            "hw_notes": getattr(self, "hw_notes", []),
        }
