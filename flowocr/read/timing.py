"""Where a text appeared and vanished, from the change detector's per-frame changes (pure).

The detector (:mod:`flowocr.aux.detector`) reports, per frame, how many stroke pixels appeared and vanished since
the frame before. No fixed threshold separates text changes from a moving background (a cue moves 8-400 stroke
pixels at aux size on the fixtures, a fast contrasty background up to 150), so these rules read the scores
*relatively*: the largest change between two samples marks the frame where the text changed, and a *spike* (a score
well above its sampling step's median) marks an extra text state worth reading.
"""

from __future__ import annotations

from collections.abc import Sequence

from flowocr.aux.detector import FrameChange

SPIKE_MIN = 6  # a spike moves at least this many stroke pixels ...
SPIKE_OVER_MEDIAN = 3  # ... and this many times the median change of its sampling step (plus 2)


#: A new text can show a frame or two before the old one in its place is gone (a dissolve, encoder ghosting).
REPLACE_LEAD = 2


def appeared_at(window: Sequence[FrameChange], *, replacing: bool) -> int | None:
    """The frame where a text appeared, from the changes between the fed frame before it and the first one that
    read it (None: nothing appeared there).

    A text after nothing in its place appeared where the most strokes appeared (the latest of equals). A text
    ``replacing`` another in its place usually swaps with it in one change: the anchor is the frame where the
    most strokes vanished (where :func:`vanished_at` ends the old text), and the new text appeared there, up to
    ``REPLACE_LEAD`` frames before it, or later. The best appearance up to the anchor wins when it shows at least
    half as many appearing strokes as the best one from there on (a fast background's own strokes can outnumber
    a new line's: the open-GOP fixture); a later one wins by more (a blank gap between the two texts); with
    nothing appearing from there on, the anchor itself."""
    gone = vanished_at(window, at_end=False) if replacing else None
    if gone is not None:
        near = [c for c in window if c.index >= gone - REPLACE_LEAD and c.appeared]
        if not near:
            return gone
        best = max(near, key=lambda c: (c.appeared, c.index))
        at = max((c for c in near if c.index <= gone), key=lambda c: (c.appeared, c.index), default=None)
        if at is not None and 2 * at.appeared >= best.appeared:
            return at.index
        return best.index
    points = [c for c in window if c.appeared]
    return max(points, key=lambda c: (c.appeared, c.index)).index if points else None


def vanished_at(window: Sequence[FrameChange], *, at_end: bool) -> int | None:
    """The frame where a text vanished, from the changes between its last reading and the first fed frame
    without it: where the most strokes vanished (the earliest of equals). ``at_end`` (it lasted to the end of
    the stream, no later sample confirms an end): only a spike counts. None: no evidence."""
    points = [c for c in window if c.vanished]
    if at_end:
        peaks = {c.index for c in spikes(window)}
        points = [c for c in points if c.index in peaks]
    return max(points, key=lambda c: (c.vanished, -c.index)).index if points else None


def spikes(changes: Sequence[FrameChange]) -> list[FrameChange]:
    """The changes of one sampling step that stand out from its background motion (see the module docstring)."""
    if not changes:
        return []
    scores = sorted(c.score for c in changes)
    median = scores[len(scores) // 2]
    floor = max(SPIKE_MIN, SPIKE_OVER_MEDIAN * median + 2)
    return [c for c in changes if c.score >= floor]
