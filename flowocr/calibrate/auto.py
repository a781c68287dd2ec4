"""``--lanes auto``: decoding options the user left out come from this machine's calibration.

The decoding options' defaults are "not given" (``lanes="auto"``, ``None`` for the others), so that a value the
user gives always wins over calibration, and calibration runs only when some value is left to it.

``FLOWOCR_CALIBRATION`` (environment) chooses where the values come from:

- ``auto`` (or unset): the stored calibration; the first run on a machine probes it (a few seconds, one line
  on stderr) and stores it;
- ``conservative``: the conservative tier, without reading, probing or writing anything (reproducible runs;
  the test suite sets it so that CLI tests neither probe nor depend on the machine).

``flowocr calibrate`` ignores it: measuring there is what was asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from flowocr.calibrate.store import Outcome, Store, load_or_calibrate
from flowocr.calibrate.tiers import CONSERVATIVE, Settings
from flowocr.errors import UsageError

ENV = "FLOWOCR_CALIBRATION"
MODES = ("auto", "conservative")
#: The decoding options calibration can fill in, and the value that means "not given".
AUTO_VALUES: dict[str, Any] = {"lanes": "auto", "block_sec": None, "first_block_sec": None, "budget_mb": None,
                               "ahead": None}  # fmt: skip


def calibration_mode() -> str:
    """``FLOWOCR_CALIBRATION``: ``auto`` (default) or ``conservative``; UsageError for anything else."""
    mode = os.environ.get(ENV, "").strip().lower() or "auto"
    if mode not in MODES:
        raise UsageError(f"invalid {ENV} ({os.environ[ENV]}); supported values are {', '.join(MODES)}")
    return mode


def calibrate(
    *, engine: str = "rapidocr", lang: str = "ch", device: str = "auto", force: bool = False, may_probe: bool = True,
    say: Callable[[str], None] = print, store: Store | None = None,
) -> Outcome:  # fmt: skip
    """This machine's calibration (real fingerprint, real probe): see :func:`load_or_calibrate`. The probe reads
    with ``engine`` reading ``lang`` (an engine's speed hardly depends on the language: one entry per engine) on
    ``device`` (``auto``, ``cpu``, ``cuda``: the device used is part of the fingerprint)."""
    from flowocr.calibrate.machine import machine_fingerprint, measure

    return load_or_calibrate(
        fingerprint=machine_fingerprint(engine, device=device), probe=lambda: measure(engine, lang=lang, device=device),
        force=force, may_probe=may_probe, store=store, say=say,
    )  # fmt: skip


def auto_decode_settings(
    *, engine: str = "rapidocr", lang: str = "ch", device: str = "auto", say: Callable[[str], None] = print,
    may_probe: bool = True,
) -> Settings:  # fmt: skip
    """The decoding settings for this machine, for options left to calibration.

    ``FLOWOCR_CALIBRATION=conservative``: the conservative tier, nothing read or written. Otherwise a valid
    stored profile, else (``may_probe``) a probe now, announced in one line through ``say``, else the
    conservative tier. Never raises for a failed probe; ``say`` hears why.
    """
    if calibration_mode() == "conservative":
        return CONSERVATIVE
    outcome = calibrate(engine=engine, lang=lang, device=device, may_probe=may_probe, say=say)
    for note in outcome.notes:
        say(note)
    return outcome.settings


def needs_calibration(decode: Mapping[str, Any]) -> bool:
    """Whether any option calibration fills is left at its "not given" value.

    ``ahead`` alone does not count when the lanes are the user's (it then defaults to one block per lane).
    """
    lanes_given = decode.get("lanes", "auto") not in (None, "auto") or bool(decode.get("decode_shards"))
    left = [k for k, auto in AUTO_VALUES.items() if decode.get(k, auto) == auto and k not in ("lanes", "ahead")]
    return bool(left) or not lanes_given


def fill_decode_options(decode: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """``decode`` with every option the user did not give taken from ``settings`` (a new dict).

    The user's ``--lanes`` or ``--decode-shards`` win over calibrated lanes; with lanes of the user's, an
    ``--ahead`` not given stays None (one block per lane, since calibrated ``ahead`` fits calibrated lanes).
    A ``--hwaccel`` of the user's without lanes of the user's asks for hardware decoding: the calibrated number
    of lanes, each of the best kind available (as ``--decode-shards N``), so the hwaccel is tried.
    """
    out = dict(decode)
    lanes = out.get("lanes")
    if lanes in (None, "auto"):
        if out.get("decode_shards"):
            out["lanes"] = None
        else:
            if out.get("hwaccel", "auto") != "auto":
                out["lanes"], out["decode_shards"] = None, len(settings.lanes)
            else:
                out["lanes"] = settings.lanes_arg
            if out.get("ahead") is None:
                out["ahead"] = settings.ahead
    for key in ("block_sec", "first_block_sec", "budget_mb"):
        if out.get(key) is None:
            out[key] = getattr(settings, key)
    return out
