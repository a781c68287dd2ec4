"""The text area: which part of each frame is OCR'd, and how boxes found in it map back to the frame.

``--area`` accepts:

- ``full``: the whole frame.
- ``bottom``: the lower ``BOTTOM_FRACTION`` (30 %) of the frame, full width: where burned-in subtitles sit.
  Measured on our material: subtitle lines lie in the lower 10-20 % (fixtures, 640x360: lines at 78-95 %
  of the height; rapidvideocr_nezha, 1920x800: 91 %; rapidvideocr_1, 678x360: 92-97 %), so 30 % leaves room
  for two- and three-line subtitles and raised positions.
- ``top``: the upper ``TOP_FRACTION`` (30 %), full width: top-positioned captions and translated signs.
- ``auto``: found from the video: OCR a few full frames spread over it and keep the band where text recurs
  (:func:`find_text_band`). Until that is done, ``auto`` stands for the full frame.
- ``X,Y,W,H``: a rectangle, either in fractions of the frame (every value a decimal number in [0, 1], e.g.
  ``0,0.75,1,0.25``) or in pixels (every value an integer, e.g. ``0,600,1920,200``). A rectangle that sticks
  out of the frame is clipped to it; one that lies wholly outside is an error.

Rectangles are in pixels of the decoded frame, half-open: rows ``[y, y + h)``, columns ``[x, x + w)``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from flowocr.errors import UsageError
from flowocr.ocr.types import OcrResult, TextLine, inside_share, moved

BOTTOM_FRACTION = 0.30
TOP_FRACTION = 0.30

AreaKind = Literal["full", "bottom", "top", "auto", "fraction", "pixel"]

_AREA_HELP = (
    "Supported values are full, bottom (lower 30%), top (upper 30%), auto, or X,Y,W,H as fractions of the frame "
    "(e.g. 0,0.75,1,0.25) or as pixels (e.g. 0,600,1920,200)."
)
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Rect:
    """A non-empty axis-aligned rectangle in frame pixels: columns ``[x, x + w)``, rows ``[y, y + h)``."""

    x: int
    y: int
    w: int
    h: int

    def __post_init__(self) -> None:
        if self.x < 0 or self.y < 0 or self.w < 1 or self.h < 1:
            raise ValueError(f"invalid rectangle x={self.x} y={self.y} w={self.w} h={self.h}")

    @property
    def x1(self) -> int:
        return self.x + self.w

    @property
    def y1(self) -> int:
        return self.y + self.h

    def is_full(self, width: int, height: int) -> bool:
        return (self.x, self.y, self.w, self.h) == (0, 0, width, height)

    def __str__(self) -> str:
        return f"{self.x},{self.y},{self.w},{self.h}"


@dataclass(frozen=True)
class AreaSpec:
    """A parsed ``--area``: a named area, or a rectangle (``values``) in fractions or pixels.

    ``text`` keeps what the user wrote, for messages and the run report.
    """

    kind: AreaKind
    values: tuple[float, float, float, float] | None = None
    text: str = ""

    def __post_init__(self) -> None:
        if (self.kind in ("fraction", "pixel")) != (self.values is not None):
            raise ValueError(f"area kind {self.kind!r} {'needs' if self.values is None else 'takes no'} values")

    @property
    def is_auto(self) -> bool:
        return self.kind == "auto"

    def rect(self, width: int, height: int) -> Rect:
        """The area in pixels of a ``width`` x ``height`` frame, clipped to the frame and never empty.

        ``auto`` gives the full frame (the band is found later by :func:`find_text_band`). Raises UsageError
        when a rectangle lies wholly outside the frame.
        """
        if width < 1 or height < 1:
            raise ValueError(f"invalid frame size {width}x{height}")
        if self.kind in ("full", "auto"):
            return Rect(0, 0, width, height)
        if self.kind == "bottom":
            band = _fraction_px(BOTTOM_FRACTION, height)
            return Rect(0, height - band, width, band)
        if self.kind == "top":
            return Rect(0, 0, width, _fraction_px(TOP_FRACTION, height))
        assert self.values is not None
        x, y, w, h = self.values
        if self.kind == "fraction":
            x, w = x * width, w * width
            y, h = y * height, h * height
        if x >= width or y >= height:
            raise UsageError(
                f"Area {self.text or self.values} lies outside the {width}x{height} frame. "
                f"Give a rectangle inside the frame, or one of full, bottom, top, auto."
            )
        x0, y0 = min(round(x), width - 1), min(round(y), height - 1)
        x1, y1 = max(x0 + 1, min(width, round(x + w))), max(y0 + 1, min(height, round(y + h)))
        return Rect(x0, y0, x1 - x0, y1 - y0)


def _fraction_px(fraction: float, size: int) -> int:
    return max(1, min(size, round(fraction * size)))


def parse_area(text: str) -> AreaSpec:
    """Parse an ``--area`` value (see the module docstring). Raises UsageError naming the allowed forms."""
    value = text.strip().lower()
    if value in ("full", "bottom", "top", "auto"):
        return AreaSpec(kind=value, text=value)  # type: ignore[arg-type]
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 4 or not all(_NUMBER.match(p) for p in parts):
        raise UsageError(f"Invalid area {text!r}. {_AREA_HELP}")
    if any(not p.lstrip("+-").isdigit() for p in parts):
        numbers = tuple(float(p) for p in parts)
        if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in numbers):
            raise UsageError(f"Invalid area {text!r}: fractions must lie in [0, 1]. {_AREA_HELP}")
        kind: AreaKind = "fraction"
    else:
        numbers = tuple(float(int(p)) for p in parts)
        if any(v < 0 for v in numbers):
            raise UsageError(f"Invalid area {text!r}: pixel values cannot be negative. {_AREA_HELP}")
        kind = "pixel"
    if numbers[2] <= 0 or numbers[3] <= 0:
        raise UsageError(f"Invalid area {text!r}: width and height must be greater than 0. {_AREA_HELP}")
    return AreaSpec(kind=kind, values=numbers, text=text.strip())  # type: ignore[arg-type]


def crop(image: np.ndarray, rect: Rect) -> np.ndarray:
    """The part of ``image`` (H x W x C) inside ``rect``: a view, not a copy. The rect must fit the image."""
    height, width = image.shape[:2]
    if rect.x1 > width or rect.y1 > height:
        raise ValueError(f"area {rect} does not fit a {width}x{height} image")
    return image[rect.y : rect.y1, rect.x : rect.x1]


def band_crops(image: np.ndarray, area: Rect, bands: Sequence[Rect]) -> list[np.ndarray]:
    """The images an OCR call over ``bands`` of the full frame ``image`` reads: the frame itself when the only
    band is the whole frame, else each band cut out."""
    height, width = image.shape[:2]
    return [image] if list(bands) == [area] and area.is_full(width, height) else [crop(image, b) for b in bands]


def to_frame(lines: Sequence[TextLine], rect: Rect) -> tuple[TextLine, ...]:
    """Lines found in ``crop(frame, rect)``, with their boxes moved to frame coordinates."""
    return moved(lines, float(rect.x), float(rect.y))


def known_in(known: Sequence[TextLine], rect: Rect) -> tuple[TextLine, ...]:
    """The lines of ``known`` (frame pixels) that lie mostly inside ``rect``, in ``crop(frame, rect)``'s pixels."""
    inside = [line for line in known if inside_share(line.bounds, (rect.x, rect.y, rect.x1, rect.y1)) >= 0.5]
    return moved(inside, -float(rect.x), -float(rect.y))


