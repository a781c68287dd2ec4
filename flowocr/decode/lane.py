"""One decoder lane: one ffmpeg process that decodes the frames ``[lo, hi)`` of one block.

It delivers the *main* stream (the grid frames, full size, BGR, display rotation applied) and optionally the
*aux* stream (every frame, or every k-th, scaled down, greyscale). How it stays exact (DESIGN §2, §4):

- timestamps are kept as they are in the file (``-copyts``, ``-fps_mode passthrough``), and frames are kept
  by pts inside the filter graph (``trim`` to the block, ``select`` of the grid pts), never by duration;
- the seek goes to the block's keyframe and nothing is dropped by ffmpeg after it (``-noaccurate_seek``);
  if the demuxer lands after that keyframe (the first decoded frame is later than the block start), the
  lane seeks again from an earlier keyframe, and finally from the start of the file;
- decoding goes on past ``hi`` until the first frame at or beyond it (``trim`` ends the stream there), so
  B-frames and open-GOP leading pictures land in the block whose range holds their pts;
- each delivered frame's identity is ffmpeg's own report (a named ``showinfo`` per output), matched with
  the packet scan's index; every frame is checked: inside the block, strictly increasing, on its grid.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from flowocr import ffmpeg
from flowocr.errors import DecodeError, HwaccelMismatch, OutputError
from flowocr.plan import Block
from flowocr.probe.facts import VideoInfo
from flowocr.probe.index import FrameIndex, keyframe_at_or_before
from flowocr.probe.scan import source_frames

Stream = Literal["main", "aux"]

_SHOWINFO = re.compile(r"^\[showinfo@([dmx]) @ [^\]]+\] (?:\[\w+\] )?(.*)$")
# ffmpeg runs with ``-loglevel level+info``: a line at level error or worse is a decoding (or demuxing) error.
_ERROR_LINE = re.compile(r"\[(?:error|fatal|panic)\] ")
_SHOWINFO_FRAME = re.compile(r"^n:\s*\d+\s+pts:\s*(-?\d+|NOPTS)")
# Frames waiting between the pipe readers and the consumer, per lane. A full queue makes the reader wait,
# which makes ffmpeg wait on its pipe: that is the lane's back-pressure.
_EVENT_QUEUE_FRAMES = 4
# Past this many terms a select expression is built as a binary search tree instead of a flat sum.
_FLAT_SELECT_TERMS = 16


#: What a lane can deliver the main stream as: packed BGR (exactly ffmpeg's conversion), or the 8-bit 4:2:0
#: planes as decoded (half the bytes, for sources stored that way; see :func:`main_format_for`).
MainFormat = Literal["bgr24", "yuv420p"]


@dataclass(frozen=True)
class Frame:
    """One decoded frame: its presentation-order index, its pts (stream time base) and its pixels.

    ``data`` is what the lane delivered: H x W x 3 BGR (``layout`` "bgr24"), the I420 planes as an (H * 3 / 2) x W
    array ("yuv420p"), or H x W grey for the aux stream ("gray"). :attr:`image` is H x W x 3 BGR for the main
    stream (the grey array itself for the aux stream) and
    :meth:`grey` grey levels; :attr:`image` is converted on first use (an I420 frame never OCR'd never is).
    """

    stream: Stream
    index: int
    pts: int
    data: np.ndarray = field(repr=False, compare=False)
    layout: str = field(default="bgr24", repr=False, compare=False)

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    @property
    def size(self) -> tuple[int, int]:
        """The picture's width and height in pixels (an I420 frame's luma plane; its chroma lies below it)."""
        rows = self.data.shape[0] * 2 // 3 if self.layout == "yuv420p" else self.data.shape[0]
        return self.data.shape[1], rows

    @functools.cached_property
    def image(self) -> np.ndarray:
        if self.layout == "yuv420p":
            import cv2

            return cv2.cvtColor(self.data, cv2.COLOR_YUV2BGR_I420)
        return self.data

    def grey(self, region: tuple[int, int, int, int] | None = None, size: tuple[int, int] | None = None) -> np.ndarray:
        """Grey levels of the frame or of its ``region`` (x, y, w, h), as converting :attr:`image` to grey gives
        them (full range). For I420 that is the luma plane stretched from video range (16-235) by a table: the
        colours are never converted. ``size`` (w, h): reduced to that size by area averaging; an I420 frame's
        luma is reduced before it is stretched (the same levels give or take the rounding of each step, at a
        fraction of the work)."""
        import cv2

        x, y, w, h = region or (0, 0, *self.size)
        pixels = self.data[y : y + h, x : x + w]
        if self.layout == "bgr24":
            pixels = cv2.cvtColor(pixels, cv2.COLOR_BGR2GRAY)
        if size is not None and size != (w, h):
            pixels = cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)
        if self.layout == "yuv420p":
            pixels = cv2.LUT(pixels, _VIDEO_TO_FULL)
        return pixels


_VIDEO_TO_FULL = np.clip(np.round((np.arange(256) - 16) * 255 / 219), 0, 255).astype(np.uint8)


def main_format_for(info: VideoInfo) -> MainFormat:
    """``yuv420p`` where the source is stored as 8-bit 4:2:0 YUV, not tagged full range, with an even frame size;
    else ``bgr24`` (ffmpeg converts). Piping I420 instead of BGR halves the bytes of every sampled frame;
    measured on 60 s of 1080p H.264 with 120 frames sampled: the lane's CPU time 7.2-7.8 s instead of 8.7-11 s,
    and half the page faults on the reading side.

    The luma plane is exact either way (the change tests read it). OpenCV converts I420 to BGR with the BT.601
    matrix; for a BT.709 source (most HD) that shifts hues slightly against ffmpeg's conversion (a mean of
    about 1 level per channel on the fixtures), which leaves OCR's reading of text on its background alone. A
    full-range stream would be clipped by the video-range tables here, so ffmpeg converts those."""
    even = info.display_width % 2 == 0 and info.display_height % 2 == 0
    return "yuv420p" if info.pix_fmt == "yuv420p" and info.color_range != "pc" and even else "bgr24"


@dataclass(frozen=True)
class AuxSpec:
    """The aux stream: every ``every``-th frame of the block, greyscale, showing ``area`` (x, y, w, h in display
    pixels; None: the whole frame) scaled by ``scale``, but never wider than ``max_width`` pixels (None: no cap).

    The cap is the width the change detector works at (:data:`flowocr.ocr.strokes.STROKE_WIDTH`): a wider frame
    would be decoded, piped, sent and then shrunk by the detector. A 1080p frame at 0.35 is 672 px wide;
    capped, it is sent at 320 px, less than a quarter of the bytes."""

    scale: float = 0.35
    every: int = 1
    area: tuple[int, int, int, int] | None = None
    max_width: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.scale <= 1:
            raise ValueError(f"aux scale must be in (0, 1], got {self.scale}")
        if self.every < 1:
            raise ValueError(f"aux every must be >= 1, got {self.every}")
        if self.max_width is not None and self.max_width < 2:
            raise ValueError(f"aux max width must be at least 2, got {self.max_width}")

    def region(self, info: VideoInfo) -> tuple[int, int, int, int]:
        """The part of the frame the aux stream shows: ``area``, or the whole frame."""
        return self.area or (0, 0, info.display_width, info.display_height)

    def size(self, info: VideoInfo) -> tuple[int, int]:
        _, _, w, h = self.region(info)
        scale = self.scale
        if self.max_width is not None and w * scale > self.max_width:
            scale = self.max_width / w
        return max(2, round(w * scale)), max(2, round(h * scale))


@dataclass
class LaneStats:
    """What one block's decode did: what was delivered, what was missing, how often it had to re-seek."""

    delivered_main: int = 0
    delivered_aux: int = 0
    #: Wanted frames (main grid / aux grid) that the source itself does not yield: gaps in the material.
    material_main: list[int] = field(default_factory=list)
    material_aux: list[int] = field(default_factory=list)
    #: Wanted frames the source has but this lane did not deliver (an error unless ``strict=False``).
    lost_main: list[int] = field(default_factory=list)
    lost_aux: list[int] = field(default_factory=list)
    #: Missing frames that could not be checked against the source (ffprobe failed).
    probe_unknown: int = 0
    #: Lines at level error that ffmpeg printed while decoding (corrupt packets; 0 for a sound file).
    decode_errors: int = 0
    #: Frames that ffmpeg, after reporting decoding errors, repeated: a second picture under a timestamp already
    #: delivered (dropped). Damage in the source, not a lane fault. (A frame the lane did not yield but the frame
    #: check decodes is a loss, never damage.)
    damaged: list[int] = field(default_factory=list)
    decoded_first_pts: int | None = None
    decoded_frames: int = 0
    reseeks: int = 0


