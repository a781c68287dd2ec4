"""OCR engines: the interface every engine implements, and the registry that loads each one once per process.

An engine turns a batch of BGR images into one :class:`OcrResult` per image. Engines load their models in
their constructor; :func:`get_engine` keeps one instance per (name, lang, threads, device) for the life of the
process, so models load once and serve every block of every video. Where the models run (``--device``) is
:mod:`flowocr.ocr.device`; ``engine.device`` says where they were loaded. Engine instances are safe to share
between threads: ``run`` keeps no per-call state on ``self``.

Nothing heavy is imported here or at the top of the engine modules: each engine imports its runtime
(rapidocr / onnxruntime, paddleocr) in its constructor, so ``import flowocr.ocr`` stays instant.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from flowocr.errors import EngineUnavailable, FlowOcrError, UsageError
from flowocr.ocr.area import Rect, crop, result_to_frame
from flowocr.ocr.device import DEFAULT_DEVICE
from flowocr.ocr.types import OcrResult, TextLine, known_boxes

DEFAULT_ENGINE = "rapidocr"
DEFAULT_LANG = "ch"
#: The engine name that means "the one the language table names for --lang" (the CLI's default).
AUTO_ENGINE = "auto"

#: Every engine flowocr knows, name -> "module:class"; imported only when chosen.
_ENGINE_CLASSES: dict[str, str] = {
    "rapidocr": "flowocr.ocr.rapid:RapidOcrEngine",
    "tesseract": "flowocr.ocr.tesseract:TesseractEngine",
    "paddle": "flowocr.ocr.paddle:PaddleOcrEngine",
}
ENGINE_NAMES: tuple[str, ...] = tuple(_ENGINE_CLASSES)


@dataclass(frozen=True)
class StageTimes:
    """Seconds spent per stage on one batch: detection (including cutting out the text boxes), orientation
    classification, recognition, and all of it. A stage the engine cannot time on its own is None.

    ``det_cpu_s`` and ``rec_cpu_s``: the CPU seconds of the calling thread in detection and recognition (the
    models run in the caller's thread with one intra-op thread, the default on two cores; worker threads of a
    session given more are not counted here)."""

    det_s: float | None
    cls_s: float | None
    rec_s: float | None
    total_s: float
    det_cpu_s: float | None = None
    rec_cpu_s: float | None = None


#: an axis-aligned box, x0 y0 x1 y1
Bounds = tuple[float, float, float, float]

_thread_cpu = threading.local()


def stage_cpu() -> tuple[float, float]:
    """This thread's CPU seconds so far in the detection and the recognition of every :meth:`OcrEngine.run`
    (:class:`StageTimes`): a run reads it before and after its OCR calls."""
    return getattr(_thread_cpu, "det", 0.0), getattr(_thread_cpu, "rec", 0.0)


def _count_stage_cpu(times: StageTimes) -> None:
    _thread_cpu.det = getattr(_thread_cpu, "det", 0.0) + (times.det_cpu_s or 0.0)
    _thread_cpu.rec = getattr(_thread_cpu, "rec", 0.0) + (times.rec_cpu_s or 0.0)


@dataclass(frozen=True)
class OcrBatch:
    """What an engine returns for a batch: one result per image, in input order, and where the time went.

    ``crops`` is the number of text boxes detected (and recognised) over the whole batch.
    """

    results: tuple[OcrResult, ...]
    times: StageTimes
    crops: int = 0


class OcrEngine(ABC):
    """Text detection + recognition over batches of BGR uint8 images (H x W x 3).

    Subclasses set ``NAME``, ``LANGS`` (accepted ``lang`` values, mapped to the language of the models that
    read them), ``REQUIRES`` (import names that must be installed) and ``INSTALL_HINT``, and implement ``_run``.
    An engine on ONNX Runtime takes ``device`` (``auto``, ``cpu``, ``cuda``: :mod:`flowocr.ocr.device`) and sets
    :attr:`device` to where its models were loaded; ``ONNX_RUNTIME`` says it does. Others choose their own device
    (``device`` stays None).
    """

    NAME: ClassVar[str]
    #: accepted lang -> lang of the models that serve it (two values served by one model share one instance)
    LANGS: ClassVar[dict[str, str]]
    REQUIRES: ClassVar[tuple[str, ...]]
    INSTALL_HINT: ClassVar[str]
    #: Whether the models run on ONNX Runtime, so that ``--device`` chooses where (:mod:`flowocr.ocr.device`).
    ONNX_RUNTIME: ClassVar[bool] = False
    #: Whether :meth:`_run` leaves the boxes of known lines unrecognised itself (:meth:`run`).
    KNOWN_SKIPS: ClassVar[bool] = False
    #: Whether :meth:`run` can recognise the boxes it finds in the images as they show too (``shown``).
    SHOWN_TOO: ClassVar[bool] = False
    #: The long side (pixels) the detector scales a larger image down to, for an engine that can detect at an
    #: image's own size instead (``full_size``); None where it cannot.
    detect_side: int | None = None

    def __init__(self, *, lang: str = DEFAULT_LANG, threads: int | None = None) -> None:
        self.lang = self.model_lang(lang)
        self.threads = threads
        #: where the models were loaded: "cpu" or "cuda"; None for an engine that chooses its own device
        self.device: str | None = None
        #: seconds the models took to load, and when that began (``time.monotonic()``), set by :func:`get_engine`
        self.load_s: float | None = None
        self.load_started: float | None = None

    @classmethod
    def model_lang(cls, lang: str) -> str:
        """The models' language for ``lang``; UsageError naming the supported values when it has none."""
        key = lang.strip().lower()
        if key not in cls.LANGS:
            supported = ", ".join(cls.LANGS)
            raise UsageError(f"Invalid language {lang!r} for OCR engine {cls.NAME}. Supported values are {supported}.")
        return cls.LANGS[key]

    @classmethod
    def missing_packages(cls) -> tuple[str, ...]:
        """The packages in ``REQUIRES`` that cannot be imported here (checked without importing them)."""
        return tuple(name for name in cls.REQUIRES if importlib.util.find_spec(name) is None)

    @classmethod
    def unavailable(cls, lang: str) -> str | None:
        """Why this engine cannot read ``lang`` here (one line naming what to install), None when it can.
        Cheap: nothing is imported or loaded."""
        missing = cls.missing_packages()
        if missing:
            return f"OCR engine {cls.NAME} needs {', '.join(missing)}, which is not installed. {cls.INSTALL_HINT}"
        return None

    def run(self, images: Sequence[np.ndarray], *, area: Rect | None = None,
            known: Sequence[Sequence[TextLine]] | None = None,
            shown: Sequence[np.ndarray] | None = None, full_size: bool = False) -> OcrBatch:  # fmt: skip
        """OCR a batch: one result per image, in order; an image without text gives an empty result.

        With ``area``, every image is a full frame and only ``crop(image, area)`` is read; boxes still come back
        in frame pixels. ``known`` (one sequence per image, lines in the pixels of the image as read): lines read
        before; a box the detector finds that is one of them (:func:`~flowocr.ocr.types.known_boxes`) is that line,
        not recognised again (an engine with ``KNOWN_SKIPS`` does not recognise it at all; others recognise it, and
        the known line takes its place). ``shown`` (one image per image, of its shape; an engine with ``SHOWN_TOO``
        only): the boxes found on ``images`` are recognised in ``shown`` too, and each keeps the surer reading
        (:func:`flowocr.ocr.rapid.surer`; text found with its picture blacked out, read as it shows as well).
        ``full_size`` (an engine with a ``detect_side`` only): the detector sees each image at its own size where
        it is larger than that side, not scaled down to it.
        Raises ValueError for an image that is not BGR uint8 H x W x 3 or that ``area`` does not fit, for
        ``shown`` images that do not match, and for ``full_size`` on an engine that cannot.
        """
        check_images(images)
        if known is not None and len(known) != len(images):
            raise ValueError(f"{len(known)} sets of known lines for {len(images)} images")
        if shown is not None:
            check_images(shown)
            if not self.SHOWN_TOO:
                raise ValueError(f"OCR engine {self.NAME} recognises only the images it detects in")
            if len(shown) != len(images) or any(a.shape != b.shape for a, b in zip(shown, images)):
                raise ValueError("the images as shown must match the images read, one by one, in shape")
        if full_size and self.detect_side is None:
            raise ValueError(f"OCR engine {self.NAME} detects at its own size only")
        if area is not None:
            images = [crop(image, area) for image in images]
            shown = None if shown is None else [crop(image, area) for image in shown]
        extra = {"shown": shown} if shown is not None else {}
        if full_size:
            extra["full_size"] = True
        batch = self._run(images, known, **extra)
        if known is not None and not self.KNOWN_SKIPS:
            batch = replace(batch, results=tuple(_with_known(result, lines)
                                                 for result, lines in zip(batch.results, known)))  # fmt: skip
        _count_stage_cpu(batch.times)
        if area is None:
            return batch
        return replace(batch, results=tuple(result_to_frame(result, area) for result in batch.results))

    def recognize(self, images: Sequence[np.ndarray], *, area: Rect | None = None,
                  known: Sequence[Sequence[TextLine]] | None = None,
                  shown: Sequence[np.ndarray] | None = None, full_size: bool = False) -> list[OcrResult]:  # fmt: skip
        """One :class:`OcrResult` per image, in input order (``known``, ``shown``, ``full_size``: see :meth:`run`).
        No text is an empty result, never an exception."""
        return list(self.run(images, area=area, known=known, shown=shown, full_size=full_size).results)

    def detect(self, images: Sequence[np.ndarray], *, full_size: bool = False) -> list[tuple[Bounds, ...]] | None:
        """Detection alone: the text boxes of each image (x0, y0, x1, y1, image pixels), every box the detector
        finds (also those whose recognition a reading would drop); None when this engine cannot detect without
        recognising (the reader then reads). Its CPU counts as detection (:func:`stage_cpu`). ``full_size``: see
        :meth:`run`."""
        check_images(images)
        if full_size and self.detect_side is None:
            raise ValueError(f"OCR engine {self.NAME} detects at its own size only")
        return self._detect_only(images, full_size=full_size)

    def _detect_only(self, images: Sequence[np.ndarray], full_size: bool = False) -> list[tuple[Bounds, ...]] | None:
        return None

    @abstractmethod
    def _run(self, images: Sequence[np.ndarray], known: Sequence[Sequence[TextLine]] | None = None) -> OcrBatch:
        """The engine's work on checked images, boxes in image pixels (``known``: see :meth:`run`; an engine
        without ``KNOWN_SKIPS`` may ignore it). An engine with ``SHOWN_TOO`` takes ``shown`` too (keyword, None:
        none), one with a ``detect_side`` ``full_size`` (keyword, False: scaled down)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lang={self.lang!r}, threads={self.threads!r})"


def _with_known(result: OcrResult, known: Sequence[TextLine]) -> OcrResult:
    """``result`` with each line whose box is a known line's replaced by that line."""
    found = known_boxes([line.bounds for line in result.lines], known)
    return OcrResult(tuple(found.get(k, line) for k, line in enumerate(result.lines)))


