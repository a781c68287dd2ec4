"""Progress and time to first text (issue 6): the live status, ``--progress json`` for scripts, and the first cue
written while most of a long video is still undecoded."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import ROOT, bench_script, cuda_usable, run_cli

from flowocr.cli.progress import Status, eta

FIXTURES = ROOT / "fixtures"


def test_eta_from_the_position_in_the_video():
    assert eta(30.0, 120.0, 10.0) == pytest.approx(30.0)  # a quarter in 10 s: three quarters in 30 s
    assert eta(120.0, 120.0, 50.0) == 0.0
    assert eta(0.0, 120.0, 5.0) is None  # nothing done yet: unknown
    assert eta(10.0, None, 5.0) is None  # no duration: unknown


def test_status_line_names_every_field():
    status = Status("v.mp4", 1, 3)
    status.update({"time": 60.0, "duration": 300.0, "block": 2, "blocks": 9, "planned_all": False,
                   "ocr_calls": 7, "ocr_reused": 40, "cues": 5, "buffered_mb": 12.4, "elapsed_s": 4.0,
                   "first_cue_s": 1.5})  # fmt: skip
    line = status.line()
    for part in ("1:00/5:00", "block 2/9+", "OCR 7", "reused 40", "cues 5", "buffered 12 MB", "first cue 2s",
                 "ETA 16s"):  # fmt: skip
        assert part in line, (part, line)


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]  # every line must be JSON


def test_progress_json_is_one_object_per_line(tmp_path):
    out = tmp_path / "out"
    done = run_cli("run", str(FIXTURES / "demo.mp4"), "-o", str(out), "--progress", "json")
    assert done.returncode == 0, done.stderr
    events = _events(done.stdout)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done", kinds
    assert "progress" in kinds[: kinds.index("cue")], kinds  # progress is shown before the first text
    report = json.loads((out / "demo.report.json").read_text())
    assert kinds.count("cue") == report["cues"] > 0
    progress = [e for e in events if e["event"] == "progress"]
    assert progress, kinds
    for key in ("time", "duration", "block", "blocks", "frames_per_s", "ocr_calls", "ocr_reused", "buffered_mb",
                "first_cue_s", "eta_s"):  # fmt: skip
        assert key in progress[0], key
    times = [e["time"] for e in progress]
    assert times == sorted(times)
    assert events[-1]["complete"] is True and events[-1]["cues"] == report["cues"]
    # where the models ran, and where the time to the first cue went (README, "Run report keys")
    assert report["device"] == ("cuda" if cuda_usable() else "cpu")
    timing = report["timing"]
    assert events[-1]["timing"] == timing
    for key in ("startup_s", "model_load_s", "first_block_s", "first_ocr_s", "first_cue_s", "total_s"):
        assert isinstance(timing[key], float) and timing[key] >= 0, (key, timing)
    assert timing["first_block_s"] <= timing["first_ocr_s"] <= timing["first_cue_s"] <= timing["total_s"], timing
    # where the CPU went: every stage of this run did some work, and the models ran in this process
    cpu = report["cpu"]
    for key in ("process_s", "ocr_det_s", "ocr_rec_s", "lanes_s", "scan_s", "detector_s"):
        assert isinstance(cpu[key], float) and cpu[key] >= 0, (key, cpu)
    for key in ("ocr_det_s", "ocr_rec_s", "lanes_s", "detector_s"):
        assert cpu[key] > 0, (key, cpu)
    assert cpu["ocr_det_s"] + cpu["ocr_rec_s"] <= cpu["process_s"], cpu
    assert report["decode"]["lanes_cpu_s"] == cpu["lanes_s"] == pytest.approx(
        sum(block["cpu_s"] for block in report["decode"]["blocks"]), abs=0.01)


@pytest.mark.slow
def test_first_cue_long_before_the_end_of_a_long_video(tmp_path):
    """A 5-minute subtitle video made here (720p, a cue every 2 s): the first cue is out within 10 % of the run,
    while the decoder is still near the start of the video."""
    # 20 s with 10 cues, made once and joined 15 times without re-encoding (encoding 5 minutes of HD took longer
    # than reading them): 150 cues, each segment starting on a keyframe. 720p, not 1080p: what is measured is when
    # the first cue comes in a long run, and 1080p cost make test half a minute more of decoding.
    part = bench_script().generate_subtitled(tmp_path / "part.mp4", seconds=20, cues=10, size="1280x720", rate=25,
                                       font_size=20, preset="ultrafast", background_scale=4)  # fmt: skip
    listing = tmp_path / "parts.txt"
    listing.write_text(f"file '{part}'\n" * 15)
    video = tmp_path / "long.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "concat", "-safe", "0", "-i", str(listing), "-c", "copy",
                    str(video)], check=True)  # fmt: skip
    # Not the very first run after an install: that one also compiles every imported module (a second or more
    # here), which is no part of reading a video.
    assert run_cli("run", str(FIXTURES / "demo.mp4"), "-o", str(tmp_path / "warm"), "--quiet").returncode == 0
    out = tmp_path / "out"
    done = run_cli("run", str(video), "-o", str(out), "--progress", "json", "--formats", "srt,jsonl,json")
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "long.report.json").read_text())
    timing = report["timing"]
    assert report["cues"] >= 145
    assert timing["first_cue_s"] <= 0.10 * timing["total_s"], timing
    events = _events(done.stdout)
    first_cue = next(k for k, e in enumerate(events) if e["event"] == "cue")
    seen = [e["time"] for e in events[:first_cue] if e["event"] == "progress"]
    assert seen and seen[-1] < 30, seen  # progress came before it, and the run had read at most a tenth of the video
