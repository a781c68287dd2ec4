"""The default OCR engine: PP-OCR detection + direction classification + recognition on ONNX Runtime (RapidOCR).

The models ship inside the ``rapidocr`` wheel, so this engine works offline.

MEASUREMENTS

How a batch is read
-------------------
1. Detection, one image at a time: our pre-process (scale, pad to a multiple of 32, normalise), RapidOCR's
   ONNX session and its DB post-process (boxes in image pixels), then boxes in reading order.
2. Every text box of every image of the batch is cut out of the *original* image (not the scaled one).
3. Optional 0/180 degree classification of all crops of the batch at once.
4. Recognition of all crops of the batch at once: RapidOCR's recogniser sorts the crops by aspect ratio,
   runs them ``rec_batch`` at a time (similar widths pad little) and returns them in input order.
5. Lines with an empty text or a score under ``text_score`` are dropped; an image without lines gets an empty
   result.

Which parts of rapidocr are used
--------------------------------
``RapidOCR(params=...)`` builds the configuration and loads the three models; we then use its loaded
components (``TextDetector.session`` / ``.postprocess_op``, ``TextClassifier``, ``TextRecognizer``). We do not
call ``RapidOCR.__call__``: it handles one image at a time (no recognition across images), resizes with
``Det.limit_type`` whose meaning changed within 3.x (3.0-3.4 map ``max`` to 960/1500/2000 by image size), and
sets attributes on itself per call (``update_params``), which is unsafe when threads share one engine. Our
detector pre-process is our own for the same reasons; the components we call keep no per-call state.

Languages
---------
The wheel ships one multilingual PP-OCRv6 recognition model (Chinese, English and Latin-script languages).
``lang="ch"`` (default) and ``lang="en"`` both use it (rapidocr routes ``Rec.lang_type=en`` to the same
file), so they share one engine instance: "ch" reads English too.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flowocr.ocr.engine import OcrBatch, OcrEngine, StageTimes
from flowocr.ocr.types import OcrResult, TextLine

#: Mean and std of the detector's input normalisation (PP-OCR: x / 255, then (x - 0.5) / 0.5).
_DET_MEAN = 0.5
_DET_STD = 0.5
#: Crops at least this much taller than wide hold vertical text: turned 90 degrees before recognition.
_VERTICAL_RATIO = 1.5


@dataclass(frozen=True)
class RapidOptions:
    """How the engine reads. Defaults are the measured best for video frames and text bands (see above).

    ``det_side``: the detector sees the image scaled so that its longer side is this many pixels, ...
    ``det_max_upscale``: ... but never enlarged by more than this factor (small frames, thin bands).
    ``use_cls``: classify 0/180 degree orientation of each text box before recognition.
    ``text_score``: lines recognised with a lower score (0-1) are dropped.
    ``rec_batch``: crops per recognition call.
    """

    det_side: int = 960
    det_max_upscale: float = 2.0
    use_cls: bool = False
    text_score: float = 0.5
    rec_batch: int = 16

    def __post_init__(self) -> None:
        if self.det_side < 32:
            raise ValueError(f"det_side must be at least 32, got {self.det_side}")
        if self.det_max_upscale < 1.0:
            raise ValueError(f"det_max_upscale must be at least 1, got {self.det_max_upscale}")
        if not 0.0 <= self.text_score <= 1.0:
            raise ValueError(f"text_score must be in [0, 1], got {self.text_score}")
        if self.rec_batch < 1:
            raise ValueError(f"rec_batch must be at least 1, got {self.rec_batch}")


@dataclass(frozen=True)
class DetInput:
    """The detector's input tensor (1 x 3 x H x W float32, H and W multiples of 32) for one image, and the
    scales from image pixels to tensor pixels. The image fills the top-left corner; the rest is black."""

    tensor: np.ndarray
    scale_x: float
    scale_y: float


@dataclass(frozen=True)
class Detection:
    """Text boxes of one image: ``boxes`` (n x 4 x 2 float32, image pixels, clockwise from top-left, in
    reading order), their detection scores, and the seconds of each step."""

    boxes: np.ndarray
    scores: tuple[float, ...]
    pre_s: float
    session_s: float
    post_s: float


def det_input(image: np.ndarray, *, side: int, max_upscale: float) -> DetInput:
    """Pre-process for detection: scale so the longer side is ``side`` (enlarging by at most
    ``max_upscale``), pad right and bottom to multiples of 32 (the network's stride) with black, normalise.

    Padding instead of stretching to a multiple of 32 keeps the aspect ratio: a 1120 x 90 band stretched to
    ``x 96`` or ``x 64`` distorts glyphs by up to 30 %."""
    import cv2

    height, width = image.shape[:2]
    scale = min(side / max(height, width), max_upscale)
    scaled_w, scaled_h = max(1, round(width * scale)), max(1, round(height * scale))
    if (scaled_w, scaled_h) != (width, height):
        image = cv2.resize(image, (scaled_w, scaled_h), interpolation=cv2.INTER_LINEAR)
    pad_h, pad_w = max(32, math.ceil(scaled_h / 32) * 32), max(32, math.ceil(scaled_w / 32) * 32)
    tensor = np.full((1, 3, pad_h, pad_w), (0.0 - _DET_MEAN) / _DET_STD, dtype=np.float32)
    tensor[0, :, :scaled_h, :scaled_w] = (image.transpose(2, 0, 1).astype(np.float32) / 255.0 - _DET_MEAN) / _DET_STD
    return DetInput(tensor, scaled_w / width, scaled_h / height)


def reading_order(boxes: np.ndarray) -> np.ndarray:
    """Indices of ``boxes`` (n x 4 x 2) top to bottom, then left to right among boxes on one line (vertical
    centres closer than half the smaller box height)."""
    if len(boxes) == 0:
        return np.zeros(0, dtype=np.int64)
    centre_y = boxes[:, :, 1].mean(axis=1)
    height = boxes[:, :, 1].max(axis=1) - boxes[:, :, 1].min(axis=1)
    by_y = np.argsort(centre_y, kind="stable")
    line_of = np.zeros(len(boxes), dtype=np.int64)
    line = 0
    for prev, cur in zip(by_y, by_y[1:]):
        if centre_y[cur] - centre_y[prev] >= 0.5 * max(1.0, min(height[cur], height[prev])):
            line += 1
        line_of[cur] = line
    return np.lexsort((boxes[:, 0, 0], line_of))


def crop_box(image: np.ndarray, box: np.ndarray) -> np.ndarray:
    """The quadrilateral ``box`` (4 x 2, clockwise from top-left) of ``image``, warped upright; vertical text
    (a crop at least 1.5 times taller than wide) is turned 90 degrees."""
    import cv2

    box = box.astype(np.float32)
    width = max(1, int(max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3]))))
    height = max(1, int(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2]))))
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    warp = cv2.getPerspectiveTransform(box, target)
    out = cv2.warpPerspective(image, warp, (width, height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    if height >= _VERTICAL_RATIO * width:
        out = np.ascontiguousarray(np.rot90(out))
    return out


class _Detector:
    """Detection stage: :func:`det_input` -> ONNX session -> DB post-process -> reading order."""

    def __init__(self, text_det: Any, options: RapidOptions) -> None:
        self._session = text_det.session
        self._postprocess = text_det.postprocess_op
        self._side = options.det_side
        self._max_upscale = options.det_max_upscale

    def __call__(self, image: np.ndarray) -> Detection:
        t0 = time.perf_counter()
        height, width = image.shape[:2]
        prepared = det_input(image, side=self._side, max_upscale=self._max_upscale)
        t1 = time.perf_counter()
        pred = self._session(prepared.tensor)
        t2 = time.perf_counter()
        _, _, pad_h, pad_w = prepared.tensor.shape
        # the post-process maps the probability map onto the given size: the padded tensor in image pixels
        boxes, scores = self._postprocess(pred, (pad_h / prepared.scale_y, pad_w / prepared.scale_x))
        boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4, 2)
        boxes[:, :, 0] = boxes[:, :, 0].clip(0, width)
        boxes[:, :, 1] = boxes[:, :, 1].clip(0, height)
        size = boxes.max(axis=1) - boxes.min(axis=1)
        keep = np.flatnonzero((size[:, 0] > 3) & (size[:, 1] > 3))  # boxes that lay mostly in the padding
        order = keep[reading_order(boxes[keep])]
        t3 = time.perf_counter()
        return Detection(boxes[order], tuple(float(scores[i]) for i in order), t1 - t0, t2 - t1, t3 - t2)


class RapidOcrEngine(OcrEngine):
    """PP-OCR on ONNX Runtime via rapidocr. Safe to share between threads: calls keep no state on ``self``."""

    NAME = "rapidocr"
    LANGS = {"ch": "ch", "en": "ch"}  # one multilingual model in the wheel reads both (module docstring)
    REQUIRES = ("rapidocr", "onnxruntime")
    INSTALL_HINT = "Install flowocr with its default dependencies: pip install flowocr (rapidocr, onnxruntime)."

    def __init__(self, *, lang: str = "ch", threads: int | None = None, options: RapidOptions | None = None) -> None:
        super().__init__(lang=lang, threads=threads)
        self.options = options or RapidOptions()
        from rapidocr import RapidOCR

        params: dict[str, Any] = {"Rec.rec_batch_num": self.options.rec_batch}
        if threads is not None:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
            params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
        pipeline = RapidOCR(params=params)
        # RapidOCR() resets its logger to INFO; model loading would print a line per model
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self._detect = _Detector(_component(pipeline, "det"), self.options)
        self._classify = _component(pipeline, "cls") if self.options.use_cls else None
        self._recognise = _component(pipeline, "rec")

    def _run(self, images: Sequence[np.ndarray]) -> OcrBatch:
        from rapidocr.ch_ppocr_rec import TextRecInput

        start = time.perf_counter()
        detections = [self._detect(image) for image in images]
        crops = [crop_box(image, box) for image, found in zip(images, detections) for box in found.boxes]
        det_s = time.perf_counter() - start

        cls_s = 0.0
        if crops and self._classify is not None:
            t0 = time.perf_counter()
            crops = list(self._classify(crops).img_list)
            cls_s = time.perf_counter() - t0

        rec_s = 0.0
        texts: Sequence[str] = ()
        scores: Sequence[float] = ()
        if crops:
            t0 = time.perf_counter()
            recognised = self._recognise(TextRecInput(img=crops))
            texts, scores = recognised.txts, recognised.scores
            rec_s = time.perf_counter() - t0

        results = []
        offset = 0
        for found in detections:
            lines = []
            for box, text, score in zip(found.boxes, texts[offset:], scores[offset:]):
                text = text.strip()
                score = min(1.0, max(0.0, float(score)))
                if text and score >= self.options.text_score:
                    points = tuple((float(x), float(y)) for x, y in box)
                    lines.append(TextLine(text, score, points))  # type: ignore[arg-type]
            offset += len(found.boxes)
            results.append(OcrResult(tuple(lines)))
        times = StageTimes(det_s=det_s, cls_s=cls_s, rec_s=rec_s, total_s=time.perf_counter() - start)
        return OcrBatch(tuple(results), times, crops=len(crops))


def _component(pipeline: Any, stage: str) -> Any:
    """RapidOCR's loaded ``det`` / ``cls`` / ``rec`` component: built eagerly by rapidocr 3.0-3.4
    (``text_det``), lazily by later 3.x (``_load_det_model()``)."""
    loaded = getattr(pipeline, f"text_{stage}", None)
    if loaded is None:
        loaded = getattr(pipeline, f"_load_{stage}_model")()
    return loaded
