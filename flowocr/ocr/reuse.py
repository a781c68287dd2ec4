"""OCR only what changed: a cheap pixel test that says whether a sampled frame's text area still shows the text
of the last frame that was OCR'd (then its result is reused).

The test compares *stroke maps*, not raw pixels, so that it holds still over a moving background: a stroke
pixel is a bright pixel next to a dark one (white subtitle text with its outline, dark slide text on white),
at a reduced size. Text that appears, disappears or is replaced moves many stroke pixels; a background that
moves under static text moves few of them inside the text's own boxes. The last OCR'd frame's boxes weigh
most: a change inside them is a change of the text; outside them only a burst of new strokes counts (text
appearing where there was none).

Thresholds (measured on the fixtures, 2 fps, text area = detected band): a changed cue moves 25–60 % of the
stroke pixels inside the old boxes; moving backgrounds move under 8 %. New text outside the boxes adds
hundreds of stroke pixels at this size; background flicker adds tens.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from flowocr.ocr.types import TextLine

STROKE_WIDTH = 320  # stroke maps are computed at this width (or less): cheap, and blurs away grain
BRIGHT, DARK = 180, 90  # a stroke pixel is at least BRIGHT with a 3x3 neighbour at most DARK (full-size levels)


@dataclass(frozen=True)
class Strokes:
    """The stroke map of one text area at reduced size, and the scale from area pixels to map pixels."""

    mask: np.ndarray
    scale: float

    @property
    def count(self) -> int:
        return int(np.count_nonzero(self.mask))


def map_size(width: int, height: int) -> tuple[int, int, float]:
    """The stroke map's width and height for a text area of ``width`` x ``height`` pixels, and the scale."""
    scale = min(1.0, STROKE_WIDTH / width)
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


@dataclass(frozen=True)
class ChangeTest:
    """Whether the text area changed since a reference (the last OCR'd frame) — see the module docstring."""

    inside_fraction: float = 0.2  # share of the old boxes' stroke pixels that must move
    inside_min: int = 8  # ... and at least this many
    outside_new: int = 60  # new stroke pixels outside the old boxes that mean new text

    def changed(self, now: Strokes, ref: Strokes, ref_lines: tuple[TextLine, ...], origin: tuple[int, int]) -> bool:
        """``ref_lines`` are the reference's OCR lines in frame pixels; ``origin`` is the area's top-left corner."""
        if now.mask.shape != ref.mask.shape:
            return True
        appeared, vanished = moved(now, ref)
        boxes = self._box_mask(ref, ref_lines, origin)
        if boxes.any():
            inside_ref = int(np.count_nonzero(ref.mask & boxes))
            inside_moved = int(np.count_nonzero((appeared | vanished) & boxes))
            if inside_moved >= max(self.inside_min, self.inside_fraction * inside_ref):
                return True
            outside = int(np.count_nonzero(appeared & ~boxes))
            return outside >= self.outside_new
        return max(int(np.count_nonzero(appeared)), int(np.count_nonzero(vanished))) >= self.outside_new

    def unchanged(
        self, now: Strokes, ref: Strokes, ref_lines: tuple[TextLine, ...], origin: tuple[int, int], *, spiked: bool
    ) -> bool:
        """Whether the area still shows the reference's text, so its reading can be reused: the pixel test sees no
        change, and, when the change detector saw something change since the last fed frame (``spiked``), the
        test can vouch for the text at all (:meth:`sees_text`). It cannot for text whose strokes barely show in
        the map (a thin or missing outline over a mid-tone picture: a 1080p anime subtitle line held 6 stroke
        pixels at 320 px, so its vanishing at a shot cut moved fewer than ``inside_min``), nor for an empty area
        (new text the map does not show): there a spike means reading the frame."""
        if spiked and not self.sees_text(ref, ref_lines, origin):
            return False
        return not self.changed(now, ref, ref_lines, origin)

    def sees_text(self, ref: Strokes, ref_lines: tuple[TextLine, ...], origin: tuple[int, int]) -> bool:
        """Whether the reference has text and its boxes hold at least ``inside_min`` stroke pixels."""
        if not ref_lines:
            return False
        return int(np.count_nonzero(ref.mask & self._box_mask(ref, ref_lines, origin))) >= self.inside_min

    vanished_share: float = 0.15  # at most this share of the old boxes' strokes left: the text is gone

    def vanished(self, now: Strokes, ref: Strokes, ref_lines: tuple[TextLine, ...], origin: tuple[int, int]) -> bool:
        """Whether the reference's text is gone and nothing replaced it (the area can be taken as empty
        without OCR): its boxes kept at most ``vanished_share`` of their stroke pixels, few appeared in them, and
        no burst of new strokes appeared elsewhere."""
        if now.mask.shape != ref.mask.shape or not ref_lines:
            return False
        boxes = self._box_mask(ref, ref_lines, origin)
        inside_ref = int(np.count_nonzero(ref.mask & boxes))
        if inside_ref < self.inside_min:
            return False
        inside_now = int(np.count_nonzero(now.mask & boxes))
        appeared, _ = moved(now, ref)
        return (
            inside_now <= self.vanished_share * inside_ref
            and int(np.count_nonzero(appeared & boxes)) <= self.vanished_share * inside_ref
            and int(np.count_nonzero(appeared & ~boxes)) < self.outside_new
        )

    @staticmethod
    def _box_mask(ref: Strokes, lines: tuple[TextLine, ...], origin: tuple[int, int]) -> np.ndarray:
        mask = np.zeros(ref.mask.shape, bool)
        h, w = mask.shape
        ox, oy = origin
        for line in lines:
            x0, y0, x1, y1 = line.bounds
            c0 = max(0, int((x0 - ox) * ref.scale) - 1)
            r0 = max(0, int((y0 - oy) * ref.scale) - 1)
            c1 = min(w, int((x1 - ox) * ref.scale) + 2)
            r1 = min(h, int((y1 - oy) * ref.scale) + 2)
            if c1 > c0 and r1 > r0:
                mask[r0:r1, c0:c1] = True
        return mask
