"""OCR engine for the scripts the shipped PP-OCR model cannot read: PP-OCR's detector + Tesseract's LSTM.

``pip install 'flowocr[tesseract]'`` (``tesserocr``, whose wheels carry libtesseract) and one Debian package of
data per language (``apt-get install tesseract-ocr-kor``; :mod:`flowocr.ocr.langs` names them).

How a batch is read
-------------------
1. PP-OCR's detector (script-agnostic: it finds Hangul, Cyrillic, Arabic lines as well as Chinese ones) finds the
   line boxes of each image, as :mod:`flowocr.ocr.rapid` does (:func:`~flowocr.ocr.rapid.load_detector`).
2. Each box is cut out upright (:func:`~flowocr.ocr.rapid.crop_box`) and prepared for Tesseract
   (:func:`prepare_line`): video subtitles are light text with a dark outline (or the reverse) over any picture,
   while Tesseract reads dark text on a clean light page. The grey crop is split in two by Otsu's threshold; the
   text is the side whose pixels, once every region touching the crop's edge is dropped (the picture around and
   behind the line; the outline keeps the glyphs apart from it), cover most; it becomes black on white, scaled so
   that the text is about :attr:`TesseractOptions.text_height` px tall, with a white margin.
3. Tesseract reads the prepared crop as one line (page segmentation mode 7, LSTM only); its mean word
   confidence (0-100) / 100 is the line's score.

Tesseract's text is in logical order (right-to-left scripts as typed, not as displayed): it is stored and written
as it comes.

Threads: one ``PyTessBaseAPI`` per (engine, thread) (a Tesseract API holds the state of the image it reads), made
on first use in each thread; the detector is shared.

Where the data is: tesserocr's bundled library looks in a folder fixed when it was built (``./`` for the PyPI
wheel), so the folder is always passed: :func:`tessdata_dirs` (``TESSDATA_PREFIX`` first, then Debian's and the
usual install folders).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from flowocr.ocr.engine import OcrBatch, OcrEngine, StageTimes
from flowocr.ocr.langs import LANGUAGES, codes_for
from flowocr.ocr.types import OcrResult, TextLine, known_boxes, point_bounds

#: Folders that hold ``*.traineddata``, searched after ``TESSDATA_PREFIX``: Debian's (Tesseract 5, then 4), then
#: those of other distributions and of source installs.
TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
)
#: Tesseract's page segmentation mode for "the image is one line of text".
PSM_SINGLE_LINE = 7


def tessdata_dirs() -> tuple[Path, ...]:
    """The folders searched for trained data, in order: ``TESSDATA_PREFIX`` (the folder itself, or its
    ``tessdata`` folder, as Tesseract reads it), then :data:`TESSDATA_DIRS`."""
    dirs = []
    prefix = os.environ.get("TESSDATA_PREFIX", "").strip()
    if prefix:
        dirs += [Path(prefix), Path(prefix) / "tessdata"]
    dirs += [Path(d) for d in TESSDATA_DIRS]
    return tuple(dirs)


def find_tessdata(name: str) -> Path | None:
    """The first folder of :func:`tessdata_dirs` holding ``<name>.traineddata``, None when none does."""
    for folder in tessdata_dirs():
        if (folder / f"{name}.traineddata").is_file():
            return folder
    return None


@dataclass(frozen=True)
class TesseractOptions:
    """``text_height``: px the text of a line is scaled to (Tesseract's LSTM models read best with glyphs about
    30-40 px tall); ``margin``: px of white around it; ``text_score``: lines read with a lower score (0-1) are
    dropped; ``grow``: each detected box is grown by this share of its height above and below before it is cut out,
    so that the outline around the glyphs lies inside the crop (the text is told from its outline by which of the
    two the other encloses, :func:`text_mask`; an outline cut by the crop's edge encloses nothing), while a
    neighbouring line that reaches into the crop touches its edge and is dropped."""

    text_height: int = 36
    margin: int = 12
    text_score: float = 0.5
    grow: float = 0.2


#: Text pixels are those within this share of the crop's grey range from its lightest (or darkest) end.
TEXT_SHARE = 0.3
#: ... and the other end (an outline, a dark picture) the pixels within this share of the range from the other end.
OTHER_SHARE = 0.3
#: A side keeping less than this share of the other side's pixels holds only counters or specks.
MINOR_SIDE = 0.4
#: Regions of at least this share of the largest's area are letters; they set the line's band, which is widened
#: by ``BAND_MARKS`` of its height above and below (marks over and under the letters).
LETTER_SHARE = 0.3
BAND_MARKS = 0.35
#: Regions smaller than this many px, or than this share of the largest region, are specks of texture.
SPECK_PX = 4
SPECK_SHARE = 0.03
#: A candidate glyph is kept when at least this share of the pixels 2 px around it is of the other end (the
#: outline, or the dark picture behind light text): texture specks that passed the threshold are not.
RING_SHARE = 0.8


def text_mask(gray: np.ndarray) -> np.ndarray:
    """Pixels of the text in a grey line crop (bool, same shape); module docstring, step 2.

    For each end of the grey range (light, then dark): the pixels within ``TEXT_SHARE`` of the range from that
    end, in 4-connected regions; regions touching the crop's edge (the picture around the line) are dropped, and
    so are those not ringed by the other half of the range (``RING_SHARE``). The text is the side that lies inside
    the other: glyphs lie within their outline's holes, while an outline lies within its glyphs' holes only where
    a letter has a counter (the inner ring of "o"). Light text inside a dark outline (most subtitles) is taken
    first; dark text is taken when it lies inside the light side, unless it keeps less than ``MINOR_SIDE`` of the
    light side's pixels: those are the counters of light letters whose outline merged with a dark picture and was
    dropped with it."""
    lo, hi = (float(v) for v in np.percentile(gray, (1, 99)))
    span = max(1.0, hi - lo)
    light = _glyphs(gray >= hi - TEXT_SHARE * span, gray <= lo + OTHER_SHARE * span)
    dark = _glyphs(gray <= lo + TEXT_SHARE * span, gray >= hi - OTHER_SHARE * span)
    light_inside = (light & _holes(dark)).sum() / max(1, light.sum())
    if light_inside >= 0.5:
        return _in_band(light)
    dark_inside = (dark & _holes(light)).sum() / max(1, dark.sum())
    return _in_band(dark if dark_inside > light_inside and dark.sum() >= MINOR_SIDE * light.sum() else light)


def _in_band(mask: np.ndarray) -> np.ndarray:
    """``mask`` without the regions wholly above or below the line: the band from the top of the highest to the
    bottom of the lowest large region (a third of the largest's area or more: letters), widened by ``BAND_MARKS``
    of its height on each side for accents, dots and Thai or Devanagari marks. Texture of the colour of the text
    that touches no letter (white cells of a black picture, where the outline does not show) goes."""
    import cv2

    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if count <= 2:
        return mask
    area, top, height = stats[1:, cv2.CC_STAT_AREA], stats[1:, cv2.CC_STAT_TOP], stats[1:, cv2.CC_STAT_HEIGHT]
    letters = area >= LETTER_SHARE * area.max()
    y0, y1 = top[letters].min(), (top + height)[letters].max()
    pad = BAND_MARKS * (y1 - y0)
    keep = np.concatenate([[False], (top + height > y0 - pad) & (top < y1 + pad)])
    return keep[labels]


def _holes(mask: np.ndarray) -> np.ndarray:
    """Pixels outside ``mask`` that it encloses (not 4-connected to the edge without crossing it)."""
    import cv2

    count, labels = cv2.connectedComponents((~mask).astype(np.uint8), connectivity=4)
    enclosed = np.ones(count, dtype=bool)
    enclosed[np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))] = False
    return enclosed[labels] & ~mask


def _glyphs(side: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The regions of ``side`` that do not touch the edge, are not specks and whose ring 2 px out is mostly
    ``other``."""
    import cv2

    count, labels, stats, _ = cv2.connectedComponentsWithStats(side.astype(np.uint8), connectivity=4)
    keep = np.ones(count, dtype=bool)
    keep[0] = False  # not on this side
    keep[np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))] = False
    area = stats[:, cv2.CC_STAT_AREA]
    if keep.any():  # specks of texture: a glyph's dot is a tenth of a letter's area or more, a speck far less
        keep &= area >= max(SPECK_PX, SPECK_SHARE * area[keep].max())
    if keep.any():
        near = cv2.dilate(labels.astype(np.float32), np.ones((5, 5), np.uint8))  # a label 2 px out (the largest)
        ring = (near > 0) & (cv2.dilate(side.astype(np.uint8), np.ones((3, 3), np.uint8)) == 0)
        owner = near[ring].astype(np.int64)
        total = np.bincount(owner, minlength=count)
        opposite = np.bincount(owner, weights=other[ring].astype(np.float64), minlength=count)
        keep &= opposite >= RING_SHARE * np.maximum(1, total)
    return keep[labels]


