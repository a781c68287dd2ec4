"""The change detector: per frame of the aux stream, how much of the text area's strokes appeared and vanished.

It sees every frame, small and greyscale, and compares each frame's stroke map (bright pixels next to dark
ones: subtitle text and its outline, see :mod:`flowocr.ocr.strokes`) with the previous frame's. Its state is the
last ``RECEPTIVE_FIELD`` frame(s), so processing the stream in windows with that much left context gives exactly
the whole-stream result (tested), and a too-short context does not (tested).

At aux scale (0.35) text strokes are 1–2 pixels wide and blurred, so the stroke map uses softer levels than at
full size (bright >= 160 next to <= 110). Measured on the fixtures (640x360 → 224x126, whole frame): a cue
appearing, vanishing or being replaced moves 8–400 stroke pixels between two frames; moving backgrounds move
0–5 on most fixtures but up to 150 on the open-GOP HEVC one (a fast, contrasty background). No fixed threshold
separates those, so the reader reads the scores *relatively* (:mod:`flowocr.read.timing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from flowocr.ocr.strokes import Strokes, moved, strokes

RECEPTIVE_FIELD = 1
BRIGHT, DARK = 160, 110


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
