"""Blocks of frames ``[lo, hi)`` (presentation-order indices) and the keyframe each one is decoded from."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Block:
    """Frames ``[lo, hi)`` decoded by one lane, starting at keyframe index ``seek`` (``seek <= lo``).

    ``seek == 0`` means decoding from the start of the file, without a seek.
    """

    number: int
    lo: int
    hi: int
    seek: int

    def __post_init__(self) -> None:
        if not 0 <= self.lo < self.hi:
            raise ValueError(f"block {self.number}: invalid range [{self.lo}, {self.hi})")
        if not 0 <= self.seek <= self.lo:
            raise ValueError(f"block {self.number}: seek frame {self.seek} is after its start {self.lo}")

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self.lo <= index < self.hi

    def __len__(self) -> int:
        return self.hi - self.lo


def check_tiling(blocks: Iterable[Block], start: int = 0) -> Iterator[Block]:
    """Pass blocks through while checking, as they arrive, that they tile ``[start, ...)`` exactly.

    Consecutive numbers from 0, non-empty, no gap and no overlap; a violation raises ValueError at the
    block that breaks it.
    """
    expected_lo = start
    for number, block in enumerate(blocks):
        if block.number != number:
            raise ValueError(f"block numbered {block.number} arrived as block {number}")
        if block.lo != expected_lo:
            kind = "gap" if block.lo > expected_lo else "overlap"
            raise ValueError(f"block {number} starts at frame {block.lo}, expected {expected_lo} ({kind})")
        expected_lo = block.hi
        yield block


@dataclass(frozen=True)
class Keyframe:
    """A keyframe of the stream: its presentation-order index and its time from the first frame (s)."""

    index: int
    time: Fraction


@dataclass(frozen=True)
class End:
    """The end of the stream: the number of frames and the time the last frame stops being shown (s)."""

    frames: int
    time: Fraction


def plan_blocks(
    events: Iterable[Keyframe | End], *, block_sec: Fraction, first_block_sec: Fraction = Fraction(0)
) -> Iterator[Block]:
    """Cut a stream into blocks at keyframes (DESIGN §3), as the keyframes arrive.

    ``events`` are keyframes in increasing index order, then one :class:`End`. The first block is about
    ``first_block_sec`` long (0: no short first block), the others about ``block_sec``: a block ends at the
    first keyframe at least that long after its start. A remainder shorter than half a block is merged into
    the block before it. A block is yielded as soon as that rule can no longer change it, so decoding can
    start while the scan is still reading. Blocks tile ``[0, frames)`` exactly; each seeks to its own first
    frame (a keyframe), block 0 decodes from the start of the file.
    """
    if block_sec <= 0:
        raise ValueError(f"block_sec must be positive, got {block_sec}")
    if first_block_sec < 0:
        raise ValueError(f"first_block_sec must not be negative, got {first_block_sec}")
    half = block_sec / 2
    start_index, start_time = 0, Fraction(0)
    target = first_block_sec if first_block_sec > 0 else block_sec
    pending: Block | None = None  # complete, but a short remainder could still be merged into it
    number = 0
    last_index = 0
    for event in events:
        if isinstance(event, End):
            if event.frames <= start_index:
                raise ValueError(f"the stream ends at frame {event.frames}, before block start {start_index}")
            if pending is not None and event.time - start_time < half:
                yield Block(pending.number, pending.lo, event.frames, pending.seek)
            else:
                if pending is not None:
                    yield pending
                yield Block(number, start_index, event.frames, start_index)
            return
        if event.index < last_index or (event.index == last_index and event.index > 0):
            raise ValueError(f"keyframe {event.index} arrived after keyframe {last_index}")
        last_index = event.index
        if event.index == 0:
            continue
        if event.time - start_time >= target:
            if pending is not None:
                yield pending
            pending = Block(number, start_index, event.index, start_index)
            number += 1
            start_index, start_time, target = event.index, event.time, block_sec
        elif pending is not None and event.time - start_time >= half:
            yield pending  # the remainder is already at least half a block: nothing will merge into it
            pending = None
    raise ValueError("the keyframe stream ended without an End event")
