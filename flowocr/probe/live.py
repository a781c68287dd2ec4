"""The frame index as the packet scan streams it: frames become final while ffprobe is still reading.

Packets arrive in decode order. A packet's pts is never below its dts, and dts never decreases, so once a
packet with dts ``d`` has been read, every pending pts below ``d`` is final: no later packet can come before
it in presentation order. Final frames are appended to a :class:`LiveIndex` in presentation order, which lanes
read while the scan goes on (append-only: what a lane has read never changes).
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from flowocr.probe.index import IndexLookups, Packet, end_of_last_frame

# Without dts, a frame is taken as final once this many later packets are pending (the reorder depth
# of any real encoder is far below it).
_REORDER_WINDOW = 64


@dataclass(frozen=True)
class FinalFrame:
    index: int
    pts: int
    key: bool


class IndexBuilder:
    """Turns packets in decode order into frames in presentation order, each as soon as it is final (pure).

    Raises ValueError for a packet that would come before an already final frame, or a duplicate pts.
    """

    def __init__(self) -> None:
        self._pending: list[tuple[int, bool, int | None]] = []
        self._count = 0
        self._last: tuple[int, int | None] | None = None  # pts and duration of the last final frame
        self._before_last: int | None = None

    def feed(self, packet: Packet) -> list[FinalFrame]:
        if packet.discard:
            return []
        pts = packet.pts if packet.pts is not None else packet.dts
        if pts is None:
            raise ValueError("a video packet has no timestamp")
        if self._last is not None and pts <= self._last[0]:
            raise ValueError(f"packet pts {pts} comes before frame pts {self._last[0]}, already final")
        heapq.heappush(self._pending, (pts, packet.key, packet.duration))
        if packet.dts is not None:
            return self._release(lambda head: head < packet.dts)
        return self._release(lambda head: len(self._pending) > _REORDER_WINDOW)

    def finish(self) -> list[FinalFrame]:
        return self._release(lambda head: True)

    def _release(self, ready) -> list[FinalFrame]:
        out = []
        while self._pending and ready(self._pending[0][0]):
            pts, key, duration = heapq.heappop(self._pending)
            if self._last is not None and pts == self._last[0]:
                raise ValueError(f"two frames share the pts {pts}")
            if self._last is not None:
                self._before_last = self._last[0]
            self._last = (pts, duration)
            out.append(FinalFrame(self._count, pts, key))
            self._count += 1
        return out

    def end_pts(self, time_base: Fraction, frame_rate: Fraction) -> int:
        if self._last is None:
            raise ValueError("no frame is shown")
        return end_of_last_frame(self._last[0], self._last[1], self._before_last, time_base, frame_rate)


class LiveIndex(IndexLookups):
    """The frame index while the scan is running: final frames only, append-only, thread-safe to read.

    ``len()`` is the number of final frames so far; ``complete`` turns True (and ``end_pts`` is set) when the
    scan has read the whole file. ``wait_for(n)`` blocks until ``n`` frames are final or the scan ended.
    """

    def __init__(self, time_base: Fraction) -> None:
        self.pts: list[int] = []
        self.keyframes: list[int] = []
        self.time_base = time_base
        self.end_pts: int | None = None
        self.complete = False
        self._cond = threading.Condition()

    def __len__(self) -> int:
        return len(self.pts)

    def append(self, frames: list[FinalFrame]) -> None:
        with self._cond:
            for frame in frames:
                self.pts.append(frame.pts)
                if frame.key:
                    self.keyframes.append(frame.index)
            self._cond.notify_all()

    def finish(self, end_pts: int | None) -> None:
        with self._cond:
            self.end_pts = end_pts
            self.complete = end_pts is not None
            self._cond.notify_all()

    @property
    def duration(self) -> Fraction:
        end = self.end_pts if self.end_pts is not None else self.pts[-1]
        return (end - self.pts[0]) * self.time_base


def final_frames(packets: Iterator[Packet]) -> Iterator[FinalFrame]:
    """Final frames in presentation order from packets in decode order (see :class:`IndexBuilder`)."""
    builder = IndexBuilder()
    for packet in packets:
        yield from builder.feed(packet)
    yield from builder.finish()
