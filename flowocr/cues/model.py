"""Cues and the per-frame OCR results they are built from. Times are exact seconds from the first frame."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flowocr.ocr.types import TextLine


@dataclass(frozen=True)
class FrameText:
    """The OCR result of one sampled frame: its index, pts, time (s from the first frame), and lines."""

    index: int
    pts: int
    time: Fraction
    lines: tuple[TextLine, ...]
    reused: bool = False  # True when the result was reused from an earlier frame (text area unchanged)


@dataclass(frozen=True)
class Cue:
    """Text shown over ``[start, end)`` (seconds from the first frame, exact), with its box and confidence.

    ``start_index``/``end_index`` are the frame indices where it appears / first frame without it.
    ``track`` separates text shown at the same time in separate regions (0 = the lowest region). ``kind`` is
    ``"text"``, or ``"overlay"`` for a logo or watermark (:mod:`flowocr.cues.overlay`; known once a run ends).
    """

    start: Fraction
    end: Fraction
    text: str
    box: tuple[float, float, float, float]
    score: float
    track: int = 0
    start_index: int = -1
    end_index: int = -1
    kind: str = "text"

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ValueError(f"cue end {self.end} must be after its start {self.start}")
        if not self.text:
            raise ValueError("a cue has text")
