"""What the OCR stage produces: text lines with their box and score, per image."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Point = tuple[float, float]
Bounds = tuple[float, float, float, float]  # x0, y0, x1, y1

#: A box the detector finds is a line known before (read on an earlier frame) from this overlap (intersection over
#: union): a reading with known lines keeps them for such boxes, unrecognised (:mod:`flowocr.ocr.area`).
SAME_BOX_IOU = 0.7


def point_bounds(points) -> Bounds:
    """The axis-aligned bounds (x0, y0, x1, y1) of a box's points (x, y): a line's 4 points, or a detection's 4 x 2
    array."""
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def box_area(a: Bounds) -> float:
    """The area of an ``(x0, y0, x1, y1)`` box (0 for an empty or inverted one)."""
    return max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])


def box_intersection(a: Bounds, b: Bounds) -> float:
    """The area two ``(x0, y0, x1, y1)`` boxes share."""
    return box_area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def box_iou(a: Bounds, b: Bounds) -> float:
    """Intersection over union of two boxes (0 for boxes without area)."""
    inter = box_intersection(a, b)
    union = box_area(a) + box_area(b) - inter  # both have area where they share some
    return inter / union if inter > 0 else 0.0


def outgrows(box: Bounds, bounds: Bounds, share: float) -> bool:
    """Whether ``box`` reaches past ``bounds`` on any side by more than ``share`` of the height of ``bounds`` (its
    width where it is taller than wide: a vertical line): a line's box found again that grew holds glyphs the line
    had not, however well the two overlap."""
    reach = share * min(bounds[2] - bounds[0], bounds[3] - bounds[1])
    return max(bounds[0] - box[0], bounds[1] - box[1], box[2] - bounds[2], box[3] - bounds[3]) > reach


def inside_share(a: Bounds, b: Bounds) -> float:
    """The share of box ``a`` that lies inside box ``b`` (0 for a box without area)."""
    area = box_area(a)
    return box_intersection(a, b) / area if area > 0 else 0.0


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
        return point_bounds(self.box)


#: A line of one character that is not a CJK ideograph, kana or hangul (a digit, a Latin letter, a sign) is what
#: OCR makes of background texture (a corner of a drawing, a fractal's edge) far more often than a subtitle: it is
#: kept only when read with at least this score (a lone "嗯" or "好" is a line like any other).
LONE_MIN_SCORE = 0.9
#: ... and a lone CJK letter with at least this one. Texture read as one ideograph scored 0.53-0.57 on the dev
#: corpora (seeds 13 and 11: "油", "上", "中", five phantom cues); no line of a subtitle there scored under 0.78.
LONE_CJK_MIN_SCORE = 0.7


def plausible(line: TextLine) -> bool:
    """Whether ``line`` can be a line of text (see ``LONE_MIN_SCORE``)."""
    text = line.text.strip()
    if len(text) != 1 or line.score >= LONE_MIN_SCORE:
        return bool(text)
    code = ord(text)
    cjk = 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF or 0xF900 <= code <= 0xFAFF
    return cjk and line.score >= LONE_CJK_MIN_SCORE


def known_boxes(boxes: Sequence[Bounds], known: Sequence[TextLine]) -> dict[int, TextLine]:
    """Which of ``boxes`` (x0 y0 x1 y1, a detection's) are lines of ``known``: box index -> line, each line for the
    box it overlaps most, from ``SAME_BOX_IOU``, each box once."""
    out: dict[int, TextLine] = {}
    for line in known:
        best = max(((box_iou(box, line.bounds), k) for k, box in enumerate(boxes) if k not in out), default=None)
        if best is not None and best[0] >= SAME_BOX_IOU:
            out[best[1]] = line
    return out


def moved(lines: Sequence[TextLine], dx: float, dy: float) -> tuple[TextLine, ...]:
    """``lines`` with their boxes moved by ``(dx, dy)``."""
    return tuple(TextLine(line.text, line.score, tuple((x + dx, y + dy) for x, y in line.box))  # type: ignore[arg-type]
                 for line in lines)  # fmt: skip


@dataclass(frozen=True)
class OcrResult:
    """All lines found in one image, top to bottom then left to right. No text is an empty tuple."""

    lines: tuple[TextLine, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)
