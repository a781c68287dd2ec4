"""Calibration results on disk, and the decision to reuse, measure again or fall back (no probing here).

The store is one JSON file, ``$XDG_CACHE_HOME/flowocr/calibration.json`` (``~/.cache`` when the variable is
unset), with one entry per machine fingerprint key::

    {"version": 1, "entries": {"<key>": {"fingerprint": {...}, "profile": {...} | null,
                                          "failed_at": <unix s> | null, "failure": "<reason>" | null}}}

Rules (:func:`load_or_calibrate`):

- a profile is valid for :data:`MAX_AGE_S` (7 days) after it was measured; a fingerprint that changed (another
  GPU, ffmpeg, CPU or OCR model) is another key, so it is measured afresh;
- a failed probe records ``failed_at`` and its reason next to whatever profile the entry has, never replacing
  it; no probe is tried again for :data:`RETRY_AFTER_S` (10 minutes) after a failure, unless forced;
- without a valid profile the conservative tier applies.

Writes replace the file atomically (a temporary file in the same folder, then ``os.replace``) under an
advisory lock, so concurrent runs never see half a file; a store that cannot be read counts as empty, and one
that cannot be written leaves the run going (the outcome says so).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flowocr.calibrate.tiers import CONSERVATIVE, Settings, choose_settings, reference_ratio

MAX_AGE_S = 7 * 24 * 3600
RETRY_AFTER_S = 10 * 60
STORE_VERSION = 1
STORE_NAME = "calibration.json"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/flowocr`` (a relative or empty XDG_CACHE_HOME is ignored, as the spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "flowocr"


def default_store_path() -> Path:
    return cache_dir() / STORE_NAME


@dataclass(frozen=True)
class Fingerprint:
    """What the measured speeds depend on. Any field that differs makes another :attr:`key`.

    ``gpu`` is "" without an NVIDIA GPU (or without ``nvidia-smi``); ``models`` are ``(file name, hash)`` of
    the OCR engine's model files (see :func:`flowocr.calibrate.machine.model_hash`); ``device`` is where the OCR
    models run (``cpu``, ``cuda``; ``own`` for an engine that chooses its own), so that a CPU calibration is never
    used for a run on the GPU, nor the reverse.
    """

    ffmpeg: str
    hwaccels: tuple[str, ...]
    gpu: str
    cpu_model: str
    cpu_count: int
    engine: str
    models: tuple[tuple[str, str], ...] = ()
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.cpu_count < 1:
            raise ValueError(f"cpu_count must be at least 1, got {self.cpu_count}")

    @property
    def key(self) -> str:
        """16 hex digits of the SHA-256 of the canonical JSON of every field: stable across processes."""
        text = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["hwaccels"] = list(self.hwaccels)
        data["models"] = [list(m) for m in self.models]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fingerprint:
        return cls(
            ffmpeg=str(data["ffmpeg"]), hwaccels=tuple(data["hwaccels"]), gpu=str(data["gpu"]),
            cpu_model=str(data["cpu_model"]), cpu_count=int(data["cpu_count"]), engine=str(data["engine"]),
            models=tuple((str(name), str(digest)) for name, digest in data.get("models", ())),
            device=str(data.get("device", "cpu")),
        )  # fmt: skip


@dataclass(frozen=True)
class Measurement:
    """What one probe measured: ratios (processing s / video s) on the probe clip, and how long it took.

    ``sw_ratio`` / ``hw_ratio``: one lane decoding the clip (hw: None when no hwaccel initialises, with the
    reason in ``hw_note``); ``ocr_ratio``: the engine reading every grid frame at 2 fps; ``clip_pixels``:
    width x height of the clip, to scale decode ratios to other resolutions.
    """

    sw_ratio: float
    ocr_ratio: float
    hw_ratio: float | None = None
    hwaccel: str | None = None
    hw_note: str = ""
    clip: str = "demo.mp4"
    clip_pixels: int = 640 * 360
    clip_seconds: float = 0.0
    probe_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("sw_ratio", "ocr_ratio", "hw_ratio"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if self.clip_pixels <= 0:
            raise ValueError(f"clip_pixels must be positive, got {self.clip_pixels}")


@dataclass(frozen=True)
class Profile:
    """A measurement of one machine (its fingerprint) at ``measured_at`` (unix seconds)."""

    fingerprint: Fingerprint
    measured_at: float
    measurement: Measurement

    def age(self, now: float) -> float:
        return now - self.measured_at

    def valid(self, now: float) -> bool:
        """Measured less than :data:`MAX_AGE_S` ago (and not in the future: a clock set back re-measures)."""
        return 0 <= self.age(now) < MAX_AGE_S

    def settings(self) -> Settings:
        """The tier table applied to this measurement, decode ratios scaled to 1080p."""
        m = self.measurement
        return choose_settings(
            sw_ratio=reference_ratio(m.sw_ratio, m.clip_pixels),
            hw_ratio=None if m.hw_ratio is None else reference_ratio(m.hw_ratio, m.clip_pixels),
            ocr_ratio=m.ocr_ratio, cpu_count=self.fingerprint.cpu_count,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {"measured_at": self.measured_at, **asdict(self.measurement)}

    @classmethod
    def from_json(cls, fingerprint: Fingerprint, data: dict[str, Any]) -> Profile:
        fields = {k: data[k] for k in Measurement.__dataclass_fields__ if k in data}
        return cls(fingerprint, float(data["measured_at"]), Measurement(**fields))


@dataclass(frozen=True)
class Entry:
    """The stored state of one fingerprint: its last good profile (if any) and its last failure (if any)."""

    fingerprint: Fingerprint
    profile: Profile | None = None
    failed_at: float | None = None
    failure: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint.to_json(),
            "profile": None if self.profile is None else self.profile.to_json(),
            "failed_at": self.failed_at, "failure": self.failure,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        fingerprint = Fingerprint.from_json(data["fingerprint"])
        profile = data.get("profile")
        failed_at = data.get("failed_at")
        return cls(
            fingerprint, None if profile is None else Profile.from_json(fingerprint, profile),
            None if failed_at is None else float(failed_at), data.get("failure"),
        )  # fmt: skip


class Store:
    """The calibration file. Unreadable or foreign content reads as empty; entries that do not parse are
    dropped one by one (a newer flowocr's entry never breaks an older one)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()

    def entries(self) -> dict[str, Entry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != STORE_VERSION:
            return {}
        out: dict[str, Entry] = {}
        for key, raw in (data.get("entries") or {}).items():
            try:
                out[key] = Entry.from_json(raw)
            except (KeyError, TypeError, ValueError):
                continue
        return out

    def entry(self, fingerprint: Fingerprint) -> Entry | None:
        return self.entries().get(fingerprint.key)

    def save_profile(self, profile: Profile) -> None:
        """Store a fresh profile; it clears the entry's failure."""
        with self._update() as entries:
            entries[profile.fingerprint.key] = Entry(profile.fingerprint, profile)

    def save_failure(self, fingerprint: Fingerprint, when: float, reason: str) -> None:
        """Record a failed probe next to the entry's profile, which stays as it was."""
        with self._update() as entries:
            old = entries.get(fingerprint.key)
            entries[fingerprint.key] = Entry(fingerprint, old.profile if old else None, when, reason)

    @contextlib.contextmanager
    def _update(self) -> Iterator[dict[str, Entry]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path.with_name(self.path.name + ".lock")):
            entries = self.entries()
            yield entries
            text = json.dumps({"version": STORE_VERSION, "entries": {k: e.to_json() for k, e in entries.items()}},
                              indent=1, sort_keys=True)  # fmt: skip
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    os.fchmod(f.fileno(), 0o644)  # mkstemp makes it private; it holds nothing secret
                    f.write(text + "\n")
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An advisory lock for a read-modify-write of the store (no lock where fcntl does not exist)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Outcome:
    """What :func:`load_or_calibrate` decided.

    ``how`` is for people ("cached", "calibrated", "conservative (probe failed: ...)"); ``source`` is for code:
    ``cached`` (a valid stored profile), ``calibrated`` (measured just now), ``conservative`` (no valid profile).
    ``profile`` is the profile the settings come from (None for the conservative tier); ``failure`` is why the
    probe made for this outcome failed (None when none was made or it succeeded).
    """

    settings: Settings
    profile: Profile | None
    fingerprint: Fingerprint
    source: str
    how: str
    notes: tuple[str, ...] = field(default=())
    failure: str | None = None


Probe = Callable[[], Measurement]


def load_or_calibrate(
    *,
    fingerprint: Fingerprint,
    probe: Probe,
    clock: Callable[[], float] = time.time,
    force: bool = False,
    may_probe: bool = True,
    store: Store | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> Outcome:
    """The settings for this machine: a valid stored profile, else a fresh probe, else the conservative tier.

    ``force`` probes even when a valid profile exists or the last probe failed moments ago. ``may_probe=False``
    never probes (a valid profile or the conservative tier). ``say`` hears one line before a probe starts and
    one line when it fails. The probe's exceptions (any) are its failure: recorded, never raised.
    """
    store = store or Store()
    now = clock()
    entry = store.entry(fingerprint)
    profile = entry.profile if entry else None
    valid = profile if profile is not None and profile.valid(now) else None
    if valid is not None and not force:
        return Outcome(valid.settings(), valid, fingerprint, "cached", "cached")
    backing_off = (
        entry is not None and entry.failed_at is not None and 0 <= now - entry.failed_at < RETRY_AFTER_S
    )  # fmt: skip
    if not may_probe or (backing_off and not force):
        if backing_off:
            ago, wait = _minutes(now - entry.failed_at), _minutes(RETRY_AFTER_S)
            how = f"conservative (the last probe failed {ago} ago: {entry.failure}; tried again {wait} after it)"
        else:
            how = "conservative (not calibrated yet)" if profile is None else "conservative (calibration expired)"
        return Outcome(CONSERVATIVE, None, fingerprint, "conservative", how)
    once = "" if force else " once"
    say(f"calibrating this machine{once} (decode and OCR speed on a short clip; see `flowocr calibrate --show`)…")
    try:
        measurement = probe()
        fresh = Profile(fingerprint, now, measurement)
        settings = fresh.settings()
    except Exception as exc:  # any failure of the probe falls back; it is recorded, never raised
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        notes = _try_save(lambda: store.save_failure(fingerprint, clock(), reason))
        if valid is not None:
            say(f"calibration failed ({reason}); keeping the stored profile")
            return Outcome(valid.settings(), valid, fingerprint, "cached", f"cached (the probe failed: {reason})",
                           notes, reason)  # fmt: skip
        say(f"calibration failed ({reason}); using conservative settings")
        return Outcome(CONSERVATIVE, None, fingerprint, "conservative", f"conservative (probe failed: {reason})",
                       notes, reason)  # fmt: skip
    notes = _try_save(lambda: store.save_profile(fresh))
    return Outcome(settings, fresh, fingerprint, "calibrated", "calibrated", notes)


def _try_save(save: Callable[[], None]) -> tuple[str, ...]:
    try:
        save()
    except OSError as exc:
        return (f"calibration not saved: {exc}",)
    return ()


def _minutes(seconds: float) -> str:
    return f"{max(0, round(seconds / 60))} min"