def check_images(images: Sequence[np.ndarray]) -> None:
    """Raise ValueError unless every image is a BGR uint8 array of shape H x W x 3."""
    for index, image in enumerate(images):
        if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            shape = getattr(image, "shape", None)
            dtype = getattr(image, "dtype", type(image).__name__)
            raise ValueError(f"image {index}: expected a BGR uint8 array H x W x 3, got shape {shape} dtype {dtype}")


def resolve_engine(name: str, lang: str) -> str:
    """The engine that reads ``lang``: for ``auto``, the one the language table names
    (:mod:`flowocr.ocr.langs`); an engine named explicitly must accept ``lang``.

    Raises UsageError for an unknown engine or language, or an engine that does not read ``lang`` (naming the one
    that does)."""
    from flowocr.ocr.langs import language

    key = name.strip().lower()
    if key == AUTO_ENGINE:
        return language(lang).engine
    cls = _engine_class(key)
    if lang.strip().lower() not in cls.LANGS:
        known = language(lang)  # an unknown language: the message lists every code
        raise UsageError(
            f"Language {known.code} ({known.name}) is not read by OCR engine {cls.NAME}; it is read by "
            f"{known.engine}: give --engine {known.engine} or --engine auto (the default)."
        )
    return cls.NAME


def _engine_class(name: str) -> type[OcrEngine]:
    target = _ENGINE_CLASSES.get(name.strip().lower())
    if target is None:
        raise UsageError(f"Unknown OCR engine {name!r}. Supported engines are {', '.join(ENGINE_NAMES)}.")
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def available_engines() -> tuple[str, ...]:
    """Names of the engines whose packages are installed here (in registry order; the default first)."""
    return tuple(name for name in ENGINE_NAMES if not _engine_class(name).missing_packages())