_UNSET = object()


class LaneStopped(DecodeError):
    """The lane was closed (or its ffmpeg stopped) before the block was decoded to its end and verified."""


class _SeekOvershoot(Exception):
    """The demuxer landed after the block's keyframe; the block must be decoded from an earlier one."""


# Pixel formats whose first plane is the luma (Y) plane: the aux stream takes it as it is (``extractplanes``).
_LUMA_FIRST = ("yuv", "yuvj", "nv12", "nv16", "nv21", "nv24", "nv42", "p010", "p016", "p210", "p216", "p410", "p416")


def aux_filter(info: VideoInfo, width: int, height: int, area: tuple[int, int, int, int] | None = None) -> str:
    """The aux stream's filter: the frame (or its ``area``: x, y, w, h) scaled to ``width`` x ``height``, grey.

    For YUV sources the luma plane is taken as it is and only it is cropped and scaled: a conversion of the
    whole frame to grey costs about as much as decoding it, the plane alone almost nothing. Measured on the
    first 20 s of a 1080p H.264 file (CPU s, 3 runs each): decode alone 2.5-2.9; scaled to 0.35 then converted
    to grey 3.4-3.9; the Y plane scaled 3.1-3.5; the Y plane scaled with swscale's range conversion 4.0 (done
    at full size). Luma values are kept as coded: ffmpeg 5.1's own conversion to grey does the same for a
    stream tagged limited range and stretches only untagged ones, and the detector's thresholds hold either
    way (white text is >= 235, its dark outline <= 16). Other sources (RGB, palette, grey) are cropped, scaled
    and converted to grey. The crop comes before the scale: pixels outside the area are never scaled.
    """
    steps = []
    if info.pix_fmt.startswith(_LUMA_FIRST):
        steps.append("extractplanes=y")
    if area is not None and area != (0, 0, info.display_width, info.display_height):
        x, y, w, h = area
        steps.append(f"crop={w}:{h}:{x}:{y}")
    steps.append(f"scale={width}:{height}:flags=area")
    return ",".join(steps)


