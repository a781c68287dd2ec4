"""Stroke maps: where a text area holds text-like structure, at a reduced size.

A stroke pixel is a bright pixel next to a dark one (white subtitle text with its outline, dark slide text on
white). Stroke maps, not raw pixels, are what the change detector (:mod:`flowocr.aux.detector`) and the reader's
pixel test (:mod:`flowocr.read.pixel`) compare, so that a moving background under static text moves few of them,
and where strokes lie is where the OCR stage reads (:func:`flowocr.ocr.area.stroke_bands`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

STROKE_WIDTH = 320  # stroke maps are computed at this width (or less): cheap, and blurs away grain ...
MIN_SCALE = 1 / 3  # ... but never below this scale of the area, so that small text keeps its strokes
BRIGHT, DARK = 180, 90  # a stroke pixel is at least BRIGHT with a 3x3 neighbour at most DARK (full-size levels)


@dataclass(frozen=True)
class Strokes:
    """The stroke map of one text area at reduced size, and the scale from area pixels to map pixels."""

    mask: np.ndarray
    scale: float

    @property
    def count(self) -> int:
        return int(np.count_nonzero(self.mask))


def map_width(width: int) -> int:
    """The width of the stroke map of a text area ``width`` pixels wide: ``STROKE_WIDTH``, or ``MIN_SCALE`` of the
    area where that is wider (a whole 1080p frame: 640), never wider than the area.

    At 320 px a whole 1080p frame is shrunk six times: a 52 px line keeps about 20 stroke pixels (against 400 at
    640 px), too few for the pixel test to see it come, change or go, and whole videos of such lines were missed
    (dev corpus, seed 11: 8 of 8 and 7 of 9 cues on two 1080p videos). The change detector's aux stream stays at
    ``STROKE_WIDTH`` (its per-frame cost; a wider one, measured, gave more text events over moving pictures,
    more OCR calls and more phantoms, and 20 % more CPU on 1080p)."""
    return min(width, max(STROKE_WIDTH, round(width * MIN_SCALE)))


def map_size(width: int, height: int) -> tuple[int, int, float]:
    """The stroke map's width and height for a text area of ``width`` x ``height`` pixels, and the scale."""
    scale = min(1.0, map_width(width) / width)
    if scale >= 1.0:
        return width, height, 1.0
    return max(1, round(width * scale)), max(1, round(height * scale)), scale