def result_to_frame(result: OcrResult, rect: Rect) -> OcrResult:
    """:func:`to_frame` for a whole result."""
    return OcrResult(to_frame(result.lines, rect))


# --- bands of strokes: where to look in one frame -------------------------------------------------------------

#: Each run of stroke rows is read with this share of the frame height above and below it (at least
#: ``BAND_MIN_MARGIN`` pixels): the detector needs some context, and glyph parts without strokes (thin accents,
#: low-contrast punctuation) stay inside. Runs closer than two margins are read as one band.
BAND_MARGIN = 0.04
BAND_MIN_MARGIN = 8
#: Bands that together cover this share of the area are not worth cutting out: the whole area is read.
BAND_WHOLE_SHARE = 0.6


def stroke_bands(rows: np.ndarray, scale: float, area: Rect, frame_height: int) -> list[Rect]:
    """The horizontal bands of ``area`` worth reading: the runs of rows holding stroke pixels, widened by a
    margin and merged, each as wide as the area. ``rows`` is a boolean per row of the area's stroke map, at
    ``scale`` (map pixels per area pixel). An area without strokes, or whose bands would cover most of it, is
    read whole: ``[area]``.

    Cost follows the pixels read: a 1080p subtitle line read as a band is about a fifth of the frame.
    """
    margin = max(BAND_MIN_MARGIN, round(BAND_MARGIN * frame_height))
    spans: list[list[int]] = []
    marked = np.flatnonzero(rows)
    for r in marked:
        top = max(0, math.floor(r / scale) - margin)
        bottom = min(area.h, math.ceil((r + 1) / scale) + margin)
        if spans and top <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], bottom)
        else:
            spans.append([top, bottom])
    if not spans or sum(b - t for t, b in spans) >= BAND_WHOLE_SHARE * area.h:
        return [area]
    return [Rect(area.x, area.y + top, area.w, bottom - top) for top, bottom in spans]