def _text_rows(mask: np.ndarray) -> int:
    """Height in px of the rows holding text (rows with at least a tenth of the fullest row's text pixels)."""
    counts = mask.sum(axis=1)
    rows = np.flatnonzero(counts >= max(1, 0.1 * counts.max())) if counts.any() else np.zeros(0, dtype=np.int64)
    return int(rows[-1] - rows[0] + 1) if rows.size else mask.shape[0]


def prepare_line(crop: np.ndarray, options: TesseractOptions | None = None) -> np.ndarray:
    """A BGR line crop as Tesseract reads it best: grey uint8, black text on white, the text scaled to about
    ``text_height`` px, a white margin around (module docstring, step 2)."""
    import cv2

    options = options or TesseractOptions()
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    mask = text_mask(gray)
    scale = min(8.0, max(0.25, options.text_height / max(1, _text_rows(mask))))
    size = (max(1, round(gray.shape[1] * scale)), max(1, round(gray.shape[0] * scale)))
    if scale > 1.05:  # enlarged grey, then the mask: smooth edges
        page = np.where(text_mask(cv2.resize(gray, size, interpolation=cv2.INTER_CUBIC)), 0, 255).astype(np.uint8)
    elif scale < 0.95:
        # the mask, then made smaller: thin strokes made smaller in grey fade below the text's threshold and
        # break; a pixel a third covered by text is text
        page = cv2.resize(np.where(mask, 0, 255).astype(np.uint8), size, interpolation=cv2.INTER_AREA)
        page = np.where(page < 170, 0, 255).astype(np.uint8)
    else:
        page = np.where(mask, 0, 255).astype(np.uint8)
    m = options.margin
    return cv2.copyMakeBorder(page, m, m, m, m, cv2.BORDER_CONSTANT, value=255)


