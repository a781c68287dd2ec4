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


def process_started() -> float:
    """When this process started, on the ``time.monotonic()`` clock (so it can be subtracted from it).

    Linux: the start time the kernel keeps (``/proc/self/stat``, clock ticks since boot, on the boot-time clock),
    so the interpreter's own start and the imports before flowocr count. Elsewhere: when flowocr first imported
    this module."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of proc(5), after pid and comm
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED
    if not 0 <= age < 10 * 365 * 86400:
        return _IMPORTED
    return time.monotonic() - age