def strokes(area_image: np.ndarray, *, bright: int = BRIGHT, dark: int = DARK) -> Strokes:
    """Stroke map of a BGR (or grey) image of the text area: pixels >= ``bright`` with a 3x3 neighbour
    <= ``dark``."""
    grey = area_image if area_image.ndim == 2 else cv2.cvtColor(area_image, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    map_w, map_h, scale = map_size(w, h)
    if scale < 1.0:
        grey = cv2.resize(grey, (map_w, map_h), interpolation=cv2.INTER_AREA)
    return _stroke_map(grey, scale, bright, dark)


def frame_strokes(frame, region: tuple[int, int, int, int]) -> Strokes:
    """The stroke map of a decoded frame's ``region`` (x, y, w, h): :func:`strokes` of its grey levels, reduced
    by :meth:`~flowocr.decode.lane.Frame.grey` itself (an I420 frame's luma is reduced before it is stretched
    to full range: a table lookup over the small map instead of the whole area)."""
    map_w, map_h, scale = map_size(region[2], region[3])
    return _stroke_map(frame.grey(region, size=(map_w, map_h)), scale, BRIGHT, DARK)


#: An edge pixel: its 3x3 neighbourhood spans at least this many grey levels (text strokes, outlines, and any
#: contrasty structure). The change detector's stable edges and :attr:`Isolated.clutter` count these.
EDGE = 40


def edges(grey: np.ndarray) -> np.ndarray:
    """The edge pixels (``EDGE``) of a grey image, as a boolean mask."""
    kernel = np.ones((3, 3), np.uint8)
    return cv2.subtract(cv2.dilate(grey, kernel), cv2.erode(grey, kernel)) >= EDGE


def full_strokes(grey: np.ndarray, *, bright: int, dark: int) -> Strokes:
    """The stroke map of a grey image at its own size, with the levels given (a line's own:
    :func:`flowocr.read.pixel.line_change`)."""
    return _stroke_map(grey, 1.0, bright, dark)


def _stroke_map(grey: np.ndarray, scale: float, bright: int, dark: int) -> Strokes:
    kernel = np.ones((3, 3), np.uint8)
    return Strokes((grey >= bright) & (cv2.erode(grey, kernel) <= dark), scale)


def moved(now: Strokes, before: Strokes) -> tuple[np.ndarray, np.ndarray]:
    """Stroke pixels that appeared (in ``now``, not near any of ``before``'s) and vanished (the reverse).

    "Near" is within one pixel, so that a stroke shifted by compression noise does not count as moved. Both maps
    must have the same shape.
    """
    grow = np.ones((3, 3), np.uint8)
    near_before = cv2.dilate(before.mask.astype(np.uint8), grow).astype(bool)
    near_now = cv2.dilate(now.mask.astype(np.uint8), grow).astype(bool)
    return now.mask & ~near_before, before.mask & ~near_now


#: :func:`isolate`: a crop needs this many full-size stroke pixels to be worth a second read, ...
ISOLATE_MIN_STROKES = 40
#: ... and keeps the pixels within this share of the frame height of one (at least ``ISOLATE_MIN_REACH``): a
#: glyph's inside and its outline (9 px at 1080p; a stroke pixel is a glyph's edge, bold 60 px text has 8 px strokes).
ISOLATE_REACH = 1 / 120
ISOLATE_MIN_REACH = 5
#: ... over rows spanning at most this share of the frame's height.
ISOLATE_MAX_SPAN = 0.3
#: ... and, near a stroke, only the bright pixels (``BRIGHT``: a glyph's fill) show, white on black: kept as they
#: show, the picture's bits beside glyphs without an outline (a light cellular texture) hid them from the detector.
#: Dev seed 13: CER 0.0144 -> 0.0100, missed cues of 0.5 s or more 7 -> 4 of 264 (a 360p white line without an
#: outline over such a texture), OCR calls per cue 1.42 -> 1.38; dev seed 17: CER 0.0171 -> 0.0154, calls 1.58 ->
#: 1.54; no cue worse on either.
ISOLATE_BINARY = True


def holds_strokes(image: np.ndarray) -> bool:
    """Whether a BGR ``image`` holds at least ``ISOLATE_MIN_STROKES`` full-size stroke pixels: something text-like."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.count_nonzero(_stroke_map(grey, 1.0, BRIGHT, DARK).mask) >= ISOLATE_MIN_STROKES


@dataclass(frozen=True)
class Isolated:
    """A crop's text with its background blacked out (:func:`isolate`)."""

    image: np.ndarray  # the rows kept, BGR, black wherever no stroke is near
    top: int  # the crop's row where ``image`` begins
    clutter: float  # the share of the pixels far from any stroke that are edges: how busy the picture behind is
    whole: bool = True  # all the image keeps; else one run of its rows (:func:`isolate`)


def isolate(image: np.ndarray, *, frame_height: int, busy: float = 1.0) -> list[Isolated]:
    """``image`` (BGR) with every pixel farther than the reach from a full-size stroke pixel set to black, cut to the
    rows that keep anything: the text with its outline, without the picture behind it (with ``ISOLATE_BINARY``
    only its bright pixels, white on black). Empty when it holds fewer than ``ISOLATE_MIN_STROKES`` stroke pixels
    (nothing text-like to isolate). What it keeps is one piece (:attr:`Isolated.whole`), unless that spans more
    than ``ISOLATE_MAX_SPAN`` of the frame's height (strokes all over a picture are its texture, not lines of text;
    and detecting on a whole frame again would cost as much as the first read): then nothing, or over a picture at
    least ``busy`` cluttered (:attr:`Isolated.clutter`) the runs of rows that keep anything, a piece each, each with
    ``ISOLATE_MIN_STROKES`` and within ``ISOLATE_MAX_SPAN``: a sign at the top and a line at the bottom of a frame
    read whole over a cellular texture were left unisolated, so unread (dev seed 13)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    mask = _stroke_map(grey, 1.0, BRIGHT, DARK).mask
    if np.count_nonzero(mask) < ISOLATE_MIN_STROKES:
        return []
    reach = max(ISOLATE_MIN_REACH, round(frame_height * ISOLATE_REACH))
    near = cv2.dilate(mask.astype(np.uint8), np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)).astype(bool)
    far = ~near
    clutter = float(np.count_nonzero(edges(grey) & far)) / max(1, int(np.count_nonzero(far)))
    kept = near.any(axis=1)
    rows = np.flatnonzero(kept)
    runs = [(int(rows[0]), int(rows[-1]) + 1)]
    whole = runs[0][1] - runs[0][0] <= ISOLATE_MAX_SPAN * frame_height
    if not whole and clutter >= busy:
        bounds = np.flatnonzero(np.diff(np.concatenate([[0], kept.astype(np.int8), [0]])))
        runs = [(int(top), int(bottom)) for top, bottom in zip(bounds[::2], bounds[1::2])
                if np.count_nonzero(mask[top:bottom]) >= ISOLATE_MIN_STROKES]  # fmt: skip
    out = []
    for top, bottom in runs:
        if bottom - top > ISOLATE_MAX_SPAN * frame_height:
            continue
        piece = np.zeros((bottom - top, *image.shape[1:]), image.dtype)
        keep = near[top:bottom]
        if ISOLATE_BINARY:
            piece[keep & (grey[top:bottom] >= BRIGHT)] = 255
        else:
            piece[keep] = image[top:bottom][keep]
        out.append(Isolated(piece, top, clutter, whole))
    return out
