"""Where the OCR models run (``--device auto|cpu|cuda``) and the ONNX Runtime providers that follow.

- ``cpu``: ONNX Runtime's CPU provider alone, exactly as before the option existed.
- ``cuda``: the CUDA provider first and the CPU provider behind it (ONNX Runtime places on the CPU the few nodes
  CUDA has no kernel for). Asked for and unusable here, it is :class:`~flowocr.errors.DeviceUnavailable` (exit 13,
  one line, before any frame is read): onnxruntime without ``CUDAExecutionProvider`` (the CPU package is
  installed, not ``onnxruntime-gpu``), no NVIDIA GPU, or a session that cannot start on it.
- ``auto`` (the default): ``cuda`` where onnxruntime exposes ``CUDAExecutionProvider`` *and* an NVIDIA GPU is
  present (its device node, :func:`flowocr.system.device_node_missing`), else ``cpu``. When the CUDA sessions then
  fail to start (CUDA or cuDNN libraries missing or of another version), the models load on the CPU instead, with
  one warning line on the ``flowocr`` logger (the CLI prints it as ``flowocr: warning: ...``), never a crash.

The run report's ``device`` is the device the models were loaded on. On a machine without an NVIDIA device node,
``auto`` costs one glob: onnxruntime is imported only where a GPU could be used.

:func:`choose_device` is the decision, pure (providers and GPU presence handed in); :func:`resolve_device` asks
this machine; :func:`on_device` loads models on the chosen device with the fallback of ``auto``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from flowocr.errors import DeviceUnavailable, UsageError, one_line

DEVICES = ("auto", "cpu", "cuda")
DEFAULT_DEVICE = "auto"
CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
#: Options of the CUDA provider. cuDNN's convolution algorithm is chosen by its heuristic, not by ONNX Runtime's
#: default exhaustive search: that search benchmarks every algorithm again for each new input shape, and the
#: detector sees a new shape for every band height (padded to multiples of 32) and frame size.
CUDA_OPTIONS: dict[str, Any] = {"device_id": 0, "cudnn_conv_algo_search": "HEURISTIC"}
#: How to get a CUDA-enabled ONNX Runtime (README, "GPU").
GPU_INSTALL = ("pip install 'flowocr[gpu]', then pip uninstall -y onnxruntime onnxruntime-gpu and "
               "pip install 'onnxruntime-gpu[cuda,cudnn]', as the two packages share one folder")  # fmt: skip

logger = logging.getLogger("flowocr")
_resolved: dict[str, DeviceChoice] = {}
_lock = threading.Lock()
T = TypeVar("T")


@dataclass(frozen=True)
class DeviceChoice:
    """The device the models are to load on (``cpu`` or ``cuda``), what was asked (``auto``, ``cpu``, ``cuda``),
    and for ``auto`` read on the CPU, why (``""`` otherwise)."""

    device: str
    asked: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be cpu or cuda, got {self.device!r}")
        check_device(self.asked)


def check_device(asked: str) -> str:
    """``asked`` if it is one of :data:`DEVICES`, else UsageError naming them."""
    if asked not in DEVICES:
        raise UsageError(f"Invalid device {asked!r}. Supported values are {', '.join(DEVICES)}.")
    return asked


def choose_device(asked: str, *, providers: Sequence[str], gpu: bool) -> DeviceChoice:
    """The device for ``asked`` given onnxruntime's ``providers`` (``get_available_providers()``) and whether an
    NVIDIA GPU is present. Raises DeviceUnavailable for ``cuda`` when either is missing (naming both)."""
    check_device(asked)
    if asked == "cpu":
        return DeviceChoice("cpu", asked)
    missing = []
    if CUDA_PROVIDER not in providers:
        missing.append(f"onnxruntime here has no {CUDA_PROVIDER} (its providers: {', '.join(providers) or 'none'})")
    if not gpu:
        missing.append("there is no NVIDIA GPU (no /dev/nvidiactl)")
    if not missing:
        return DeviceChoice("cuda", asked)
    if asked == "auto":
        return DeviceChoice("cpu", asked, "; ".join(missing))
    what = " and ".join(missing)
    hint = f"install a CUDA-enabled ONNX Runtime: {GPU_INSTALL}" if CUDA_PROVIDER not in providers else \
        "run it on a machine with an NVIDIA GPU and its driver"  # fmt: skip
    raise DeviceUnavailable(f"--device cuda cannot be used: {what}. Give --device cpu (or auto), or {hint}.")


def available_providers() -> tuple[str, ...]:
    """The execution providers of the installed onnxruntime (none when it is not installed)."""
    try:
        import onnxruntime
    except ImportError:
        return ()
    return tuple(onnxruntime.get_available_providers())


def resolve_device(asked: str) -> DeviceChoice:
    """:func:`choose_device` for this machine, once per process and value. ``cpu`` asks nothing; ``auto`` without an
    NVIDIA device node imports nothing. Raises UsageError for an unknown value, DeviceUnavailable as
    :func:`choose_device` does."""
    from flowocr.system import device_node_missing

    check_device(asked)
    with _lock:
        if asked in _resolved:
            return _resolved[asked]
    if asked == "cpu":
        choice = DeviceChoice("cpu", asked)
    else:
        missing = device_node_missing("cuda")
        if missing is not None and asked == "auto":
            choice = DeviceChoice("cpu", asked, missing)
        else:
            choice = choose_device(asked, providers=available_providers(), gpu=missing is None)
    with _lock:
        _resolved[asked] = choice
    return choice


def session_providers(device: str) -> list[Any]:
    """The ``providers`` argument of an ``InferenceSession`` on ``device`` (``cpu`` or ``cuda``)."""
    if device == "cuda":
        return [(CUDA_PROVIDER, dict(CUDA_OPTIONS)), CPU_PROVIDER]
    if device == "cpu":
        return [CPU_PROVIDER]
    raise ValueError(f"device must be cpu or cuda, got {device!r}")


def prepare_cuda() -> None:
    """Before the first CUDA session: let onnxruntime find CUDA and cuDNN installed as pip packages
    (``onnxruntime-gpu[cuda,cudnn]``: ``preload_dlls``, onnxruntime 1.21 and later), and keep its own logger to
    fatal errors, so that a failing CUDA provider is said once, by :func:`on_device`, not in a screen of native log
    lines. Nothing here raises: what fails shows when the session is created."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(4)
    preload = getattr(onnxruntime, "preload_dlls", None)
    if preload is not None:
        try:
            preload()
        except Exception:  # noqa: BLE001 - libraries it cannot find: the session says so
            pass