def select_expr(values: Sequence[int]) -> str:
    """An ffmpeg expression that is non-zero exactly when ``pts`` is one of ``values`` (sorted, unique)."""
    if not values:
        return "0"
    if len(values) <= _FLAT_SELECT_TERMS:
        return "+".join(f"eq(pts,{v})" for v in values)
    mid = len(values) // 2
    return f"if(lt(pts,{values[mid]}),{select_expr(values[:mid])},{select_expr(values[mid:])})"


class BlockDecoder:
    """Decodes one block with one ffmpeg process; iterate :meth:`frames` for main and aux frames.

    ``grid`` holds the sorted main-stream frame indices wanted inside the block. After iteration ends without
    an error, every grid frame and every aux frame of the block that the source has was delivered; the ones
    the source itself lacks are listed in :attr:`stats` as material gaps (with ``strict=False`` the lost
    ones are listed too instead of raising). ``close()`` at any time stops ffmpeg.
    """

    def __init__(
        self,
        info: VideoInfo,
        index: FrameIndex,
        block: Block,
        grid: Sequence[int],
        *,
        aux: AuxSpec | None = None,
        hwaccel: str | None = None,
        kind: Literal["sw", "hw"] | None = None,
        strict: bool = True,
        name: str = "sw",
        inject_drop: Sequence[int] = (),
        inject_drop_aux: Sequence[int] = (),
        main_format: MainFormat = "bgr24",
    ) -> None:
        self.info = info
        self.index = index
        self.block = block
        if main_format not in ("bgr24", "yuv420p"):
            raise ValueError(f"unknown main format {main_format!r}")
        self.main_format = main_format
        self.grid = [i for i in grid if block.lo <= i < block.hi]
        self.aux = aux
        self.hwaccel = hwaccel
        #: A hardware lane: a frame it lost is HwaccelMismatch (decode again in software), not an error.
        self.hw = (kind == "hw") if kind is not None else hwaccel is not None
        self.strict = strict
        self.name = name
        #: Fault injection (DESIGN §12): grid frames this lane's ffmpeg is told not to output.
        self.inject_drop = frozenset(inject_drop)
        self.inject_drop_aux = frozenset(inject_drop_aux)
        self.stats = LaneStats()
        self._proc: ffmpeg.Process | None = None
        self._check: ffmpeg.Process | None = None  # the tail check's ffprobe, while it runs
        self._started: list[ffmpeg.Process] = []  # every process it ran (ffmpeg runs, tail checks)
        self._closed = False
        self._stop = threading.Event()

    # --- public -----------------------------------------------------------------------------------------

    def frames(self) -> Iterator[Frame]:
        """Yield the block's main and aux frames as they are decoded (each stream in order)."""
        seek = self.block.seek
        try:
            while True:
                try:
                    yield from self._decode_from(seek)
                    return
                except _SeekOvershoot:
                    self.stats.reseeks += 1
                    seek = keyframe_at_or_before(self.index, seek - 1) if seek > 0 else 0
        finally:
            self.close()

    def close(self) -> None:
        """Stop ffmpeg and the tail check's ffprobe, from any thread; :meth:`frames` then raises
        :class:`LaneStopped` (unless it had already ended)."""
        self._closed = True
        self._stop.set()
        for proc in (self._proc, self._check):
            if proc is not None:
                proc.stop()

    @property
    def cpu_s(self) -> float:
        """CPU seconds of the processes it ran that have exited (ffmpeg decoding and scaling the aux stream, and
        the tail checks' ffprobe); 0 off Linux."""
        return sum(proc.cpu_s or 0.0 for proc in self._started)

    def _adopt_check(self, proc: ffmpeg.Process) -> None:
        self._check = proc
        self._started.append(proc)
        if self._closed:
            proc.stop()

    # --- one ffmpeg run -----------------------------------------------------------------------------------

    def _decode_from(self, seek: int) -> Iterator[Frame]:
        run = _Run(self, seek)
        self._proc = run.proc
        self._started.append(run.proc)
        try:
            yield from run.frames()
        finally:
            run.close()