def read_bands(strokes, area: Rect, frame_height: int, rows=(), lines=(), slop: float = 0) -> list[Rect]:
    """The bands of ``area`` to read for a frame whose stroke map is ``strokes``:
    its stroke bands (:func:`stroke_bands`), the row spans ``lines`` (frame pixels, y0 y1: lines read before), and
    the parts of the spans ``rows`` (where the change detector saw text change, in whole cells) that those leave
    out, where at least a band margin and ``slop`` tall: text the stroke map does not see (light on light, thin
    outlines, the second line of a pair). A cell span's slop around a line whose strokes show stays out: a taller
    crop of the same line reads differently (spaces dropped on small Latin text)."""
    marked = strokes.mask.any(axis=1)
    margin = max(BAND_MIN_MARGIN, round(BAND_MARGIN * frame_height))
    covered = np.zeros(area.h, bool)
    for band in stroke_bands(marked, strokes.scale, area, frame_height) if marked.any() else []:
        covered[band.y - area.y : band.y - area.y + band.h] = True
    spans = [(y0, y1, 1) for y0, y1 in lines] + [(y0, y1, max(margin, slop)) for y0, y1 in rows]
    for y0, y1, least in spans:
        a, b = max(0, math.floor(y0 - area.y)), min(area.h, math.ceil(y1 - area.y))
        free = np.flatnonzero(~covered[a:b]) + a
        for run in np.split(free, np.flatnonzero(np.diff(free) > 1) + 1) if len(free) else []:
            if len(run) >= least:
                lo, hi = math.floor(run[0] * strokes.scale), math.ceil((run[-1] + 1) * strokes.scale)
                marked[lo:hi] = True
    return stroke_bands(marked, strokes.scale, area, frame_height)


#: The boxes the detector finds on the isolated image are recognised in the band as it shows too, and each keeps the
#: surer reading (:func:`flowocr.ocr.rapid.surer`): the recogniser was trained on text as it shows, and the
#: isolated image keeps only what the strokes' reach and levels keep (a 360p white line without an outline over a
#: light cellular texture, dev seed 13: of 14 lines read isolated, 11 were junk under 0.85, and 8 of them read as
#: shown at 0.8-0.98; isolated reads dropped the spaces of 'Hong Kong, 1984' and '11:40 PM'). Read as shown alone,
#: lines over a flashing 4 px texture lost marks or gained a stray '「' (dev seed 11): there the isolated image
#: reads better.
ISOLATED_AS_SHOWN = True
#: A line found only with its background isolated (:func:`read_frame`) has at least this many characters and this
#: recognition score: the isolated specks of a noisy picture or of background art read as one letter ("G", "1")
#: or as low-scored junk ("BF . -" 0.50, "OB D" 0.68); the lines read this way on the dev corpus scored 0.97-1.0.
ISOLATED_MIN_CHARS = 3
ISOLATED_MIN_SCORE = 0.9
#: A band the detector sees scaled down (longer than its ``detect_side``) where no line was found, though it holds
#: strokes, is read again at its own size: over a picture of fine lines (a fractal) the scaled-down image blends
#: the text into it (a 1920 x 800 frame: a 29 px line over a Sierpinski pattern, found at full size on 5 of 5
#: frames and scaled to 960 px on none, also cut into bands). Its lines need ``FULL_SIZE_MIN_CHARS`` characters
#: and ``ISOLATED_MIN_SCORE``. Dev seed 11 (two 1080p videos over such patterns lost 8 of 19 cues): missed cues of
#: 0.5 s or more 4 -> 1 of 305, exact 0.919 -> 0.922, CER 0.0132 -> 0.0102, but the lines found there read and
#: placed worse than others (a first letter lost, ends 20-50 frames early over the moving pattern: within 1 frame
#: 0.947 -> 0.941, two split pieces), OCR calls per cue 1.45 -> 1.51 (a busy 1080p picture's own shapes found at
#: full size and read as nothing). Dev seed 13 and seed 2027 (one such video, 720p): the same but one end 17
#: frames early placed on its frame and OCR calls per cue +0.1-0.3 on four videos.
FULL_SIZE_AGAIN = True
FULL_SIZE_MIN_CHARS = 2
#: A band read with lines is read again isolated when this share of its pixels away from strokes are edges: a busy
#: picture, where the detector splits or cuts lines ("不到十分 / 钟 / o / than ten" over a cellular texture, both
#: lines whole once isolated). Measured shares: cellular textures 0.16-0.25, real anime footage 0.07, clean
#: pictures 0.0.
ISOLATE_CLUTTER = 0.12


