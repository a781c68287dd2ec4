"""Detection alone: where OCR's detector finds text boxes in the bands a reading would take, without recognising
them. The reader probes with it before every read of bands (:mod:`flowocr.read.reader`): where it finds only the
boxes of lines read before, seen unchanged, or none, nothing is recognised; else the reading takes the probe's
detections and recognises the new boxes alone. Detection is about a fifth of a band's OCR call (measured: 0.02 of
0.1 CPU s for a 1920 x 108 band on this project's VM)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flowocr.ocr.area import ISOLATE_CLUTTER, Rect, band_crops, isolate_again, wants_full_size
from flowocr.ocr.engine import Bounds

# A band where the detector finds nothing but that holds strokes, or a busy one, is detected again with its
# picture isolated, as read_frame reads it again, and the boxes found there count too (before 2026-12-04 such a
# probe could not vouch: None). Seed 2027: OCR calls per cue 1.89 -> 1.80 (one video over cellular texture 3.50 ->
# 1.56), nothing else different; dev seed 13: 2.04 -> 2.03.
PROBE_ISOLATED = True


def probe_frame(engine, image: np.ndarray, area: Rect, bands: Sequence[Rect]) -> tuple[Bounds, ...] | None:
    """The text boxes (x0, y0, x1, y1, frame pixels) the engine's detector finds in the ``bands`` of a full frame,
    without recognising them (:meth:`~flowocr.ocr.engine.OcrEngine.detect`): every box a
    :func:`~flowocr.ocr.area.read_frame` of the same bands would recognise, and those whose recognition it would
    drop. A band where the detector finds nothing but that holds strokes, or a busy one (``read_frame`` reads
    those again with the picture blacked out), is detected again so too, and its boxes there count as well
    (``PROBE_ISOLATED``; off: None for such a band); one where neither finds a box is detected again at its own
    size where ``read_frame`` would read it so (:func:`~flowocr.ocr.area.wants_full_size`; a reading also does so
    where it found boxes but recognised nothing in them). None for an engine that cannot detect alone."""
    from flowocr.ocr.strokes import isolate

    crops = band_crops(image, area, bands)
    found = engine.detect(crops)
    if found is None:
        return None
    found = [[(x0 + band.x, y0 + band.y, x1 + band.x, y1 + band.y) for x0, y0, x1, y1 in boxes]
             for band, boxes in zip(bands, found)]  # fmt: skip
    again: list[tuple[int, object]] = []
    for k, (part, boxes, band) in enumerate(zip(crops, found, bands)):
        in_band = [(x0 - band.x, y0 - band.y, x1 - band.x, y1 - band.y) for x0, y0, x1, y1 in boxes]
        for isolated in isolate(part, frame_height=image.shape[0], busy=ISOLATE_CLUTTER):
            if isolate_again(isolated, in_band):
                if not PROBE_ISOLATED:
                    return None
                again.append((k, isolated))
    if again:
        more = engine.detect([isolated.image for _, isolated in again])
        if more is None:
            return None
        for (k, isolated), boxes in zip(again, more):  # the isolated image is the crop's rows from its top
            band = bands[k]
            top = band.y + isolated.top
            found[k] += [(x0 + band.x, y0 + top, x1 + band.x, y1 + top) for x0, y0, x1, y1 in boxes]
    fine = [k for k, boxes in enumerate(found) if not boxes and wants_full_size(engine, crops[k])]
    if fine:
        for k, boxes in zip(fine, engine.detect([crops[k] for k in fine], full_size=True)):
            band = bands[k]
            found[k] += [(x0 + band.x, y0 + band.y, x1 + band.x, y1 + band.y) for x0, y0, x1, y1 in boxes]
    return tuple(box for boxes in found for box in boxes)