def on_device(load: Callable[[str], T], choice: DeviceChoice) -> tuple[T, str]:
    """``load(device)`` on the chosen device; returns what it returned and the device used.

    A CUDA load that raises: for ``--device cuda``, DeviceUnavailable saying why; for ``auto``, ``load("cpu")``
    instead, after one warning line on the ``flowocr`` logger. ``load`` must raise when its sessions did not land on
    CUDA (ONNX Runtime can fall back to the CPU silently): see :func:`check_on_cuda`."""
    if choice.device == "cpu":
        return load("cpu"), "cpu"
    try:
        prepare_cuda()
        return load("cuda"), "cuda"
    except DeviceUnavailable as exc:
        why = str(exc)
        error: BaseException = exc
    except Exception as exc:  # noqa: BLE001 - the runtime's own errors: missing libraries, out of memory, ...
        why = f"{type(exc).__name__}: {one_line(exc)}"
        error = exc
    if choice.asked == "cuda":
        raise DeviceUnavailable(f"--device cuda: the OCR models cannot start on CUDA ({why}). Check that the CUDA 12 "
                                "and cuDNN 9 libraries are installed, or give --device cpu. To install them: "
                                f"{GPU_INSTALL}.") from error  # fmt: skip
    logger.warning("the OCR models could not start on CUDA (%s); reading on the CPU", why)
    return load("cpu"), "cpu"


def check_on_cuda(session: Any, what: str) -> None:
    """Raise DeviceUnavailable unless ONNX Runtime placed ``session`` on the CUDA provider (it falls back to the CPU
    without an error when the provider's library cannot be loaded)."""
    providers = session.get_providers()
    if CUDA_PROVIDER not in providers:
        raise DeviceUnavailable(f"ONNX Runtime did not start {CUDA_PROVIDER} for {what} (it runs on "
                                f"{', '.join(providers)}): the CUDA or cuDNN libraries are missing or of another "
                                "version")  # fmt: skip