def _squashed(text: str) -> str:
    """``text`` without its spaces."""
    return "".join(text.split())


def _weight(lines) -> float:
    """How much confident text a reading holds: its characters (without spaces) weighted by their line's score."""
    return sum(line.score * len(_squashed(line.text)) for line in lines)


#: A whole area whose long side is over this many pixels reaches OCR's detector below half its size (960 px): a
#: corner logo of a 1440p or 4K frame's first reading shrinks to 11 px and is lost or read in part. Its stroke
#: bands are read too then (:func:`read_whole`).
WHOLE_DETAIL_SIDE = 1920


def read_whole(engine, image: np.ndarray, area: Rect, strokes, frame_height: int) -> tuple[TextLine, ...]:
    """OCR of the whole ``area`` of a full frame (the first frame: nothing is known yet of where text is); where the
    area is over ``WHOLE_DETAIL_SIDE`` px long and its stroke map ``strokes`` is given, its stroke bands too, read
    at their own scale in the same call: a line found there replaces the whole read's lines it overlaps."""
    bands = whole_bands(area, strokes, frame_height)
    if len(bands) == 1:
        return read_frame(engine, image, area, bands)
    whole, *banded = read_frame_bands(engine, image, area, bands)
    found = [line for lines in banded for line in lines]
    return tuple(found) + tuple(line for line in whole if not any(_overlap(line.bounds, b.bounds) for b in found))


def whole_bands(area: Rect, strokes, frame_height: int) -> list[Rect]:
    """The bands a read of the whole ``area`` takes (:func:`read_whole`): the area, and on an area over
    ``WHOLE_DETAIL_SIDE`` px long with a stroke map ``strokes`` that holds strokes, its stroke bands too."""
    if strokes is None or max(area.w, area.h) <= WHOLE_DETAIL_SIDE or not strokes.mask.any():
        return [area]
    return [area, *read_bands(strokes, area, frame_height)]


def _overlap(a, b) -> bool:
    """Whether two boxes (x0 y0 x1 y1) share at least a third of the smaller one."""
    return max(inside_share(a, b), inside_share(b, a)) >= 1 / 3


def read_frame(engine, image: np.ndarray, area: Rect, bands: Sequence[Rect],
               known: Sequence[TextLine] = ()) -> tuple[TextLine, ...]:  # fmt: skip
    """OCR the ``bands`` of a full frame ``image`` (:func:`read_frame_bands`); lines in frame pixels, in band
    order."""
    return tuple(line for lines in read_frame_bands(engine, image, area, bands, known) for line in lines)


