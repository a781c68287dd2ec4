"""OCR stage: text detection + recognition of frames, and the text area they are read in.

Importing this package is cheap: the engines import their runtimes (rapidocr / onnxruntime, paddleocr) only
when :func:`get_engine` builds one.
"""

from flowocr.ocr.area import (
    BOTTOM_FRACTION,
    TOP_FRACTION,
    AreaSpec,
    Rect,
    crop,
    find_text_band,
    parse_area,
    result_to_frame,
    to_frame,
)
from flowocr.ocr.engine import (
    DEFAULT_ENGINE,
    DEFAULT_LANG,
    ENGINE_NAMES,
    OcrBatch,
    OcrEngine,
    StageTimes,
    available_engines,
    get_engine,
)
from flowocr.ocr.types import OcrResult, TextLine

__all__ = [
    "BOTTOM_FRACTION",
    "DEFAULT_ENGINE",
    "DEFAULT_LANG",
    "ENGINE_NAMES",
    "TOP_FRACTION",
    "AreaSpec",
    "OcrBatch",
    "OcrEngine",
    "OcrResult",
    "Rect",
    "StageTimes",
    "TextLine",
    "available_engines",
    "crop",
    "find_text_band",
    "get_engine",
    "parse_area",
    "result_to_frame",
    "to_frame",
]
