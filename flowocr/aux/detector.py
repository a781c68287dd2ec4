"""The change detector: per frame of the aux stream, how much of the text area's strokes appeared and vanished.

It sees every frame, small and greyscale, and compares each frame's stroke map (bright pixels next to dark
ones: subtitle text and its outline, see :mod:`flowocr.ocr.reuse`) with the previous frame's. Its state is the
last ``RECEPTIVE_FIELD`` frame(s), so processing the stream in windows with that much left context gives exactly
the whole-stream result (tested), and a too-short context does not (tested).

At aux scale (0.35) text strokes are 1–2 pixels wide and blurred, so the stroke map uses softer levels than at
full size (bright >= 160 next to <= 110). Measured on the fixtures (640x360 → 224x126, whole frame): a cue
appearing, vanishing or being replaced moves 8–400 stroke pixels between two frames; moving backgrounds move
0–5 on most fixtures but up to 150 on the open-GOP HEVC one (a fast, contrasty background). No fixed threshold
separates those, so the consumer reads the scores *relatively*: the largest change between two samples marks
the frame where the text changed (91 % of cue boundaries within one frame on the fixtures, the rest being two
boundaries in one sampling step, told apart by appeared vs vanished), and a *spike* (a score well above the
step's median) marks an extra text state worth reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from flowocr.ocr.reuse import Strokes, moved, strokes

RECEPTIVE_FIELD = 1
BRIGHT, DARK = 160, 110
SPIKE_MIN = 6  # a spike moves at least this many stroke pixels ...
SPIKE_OVER_MEDIAN = 3  # ... and this many times the median change of its sampling step (plus 2)


@dataclass(frozen=True)
class FrameChange:
    """Stroke pixels that appeared and vanished at frame ``index`` since the frame before, and its total."""

    index: int
    appeared: int
    vanished: int
    strokes: int

    @property
    def score(self) -> int:
        return max(self.appeared, self.vanished)



def compare(now: Strokes, before: Strokes | None) -> tuple[int, int]:
    """Counts of stroke pixels appeared and vanished since ``before`` (all appeared when there is none)."""
    if before is None or before.mask.shape != now.mask.shape:
        return now.count, 0
    appeared, vanished = moved(now, before)
    return int(np.count_nonzero(appeared)), int(np.count_nonzero(vanished))


def detect(frames: Sequence[tuple[int, np.ndarray]]) -> list[FrameChange]:
    """Changes of a run of consecutive frames ``(index, grey image)``; the first is compared with nothing."""
    out = []
    before: Strokes | None = None
    for index, image in frames:
        now = strokes(image, bright=BRIGHT, dark=DARK)
        appeared, vanished = compare(now, before)
        out.append(FrameChange(index, appeared, vanished, now.count))
        before = now
    return out


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