_instances: dict[tuple[str, str, int | None, str], OcrEngine] = {}
_instances_lock = threading.Lock()


def unavailable(name: str, *, lang: str) -> str | None:
    """Why engine ``name`` (or ``auto``) cannot read ``lang`` here, as the one line naming what to install; None
    when it can. Cheap: nothing is imported or loaded. UsageError for an unknown engine or language."""
    return _engine_class(resolve_engine(name, lang)).unavailable(lang)


def check_engine(name: str = DEFAULT_ENGINE, *, lang: str = DEFAULT_LANG, device: str = DEFAULT_DEVICE) -> None:
    """Raise now what :func:`get_engine` would raise for a name, language, package, language data or device that is
    not there, without loading any model (cheap: no import of the engine's packages; onnxruntime only to look for
    its CUDA provider, where an NVIDIA GPU is present or ``--device cuda`` was given). ``name`` may be ``auto``."""
    why = unavailable(name, lang=lang)
    if why:
        raise EngineUnavailable(why)
    check_engine_device(name, lang=lang, device=device)


def check_engine_device(name: str, *, lang: str, device: str) -> None:
    """UsageError for an unknown ``device`` or for ``cpu``/``cuda`` with an engine that chooses its own device;
    DeviceUnavailable when ``cuda`` cannot be used here (:func:`flowocr.ocr.device.resolve_device`)."""
    from flowocr.ocr.device import check_device, resolve_device

    check_device(device)
    cls = _engine_class(resolve_engine(name, lang))
    if not cls.ONNX_RUNTIME:
        if device != DEFAULT_DEVICE:
            raise UsageError(f"--device {device} is for the engines on ONNX Runtime (rapidocr, tesseract); OCR engine "
                             f"{cls.NAME} chooses its own device: give --device auto.")  # fmt: skip
        return
    resolve_device(device)


