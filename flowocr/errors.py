"""The one exception hierarchy of flowocr, and the exit code of each kind of failure.

Every message says what went wrong, with which file, and what to do about it; the CLI prints it as one line.
"""

from __future__ import annotations


class FlowOcrError(Exception):
    """Base of every error flowocr raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class UsageError(FlowOcrError):
    """An option or argument is invalid; nothing was started."""

    exit_code = 2


class InputError(FlowOcrError):
    """The input file cannot be used as a video. Raised before any decoding starts."""

    exit_code = 3


class MissingInput(InputError):
    """The path does not exist (or is a directory where a file is needed)."""


class NotAVideo(InputError):
    """ffprobe could not read the file as a media container."""


class NoVideoStream(InputError):
    """The file is a readable container without a video stream (audio only, subtitles only)."""


class EmptyVideo(InputError):
    """The video stream holds no frame that would be shown."""


class TruncatedVideo(InputError):
    """The file ends before the data its own header announces; its tail is missing."""


class ToolMissing(FlowOcrError):
    """ffmpeg or ffprobe is not on PATH; nothing was started."""

    exit_code = 4


class ProcessFailed(FlowOcrError):
    """An ffmpeg/ffprobe process exited non-zero. Carries its exit code and the tail of its stderr."""

    exit_code = 5

    def __init__(self, message: str, *, returncode: int | None = None, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class DecodeError(FlowOcrError):
    """A decoder delivered frames that break the frame contract (order, range, grid, completeness).

    After it is raised, the frames already handed out are correct; the ones after them were not delivered.
    """

    exit_code = 6


class HwaccelMismatch(DecodeError):
    """A hardware lane delivered a gap the source does not have; the block must be decoded in software."""


class EngineUnavailable(FlowOcrError):
    """The chosen OCR engine cannot run here: its optional package is not installed or its models do not load.

    Raised before any frame is OCR'd; the message names the engine and how to install it.
    """

    exit_code = 7


class DeviceUnavailable(FlowOcrError):
    """``--device cuda`` cannot be used here: onnxruntime has no CUDA provider (the CPU package is installed), there
    is no NVIDIA GPU, or ONNX Runtime cannot start a session on it (CUDA or cuDNN libraries missing). Raised before
    any frame is read; the message says which, and what to install or give instead. ``--device auto`` never raises
    it: it reads on the CPU then (with one warning line when a CUDA session failed to start)."""

    exit_code = 13


class OutputError(FlowOcrError, OSError):
    """An output file or folder cannot be written: the folder cannot be made (a file is in the way, no
    permission), or a write failed (disk full, file too large). The message names the path and the reason.

    After it is raised, no final output of an earlier run was replaced by a partial one: final files are replaced
    only once every new one is written (the per-frame ``.part`` stream keeps what was written). It is also an
    :class:`OSError`, so code that handles file errors keeps working.
    """

    exit_code = 12


class Terminated(KeyboardInterrupt):
    """The process got SIGTERM. Raised in the main thread by the CLI's signal handler and handled exactly like
    Ctrl-C (a ``KeyboardInterrupt``, so no ``except Exception`` swallows it and a batch stops): every child process
    is stopped, outputs so far are kept, the report says ``complete: false``; the CLI exits 143 (128 + 15)."""

    exit_code = 143


_stop: KeyboardInterrupt | None = None


def request_stop(error: KeyboardInterrupt) -> None:
    """Record a stop from outside (Ctrl-C, SIGTERM) as well as raising it: Python prints and drops an exception
    raised in a callback it runs itself (a weakref callback of the import system, a ``__del__``), so a signal that
    lands there would otherwise be lost and the run go on to the end (the CLI's handlers call this)."""
    global _stop
    _stop = error


def raise_if_stopped() -> None:
    """Raise the recorded stop once, if there is one (the run's frame loop calls this for every frame)."""
    global _stop
    if _stop is not None:
        error, _stop = _stop, None
        raise error


def stop_delivered() -> None:
    """A stop reached the run: forget it, so that a later run in the same process is not stopped by it."""
    global _stop
    _stop = None


def one_line(error: BaseException) -> str:
    """The error as one line for a terminal: class-free message, newlines folded."""
    text = str(error) or type(error).__name__
    return " ".join(text.split())


class BatchFailed(FlowOcrError):
    """Some videos of a batch failed (each listed with its reason); the others completed."""

    exit_code = 8


class CalibrationFailed(FlowOcrError):
    """`flowocr calibrate` could not measure this machine; the stored profile (if any) is unchanged.

    Runs never raise it: without a valid calibration they use the conservative tier.
    """

    exit_code = 10


class ExecutorUnavailable(FlowOcrError):
    """``--executor ray``: Ray is not installed, or the cluster cannot be started or reached."""

    exit_code = 11