def read_frame_bands(engine, image: np.ndarray, area: Rect, bands: Sequence[Rect],
                     known: Sequence[TextLine] = ()) -> list[tuple[TextLine, ...]]:  # fmt: skip
    """OCR the ``bands`` of a full frame ``image`` in one engine call (the whole frame when the only band is the
    whole frame), and a second one for the bands read again below; each band's lines in frame pixels. ``known``:
    lines read before (frame pixels) that a box the detector finds is, unrecognised (:meth:`OcrEngine.recognize`).

    A band where the detector finds nothing but that holds strokes is read again with its background isolated
    (:func:`flowocr.ocr.strokes.isolate`): over a busy picture (a cellular texture, a fractal) PP-OCR's detector
    sees no text at all once the band is scaled down to its input size, even 50 px lines that the stroke map
    shows plainly; with the pixels far from any stroke set to black it finds them (measured: 16 lines of a
    1080p video over a cellular texture, none read before). A band read with lines over a busy picture
    (``ISOLATE_CLUTTER``) is read again too, and keeps the reading that holds more confident text (characters
    weighted by score): there the detector finds parts of lines. Where what the strokes keep spans too much of the
    frame to be one piece (a sign at the top, a line at the bottom, a frame read whole), the runs of rows of a busy
    picture where nothing was found are read again so, each keeping the better reading of its rows
    (:func:`isolate_again`). Text whose strokes do not show (light on light)
    gives the second read nothing to keep: it costs a detection, of the rows the strokes keep, only where the first
    found nothing or the picture is busy (none when strokes cover the picture: a texture, not lines). A line of the
    second read needs ``ISOLATED_MIN_CHARS`` characters and ``ISOLATED_MIN_SCORE`` (63 phantom cues of one
    letter on one dev video without them)."""
    from flowocr.ocr.strokes import isolate

    height = image.shape[0]
    crops = band_crops(image, area, bands)  # the whole frame is its one band, at (0, 0)
    results = list(engine.recognize(crops, known=[known_in(known, band) for band in bands] if known else None))
    again = []
    for k, result in enumerate(results):
        for found in isolate(crops[k], frame_height=height, busy=ISOLATE_CLUTTER):
            if isolate_again(found, result.lines):
                again.append((k, found))
    if again:
        images = [found.image for _, found in again]
        inside = [known_in(known, Rect(bands[k].x, bands[k].y + found.top, *found.image.shape[1::-1]))
                  for k, found in again] if known else None  # fmt: skip
        shown = None
        if ISOLATED_AS_SHOWN and getattr(engine, "SHOWN_TOO", False):  # the boxes found isolated, read as shown too
            shown = [crops[k][found.top : found.top + found.image.shape[0]] for k, found in again]
        for (k, found), result in zip(again, engine.recognize(images, known=inside, shown=shown)):
            kept = [line for line in result.lines if line.score >= ISOLATED_MIN_SCORE
                    and len(_squashed(line.text)) >= ISOLATED_MIN_CHARS]  # fmt: skip
            # the piece's rows of the first reading: the lines whose middle lies in them
            top, bottom = found.top, found.top + found.image.shape[0]
            theirs = _lines_in(results[k].lines, top, bottom)
            if _weight(kept) > _weight(theirs):
                # the isolated image is the crop's rows from ``found.top``: its boxes moved back into the crop
                rest = [line for line in results[k].lines if line not in theirs]
                lines = [*rest, *to_frame(kept, Rect(0, top, found.image.shape[1], found.image.shape[0]))]
                results[k] = OcrResult(tuple(sorted(lines, key=lambda line: (line.bounds[1], line.bounds[0]))))
    fine = [k for k, result in enumerate(results) if not result.lines and wants_full_size(engine, crops[k])]
    if fine:
        inside = [known_in(known, bands[k]) for k in fine] if known else None
        for k, result in zip(fine, engine.recognize([crops[k] for k in fine], known=inside, full_size=True)):
            results[k] = OcrResult(tuple(line for line in result.lines if line.score >= ISOLATED_MIN_SCORE
                                         and len(_squashed(line.text)) >= FULL_SIZE_MIN_CHARS))  # fmt: skip
    return [tuple(result_to_frame(result, band).lines) for band, result in zip(bands, results)]


def isolate_again(found, lines) -> bool:
    """Whether a piece of a band isolated (:func:`flowocr.ocr.strokes.isolate`) is read (or detected) again: the
    whole of what the band keeps where nothing was found in the band, or over a busy picture
    (``ISOLATE_CLUTTER``); a run of its rows (a busy picture) where nothing was found in those rows. ``lines``: the
    lines or boxes (x0 y0 x1 y1) found in the band, in band pixels."""
    if found.whole:
        return not lines or found.clutter >= ISOLATE_CLUTTER
    return not _lines_in(lines, found.top, found.top + found.image.shape[0])


def _lines_in(lines, top: float, bottom: float) -> list:
    """The ``lines`` (or boxes: x0 y0 x1 y1) whose middle lies in rows [top, bottom)."""
    bounds = [line.bounds if hasattr(line, "bounds") else line for line in lines]
    return [line for line, box in zip(lines, bounds) if top <= (box[1] + box[3]) / 2 < bottom]