class _Run:
    """One ffmpeg process for a block, decoding from keyframe ``seek``."""

    def __init__(self, lane: BlockDecoder, seek: int) -> None:
        self.lane = lane
        self.seek = seek
        info, index, block = lane.info, lane.index, lane.block
        self.lo_pts = index.pts_of(block.lo)
        self.hi_pts = index.pts_of(block.hi) if block.hi < len(index) else None
        self.aux_wanted = (
            [] if lane.aux is None else list(range(block.lo, block.hi, lane.aux.every))
        )
        self.reports: dict[str, list[int | None]] = {"d": [], "m": [], "x": []}
        self._present: set[int] | None | object = _UNSET
        self.cond = threading.Condition()
        self.events: queue.Queue[tuple[Stream, bytes | None]] = queue.Queue(maxsize=_EVENT_QUEUE_FRAMES)
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.script = self._write_script()
        aux_r = aux_w = None
        outputs = [("m", lane.main_format, "pipe:1")]
        if lane.aux is not None:
            aux_r, aux_w = os.pipe()
            outputs.append(("x", "gray", ffmpeg.pipe_target(aux_w)))
        seek_time = None
        if seek > 0:
            seek_time = self._seek_time(seek)
        argv = ffmpeg.decode_argv(
            info.path, filter_script=self.script, outputs=outputs, seek=seek_time, hwaccel=lane.hwaccel
        )
        what = f"ffmpeg lane {lane.name} block {block.number} [{block.lo}, {block.hi}) of {info.path}"
        try:
            self.proc = ffmpeg.Process(
                argv, what=what, pass_fds=() if aux_w is None else (aux_w,), on_stderr_line=self._on_line
            )
        except BaseException:
            os.unlink(self.script)
            for fd in (aux_r, aux_w):
                if fd is not None:
                    ffmpeg.close_fd(fd)
            raise
        if aux_w is not None:
            ffmpeg.close_fd(aux_w)
        main_size = info.frame_bytes if lane.main_format == "bgr24" else info.frame_bytes // 2
        self._start_reader("main", self.proc.stdout, main_size)
        if aux_r is not None:
            aw, ah = lane.aux.size(info)
            self._start_reader("aux", os.fdopen(aux_r, "rb", buffering=0), aw * ah)

    def _seek_time(self, seek: int):
        """Seek target relative to the file's start time: inside the keyframe's display interval.

        ffmpeg parses ``-ss`` to microseconds and lands on the last keyframe at or before the target; aiming
        halfway between the keyframe and the next frame keeps rounding from landing one GOP early.
        """
        index, info = self.lane.index, self.lane.info
        kf = index.pts_of(seek)
        nxt = index.pts_of(seek + 1) if seek + 1 < len(index) else index.end_pts
        target = (kf + (nxt - kf) / 2) * index.time_base
        base = info.format_start_time if info.format_start_time is not None else 0
        return target - base

    def _write_script(self) -> str:
        lane, info = self.lane, self.lane.info
        trims = []
        if lane.block.lo > 0:
            trims.append(f"start_pts={self.lo_pts}")
        if self.hi_pts is not None:
            trims.append(f"end_pts={self.hi_pts}")
        head = f"[0:{info.stream_index}]showinfo@d=checksum=0"
        if trims:
            head += ",trim=" + ":".join(trims)
        grid_pts = [lane.index.pts_of(i) for i in lane.grid if i not in lane.inject_drop]
        main = f"select='{select_expr(grid_pts)}',showinfo@m=checksum=0[m]"
        if lane.aux is None:
            graph = f"{head},{main}\n"
        else:
            aw, ah = lane.aux.size(info)
            aux = aux_filter(info, aw, ah, lane.aux.area)
            if lane.aux.every > 1 or lane.inject_drop_aux:
                kept = [lane.index.pts_of(i) for i in self.aux_wanted if i not in lane.inject_drop_aux]
                aux = f"select='{select_expr(kept)}'," + aux
            graph = f"{head},split=2[a][b];[a]{main};[b]{aux},showinfo@x=checksum=0[x]\n"
        try:
            fd, path = tempfile.mkstemp(prefix="flowocr-graph-", suffix=".txt")
        except OSError as exc:
            raise _no_script(tempfile.gettempdir(), exc) from exc
        try:
            with os.fdopen(fd, "w") as f:
                f.write(graph)
        except OSError as exc:
            os.unlink(path)
            raise _no_script(path, exc) from exc
        return path

    # --- stderr: ffmpeg's per-frame reports ---------------------------------------------------------------

    def _on_line(self, line: str) -> bool:
        m = _SHOWINFO.match(line)
        if m is None:
            if _ERROR_LINE.search(line):
                with self.cond:
                    self.lane.stats.decode_errors += 1
            return False
        frame = _SHOWINFO_FRAME.match(m.group(2))
        if frame is not None:
            value = frame.group(1)
            with self.cond:
                self.reports[m.group(1)].append(None if value == "NOPTS" else int(value))
                self.cond.notify_all()
        return True

    def _report(self, key: str, k: int) -> int | None:
        """The pts of the k-th frame ffmpeg reported through showinfo@key (waits for its line)."""
        with self.cond:
            while len(self.reports[key]) <= k:
                if self.proc.stderr_done.is_set() or self.stop.is_set():
                    break
                self.cond.wait(timeout=0.5)
            if len(self.reports[key]) <= k:
                raise DecodeError(
                    f"{self.proc.what}: ffmpeg delivered a frame it did not report (showinfo@{key} #{k})"
                )
            return self.reports[key][k]

    def _first_decoded(self) -> int | None:
        with self.cond:
            while not self.reports["d"] and not self.proc.stderr_done.is_set() and not self.stop.is_set():
                self.cond.wait(timeout=0.5)
            return self.reports["d"][0] if self.reports["d"] else None

    # --- stdout / aux pipe readers ------------------------------------------------------------------------

    def _start_reader(self, stream: Stream, pipe, frame_size: int) -> None:
        t = threading.Thread(
            target=self._read_frames, args=(stream, pipe, frame_size), name=f"read:{stream}", daemon=True
        )
        t.start()
        self.threads.append(t)  # listed once started: close() joins only started threads

    def _read_frames(self, stream: Stream, pipe, frame_size: int) -> None:
        try:
            while not self.stop.is_set():
                buf = np.empty(frame_size, np.uint8)  # not a bytearray: no zero-fill of pages read over at once
                view = memoryview(buf)
                got = 0
                while got < frame_size:
                    n = pipe.readinto(view[got:])
                    if not n:
                        break
                    got += n
                if got < frame_size:
                    if got:
                        self._put((stream, b""))  # a partial frame: reported as an error by the consumer
                    break
                self._put((stream, buf))  # a fresh buffer per frame: handed on without a copy
        except (OSError, ValueError):
            pass
        finally:
            self._put((stream, None))
            with contextlib.suppress(OSError):
                pipe.close()

    def _put(self, item) -> None:
        while not self.stop.is_set():
            try:
                self.events.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    # --- the consumer side ---------------------------------------------------------------------------------

    def frames(self) -> Iterator[Frame]:
        lane, index = self.lane, self.lane.index
        first = self._first_decoded()
        lane.stats.decoded_first_pts = first
        if first is not None and self.seek > 0 and first > index.pts_of(self.seek):
            raise _SeekOvershoot()
        check = {"main": _Checker(lane.grid, "grid"), "aux": _Checker(self.aux_wanted, "aux grid")}
        for stream, pts, data in self._delivered():
            frame_index = None if pts is None else index.index_of(pts)
            if frame_index is None:
                raise DecodeError(
                    f"{self.proc.what}: ffmpeg delivered a {stream} frame with pts {pts}, which the packet "
                    "scan does not list"
                )
            last = check[stream].last
            if last is not None and frame_index <= last and self._damaged_input():
                # A picture under a timestamp already delivered (or passed), after ffmpeg reported decoding errors:
                # its error concealment guessed the timestamp. Damage in the source, named in the report; not a fault.
                lane.stats.damaged.append(frame_index)
                continue
            skipped = check[stream].accept(frame_index, self.proc.what)
            if skipped:
                # A hole before this frame: settle it before anything after it is handed out.
                self._verify_gaps(skipped if stream == "main" else [], skipped if stream == "aux" else [])
            yield self._frame(stream, frame_index, pts, data)
        self._verify_gaps(check["main"].finish(), check["aux"].finish())

    def _delivered(self) -> Iterator[tuple[Stream, int | None, bytes]]:
        """Each frame ffmpeg wrote (either pipe, as they come) with the pts its showinfo reported for it; ends
        when every pipe ended and ffmpeg exited. ffmpeg dying (not stopped by us) is raised as the root cause."""
        counts = {"main": 0, "aux": 0}
        open_streams = {"main"} | ({"aux"} if self.lane.aux is not None else set())
        while open_streams:
            stream, data = self.events.get()
            if data is None:
                open_streams.discard(stream)
                continue
            if len(data) == 0:
                rc = self.proc.wait()
                if rc != 0 and not self.proc.stopped_by_us:
                    raise self.proc.failure(rc)
                self._check_not_stopped()
                raise DecodeError(f"{self.proc.what}: the {stream} pipe ended inside a frame")
            pts = self._report("m" if stream == "main" else "x", counts[stream])
            counts[stream] += 1
            yield stream, pts, data
        rc = self.proc.wait()
        with self.cond:
            self.lane.stats.decoded_frames = len(self.reports["d"])
        if rc != 0 and not self.proc.stopped_by_us:
            raise self.proc.failure(rc)
        self._check_not_stopped()

    def _check_not_stopped(self) -> None:
        """A lane closed part way raises: the frames it did not deliver are unverified, never a quiet end."""
        if self.lane._closed or self.proc.stopped_by_us:
            raise LaneStopped(f"{self.proc.what}: stopped before the block was decoded to its end")

    def _frame(self, stream: Stream, i: int, pts: int, data: bytes) -> Frame:
        info, stats = self.lane.info, self.lane.stats
        if stream == "main":
            stats.delivered_main += 1
            if self.lane.main_format == "yuv420p":
                shape: tuple[int, ...] = (info.display_height * 3 // 2, info.display_width)
            else:
                shape = (info.display_height, info.display_width, 3)
            return Frame("main", i, pts, np.frombuffer(data, np.uint8).reshape(shape), self.lane.main_format)
        stats.delivered_aux += 1
        width, height = self.lane.aux.size(info)
        return Frame("aux", i, pts, np.frombuffer(data, np.uint8).reshape(height, width), "gray")

    def _verify_gaps(self, missing_main: list[int], missing_aux: list[int]) -> None:
        """Tail-gap verification: ask the source whether each frame the lane did not deliver exists.

        A frame the source lacks is a material gap (allowed, counted). A frame it has is lost by this lane:
        ``HwaccelMismatch`` on a hardware lane, ``DecodeError`` on a software lane, whether or not ffmpeg reported
        decoding errors in the block: the check decodes from the same keyframe, so a frame it yields is one the
        lane owed (damage in the source shows the same in both decodes). When the source cannot be probed, a
        hardware lane counts the frames as lost and a software lane lets them pass (``probe_unknown``).
        """
        lane, stats = self.lane, self.lane.stats
        if not missing_main and not missing_aux:
            return
        self._check_not_stopped()
        if self._present is _UNSET:
            self._present = source_frames(lane.info, lane.index, lane.block.lo, lane.block.hi,
                                          started=lane._adopt_check)  # fmt: skip
            self._check_not_stopped()  # close() stopped the check itself: its answer means nothing
        present = self._present
        hw = lane.hw
        for missing, material, lost in (
            (missing_main, stats.material_main, stats.lost_main),
            (missing_aux, stats.material_aux, stats.lost_aux),
        ):
            for i in missing:
                if present is None:
                    stats.probe_unknown += 1
                    if hw:
                        lost.append(i)
                elif lane.index.pts_of(i) in present:
                    lost.append(i)
                else:
                    material.append(i)
        if lane.strict and (stats.lost_main or stats.lost_aux):
            error = HwaccelMismatch if hw else DecodeError
            raise error(self._lost_message())

    def _damaged_input(self) -> bool:
        """ffmpeg has reported decoding errors in this block so far (its stderr is read up to the frame in hand:
        the report of a frame comes after the errors of the packets before it)."""
        with self.cond:
            return self.lane.stats.decode_errors > 0

    def _lost_message(self) -> str:
        stats = self.lane.stats
        parts = []
        for name, lost in (("grid", stats.lost_main), ("aux", stats.lost_aux)):
            if lost:
                parts.append(f"{len(lost)} {name} frames that the source has were not delivered ({_ranges(lost)})")
        return f"{self.proc.what}: " + "; ".join(parts)

    def close(self) -> None:
        self.stop.set()
        self.proc.stop()
        for t in list(self.threads):
            t.join(timeout=5)
        with contextlib.suppress(OSError):
            os.unlink(self.script)


def _no_script(path: str, exc: OSError) -> OutputError:
    return OutputError(f"{path}: cannot write ffmpeg's filter script ({exc.strerror or exc}); check that the temp "
                       "folder (TMPDIR) is writable and has free space")  # fmt: skip


class _Checker:
    """Checks one stream's frames against the indices wanted, in order; collects the ones skipped."""

    def __init__(self, wanted: Sequence[int], what: str) -> None:
        self.wanted = list(wanted)
        self.wanted_set = set(self.wanted)
        self.what = what
        self.pos = 0
        self.last: int | None = None

    def accept(self, frame_index: int, where: str) -> list[int]:
        """Take the next delivered frame; returns the wanted frames it skipped over (usually none)."""
        if self.last is not None and frame_index <= self.last:
            kind = "duplicate" if frame_index == self.last else "out of order"
            raise DecodeError(f"{where}: frame {frame_index} delivered {kind} (after frame {self.last})")
        if frame_index not in self.wanted_set:
            raise DecodeError(f"{where}: frame {frame_index} is outside the block or not on the {self.what}")
        skipped = []
        while self.wanted[self.pos] != frame_index:
            skipped.append(self.wanted[self.pos])
            self.pos += 1
        self.pos += 1
        self.last = frame_index
        return skipped

    def finish(self) -> list[int]:
        """The wanted frames after the last delivered one (the tail gap)."""
        tail = self.wanted[self.pos :]
        self.pos = len(self.wanted)
        return tail


def _ranges(indices: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1-3, 7"`` (at most a few ranges, then a count)."""
    spans: list[tuple[int, int]] = []
    for i in indices:
        if spans and i == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], i)
        else:
            spans.append((i, i))
    text = [f"{a}-{b}" if a != b else f"{a}" for a, b in spans[:4]]
    if len(spans) > 4:
        text.append(f"… {len(spans) - 4} more ranges")
    return "frames " + ", ".join(text)


def decode_all(
    info: VideoInfo, index: FrameIndex, grid: Sequence[int], *, aux: AuxSpec | None = None
) -> Iterator[Frame]:
    """The whole file through one lane (one block from the start): the reference the sharded decoder equals."""
    block = Block(number=0, lo=0, hi=len(index), seek=0)
    yield from BlockDecoder(info, index, block, grid, aux=aux).frames()


__all__ = [
    "AuxSpec", "BlockDecoder", "Frame", "LaneStats", "LaneStopped", "MainFormat", "decode_all", "main_format_for",
    "select_expr",
]  # fmt: skip
