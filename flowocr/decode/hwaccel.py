"""Which lanes a run gets: hardware decoding only where its hwaccel really initialises here.

ffmpeg can fall back to software silently, so a hwaccel is offered only after a one-time check (per process
and hwaccel) that decodes one frame of the input with it and ``-hwaccel_flags``-free strictness: the check
fails when the device cannot be created. No GPU: every lane is ``sw``.
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass

from flowocr import ffmpeg
from flowocr.decode.sharded import LaneSpec
from flowocr.errors import UsageError
from flowocr.system import device_node_missing

HWACCELS = ("cuda", "vaapi", "qsv")
_checked: dict[str, HwCheck] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class HwCheck:
    """Whether a hwaccel initialises on this machine, and why not."""

    hwaccel: str
    ok: bool
    reason: str


def check_hwaccel(hwaccel: str, video: str) -> HwCheck:
    """Decode one frame of ``video`` with ``hwaccel`` (once per process and hwaccel)."""
    with _lock:
        if hwaccel in _checked:
            return _checked[hwaccel]
    missing = device_node_missing(hwaccel)
    if missing:
        result = HwCheck(hwaccel, False, missing)
    else:
        argv = [ffmpeg.tool("ffmpeg"), "-hide_banner", "-nostdin", "-v", "error", "-hwaccel", hwaccel,
                "-i", video, "-frames:v", "1", "-f", "null", "-"]  # fmt: skip
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
            err = done.stderr.strip().splitlines()
            ok = done.returncode == 0 and not any("fail" in line.lower() for line in err)
            result = HwCheck(hwaccel, ok, "initialises" if ok else (err[-1] if err else f"exit {done.returncode}"))
        except subprocess.TimeoutExpired:
            result = HwCheck(hwaccel, False, "the check timed out")
    with _lock:
        _checked[hwaccel] = result
    return result


def resolve_lanes(
    video: str, *, lanes: str | None, shards: int | None, hwaccel: str = "auto"
) -> tuple[list[LaneSpec], list[str]]:
    """The lanes of a run and the notes about hardware decoding (for the report; the CLI says them once).

    ``lanes`` is an explicit list (``"sw,sw,hw"``); ``shards`` is N lanes of the best kind available. A hw
    lane whose hwaccel does not initialise becomes a sw lane, and the note says why.
    """
    if lanes and shards:
        raise UsageError("give either --lanes or --decode-shards, not both")
    if hwaccel != "auto" and hwaccel not in HWACCELS:
        raise UsageError(f"invalid hwaccel ({hwaccel}); supported values are auto, {', '.join(HWACCELS)}")
    if lanes:
        kinds = [k.strip() for k in lanes.split(",") if k.strip()]
        bad = [k for k in kinds if k not in ("sw", "hw")]
        if bad or not kinds:
            raise UsageError(f"invalid lane kind ({', '.join(bad) or 'empty'}); supported values are sw, hw")
    else:
        count = shards if shards else 2
        if count < 1:
            raise UsageError(f"--decode-shards must be at least 1, got {count}")
        kinds = ["best"] * count
    notes: list[str] = []
    usable = None
    if any(k in ("hw", "best") for k in kinds):
        candidates = HWACCELS if hwaccel == "auto" else (hwaccel,)
        checks = [check_hwaccel(h, video) for h in candidates]
        usable = next((c.hwaccel for c in checks if c.ok), None)
        if usable is None:
            detail = "; ".join(f"{c.hwaccel}: {c.reason}" for c in checks)
            notes.append(f"no hardware decoder initialises here ({detail}); every lane is sw")
        elif usable is not None:
            notes.append(f"hardware decoding with {usable}")
    specs = []
    for i, kind in enumerate(kinds):
        hw = kind in ("hw", "best") and usable is not None
        specs.append(LaneSpec(name=f"{'hw' if hw else 'sw'}{i}", kind="hw" if hw else "sw",
                              hwaccel=usable if hw else None))  # fmt: skip
    return specs, notes
