"""What the OCR stage produces: text lines with their box and score, per image."""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[float, float]


@dataclass(frozen=True)
class TextLine:
    """One recognised line: its text, recognition score in [0, 1], and its box as 4 points (x, y) in
    *frame* coordinates (pixels of the full decoded frame, after any crop has been mapped back)."""

    text: str
    score: float
    box: tuple[Point, Point, Point, Point]

    def __post_init__(self) -> None:
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"score must be in [0, 1], got {self.score}")
        if len(self.box) != 4:
            raise ValueError(f"a box has 4 points, got {len(self.box)}")

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """Axis-aligned bounds (x0, y0, x1, y1)."""
        xs = [p[0] for p in self.box]
        ys = [p[1] for p in self.box]
        return min(xs), min(ys), max(xs), max(ys)


@dataclass(frozen=True)
class OcrResult:
    """All lines found in one image, top to bottom then left to right. No text is an empty tuple."""

    lines: tuple[TextLine, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)