def grow_box(box: np.ndarray, share: float, shape: tuple[int, ...]) -> np.ndarray:
    """The quadrilateral ``box`` (4 x 2, clockwise from top-left) grown by ``share`` of its height above and below
    (along its own axes; not sideways, where the detector's box already has a margin and more picture would be read
    as stray punctuation), clipped to an image of ``shape``."""
    box = box.astype(np.float32)
    across, down = box[1] - box[0], box[3] - box[0]
    height = float(np.linalg.norm(down))
    if height == 0 or float(np.linalg.norm(across)) == 0:
        return box
    v = down / height * share * height
    grown = box + np.array([-v, -v, v, v], dtype=np.float32)
    grown[:, 0] = grown[:, 0].clip(0, shape[1] - 1)
    grown[:, 1] = grown[:, 1].clip(0, shape[0] - 1)
    return grown


class TesseractEngine(OcrEngine):
    """PP-OCR's detector + Tesseract's LSTM recogniser, per line (module docstring). Safe to share between
    threads: each thread reads with its own Tesseract API."""

    NAME = "tesseract"
    LANGS = {code: LANGUAGES[code].tessdata for code in codes_for("tesseract")}  # type: ignore[misc]
    REQUIRES = ("tesserocr", "rapidocr", "onnxruntime")
    INSTALL_HINT = "Install it with: pip install 'flowocr[tesseract]'."
    ONNX_RUNTIME = True  # its detector; Tesseract itself reads on the CPU
    KNOWN_SKIPS = True
    SHOWN_TOO = True

    def __init__(self, *, lang: str = "ru", threads: int | None = None, options: TesseractOptions | None = None,
                 device: str = "cpu"):  # fmt: skip
        # get_engine hands over the models' language (``rus``), a caller may give the code (``ru``)
        super().__init__(lang=next((c for c, data in self.LANGS.items() if data == lang), lang), threads=threads)
        from flowocr.ocr.device import on_device, resolve_device
        from flowocr.ocr.rapid import load_detector

        self.options = options or TesseractOptions()
        folder = find_tessdata(self.lang)
        if folder is None:
            raise FileNotFoundError(f"{self.lang}.traineddata is in none of {', '.join(map(str, tessdata_dirs()))}")
        self.tessdata = folder
        self._detect, self.device = on_device(lambda where: load_detector(threads=threads, device=where),
                                              resolve_device(device))  # fmt: skip
        self.detect_side = self._detect.side
        self._local = threading.local()
        self._api()  # data that does not load fails here, not on the first frame

    @classmethod
    def unavailable(cls, lang: str) -> str | None:
        why = super().unavailable(lang)
        if why:
            return why
        known = LANGUAGES[lang.strip().lower()]
        if find_tessdata(cls.LANGS[known.code]) is None:
            return (f"{known.name} ({known.code}) is read by Tesseract, and its data ({known.tessdata}.traineddata) "
                    f"is not installed: apt-get install {known.package} (or set TESSDATA_PREFIX to its folder).")
        return None

    def _api(self) -> Any:
        """This thread's Tesseract API (made on first use)."""
        api = getattr(self._local, "api", None)
        if api is None:
            from tesserocr import OEM, PyTessBaseAPI

            api = PyTessBaseAPI(path=str(self.tessdata), lang=self.lang, psm=PSM_SINGLE_LINE, oem=OEM.LSTM_ONLY)
            self._local.api = api
        return api

    def read_line(self, crop: np.ndarray) -> tuple[str, float]:
        """Text and score (0-1) of one upright BGR line crop."""
        page = prepare_line(crop, self.options)
        api = self._api()
        height, width = page.shape
        api.SetImageBytes(page.tobytes(), width, height, 1, width)
        text = " ".join(api.GetUTF8Text().split())
        return text, (min(1.0, max(0.0, api.MeanTextConf() / 100.0)) if text else 0.0)

    def _run(self, images: Sequence[np.ndarray], known: Sequence[Sequence[TextLine]] | None = None, *,
             shown: Sequence[np.ndarray] | None = None, full_size: bool = False) -> OcrBatch:  # fmt: skip
        from flowocr.ocr.rapid import crop_box, surer

        start, cpu = time.perf_counter(), time.thread_time()
        detections = [self._detect(image, full_size) for image in images]
        det_s, det_cpu_s = time.perf_counter() - start, time.thread_time() - cpu
        results = []
        crops = 0
        for n, (image, found, lines_known) in enumerate(zip(images, detections, known or [()] * len(images))):
            lines = []
            keep = known_boxes([point_bounds(box) for box in found.boxes], lines_known)
            for k, box in enumerate(found.boxes):
                if k in keep:  # a line read before: not read again
                    lines.append(keep[k])
                    continue
                crops += 1
                grown = grow_box(box, self.options.grow, image.shape)
                text, score = self.read_line(crop_box(image, grown))
                if shown is not None:  # the image as it shows too: the surer reading is kept
                    crops += 1
                    text, score = surer((text, score), self.read_line(crop_box(shown[n], grown)),
                                        least=self.options.text_score)  # fmt: skip
                if text and score >= self.options.text_score:
                    lines.append(TextLine(text, score, tuple((float(x), float(y)) for x, y in box)))  # type: ignore[arg-type]
            results.append(OcrResult(tuple(lines)))
        total = time.perf_counter() - start
        times = StageTimes(det_s, None, total - det_s, total, det_cpu_s, time.thread_time() - cpu - det_cpu_s)
        return OcrBatch(tuple(results), times, crops=crops)