def wants_full_size(engine, crop: np.ndarray) -> bool:
    """Whether a crop where nothing was found is detected again at its own size (``FULL_SIZE_AGAIN``): the
    engine's detector would scale it down and it holds strokes."""
    from flowocr.ocr.strokes import holds_strokes

    side = getattr(engine, "detect_side", None)
    return FULL_SIZE_AGAIN and side is not None and max(crop.shape[:2]) > side and holds_strokes(crop)


# --- auto: the band where text recurs -------------------------------------------------------------------------

#: Texts this similar (difflib ratio over the text without spaces) are the same text seen again: OCR reads the
#: same subtitle or logo slightly differently from frame to frame.
SAME_TEXT_RATIO = 0.8
#: Rows whose weight is at least this share of the peak's belong to the band (a second subtitle line that shows
#: up in a fifth of the subtitles still does).
BAND_SHARE = 0.2
#: Each line covers its own rows plus this share of its height above and below: lines of one subtitle closer than
#: that merge into one band, and the band keeps that margin around the text.
LINE_PAD = 0.5


def find_text_band(results: Sequence[OcrResult], width: int, height: int) -> Rect:
    """The horizontal band of a ``width`` x ``height`` video where text recurs, from OCR of sample frames.

    ``results`` are OCR results of a few full frames spread over the video (boxes in frame pixels). Rule:

    1. Lines whose texts are alike (``SAME_TEXT_RATIO``) are one *text*, however many frames show it.
    2. Every line covers its rows, padded by ``LINE_PAD`` of its height above and below. The weight of a row is
       the number of distinct texts that cover it (each counted once, at its best recognition score); its
       recurrence is the number of frames with a line that covers it.
    3. The peak is the row of greatest weight among the rows that hold text in at least two frames; ties go to
       the row that recurs in more frames, then to the lower row. So changing text (subtitles: two or more
       distinct lines) beats a static logo or watermark (one text, however many frames show it), and a line
       seen in one frame only is never the peak.
    4. The band is the run of rows around the peak whose weight is at least ``BAND_SHARE`` of the peak's, full
       width (subtitles are centred and the widest one may not be among the samples).

    Returns the full frame when no row holds text in at least two frames (nothing recurs).
    """
    if width < 1 or height < 1:
        raise ValueError(f"invalid frame size {width}x{height}")
    full = Rect(0, 0, width, height)
    weight = np.zeros(height, dtype=np.float64)
    frames = np.zeros(height, dtype=np.int64)
    best_score: dict[int, float] = {}
    text_rows: dict[int, np.ndarray] = {}
    texts: list[str] = []

    for result in results:
        seen = np.zeros(height, dtype=bool)
        for line in result.lines:
            rows = _padded_rows(line, height)
            if rows is None:
                continue
            lo, hi = rows
            seen[lo:hi] = True
            key = _text_key(line.text, texts)
            best_score[key] = max(best_score.get(key, 0.0), line.score)
            mask = text_rows.setdefault(key, np.zeros(height, dtype=bool))
            mask[lo:hi] = True
        frames += seen

    for key, mask in text_rows.items():
        weight[mask] += best_score[key]
    recurring = np.flatnonzero(frames >= 2)
    if recurring.size == 0:
        return full

    # lexsort: the last key is the primary one; ties on weight and frames go to the lower row (larger y)
    order = np.lexsort((recurring, frames[recurring], weight[recurring]))
    peak = int(recurring[order[-1]])
    floor = BAND_SHARE * weight[peak] - 1e-9  # a row at exactly the share belongs, whatever the rounding
    top = peak
    while top > 0 and weight[top - 1] >= floor and weight[top - 1] > 0:
        top -= 1
    bottom = peak + 1
    while bottom < height and weight[bottom] >= floor and weight[bottom] > 0:
        bottom += 1
    return Rect(0, top, width, bottom - top)


def _padded_rows(line: TextLine, height: int) -> tuple[int, int] | None:
    _, y0, _, y1 = line.bounds
    pad = LINE_PAD * (y1 - y0)
    lo = max(0, math.floor(y0 - pad))
    hi = min(height, math.ceil(y1 + pad))
    return (lo, hi) if lo < hi else None


def _text_key(text: str, texts: list[str]) -> int:
    """Index of the known text ``text`` is alike, adding it as a new text when it is like none of them."""
    norm = _squashed(text)
    for index, known in enumerate(texts):
        if difflib.SequenceMatcher(None, norm, known, autojunk=False).ratio() >= SAME_TEXT_RATIO:
            return index
    texts.append(norm)
    return len(texts) - 1
