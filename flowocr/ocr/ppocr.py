"""The PP-OCR models shipped in the ``rapidocr`` wheel, loaded straight into ONNX Runtime.

rapidocr's own constructor reads two YAML configurations through OmegaConf at import and load time: about 1.1 s
of a 1.3 s engine load on one core (``python -X importtime``: ``rapidocr.main`` 1.12 s, of which the model
registry 0.44 s and the engine base 0.34 s; two ``InferenceSession``\\ s take 0.14 s). Every ``flowocr run``
process pays the load once, and on a 2-core machine it competes with the decoding lanes, so we load the models
ourselves: the same files, the same session options as rapidocr's ONNX Runtime engine, and the two pieces of
its pipeline we need re-implemented here (results are identical, tested against rapidocr's own components):

- :class:`DbPostProcess`: PP-OCR's DB post-process (probability map -> text quadrilaterals), rapidocr's
  settings (threshold 0.3, box threshold 0.5, dilation, "fast" box score, unclip ratio from the caller).
- :func:`rec_input`: the recogniser's input (resize to 48 px height, normalise, pad right with zeros).

The recogniser's alphabet is in the model's metadata (``character``); class 0 is the CTC blank and a space
is appended as the last class, as PP-OCR's CTC decoder does.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DET_MODEL = "PP-OCRv6_det_small.onnx"
REC_MODEL = "PP-OCRv6_rec_small.onnx"
#: The recogniser's input: channels, height, and the least padded width.
REC_SHAPE = (3, 48, 320)


def model_dir() -> Path:
    """The ``models`` folder of the installed rapidocr wheel (found without importing rapidocr)."""
    spec = importlib.util.find_spec("rapidocr")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the rapidocr package is not installed")
    return Path(next(iter(spec.submodule_search_locations)), "models")


def model_path(name: str) -> Path:
    path = model_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (reinstall rapidocr)")
    return path


class Session:
    """One ONNX Runtime session, with rapidocr's session options; call it with the input tensor to get the first
    output.

    ``threads``: intra-op threads (None: the runtime decides). ``spin``: whether idle worker threads spin
    between calls (ONNX Runtime's default) or sleep and leave the CPU to the decoding lanes. ``device``: ``cpu``
    (the CPU provider alone) or ``cuda`` (the CUDA provider, then the CPU one: :mod:`flowocr.ocr.device`); a
    ``cuda`` session that ONNX Runtime did not place on CUDA raises DeviceUnavailable.
    """

    def __init__(self, path: Path, *, threads: int | None, spin: bool, device: str = "cpu") -> None:
        import onnxruntime as ort

        from flowocr.ocr.device import check_on_cuda, session_providers

        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.enable_cpu_mem_arena = False
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(path), options, providers=session_providers(device))
        if device == "cuda":
            check_on_cuda(self.session, path.name)
        self.device = device
        self._input = self.session.get_inputs()[0].name
        self._outputs = [self.session.get_outputs()[0].name]

    def __call__(self, tensor: np.ndarray) -> np.ndarray:
        return self.session.run(self._outputs, {self._input: tensor})[0]

    def metadata(self) -> dict[str, str]:
        return dict(self.session.get_modelmeta().custom_metadata_map)


def rec_alphabet(session: Session) -> tuple[str, ...]:
    """Class index -> text of the recogniser: the blank, the model's characters, then a space."""
    characters = session.metadata().get("character")
    if not characters:
        raise ValueError("the recognition model has no character list in its metadata")
    return ("blank", *characters.splitlines(), " ")


def rec_input(image: np.ndarray, max_wh_ratio: float, *, height: int = REC_SHAPE[1]) -> np.ndarray:
    """3 x ``height`` x W float32 input of one crop: resized to ``height`` keeping its aspect ratio (at most W
    wide, W = int(height * max_wh_ratio)), scaled to [-1, 1], zero-padded on the right."""
    import cv2

    width = int(height * max_wh_ratio)
    h, w = image.shape[:2]
    resized_w = min(width, int(math.ceil(height * (w / float(h)))))
    resized = cv2.resize(image, (resized_w, height)).astype("float32").transpose((2, 0, 1)) / 255
    resized -= 0.5
    resized /= 0.5
    out = np.zeros((image.shape[2], height, width), dtype=np.float32)
    out[:, :, :resized_w] = resized
    return out


@dataclass(frozen=True)
class DbPostProcess:
    """Differentiable-binarisation post-process: text regions of the probability map as quadrilaterals
    (clockwise from top-left) in the destination size, with their mean probability.

    A region is kept when its mean probability is at least ``box_thresh``; it is then grown by
    ``area * unclip_ratio / perimeter`` (a rounded offset), and its minimum-area rectangle is the box."""

    thresh: float = 0.3
    box_thresh: float = 0.5
    max_candidates: int = 1000
    unclip_ratio: float = 1.6
    min_size: int = 3

    def __call__(self, pred: np.ndarray, dest_shape: tuple[float, float]) -> tuple[np.ndarray, list[float]]:
        import cv2

        dest_h, dest_w = dest_shape
        prob = pred[0, 0]
        mask = cv2.dilate((prob > self.thresh).astype(np.uint8), np.ones((2, 2), np.uint8))
        height, width = mask.shape
        contours, _ = cv2.findContours(mask * 255, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        boxes, scores = [], []
        for contour in contours[: self.max_candidates]:
            points, short_side = _mini_box(contour)
            if short_side < self.min_size:
                continue
            score = _mean_inside(prob, points)
            if score < self.box_thresh:
                continue
            box, short_side = _mini_box(self._unclip(points))
            if short_side < self.min_size + 2:
                continue
            box[:, 0] = np.clip(np.round(box[:, 0] / width * dest_w), 0, dest_w)
            box[:, 1] = np.clip(np.round(box[:, 1] / height * dest_h), 0, dest_h)
            box = _clockwise(box.astype(np.int32))
            # clip to the last pixel, as whole pixels
            box[:, 0] = np.floor(np.minimum(np.maximum(box[:, 0], 0), dest_w - 1))
            box[:, 1] = np.floor(np.minimum(np.maximum(box[:, 1], 0), dest_h - 1))
            if int(np.linalg.norm(box[0] - box[1])) <= 3 or int(np.linalg.norm(box[0] - box[3])) <= 3:
                continue
            boxes.append(box)
            scores.append(score)
        return np.array(boxes, dtype=np.float32).reshape(-1, 4, 2), scores

    def _unclip(self, box: np.ndarray) -> np.ndarray:
        import cv2
        import pyclipper

        polygon = box.astype(np.float32).reshape(-1, 1, 2)
        distance = cv2.contourArea(polygon) * self.unclip_ratio / cv2.arcLength(polygon, True)
        offset = pyclipper.PyclipperOffset()
        offset.AddPath(box, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
        return np.array(offset.Execute(distance)).reshape((-1, 1, 2))


def _mini_box(contour: np.ndarray) -> tuple[np.ndarray, float]:
    """The minimum-area rectangle of ``contour`` as 4 points (top-left, top-right, bottom-right, bottom-left by
    PP-OCR's rule) and its shorter side."""
    import cv2

    rect = cv2.minAreaRect(contour)
    points = sorted(list(cv2.boxPoints(rect)), key=lambda p: p[0])
    first, fourth = (0, 1) if points[1][1] > points[0][1] else (1, 0)
    second, third = (2, 3) if points[3][1] > points[2][1] else (3, 2)
    return np.array([points[first], points[second], points[third], points[fourth]]), min(rect[1])


def _mean_inside(prob: np.ndarray, box: np.ndarray) -> float:
    """Mean of ``prob`` inside the polygon ``box`` (filled on whole pixels)."""
    import cv2

    h, w = prob.shape
    box = box.reshape(-1, 2).copy()
    x0 = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    x1 = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    y0 = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    y1 = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), dtype=np.uint8)
    box[:, 0] -= x0
    box[:, 1] -= y0
    cv2.fillPoly(mask, box.reshape(1, -1, 2).astype(np.int32), 1)
    return cv2.mean(prob[y0 : y1 + 1, x0 : x1 + 1], mask)[0]


def _clockwise(points: np.ndarray) -> np.ndarray:
    """Four points as top-left, top-right, bottom-right, bottom-left (float32)."""
    by_x = points[np.argsort(points[:, 0]), :]
    left, right = by_x[:2, :], by_x[2:, :]
    top_left, bottom_left = left[np.argsort(left[:, 1]), :]
    top_right, bottom_right = right[np.argsort(right[:, 1]), :]
    return np.array([top_left, top_right, bottom_right, bottom_left], dtype=np.float32)


def load_models(*, threads: int | None, spin: bool, device: str = "cpu") -> dict[str, Any]:
    """The detection and recognition sessions on ``device`` (``cpu`` or ``cuda``) and the recogniser's alphabet."""
    det = Session(model_path(DET_MODEL), threads=threads, spin=spin, device=device)
    rec = Session(model_path(REC_MODEL), threads=threads, spin=spin, device=device)
    return {"det": det, "rec": rec, "alphabet": rec_alphabet(rec)}
