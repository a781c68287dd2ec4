"""Streaming windows (DESIGN §7): how the consumer side batches work over a stream that is still arriving.

Pure functions. A window is ``(ctx_start, new_start, new_end)``: frames ``[new_start, new_end)`` are new (their
results are emitted), frames ``[ctx_start, new_start)`` are left context, processed again but never emitted.
The first window is small (``initial``: low time to first result), later ones large (``chunk``: batching);
when the stream has finished, what is left is flushed; a window is never empty. Windows tile the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
Window = tuple[int, int, int]


def next_window(
    available: int, emitted: int, finished: bool, *, initial: int, chunk: int, left_ctx: int
) -> Window | None:
    """The next window to process, or None when not enough has arrived yet (or all is emitted).

    ``available``: frames received so far; ``emitted``: frames whose results are out; ``finished``: no more
    frames will come. ``initial`` 0 means the first window is a normal chunk.
    """
    if chunk < 1 or initial < 0 or left_ctx < 0:
        raise ValueError(f"invalid window sizes initial={initial} chunk={chunk} left_ctx={left_ctx}")
    if not 0 <= emitted <= available:
        raise ValueError(f"emitted ({emitted}) must be within [0, available={available}]")
    pending = available - emitted
    if pending == 0:
        return None
    target = initial if (emitted == 0 and initial > 0) else chunk
    ctx_start = max(0, emitted - left_ctx)
    if pending >= target:
        return ctx_start, emitted, emitted + target
    if finished:
        return ctx_start, emitted, available
    return None


def slice_new(decoded: Sequence[T], window: Window, per_frame: int) -> list[T]:
    """The items of a window's new frames, from the items of all its frames (``per_frame`` items each)."""
    ctx_start, new_start, new_end = window
    if per_frame < 1:
        raise ValueError(f"per_frame must be >= 1, got {per_frame}")
    if len(decoded) != (new_end - ctx_start) * per_frame:
        raise ValueError(f"a window of {new_end - ctx_start} frames has {len(decoded)} items, not x{per_frame}")
    return list(decoded[(new_start - ctx_start) * per_frame : (new_end - ctx_start) * per_frame])
