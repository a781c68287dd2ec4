"""Calibration: reuse, expiry, fingerprints, failures and the tier table with an injected clock, fingerprint and
probe; then the real probe once, through `flowocr calibrate` and a first `flowocr run`."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

from flowocr.calibrate import (
    CONSERVATIVE,
    MAX_AGE_S,
    RETRY_AFTER_S,
    Fingerprint,
    Measurement,
    Profile,
    Store,
    auto_decode_settings,
    choose_settings,
    fill_decode_options,
    load_or_calibrate,
    needs_calibration,
)
from flowocr.calibrate.tiers import sw_lane_cap
from flowocr.errors import CalibrationFailed, UsageError

DAY = 86400.0
T0 = 1_700_000_000.0

FP = Fingerprint(
    ffmpeg="ffmpeg version 6.1", hwaccels=("cuda", "vaapi"), gpu="NVIDIA GeForce RTX 3060", cpu_model="Test CPU",
    cpu_count=8, engine="rapidocr 3.10.0, onnxruntime 1.22.0", models=(("det.onnx", "0123456789abcdef"),),
)  # fmt: skip
MEASURED = Measurement(sw_ratio=0.05, ocr_ratio=1.0, clip_pixels=640 * 360, clip_seconds=12.0)


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Probe:
    """A probe that counts its calls and returns ``result`` (or raises it when it is an exception)."""

    def __init__(self, result: Measurement | Exception = MEASURED) -> None:
        self.result = result
        self.calls = 0

    def __call__(self) -> Measurement:
        self.calls += 1
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "flowocr" / "calibration.json")


def calibrate(store, clock, probe, fingerprint=FP, **kw):
    return load_or_calibrate(fingerprint=fingerprint, probe=probe, clock=clock, store=store, **kw)


# --- reuse, expiry, fingerprints ------------------------------------------------------------------------------


def test_a_profile_is_reused_at_six_point_nine_days_and_measured_again_at_seven_point_one(store):
    clock, probe = Clock(), Probe()
    first = calibrate(store, clock, probe)
    assert (first.source, probe.calls) == ("calibrated", 1)
    clock.now = T0 + 6.9 * DAY
    again = calibrate(store, clock, probe)
    assert (again.source, probe.calls) == ("cached", 1)
    assert again.profile.measured_at == T0 and again.settings == first.settings
    clock.now = T0 + 7.1 * DAY
    later = calibrate(store, clock, probe)
    assert (later.source, probe.calls) == ("calibrated", 2)
    assert store.entry(FP).profile.measured_at == T0 + 7.1 * DAY


def test_validity_ends_exactly_seven_days_after_the_measurement():
    profile = Profile(FP, T0, MEASURED)
    assert profile.valid(T0) and profile.valid(T0 + MAX_AGE_S - 1)
    assert not profile.valid(T0 + MAX_AGE_S)
    assert not profile.valid(T0 - 60)  # measured "in the future": the clock was set back


def test_another_gpu_is_another_fingerprint_measured_afresh_and_both_are_kept(store):
    clock, probe = Clock(), Probe()
    calibrate(store, clock, probe)
    other = replace(FP, gpu="NVIDIA H100")
    assert other.key != FP.key
    assert calibrate(store, clock, probe, fingerprint=other).source == "calibrated"
    assert probe.calls == 2
    assert calibrate(store, clock, probe).source == "cached"  # the first machine's entry is still there
    assert probe.calls == 2 and set(store.entries()) == {FP.key, other.key}


@pytest.mark.parametrize(
    "change",
    [{"ffmpeg": "ffmpeg version 7.0"}, {"hwaccels": ("vaapi",)}, {"gpu": ""}, {"cpu_model": "Other CPU"},
     {"cpu_count": 4}, {"engine": "rapidocr 3.11.0, onnxruntime 1.22.0"}, {"models": (("det.onnx", "f" * 16),)},
     {"device": "cuda"}],
    ids=lambda c: next(iter(c)),
)  # fmt: skip
def test_every_fingerprint_field_changes_the_key(change):
    assert replace(FP, **change).key != FP.key


def test_the_fingerprint_key_is_stable_across_a_json_round_trip():
    assert Fingerprint.from_json(json.loads(json.dumps(FP.to_json()))).key == FP.key == replace(FP).key
    assert len(FP.key) == 16


# --- failures -------------------------------------------------------------------------------------------------


def test_a_failed_probe_keeps_the_valid_profile_and_records_the_failure(store):
    clock = Clock()
    calibrate(store, clock, Probe())
    clock.now = T0 + DAY
    failed = calibrate(store, clock, Probe(RuntimeError("decoder exploded")), force=True)
    assert failed.source == "cached" and failed.profile.measured_at == T0
    assert failed.failure == "RuntimeError: decoder exploded"
    assert failed.settings == Profile(FP, T0, MEASURED).settings()
    entry = store.entry(FP)
    assert entry.profile.measured_at == T0 and entry.profile.measurement == MEASURED
    assert entry.failed_at == T0 + DAY and "decoder exploded" in entry.failure
    assert calibrate(store, clock, Probe()).source == "cached"  # and it is still used afterwards


def test_after_a_failure_nothing_is_tried_again_for_ten_minutes_then_the_probe_runs_again(store):
    clock, broken = Clock(), Probe(OSError("no clip"))
    first = calibrate(store, clock, broken)
    assert first.settings == CONSERVATIVE and first.source == "conservative" and broken.calls == 1
    assert "probe failed" in first.how and "no clip" in first.how
    clock.now = T0 + RETRY_AFTER_S - 1
    waiting = calibrate(store, clock, broken)
    assert waiting.settings == CONSERVATIVE and broken.calls == 1 and "last probe failed" in waiting.how
    working = Probe()
    clock.now = T0 + RETRY_AFTER_S
    assert calibrate(store, clock, working).source == "calibrated" and working.calls == 1
    assert store.entry(FP).failed_at is None  # a good profile clears the failure


def test_force_probes_even_during_the_back_off(store):
    clock = Clock()
    calibrate(store, clock, Probe(OSError("no clip")))
    probe = Probe()
    assert calibrate(store, clock, probe, force=True).source == "calibrated" and probe.calls == 1


def test_an_expired_profile_whose_probe_fails_gives_the_conservative_tier_and_stays_stored(store):
    clock = Clock()
    calibrate(store, clock, Probe())
    clock.now = T0 + 8 * DAY
    outcome = calibrate(store, clock, Probe(ValueError("ocr ratio is zero")))
    assert outcome.settings == CONSERVATIVE and outcome.profile is None
    assert store.entry(FP).profile.measured_at == T0


def test_nothing_valid_and_no_probe_allowed_gives_the_conservative_tier(store):
    probe = Probe()
    outcome = calibrate(store, Clock(), probe, may_probe=False)
    assert outcome.settings == CONSERVATIVE and outcome.source == "conservative" and probe.calls == 0
    assert not store.path.exists()


def test_an_unreadable_store_counts_as_empty_and_is_replaced(store):
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{ not json")
    assert calibrate(store, Clock(), Probe()).source == "calibrated"
    assert json.loads(store.path.read_text())["entries"][FP.key]["profile"]["sw_ratio"] == MEASURED.sw_ratio


def test_a_store_that_cannot_be_written_leaves_the_settings_and_says_why(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    outcome = calibrate(Store(blocker / "calibration.json"), Clock(), Probe())
    assert outcome.source == "calibrated" and outcome.notes and "not saved" in outcome.notes[0]


def test_the_probe_is_announced_in_one_line_before_it_runs(store):
    heard: list[str] = []
    calibrate(store, Clock(), Probe(), say=heard.append)
    assert len(heard) == 1 and heard[0].startswith("calibrating this machine once")
    calibrate(store, Clock(), Probe(), say=heard.append)
    assert len(heard) == 1  # cached: silent


def test_a_missing_probe_clip_fails_the_probe_cleanly(tmp_path):
    from flowocr.calibrate.machine import measure

    with pytest.raises(CalibrationFailed, match="missing"):
        measure(clip=tmp_path / "gone.mp4")


# --- the tier table -------------------------------------------------------------------------------------------


def tier(balance: float, *, cpus: int = 16, hw: float | None = None):
    return choose_settings(sw_ratio=balance, hw_ratio=hw, ocr_ratio=1.0, cpu_count=cpus)


@pytest.mark.parametrize(
    ("balance", "name"),
    [(0.2499, "ocr-bound"), (0.25, "balanced"), (0.9999, "balanced"), (1.0, "decode-bound")],
)
def test_tier_boundaries_on_both_sides(balance, name):
    assert tier(balance).tier == name


def test_each_tier_row_has_its_documented_values():
    ocr, bal, dec = tier(0.1), tier(0.6), tier(1.5)
    assert (ocr.lanes, ocr.block_sec, ocr.first_block_sec, ocr.ahead, ocr.budget_mb) == (
        ("sw", "sw"), Fraction(30), Fraction(2), 2, 256.0)  # fmt: skip
    assert (bal.lanes, bal.block_sec, bal.first_block_sec, bal.ahead, bal.budget_mb) == (
        ("sw",) * 3, Fraction(20), Fraction(2), 4, 512.0)  # fmt: skip
    assert (dec.lanes, dec.block_sec, dec.first_block_sec, dec.ahead, dec.budget_mb) == (
        ("sw",) * 6, Fraction(10), Fraction(1), 12, 1024.0)  # fmt: skip


@pytest.mark.parametrize(
    ("balance", "lanes"),
    [(0.01, 2), (0.5, 2), (0.5001, 3), (0.75, 3), (0.7501, 4), (1.75, 7), (1.7501, 8), (50.0, 8)],
)
def test_lanes_are_enough_to_feed_ocr_reading_one_frame_in_four_capped_at_eight(balance, lanes):
    assert len(tier(balance, cpus=64).lanes) == lanes


@pytest.mark.parametrize(("cpus", "cap"), [(1, 1), (2, 2), (3, 2), (5, 2), (6, 3), (16, 8), (17, 8), (64, 8)])
def test_software_lanes_are_capped_at_half_the_cpus(cpus, cap):
    assert sw_lane_cap(cpus) == cap
    assert len(tier(100.0, cpus=cpus).lanes) == cap


def test_a_hw_lane_as_fast_as_sw_gives_two_hw_lanes_a_slower_one_gives_one():
    assert tier(0.1, hw=0.1).lanes == ("hw", "hw")
    assert tier(0.1, hw=0.1001).lanes == ("hw", "sw")
    assert tier(3.0, cpus=2, hw=2.0).lanes == ("hw", "hw", "sw", "sw")  # hw lanes are not counted against CPUs


def test_the_balance_uses_the_faster_lane_kind():
    assert tier(1.5, hw=0.2).tier == "ocr-bound"
    assert tier(0.2, hw=1.5).tier == "ocr-bound"


def test_the_conservative_tier_is_two_sw_lanes_twenty_second_blocks_and_a_modest_budget():
    assert CONSERVATIVE.lanes == ("sw", "sw") and CONSERVATIVE.block_sec == 20 and CONSERVATIVE.first_block_sec == 2
    assert CONSERVATIVE.ahead == 2 and CONSERVATIVE.budget_mb == 256 and CONSERVATIVE.balance is None


def test_decode_ratios_are_scaled_from_the_probe_clip_to_1080p():
    profile = Profile(FP, T0, Measurement(sw_ratio=0.05, ocr_ratio=1.0, clip_pixels=640 * 360))
    assert profile.settings().balance == pytest.approx(0.05 * 9)


def test_a_ratio_that_is_not_positive_is_refused():
    with pytest.raises(ValueError):
        Measurement(sw_ratio=0.0, ocr_ratio=1.0)
    with pytest.raises(ValueError):
        choose_settings(sw_ratio=1.0, hw_ratio=None, ocr_ratio=float("nan"), cpu_count=2)


# --- --lanes auto ---------------------------------------------------------------------------------------------

NOT_GIVEN = {"decode_shards": None, "lanes": "auto", "hwaccel": "auto", "block_sec": None, "first_block_sec": None,
             "budget_mb": None, "ahead": None}  # fmt: skip
CALIBRATED = tier(0.6)


def test_options_not_given_come_from_calibration():
    filled = fill_decode_options(NOT_GIVEN, CALIBRATED)
    assert filled["lanes"] == "sw,sw,sw" and filled["decode_shards"] is None and filled["ahead"] == 4
    assert (filled["block_sec"], filled["first_block_sec"], filled["budget_mb"]) == (20, 2, 512.0)


def test_options_the_user_gives_win_over_calibration():
    given = {**NOT_GIVEN, "lanes": "hw,sw", "block_sec": Fraction(5), "budget_mb": 0.0}
    filled = fill_decode_options(given, CALIBRATED)
    assert filled["lanes"] == "hw,sw" and filled["block_sec"] == 5 and filled["budget_mb"] == 0.0
    assert filled["ahead"] is None  # one block per lane of the user's, not the ahead fitted to calibrated lanes
    assert filled["first_block_sec"] == 2
    shards = fill_decode_options({**NOT_GIVEN, "decode_shards": 3, "ahead": 7}, CALIBRATED)
    assert shards["lanes"] is None and shards["decode_shards"] == 3 and shards["ahead"] == 7


def test_a_hwaccel_the_user_names_gets_the_calibrated_number_of_lanes_of_the_best_kind():
    filled = fill_decode_options({**NOT_GIVEN, "hwaccel": "cuda"}, CALIBRATED)
    assert filled["lanes"] is None and filled["decode_shards"] == 3 and filled["ahead"] == 4


def test_calibration_is_needed_only_when_something_is_left_to_it():
    assert needs_calibration(NOT_GIVEN)
    everything = {**NOT_GIVEN, "decode_shards": 2, "block_sec": Fraction(20), "first_block_sec": Fraction(2),
                  "budget_mb": 64.0}  # fmt: skip
    assert not needs_calibration(everything)
    assert needs_calibration({**everything, "budget_mb": None})
    assert needs_calibration({**everything, "decode_shards": None})


def test_the_conservative_mode_neither_reads_nor_probes(monkeypatch):
    import flowocr.calibrate.machine as machine

    monkeypatch.setenv("FLOWOCR_CALIBRATION", "conservative")
    monkeypatch.setattr(machine, "machine_fingerprint", lambda *a, **k: pytest.fail("fingerprint computed"))
    assert auto_decode_settings(say=lambda line: pytest.fail(line)) == CONSERVATIVE


def test_an_unknown_calibration_mode_names_the_supported_values(monkeypatch):
    monkeypatch.setenv("FLOWOCR_CALIBRATION", "fast")
    with pytest.raises(UsageError, match="auto, conservative"):
        auto_decode_settings()


# --- the real probe, end to end -------------------------------------------------------------------------------


def real_env(cache: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("FLOWOCR_CALIBRATION", None)
    return env


def test_show_without_a_stored_calibration_says_so_and_names_the_conservative_settings(tmp_path):
    result = run_cli("calibrate", "--show", env=real_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "never" in result.stdout and "conservative" in result.stdout
    assert "lanes sw,sw  block 20 s  first block 2 s  ahead 2  budget 256 MB" in result.stdout
    assert not (tmp_path / "flowocr" / "calibration.json").exists()


def test_calibrate_force_measures_and_show_prints_fingerprint_age_and_settings(tmp_path):
    from flowocr.calibrate.machine import machine_fingerprint

    env = real_env(tmp_path)
    measured = run_cli("calibrate", "--force", env=env)
    assert measured.returncode == 0, measured.stderr
    assert "calibrated" in measured.stdout
    shown = run_cli("calibrate", "--show", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line for line in shown.stdout.splitlines() if line.strip()}
    assert machine_fingerprint().key in lines["fingerprint"]
    assert "age" in lines["measured"] and "valid for another" in lines["measured"]
    assert "sw " in lines["ratios"] and "ocr " in lines["ratios"]
    assert lines["settings"].startswith("settings     lanes ") and "budget" in lines["settings"]
    stored = json.loads((tmp_path / "flowocr" / "calibration.json").read_text())
    profile = stored["entries"][machine_fingerprint().key]["profile"]
    assert profile["sw_ratio"] > 0 and profile["ocr_ratio"] > 0 and profile["probe_s"] < 30
    assert run_cli("calibrate", "--show", "--force", env=env).returncode == 2


def test_a_probe_that_fails_exits_10_and_show_names_the_failure(tmp_path):
    env = {**real_env(tmp_path / "cache"), "PATH": str(tmp_path)}  # no ffmpeg: the probe cannot decode
    failed = run_cli("calibrate", env=env)
    assert failed.returncode == 10, failed.stderr
    assert "calibration failed" in failed.stderr and "conservative tier" in failed.stderr
    shown = run_cli("calibrate", "--show", env=env)
    assert shown.returncode == 0 and "last failure" in shown.stdout and "not found on PATH" in shown.stdout


def test_the_first_run_on_a_machine_calibrates_and_says_so_in_one_line(tmp_path):
    env = real_env(tmp_path / "cache")
    run = run_cli("run", str(FIXTURES / "demo.mp4"), "-o", str(tmp_path / "out"), "--formats", "srt", env=env)
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "calibrat" in line]
    assert len(said) == 1 and said[0].startswith("flowocr: calibrating this machine once"), run.stderr
    assert (tmp_path / "out" / "demo.srt").read_text().strip()
    # The next command finds the stored calibration and says nothing about it.
    again = run_cli("frames", str(FIXTURES / "demo.mp4"), "--fps", "1", env=env)
    assert again.returncode == 0 and "calibrat" not in again.stderr, again.stderr
