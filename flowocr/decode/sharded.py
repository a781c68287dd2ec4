"""ShardedSource: several decoder lanes, one ordered stream of frames (DESIGN §3–5).

Threads and what bounds them:

- the **planner** runs the streamed packet scan, grows the :class:`LiveIndex`, and cuts blocks at keyframes
  (:func:`plan_blocks`) as the scan goes, so the first block decodes while the scan is still reading;
- one **worker per lane** takes the next planned block (whichever lane is free), at most ``ahead`` blocks past
  the one being consumed, and decodes it with one ffmpeg (:class:`BlockDecoder`);
- the **consumer** (the caller's thread) takes frames strictly in block order, as soon as they arrive.

The buffer between them is bounded in bytes: a lane adding a frame waits while the buffered total would exceed
``budget_mb``, unless the consumer is waiting for a frame of that very block: then one frame is admitted over the
budget (the consumer takes it at once). So two lanes can never wait on each other, and the buffer never holds
more than the budget plus that one frame, even while the consumer is busy (in OCR) in a block of gigabytes. Any
failure (a lane, the planner) goes into one shared failure state that wakes every waiter, stops every
ffmpeg/ffprobe and is raised to the consumer, root cause first. ``close()`` at any point, from any thread, leaves
no process running; a consumer still iterating gets :class:`SourceClosed`, never a quiet end. A block counts as
done only when its lane decoded it to the end and verified it; a stopped lane's block never does.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from flowocr.decode.lane import AuxSpec, BlockDecoder, Frame, MainFormat
from flowocr.errors import DecodeError, HwaccelMismatch
from flowocr.plan import Block, check_tiling, plan_blocks
from flowocr.plan.stream import ScanStopped, keyframe_events
from flowocr.probe.facts import VideoInfo
from flowocr.probe.index import grid_between
from flowocr.probe.live import LiveIndex
from flowocr.probe.scan import PacketScan

_MB = 1024 * 1024


@dataclass(frozen=True)
class LaneSpec:
    """One decoder lane: ``kind`` hw lanes use ``hwaccel`` (a hw lane without one is a test stand-in)."""

    name: str
    kind: Literal["sw", "hw"] = "sw"
    hwaccel: str | None = None


@dataclass(frozen=True)
class ShardOptions:
    """How to cut and buffer. Times in seconds (exact); ``ahead`` None means one block per lane."""

    fps: Fraction = Fraction(2)
    block_sec: Fraction = Fraction(20)
    first_block_sec: Fraction = Fraction(2)
    budget_mb: float = 1024.0
    ahead: int | None = None
    aux: AuxSpec | None = None
    start: Fraction | None = None
    end: Fraction | None = None
    #: Resume point: no frame before this index is delivered, on either stream (blocks wholly before it are not
    #: decoded; the block holding it decodes from its keyframe and delivers from this frame on).
    from_index: int = 0
    #: End of a range (``None``: the end of the video): no frame at or after this index is delivered, and blocks
    #: starting there are not decoded.
    until_index: int | None = None
    #: How the main stream is delivered (:data:`flowocr.decode.lane.MainFormat`); ``Frame.image`` is BGR either way.
    main_format: MainFormat = "bgr24"

    def __post_init__(self) -> None:
        if self.fps <= 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.block_sec <= 0:
            raise ValueError(f"block_sec must be positive, got {self.block_sec}")
        if self.budget_mb < 0:
            raise ValueError(f"budget_mb must not be negative, got {self.budget_mb}")
        if self.ahead is not None and self.ahead < 1:
            raise ValueError(f"ahead must be at least 1, got {self.ahead}")


@dataclass(frozen=True)
class Faults:
    """Faults injected for real (DESIGN §12): used by the tests (the stress run in tests/test_reliability.py), never
    by a normal run.

    ``drop``: block number -> grid frames that block's ffmpeg is told not to output (first attempt only).
    ``drop_aux``: block number -> aux frames that block's ffmpeg is told not to output (a short aux stream).
    ``scan_fail_after``: the packet scan's ffprobe is killed after this many packets, in the first ``scan_kills``
    scans (the scan is run again after a failure: :mod:`flowocr.plan.stream`).
    """

    drop: dict[int, tuple[int, ...]] = field(default_factory=dict)
    drop_aux: dict[int, tuple[int, ...]] = field(default_factory=dict)
    scan_fail_after: int | None = None
    scan_kills: int = 1


@dataclass
class _Slot:
    """The buffered frames of one block, and how far its lane got."""

    block: Block
    frames: collections.deque = field(default_factory=collections.deque)
    done: bool = False
    last_main: int = -1
    last_aux: int = -1
    count_main: int = 0
    count_aux: int = 0
    bytes: int = 0  # buffered bytes of this block


@dataclass
class BlockRecord:
    number: int
    lo: int
    hi: int
    seek: int
    lane: str = ""
    seconds: float = 0.0
    cpu_s: float = 0.0  # of its processes (ffmpeg and the tail checks' ffprobe); 0 off Linux
    redone: bool = False
    frames_main: int = 0
    frames_aux: int = 0
    material_gaps: int = 0
    probe_unknown: int = 0
    skipped: bool = False
    damaged: int = 0
    decoder_errors: int = 0
    #: The frames behind ``material_gaps`` and ``damaged`` (for the report's stretches, not listed per block).
    gap_frames: list[int] = field(default_factory=list)


def gap_stretches(gaps: Sequence[int], wanted: Sequence[int]) -> list[tuple[int, int]]:
    """Frames ``[lo, hi)`` of the stretches the source lacks: ``gaps`` (sorted) merged wherever no ``wanted`` frame
    (sorted; every frame with the aux stream, else the grid) between two of them was delivered. A stretch ends after
    its last missing frame: without the aux stream, frames between grid frames are not looked at."""
    import bisect

    stretches: list[tuple[int, int]] = []
    for i in gaps:
        if stretches:
            lo, hi = stretches[-1]
            between = bisect.bisect_left(wanted, i) - bisect.bisect_left(wanted, hi)
            if between <= 0:
                stretches[-1] = (lo, i + 1)
                continue
        stretches.append((i, i + 1))
    return stretches


class ShardedSource:
    """Frames of one video from several lanes, delivered strictly in order. Iterate it once.

    Main-stream frames are the grid frames; aux frames (when ``options.aux``) travel in the same block
    order. :meth:`report` describes what happened (blocks, lanes, peak buffer, gaps, planning error).
    """

    def __init__(
        self, info: VideoInfo, lanes: Sequence[LaneSpec], options: ShardOptions, *, faults: Faults | None = None
    ) -> None:
        if not lanes:
            raise ValueError("at least one lane is needed")
        self.info = info
        self.lanes = list(lanes)
        self.options = options
        self.faults = faults or Faults()
        self.index = LiveIndex(info.time_base)
        self.ahead = options.ahead or len(self.lanes)
        self.budget_bytes = int(options.budget_mb * _MB)
        self._cond = threading.Condition()
        self._blocks: list[Block] = []
        self._grids: list[list[int]] = []
        self._records: list[BlockRecord] = []
        self._slots: dict[int, _Slot] = {}
        self._plan_done = False
        self._scan_failures: list[str] = []
        self._next_block = 0
        self._current = 0
        self._buffered = 0
        self._peak = 0
        self._peak_ahead = 0  # buffered bytes of blocks other than the one being consumed
        self._waiting = False  # the consumer waits for a frame of the block being consumed
        self._over_budget_frames = 0  # frames admitted over the budget because the consumer waited for them
        self._over_budget_peak = 0  # the most bytes buffered over the budget
        self._failure: BaseException | None = None
        self._stopping = False
        self._active: set[BlockDecoder] = set()
        self._scan: PacketScan | None = None
        self._scans: list[PacketScan] = []  # every scan run (one, or more after a failure)
        self._threads: list[threading.Thread] = []
        self._lane_seconds: dict[str, float] = {lane.name: 0.0 for lane in self.lanes}
        self._started = False
        self._t0 = 0.0

    # --- consumer ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the scan and the lanes now (iterating starts them too): frames are decoded into the buffer
        while the caller gets ready to consume them. Call :meth:`close` if it never iterates."""
        with self._cond:
            if self._t0:
                return
            self._t0 = time.monotonic()
        self._spawn(self._plan_loop, "planner")
        for lane in self.lanes:
            self._spawn(self._lane_loop, f"lane:{lane.name}", lane)

    def __iter__(self) -> Iterator[Frame]:
        if self._started:
            raise RuntimeError("a ShardedSource can be iterated once")
        self._started = True
        self.start()
        try:
            while True:
                frame = self._next_frame()
                if frame is None:
                    return
                yield frame
        finally:
            self.close()

    def _next_frame(self) -> Frame | None:
        with self._cond:
            while True:
                if self._failure is not None:
                    raise self._failure
                if self._stopping:
                    raise SourceClosed(f"{self.info.path}: the decoder was closed before the end of the video "
                                       f"(at block {self._current})")  # fmt: skip
                if self._plan_done and self._current >= len(self._blocks):
                    self._check_complete()
                    return None
                slot = self._slots.get(self._current)
                if slot is not None and slot.frames:
                    frame = slot.frames.popleft()
                    self._buffered -= frame.nbytes
                    slot.bytes -= frame.nbytes
                    self._cond.notify_all()
                    return frame
                if slot is not None and slot.done:
                    del self._slots[self._current]
                    self._current += 1
                    self._cond.notify_all()
                    continue
                # Waiting for the block being consumed: its lane may add a frame over the budget now (DESIGN §5).
                self._waiting = True
                self._cond.notify_all()
                self._cond.wait()
                self._waiting = False

    def _check_complete(self) -> None:
        until = self.options.until_index
        last = self._blocks[-1].hi if self._blocks else None
        if last is None or (last != len(self.index) and last != until):
            raise DecodeError(
                f"{self.info.path}: blocks end at frame {self._blocks[-1].hi} but the file has {len(self.index)}"
            )

    # --- planner ----------------------------------------------------------------------------------------

    def _plan_loop(self) -> None:
        try:
            events = keyframe_events(self.info, self.index, open_scan=self._open_scan, on_failure=self._scan_failed,
                                     fail_after=self.faults.scan_fail_after, kills=self.faults.scan_kills)
            for block in check_tiling(plan_blocks(events, block_sec=self.options.block_sec,
                                                  first_block_sec=self.options.first_block_sec)):  # fmt: skip
                self._add_block(block)
        except ScanStopped:
            pass  # closing: the consumer is told by the stopping state
        except ValueError as exc:  # the planner broke its own contract: never recovered quietly
            self._fail(DecodeError(f"{self.info.path}: the block plan does not tile the video ({exc}); this is a "
                                   "bug in flowocr, please report it"))  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - relayed to the consumer
            self._fail(exc)
        finally:
            with self._cond:
                self._plan_done = True
                self._cond.notify_all()

    def _open_scan(self, info: VideoInfo) -> PacketScan:
        scan = PacketScan(info)
        with self._cond:
            self._scan = scan
            self._scans.append(scan)
            stopping = self._stopping or self._failure is not None
        if stopping:
            scan.close()
        return scan

    def _scan_failed(self, exc: BaseException) -> None:
        """A packet scan failed part way; it is run again (:mod:`flowocr.plan.stream`). Reported, not hidden."""
        with self._cond:
            self._scan_failures.append(str(exc))

    def _add_block(self, block: Block) -> None:
        last = block.hi == len(self.index) and self.index.complete
        grid = grid_between(self.index, block.lo, block.hi, self.index.end_pts if last else None, self.options.fps)
        grid = [i for i in grid if self._in_window(self.index.pts_of(i))]
        start, until = self.options.from_index, self.options.until_index
        outside = block.hi <= start or (until is not None and block.lo >= until)
        if block.lo < start < block.hi:
            block = replace(block, lo=start)  # decoded from its keyframe, delivered from here
        if until is not None and block.lo < until < block.hi:
            block = replace(block, hi=until)
        grid = [] if outside else [i for i in grid if start <= i < block.hi]
        with self._cond:
            self._blocks.append(block)
            self._grids.append(grid)
            self._records.append(BlockRecord(block.number, block.lo, block.hi, block.seek, skipped=outside))
            self._cond.notify_all()

    def _in_window(self, pts: int) -> bool:
        t = (pts - self.index.pts_of(0)) * self.index.time_base
        start, end = self.options.start, self.options.end
        return (start is None or t >= start) and (end is None or t < end)

    # --- lanes ------------------------------------------------------------------------------------------

    def _lane_loop(self, lane: LaneSpec) -> None:
        try:
            while True:
                with self._cond:
                    while True:
                        if self._failure is not None or self._stopping:
                            return
                        n = self._next_block
                        if n < len(self._blocks) and n < self._current + self.ahead:
                            self._next_block += 1
                            block, grid = self._blocks[n], self._grids[n]
                            self._slots.setdefault(n, _Slot(block))
                            break
                        if self._plan_done and n >= len(self._blocks):
                            return
                        self._cond.wait()
                self._decode_block(lane, block, grid)
        except BaseException as exc:  # noqa: BLE001 - relayed to the consumer
            self._fail(exc)

    def _decode_block(self, lane: LaneSpec, block: Block, grid: list[int]) -> None:
        record = self._records[block.number]
        record.lane = lane.name
        started = time.monotonic()
        aux = self.options.aux
        if record.skipped or (not grid and aux is None):
            record.skipped = True
        else:
            try:
                self._run_decoder(lane, block, grid, drop=self.faults.drop.get(block.number, ()),
                                  drop_aux=self.faults.drop_aux.get(block.number, ()))  # fmt: skip
            except HwaccelMismatch:
                if self._stopping or self._failure is not None:
                    raise _Stopped() from None
                record.redone = True
                software = LaneSpec(name=f"{lane.name}->sw", kind="sw")
                self._run_decoder(software, block, grid, drop=())
        record.seconds = time.monotonic() - started
        with self._cond:
            self._lane_seconds[lane.name] += record.seconds
            slot = self._slots[block.number]
            slot.done = True
            record.frames_main, record.frames_aux = slot.count_main, slot.count_aux
            self._cond.notify_all()

    def _run_decoder(
        self, lane: LaneSpec, block: Block, grid: list[int], drop: Sequence[int], drop_aux: Sequence[int] = ()
    ) -> None:
        decoder = BlockDecoder(
            self.info, self.index, block, grid,
            aux=self.options.aux, hwaccel=lane.hwaccel, kind=lane.kind, name=lane.name, inject_drop=drop,
            inject_drop_aux=drop_aux, main_format=self.options.main_format,
        )  # fmt: skip
        with self._cond:
            if self._failure is not None or self._stopping:
                raise _Stopped()  # never marked done: a block is done only when decoded and verified
            self._active.add(decoder)
        try:
            for frame in decoder.frames():
                self._put(block.number, frame)
        finally:
            with self._cond:
                self._active.discard(decoder)
            self._records[block.number].cpu_s += decoder.cpu_s
        record = self._records[block.number]
        record.material_gaps += len(decoder.stats.material_main) + len(decoder.stats.material_aux)
        record.probe_unknown += decoder.stats.probe_unknown
        record.damaged += len(decoder.stats.damaged)
        record.decoder_errors += decoder.stats.decode_errors
        record.gap_frames += decoder.stats.material_main + decoder.stats.material_aux + decoder.stats.damaged

    def _put(self, number: int, frame: Frame) -> None:
        """Add a frame to its block's slot, waiting while the byte budget would be exceeded, unless the consumer is
        waiting for this very block (then one frame is admitted over the budget: DESIGN §5). Frames a redo delivers
        again (already handed on) are skipped."""
        size = frame.nbytes
        with self._cond:
            slot = self._slots[number]
            last = slot.last_main if frame.stream == "main" else slot.last_aux
            if frame.index <= last:
                return
            while (
                self._failure is None
                and not self._stopping
                and self._buffered + size > self.budget_bytes
                and not (number == self._current and self._waiting)
            ):
                self._cond.wait()
            if self._failure is not None or self._stopping:
                raise _Stopped()
            if self._buffered + size > self.budget_bytes:
                self._waiting = False  # the consumer has its frame: the next one waits for the budget again
                self._over_budget_frames += 1
                self._over_budget_peak = max(self._over_budget_peak, self._buffered + size - self.budget_bytes)
            slot.frames.append(frame)
            if frame.stream == "main":
                slot.last_main = frame.index
                slot.count_main += 1
            else:
                slot.last_aux = frame.index
                slot.count_aux += 1
            self._buffered += size
            self._peak = max(self._peak, self._buffered)
            slot.bytes += size
            self._peak_ahead = max(self._peak_ahead, self._buffered - self._slot_bytes(self._current))
            self._cond.notify_all()

    def _slot_bytes(self, number: int) -> int:
        slot = self._slots.get(number)
        return slot.bytes if slot is not None else 0

    # --- failure and shutdown -------------------------------------------------------------------------------

    def _fail(self, exc: BaseException) -> None:
        if isinstance(exc, _Stopped):
            return
        with self._cond:
            if self._failure is None and not self._stopping:
                self._failure = exc
            self._cond.notify_all()
        self._stop_processes()

    def _stop_processes(self) -> None:
        with self._cond:
            active = list(self._active)
        for decoder in active:
            decoder.close()
        if self._scan is not None:
            self._scan.close()

    def close(self) -> None:
        """Stop every lane and the scan, and wait for their threads. Safe at any time, more than once."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._stop_processes()
        with self._cond:
            threads = list(self._threads)
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout=10)
        self._stop_processes()

    def _spawn(self, target, name: str, *args: Any) -> None:
        # Started and listed under the lock, and not at all once close() began: close() from another thread joins
        # only threads that have started (it once met one listed but not yet started: a RuntimeError from join).
        with self._cond:
            if self._stopping:
                return
            t = threading.Thread(target=target, args=args, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    # --- report -------------------------------------------------------------------------------------------

    def progress(self) -> dict[str, Any]:
        """Where decoding stands, cheaply, for a progress display: the block being consumed (1-based), the blocks
        planned so far (final once ``planned_all``), and the bytes buffered."""
        with self._cond:
            return {
                "block": min(self._current + 1, len(self._blocks)),
                "blocks": len(self._blocks),
                "planned_all": self._plan_done,
                "buffered_mb": round(self._buffered / _MB, 1),
            }

    def report(self) -> dict[str, Any]:
        """The decode report (DESIGN §10): blocks and lanes, seconds per lane, peak buffer, gaps, plan error."""
        with self._cond:
            records = [vars(r).copy() for r in self._records]
            gap_frames = sorted({i for r in records for i in r.pop("gap_frames")})
            return {
                "lanes": [{"name": lane.name, "kind": lane.kind, "hwaccel": lane.hwaccel} for lane in self.lanes],
                "ahead": self.ahead,
                "budget_mb": self.options.budget_mb,
                "block_sec": float(self.options.block_sec),
                "first_block_sec": float(self.options.first_block_sec),
                "blocks": records,
                "seconds_per_lane": {k: round(v, 3) for k, v in self._lane_seconds.items()},
                "lanes_cpu_s": round(sum(r["cpu_s"] for r in records), 3),
                "scan_cpu_s": round(sum(scan.cpu_s or 0.0 for scan in self._scans), 3),
                "peak_buffered_mb": round(self._peak / _MB, 3),
                "peak_buffered_bytes": self._peak,
                "peak_ahead_bytes": self._peak_ahead,
                "over_budget_frames": self._over_budget_frames,
                "over_budget_peak_bytes": self._over_budget_peak,
                "gaps": {
                    "material": sum(r["material_gaps"] for r in records),
                    "damaged": sum(r["damaged"] for r in records),
                    "decoder_errors": sum(r["decoder_errors"] for r in records),
                    "stretches": self._stretches(gap_frames),
                },
                "probe_unknown": sum(r["probe_unknown"] for r in records),
                "plan_error": "; ".join(self._scan_failures) or None,
                "scan_attempts": len(self._scan_failures) + 1 if self._t0 else 0,
                "redone_blocks": [r["number"] for r in records if r["redone"]],
                "frames_indexed": len(self.index),
                "index_complete": self.index.complete,
                "wall_s": round(time.monotonic() - self._t0, 3) if self._t0 else 0.0,
            }


    def _stretches(self, gap_frames: list[int]) -> list[dict[str, Any]]:
        """The report's ``gaps.stretches``: frames ``[lo, hi)`` and times (s from the first frame) of each stretch the
        source lacks or ffmpeg could not decode (caller holds the lock)."""
        import bisect

        if not gap_frames:
            return []
        aux = self.options.aux
        wanted = sorted({i for n, block in enumerate(self._blocks) for i in (
            *self._grids[n], *(range(block.lo, block.hi, aux.every) if aux is not None else ()))})  # fmt: skip
        index, out = self.index, []
        for lo, hi in gap_stretches(gap_frames, wanted):
            end = index.pts_of(hi) if hi < len(index) else (index.end_pts or index.pts_of(hi - 1))
            count = bisect.bisect_left(gap_frames, hi) - bisect.bisect_left(gap_frames, lo)
            out.append({"lo": lo, "hi": hi, "frames": count,
                        "start_s": round(float(index.seconds(lo)), 6),
                        "end_s": round(float((end - index.pts_of(0)) * index.time_base), 6)})  # fmt: skip
        return out


class _Stopped(Exception):
    """A lane stopped because the source is failing or closing (not an error of its own)."""


class SourceClosed(DecodeError):
    """The consumer asked for a frame of a source closed before the end (``close()`` from another thread):
    raised, never a quiet end of the stream."""
