"""Optional OCR engine: PaddleOCR, for users who have Paddle and its models (``pip install 'flowocr[paddle]'``).

``paddleocr`` is imported only when this engine is built. It is not installed where flowocr is developed and
tested: only the "not installed" path (:class:`~flowocr.errors.EngineUnavailable`, naming the extra) is tested;
the reading code below follows PaddleOCR's documented API and has not been run against it.

- PaddleOCR 3.x: ``PaddleOCR(lang=..., use_doc_orientation_classify=False, use_doc_unwarping=False,
  use_textline_orientation=False).predict(images)``, results with ``rec_texts`` / ``rec_scores`` /
  ``rec_polys``. Document unwarping and orientation are off: video frames are upright and flat.
- PaddleOCR 2.x: ``PaddleOCR(lang=..., use_angle_cls=False, show_log=False).ocr(image, cls=False)``, per image
  a list of ``[box, (text, score)]`` (or None when nothing was found).

PaddleOCR downloads its models on first use unless they are in its cache; it has no per-stage timings, so only
the total time of a batch is reported. Thread safety is PaddleOCR's: flowocr keeps no per-call state on the
engine, and the Paddle predictor is called one batch at a time per engine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from flowocr.ocr.engine import OcrBatch, OcrEngine, StageTimes
from flowocr.ocr.types import OcrResult, TextLine


class PaddleOcrEngine(OcrEngine):
    """PP-OCR on Paddle Inference via the ``paddleocr`` package."""

    NAME = "paddle"
    LANGS = {"ch": "ch", "en": "en"}
    REQUIRES = ("paddleocr",)
    INSTALL_HINT = "Install it with: pip install 'flowocr[paddle]' (and PaddlePaddle, see paddlepaddle.org.cn)."

    def __init__(self, *, lang: str = "ch", threads: int | None = None, text_score: float = 0.5) -> None:
        super().__init__(lang=lang, threads=threads)
        from paddleocr import PaddleOCR

        self.text_score = text_score
        self._lock = threading.Lock()  # Paddle predictors are not documented as safe for concurrent calls
        if hasattr(PaddleOCR, "predict"):
            kwargs: dict[str, Any] = {
                "lang": self.lang,
                "use_doc_orientation_classify": False,
                "use_doc_unwarping": False,
                "use_textline_orientation": False,
            }
            if threads is not None:
                kwargs["cpu_threads"] = threads
            self._ocr = PaddleOCR(**kwargs)
            self._v3 = True
        else:
            kwargs = {"lang": self.lang, "use_angle_cls": False, "show_log": False}
            if threads is not None:
                kwargs["cpu_threads"] = threads
            self._ocr = PaddleOCR(**kwargs)
            self._v3 = False

    def _run(self, images: Sequence[np.ndarray], known=None) -> OcrBatch:  # known lines: see OcrEngine.run
        start = time.perf_counter()
        with self._lock:
            if self._v3:
                raw = [_lines_v3(res) for res in self._ocr.predict(list(images))] if images else []
            else:
                raw = [_lines_v2(self._ocr.ocr(image, cls=False)) for image in images]
        results = tuple(OcrResult(tuple(self._keep(lines))) for lines in raw)
        total = time.perf_counter() - start
        return OcrBatch(results, StageTimes(None, None, None, total), crops=sum(len(r) for r in raw))

    def _keep(self, lines: Iterable[tuple[Any, str, float]]) -> Iterable[TextLine]:
        for box, text, score in lines:
            text = str(text).strip()
            score = min(1.0, max(0.0, float(score)))
            if text and score >= self.text_score:
                points = np.asarray(box, dtype=np.float64).reshape(-1, 2)
                if len(points) != 4:  # a polygon: keep its axis-aligned bounds
                    (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
                    points = np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
                yield TextLine(text, score, tuple((float(x), float(y)) for x, y in points))  # type: ignore[arg-type]


def _lines_v3(res: Any) -> list[tuple[Any, str, float]]:
    return list(zip(res["rec_polys"], res["rec_texts"], res["rec_scores"]))


def _lines_v2(res: Any) -> list[tuple[Any, str, float]]:
    page = res[0] if res else None  # one page per image; None when nothing was found
    return [(box, text, score) for box, (text, score) in page or ()]
