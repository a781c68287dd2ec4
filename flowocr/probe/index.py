"""Frame identity: the presentation-order index of the frames a video shows, and the sampling time grid.

Pure functions over plain data (no ffmpeg here). A frame is known by its index in presentation order and
its pts (integer, stream time base). The index comes from the sorted pts of every packet that is shown, as
the packet scan reports them; never from float times, never from ffmpeg's per-run frame counter.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Packet:
    """One packet header of the video stream, in decode order. Times in the stream time base."""

    pts: int | None
    dts: int | None
    duration: int | None
    key: bool
    discard: bool


class IndexLookups:
    """Lookups shared by the complete index and the live one; needs ``pts`` (sorted) and ``time_base``."""

    pts: Sequence[int]
    time_base: Fraction

    def pts_of(self, index: int) -> int:
        return self.pts[index]

    def index_of(self, pts: int) -> int | None:
        """Index of the frame with exactly this pts, or None when no shown frame has it."""
        i = bisect.bisect_left(self.pts, pts)
        return i if i < len(self.pts) and self.pts[i] == pts else None

    def on_screen_at(self, pts: int | Fraction) -> int | None:
        """Index of the frame on screen at a time (the last frame with pts <= t), None before the first."""
        i = bisect.bisect_right(self.pts, pts) - 1
        return i if i >= 0 else None

    def seconds(self, index: int) -> Fraction:
        """Presentation time of a frame relative to the first frame, exact."""
        return (self.pts[index] - self.pts[0]) * self.time_base


@dataclass(frozen=True)
class FrameIndex(IndexLookups):
    """The shown frames of a stream in presentation order.

    ``pts`` is strictly increasing; ``keyframes`` holds the indices of frames whose packet is a keyframe
    (a decoder can start there). ``end_pts`` is where the last frame stops being shown (its pts + duration).
    """

    pts: tuple[int, ...]
    time_base: Fraction
    keyframes: tuple[int, ...]
    end_pts: int

    def __post_init__(self) -> None:
        if not self.pts:
            raise ValueError("a frame index needs at least one frame")
        if any(b <= a for a, b in zip(self.pts, self.pts[1:])):
            raise ValueError("frame pts must be strictly increasing")
        if self.end_pts <= self.pts[-1]:
            raise ValueError(f"end_pts {self.end_pts} must be after the last frame's pts {self.pts[-1]}")

    def __len__(self) -> int:
        return len(self.pts)

    @property
    def duration(self) -> Fraction:
        return (self.end_pts - self.pts[0]) * self.time_base


def build_index(packets: Iterable[Packet], time_base: Fraction, frame_rate: Fraction) -> FrameIndex:
    """Build the presentation-order index from packet headers (any order; discarded packets skipped).

    Raises ValueError when no packet is shown or when two shown packets share a pts.
    """
    shown: list[tuple[int, bool, int | None]] = []
    for p in packets:
        if p.discard:
            continue
        pts = p.pts if p.pts is not None else p.dts
        if pts is None:
            raise ValueError("a video packet has no timestamp")
        shown.append((pts, p.key, p.duration))
    if not shown:
        raise ValueError("no frame is shown")
    shown.sort(key=lambda item: item[0])
    pts = tuple(item[0] for item in shown)
    for a, b in zip(pts, pts[1:]):
        if a == b:
            raise ValueError(f"two frames share the pts {a}")
    keyframes = tuple(i for i, item in enumerate(shown) if item[1])
    return FrameIndex(pts=pts, time_base=time_base, keyframes=keyframes, end_pts=_end_pts(shown, time_base, frame_rate))


def _end_pts(shown: Sequence[tuple[int, bool, int | None]], time_base: Fraction, frame_rate: Fraction) -> int:
    last_pts, _, last_duration = shown[-1]
    before = shown[-2][0] if len(shown) > 1 else None
    return end_of_last_frame(last_pts, last_duration, before, time_base, frame_rate)


def end_of_last_frame(
    last_pts: int, last_duration: int | None, before: int | None, time_base: Fraction, frame_rate: Fraction
) -> int:
    """The last frame's pts plus its duration: its own, else the last interval, else one nominal frame."""
    if last_duration and last_duration > 0:
        return last_pts + last_duration
    if before is not None:
        return last_pts + (last_pts - before)
    return last_pts + max(1, math.ceil(1 / (frame_rate * time_base)))


def sample_grid(index: FrameIndex, fps: Fraction) -> list[int]:
    """Indices of the frames sampled at ``fps`` (DESIGN §2), in increasing order, each once.

    Sample times are t_k = t_0 + k / fps (t_0 = the first frame's time) while t_k < end of the last frame;
    the frame sampled for t_k is the one on screen at t_k. Exact rational arithmetic throughout, so it is
    right for variable frame rate and any start time. Runs in O(frames), however high ``fps`` is.
    """
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    pts = index.pts
    step = 1 / (fps * index.time_base)  # pts units between two samples
    origin = pts[0]
    chosen: list[int] = []
    k = 0
    i = 0
    n = len(pts)
    while True:
        t = origin + k * step
        if t >= index.end_pts:
            break
        while i + 1 < n and pts[i + 1] <= t:
            i += 1
        chosen.append(i)
        if i + 1 >= n:
            # No later frame: every remaining sample shows the last frame again.
            break
        # First sample at which frame i+1 is on screen.
        k = max(k + 1, math.ceil((pts[i + 1] - origin) / step))
    return chosen


def grid_step(time_base: Fraction, fps: Fraction) -> Fraction:
    """Pts units between two sample times."""
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    return 1 / (fps * time_base)


def is_sampled(pts: int, next_pts: int, origin: int, step: Fraction) -> bool:
    """Whether a frame shown over ``[pts, next_pts)`` is on screen at some sample time origin + k * step."""
    k = max(0, math.ceil((pts - origin) / step))
    return origin + k * step < next_pts


def grid_between(index: IndexLookups, lo: int, hi: int, end_pts: int | None, fps: Fraction) -> list[int]:
    """The grid frames (as :func:`sample_grid` picks them) inside ``[lo, hi)``, from local facts only.

    Needs the pts of frames ``lo .. hi`` (frame ``hi`` when it exists, else ``end_pts``, the end of the
    last frame) and of frame 0: so a block's grid is known as soon as the scan has passed its end.
    """
    step = grid_step(index.time_base, fps)
    origin = index.pts_of(0)
    chosen = []
    for i in range(lo, hi):
        following = index.pts_of(i + 1) if i + 1 < hi or end_pts is None else end_pts
        if is_sampled(index.pts_of(i), following, origin, step):
            chosen.append(i)
    return chosen


def keyframe_at_or_before(index: FrameIndex, frame: int) -> int:
    """The last keyframe index <= ``frame`` (0 when none: decoding then starts from the file's start)."""
    i = bisect.bisect_right(index.keyframes, frame) - 1
    return index.keyframes[i] if i >= 0 else 0
