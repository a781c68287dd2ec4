"""Calibration (DESIGN §9): how fast this machine decodes and reads, and the decoding settings that follow.

- :mod:`~flowocr.calibrate.tiers`: the tier table (pure), with the reasoning behind each row;
- :mod:`~flowocr.calibrate.store`: fingerprint, profile, the JSON store in the user cache, and the decision
  to reuse, probe or fall back (:func:`load_or_calibrate`, clock, fingerprint and probe injectable);
- :mod:`~flowocr.calibrate.machine`: the real fingerprint and the real probe (a few seconds, bundled clip);
- :mod:`~flowocr.calibrate.auto`: ``--lanes auto`` (:func:`auto_decode_settings`, :func:`fill_decode_options`)
  and ``FLOWOCR_CALIBRATION``.

Importing this package is cheap: the probe imports the decoder and the OCR engine when it runs.
"""

from flowocr.calibrate.auto import (
    ENV,
    auto_decode_settings,
    calibrate,
    calibration_mode,
    fill_decode_options,
    needs_calibration,
)
from flowocr.calibrate.store import (
    MAX_AGE_S,
    RETRY_AFTER_S,
    Entry,
    Fingerprint,
    Measurement,
    Outcome,
    Profile,
    Store,
    default_store_path,
    load_or_calibrate,
)
from flowocr.calibrate.tiers import CONSERVATIVE, Settings, choose_settings

__all__ = [
    "CONSERVATIVE",
    "ENV",
    "MAX_AGE_S",
    "RETRY_AFTER_S",
    "Entry",
    "Fingerprint",
    "Measurement",
    "Outcome",
    "Profile",
    "Settings",
    "Store",
    "auto_decode_settings",
    "calibrate",
    "calibration_mode",
    "choose_settings",
    "default_store_path",
    "fill_decode_options",
    "load_or_calibrate",
    "needs_calibration",
]
