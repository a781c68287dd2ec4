"""Facts of this machine that every stage may ask (and nothing else: no stage's own policy lives here)."""

from __future__ import annotations

import os


def cpu_count() -> int:
    """CPUs this process may run on (its affinity, which containers and taskset narrow), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