def default_threads() -> int | None:
    """The runtime's threads per model call when the caller does not say: one on a machine with two CPUs or
    fewer, else the runtime's own choice (None).

    On two CPUs the decoding lanes keep both busy, and a second OCR thread mostly waits for the first one to be
    scheduled: measured on 1080p subtitle bands, 135 ms of CPU per call with two threads against 99 ms with one
    (80 and 130 ms of wall time on an idle machine). Time to first text is a few tens of ms later; everything
    after it is sooner."""
    from flowocr.system import cpu_count

    return 1 if cpu_count() <= 2 else None


def engine_loaded(
    name: str = DEFAULT_ENGINE, *, lang: str = DEFAULT_LANG, threads: int | None = None, device: str = DEFAULT_DEVICE
) -> bool:  # fmt: skip
    """Whether :func:`get_engine` with these arguments would return models already loaded in this process."""
    key = _instance_key(_engine_class(resolve_engine(name, lang)), lang, threads, device)
    with _instances_lock:
        return key in _instances


def _instance_key(cls, lang: str, threads: int | None, device: str) -> tuple[str, str, int | None, str]:
    """The process-wide instance an engine class reading ``lang`` with ``threads`` on ``device`` is: (name, models'
    language, threads after :func:`default_threads`, the device asked for)."""
    return cls.NAME, cls.model_lang(lang), default_threads() if threads is None else threads, device


def get_engine(
    name: str = DEFAULT_ENGINE, *, lang: str = DEFAULT_LANG, threads: int | None = None, device: str = DEFAULT_DEVICE
) -> OcrEngine:  # fmt: skip
    """The process-wide engine ``name`` reading ``lang``, loading its models on first use.

    ``threads`` caps the runtime's threads per model call (None: :func:`default_threads`). ``device`` (``auto``,
    ``cpu``, ``cuda``) is where an engine on ONNX Runtime loads its models (:mod:`flowocr.ocr.device`). One
    instance exists per (name, models' language, threads, device); ``lang`` values served by the same models share
    it. The instance records how long its models took to load (``load_s``, ``load_started``).

    ``name`` may be ``auto``: the engine the language table names for ``lang`` (:func:`resolve_engine`).

    Raises UsageError for an unknown name, language, thread count or device, EngineUnavailable when the engine's
    package (or its data for ``lang``) is not installed or its models fail to load, and DeviceUnavailable when
    ``device`` is ``cuda`` and the models cannot run there.
    """
    import time

    name = resolve_engine(name, lang)
    cls = _engine_class(name)
    key = _instance_key(cls, lang, threads, device)  # an unknown language raises here, before the thread count
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise UsageError(f"Invalid OCR thread count {threads!r}: give a whole number of at least 1.")
    _, model_lang, threads, _ = key
    with _instances_lock:
        engine = _instances.get(key)
        if engine is None:
            check_engine(name, lang=lang, device=device)
            started = time.monotonic()
            try:
                engine = cls(lang=model_lang, threads=threads, **({"device": device} if cls.ONNX_RUNTIME else {}))
            except FlowOcrError:
                raise
            except Exception as exc:  # a model that does not load, a broken runtime install
                raise EngineUnavailable(
                    f"OCR engine {cls.NAME} could not load its models: {type(exc).__name__}: {exc}. {cls.INSTALL_HINT}"
                ) from exc
            engine.load_started, engine.load_s = started, time.monotonic() - started
            _instances[key] = engine
        return engine
