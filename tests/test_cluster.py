"""Beyond one machine (issue 8): batches on Ray, split videos stitched into the single-machine result, a worker
killed mid-task. Ray tests skip where Ray is not installed (``pip install 'flowocr[ray]'``; ``make test`` has it)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import FIXTURES, fixture_batch, page_data, run_cli

from flowocr import cluster
from flowocr.cues.model import Cue, FrameText
from flowocr.pipeline import RunOptions, SegmentTrace

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed")
BATCH = ("demo.mp4", "vp9_60.webm", "av1.mkv", "vfr.mkv")


# --- pure parts ----------------------------------------------------------------------------------------------


def test_segments_cover_their_ranges_with_context_and_watch_the_splits():
    times = [Fraction(i, 10) for i in range(600)]  # 60 s at 10 fps
    ranges = [(0, 200), (200, 400), (400, 600)]
    segments = cluster.plan_segments(times, ranges, Fraction(5))
    assert [(s.start, s.stop) for s in segments] == [(0, 251), (150, 451), (350, 600)]
    assert [s.watch for s in segments] == [((200, 251),), ((200, 251), (400, 451)), ((400, 451),)]
    # A range shorter than the context reaches at most its own length into its neighbour.
    short = cluster.plan_segments(times, [(0, 20), (20, 600)], Fraction(5))
    assert short[0].stop == 40 and short[1].start == 0


def _trace(frames: range, states: dict[int, str], cues: list[tuple[int, str]]) -> SegmentTrace:
    trace = SegmentTrace()
    trace.frames = [FrameText(i, i, Fraction(i), ()) for i in frames]
    trace.states = dict(states)
    trace.cues = [(at, Cue(Fraction(at), Fraction(at + 1), text, (0, 0, 1, 1), 1.0)) for at, text in cues]
    return trace


def test_stitch_takes_each_frame_and_cue_once_from_the_range_in_charge():
    left = _trace(range(0, 14), {10: "a", 12: "b", 13: "c"}, [(4, "L4"), (11, "L11"), (13, "L13"), (14, "end")])
    right = _trace(range(6, 20), {10: "x", 12: "b", 13: "c"}, [(8, "R8"), (12, "R12"), (15, "R15"), (20, "fin")])
    got = cluster.stitch([left, right], [10])
    assert got.points == [12]  # the first frame >= the split where both states are equal
    assert [f.index for f in got.frames] == list(range(20))
    assert [c.text for c in got.cues] == ["L4", "L11", "R15", "fin"]
    with pytest.raises(cluster.StitchError):
        cluster.stitch([left, _trace(range(6, 20), {12: "z"}, [])], [10])


# --- split runs (local executor: the tasks run here) -----------------------------------------------------------


def _srt_cues(path: Path) -> list[tuple[float, float]]:
    def seconds(t: str) -> float:
        h, m, s = t.replace(",", ".").split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    return [(seconds(a), seconds(b)) for a, b in re.findall(r"(\S+) --> (\S+)", path.read_text())]


def test_a_split_video_gives_the_single_run_outputs_and_crops_with_cues_across_each_split(tmp_path, tmp_path_factory):
    split = tmp_path / "split"
    done = run_cli("run", str(FIXTURES / "demo.mp4"), "-o", str(split), "--quiet", "--split-minutes", "1/15")
    assert done.returncode == 0, done.stderr
    single = fixture_batch(tmp_path_factory)  # the fixtures read locally with the default options, demo.mp4 among them
    for name in ("demo.srt", "demo.frames.jsonl", "demo.vtt", "demo.ass", "demo.txt"):
        assert (split / name).read_bytes() == (single / name).read_bytes(), name
    # the review page shows each cue's crop, as the single run's does (the tasks keep them)
    pages = [page_data((d / "demo.review.html").read_text())["cues"] for d in (split, single)]
    assert all(c["img"] for c in pages[0]) and [c["img"] for c in pages[0]] == [c["img"] for c in pages[1]]
    report = json.loads((split / "demo.report.json").read_text())["split"]
    assert len(report["ranges"]) == 3 and report["note"] is None
    cues = _srt_cues(single / "demo.srt")
    for lo, _ in report["ranges"][1:]:
        t = lo / 25  # demo.mp4: 25 fps from 0
        assert any(a < t < b for a, b in cues), f"no cue crosses the split at {t} s"


# --- Ray -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    """A folder of fixtures (their local outputs, the reference, are those of ``conftest.fixture_batch``)."""
    folder = tmp_path_factory.mktemp("batch") / "videos"
    folder.mkdir()
    for name in BATCH:
        shutil.copy(FIXTURES / name, folder / name)
    return folder


@pytest.fixture(autouse=True)
def ray_workers_at_the_tests_priority(monkeypatch):
    """Ray starts its worker processes at nice 15 (``RAY_worker_niceness``). In make test the other test workers
    keep both CPUs busy, and Ray's tasks got a few percent of one: these tests took 12 min instead of 3. The
    environment reaches the Ray instances started in this process and those of the CLI runs it starts."""
    monkeypatch.setenv("RAY_worker_niceness", "0")


def _assert_same_outputs(got: Path, expected: Path) -> None:
    """Every output of the videos of ``BATCH`` in ``got`` equals the local one in ``expected`` byte for byte, but
    the reports (times, paths), which must say complete, and the review pages (they name the video's path), which
    must be there; ``got`` holds no other file but the batch's review index."""
    stems = tuple(f"{Path(name).stem}." for name in BATCH)
    ours = [p for p in expected.iterdir() if p.name.startswith(stems)]
    names = sorted(p.name for p in ours if not p.name.endswith((".report.json", ".review.html")))
    pages = sorted(p.name for p in ours if p.name.endswith(".review.html"))
    assert pages and sorted(p.name for p in got.glob("*.review.html")) == pages
    assert names and sorted(p.name for p in got.iterdir()
                            if not p.name.endswith((".report.json", ".review.html", "index.html"))) == names
    for name in names:
        assert (got / name).read_bytes() == (expected / name).read_bytes(), name
    for report in (p for p in ours if p.name.endswith(".report.json")):
        assert json.loads((got / report.name).read_text())["complete"] is True


@needs_ray
@pytest.mark.slow
def test_models_load_once_per_worker_and_a_split_run_spreads_over_workers(batch, tmp_path, tmp_path_factory):
    folder = batch
    executor = cluster.RayExecutor(address=None, workers=2)
    try:
        options = RunOptions(out_dir=str(tmp_path / "api"), block_sec=Fraction(20), budget_mb=256.0)
        videos = [str(folder / name) for name in BATCH]  # more tasks than workers
        results = executor.gather([executor.submit(cluster.video_task, v, options) for v in videos])
        assert all("report" in r for r in results)
        workers = {r["pid"] for r in results}
        assert sum(not r["engine_was_loaded"] for r in results) == len(workers)  # one load per worker process
        report = cluster.run_split(str(FIXTURES / "demo.mp4"), replace(options, out_dir=str(tmp_path / "split")),
                                   Fraction(1, 15), executor.submit, executor.gather)  # fmt: skip
        assert len(report["split"]["ranges"]) == 3 and len(report["split"]["workers"]) == 2
    finally:
        executor.close()
    single = fixture_batch(tmp_path_factory)  # demo.mp4 read locally, in the batch of every fixture
    for name in ("demo.srt", "demo.frames.jsonl"):
        assert (tmp_path / "split" / name).read_bytes() == (single / name).read_bytes()


def _kill_first_task(pattern: str, killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first process running a Ray task named ``pattern`` (Ray names a busy worker ``ray::<task>``),
    once it has been at work for a moment."""
    while not stop.is_set():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if cmdline.startswith(f"ray::{pattern}"):
                time.sleep(1.0)
                try:
                    os.kill(int(pid), signal.SIGKILL)
                    killed.append(int(pid))
                except ProcessLookupError:
                    continue
                return
        time.sleep(0.05)


@needs_ray
@pytest.mark.slow
def test_a_worker_killed_mid_task_is_retried_and_the_batch_still_equals_the_local_one(batch, tmp_path,
                                                                                      tmp_path_factory):
    """A batch on local Ray with two workers, one of them killed during its first task, gives byte for byte the
    outputs of the local batch. (It stands for the same batch without a kill too: one Ray start less in make test.)"""
    folder = batch
    out = tmp_path / "ray"
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_first_task, args=("video_task", killed, stop), daemon=True)
    killer.start()
    argv = [sys.executable, "-m", "flowocr", "run", str(folder), "-o", str(out), "--quiet", "--executor", "ray",
            "--ray-workers", "2"]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    finally:
        stop.set()
        killer.join()
    assert killed, "no Ray task process was found to kill"
    assert done.returncode == 0, done.stderr
    _assert_same_outputs(out, fixture_batch(tmp_path_factory))
    assert not list(out.glob("*.resume.json")) and not list(out.glob("*.part"))
