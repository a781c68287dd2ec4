"""Facts of this machine that every stage may ask (and nothing else: no stage's own policy lives here)."""

from __future__ import annotations

import glob
import os
import time

#: The device node each kind of accelerator needs, and how a message names it. The hardware decoders
#: (:mod:`flowocr.decode.hwaccel`) and the OCR device (:mod:`flowocr.ocr.device`) both look here first: a missing
#: node rules the accelerator out without starting anything.
DEVICE_NODES = {
    "cuda": ("/dev/nvidiactl", "NVIDIA device (/dev/nvidiactl)"),
    "vaapi": ("/dev/dri/renderD*", "DRI render node (/dev/dri/renderD*)"),
    "qsv": ("/dev/dri/renderD*", "DRI render node (/dev/dri/renderD*)"),
}

#: ``time.monotonic()`` when this module was first imported: the process's start where /proc cannot say it.
_IMPORTED = time.monotonic()


def cpu_count() -> int:
    """CPUs this process may run on (its affinity, which containers and taskset narrow), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def device_node_missing(kind: str) -> str | None:
    """Why the device node of ``kind`` (``cuda``, ``vaapi``, ``qsv``) is absent here (``"no NVIDIA device
    (/dev/nvidiactl) here"``), None when it is present or ``kind`` needs none. Cheap: one glob, no process."""
    pattern, what = DEVICE_NODES.get(kind, ("", ""))
    if pattern and not glob.glob(pattern):
        return f"no {what} here"
    return None


def _stat_fields(pid: int | str) -> list[str]:
    """The fields of ``/proc/PID/stat`` after pid and comm (``proc(5)`` field 3 is index 0). Raises OSError."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        return f.read().rsplit(")", 1)[1].split()


def process_cpu_s(pid: int | str = "self") -> float | None:
    """CPU seconds (user + system) a process has used so far: a live one, or one that exited and is not yet
    reaped (:func:`exited_cpu_s`). Linux (``/proc``); None elsewhere or for a process that is gone."""
    try:
        fields = _stat_fields(pid)
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def exited_cpu_s(pid: int, *, block: bool = True) -> float | None:
    """The CPU seconds child ``pid`` used (:func:`process_cpu_s`) once it exited, read before it is reaped: a
    child's own account, which no other process's use blurs. ``block``: wait for the exit (without reaping);
    else None while it runs. None off Linux or when the child was reaped already (by a wait elsewhere); the caller
    reaps it afterwards as usual."""
    try:
        exited = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | (0 if block else os.WNOHANG))
    except (OSError, AttributeError):
        return None
    return None if exited is None else process_cpu_s(pid)


def process_started() -> float:
    """When this process started, on the ``time.monotonic()`` clock (so it can be subtracted from it).

    Linux: the start time the kernel keeps (``/proc/self/stat``, clock ticks since boot, on the boot-time clock),
    so the interpreter's own start and the imports before flowocr count. Elsewhere: when flowocr first imported
    this module."""
    try:
        fields = _stat_fields("self")
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of proc(5), after pid and comm
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED
    if not 0 <= age < 10 * 365 * 86400:
        return _IMPORTED
    return time.monotonic() - age
