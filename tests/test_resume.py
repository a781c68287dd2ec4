"""``flowocr run --resume`` (issue 7): checkpoints at quiet points, a killed run continued, outputs equal to an
uninterrupted run's; the pieces it rests on (the source from a frame on, the JSONL cut back, the checkpoint)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import FIXTURES, bench_script, marked_env, processes_marked, run_cli

from flowocr import resume as resuming
from flowocr.cues.model import Cue, FrameText
from flowocr.decode import AuxSpec
from flowocr.decode.sharded import LaneSpec, ShardedSource, ShardOptions
from flowocr.output.writers import JsonlWriter
from flowocr.pipeline import RunOptions
from flowocr.probe import probe

SW2 = [LaneSpec("sw0", "sw"), LaneSpec("sw1", "sw")]


def _frames(source: ShardedSource) -> dict[str, list[tuple[int, str]]]:
    """Each stream's frames in order (the two streams of one block interleave as their pipes are read)."""
    streams: dict[str, list[tuple[int, str]]] = {"main": [], "aux": []}
    for f in source:
        streams[f.stream].append((f.index, hashlib.md5(f.image.tobytes()).hexdigest()))
    return streams


@pytest.mark.parametrize("name", ["h264_bframes_2997.mp4", "hevc_opengop.mkv"])
def test_source_from_a_frame_on_is_the_tail_of_the_whole_stream(name):
    info = probe(str(FIXTURES / name))
    options = ShardOptions(block_sec=Fraction(2), first_block_sec=Fraction(1), aux=AuxSpec(scale=0.25))
    whole = _frames(ShardedSource(info, SW2, options))
    for start in (1, 37, 61):  # inside a block, and not on a keyframe
        tail = ShardedSource(info, SW2, replace(options, from_index=start))
        got = _frames(tail)
        assert got == {k: [f for f in v if f[0] >= start] for k, v in whole.items()}, (name, start)
        report = tail.report()
        assert any(b["skipped"] for b in report["blocks"]) == (report["blocks"][0]["hi"] <= start)


def test_checkpoint_round_trip_keeps_exact_times(tmp_path):
    cue = Cue(Fraction(1001, 30000), Fraction(7, 3), "一行\nline two", (1.5, 2.25, 300.125, 40.0), 0.9876543, 1, 1, 70)
    checkpoint = resuming.Checkpoint(
        video=resuming.video_identity(str(FIXTURES / "demo.mp4")), options={"fps": "2"}, frame=42, ref_index=40,
        jsonl_bytes=1234, cues=[cue], stats={"ocr_calls": 3},
    )  # fmt: skip
    path = tmp_path / "v.resume.json"
    resuming.save(path, checkpoint)
    again = resuming.Checkpoint.from_json(json.loads(path.read_text()))
    assert again == checkpoint and again.cues[0].start == Fraction(1001, 30000)


def test_a_checkpoint_of_another_video_or_other_options_is_not_resumed(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes((FIXTURES / "demo.mp4").read_bytes())
    options = RunOptions(out_dir=str(tmp_path))
    path = resuming.checkpoint_path(options.output(str(video), "json"))
    assert path.name == "v.resume.json"
    assert resuming.load(path, video=str(video), options=options)[0] is None  # none there
    state = resuming.Checkpoint(video=resuming.video_identity(str(video)),
                                options=resuming.result_options(options), frame=5, ref_index=None, jsonl_bytes=None,
                                cues=[])  # fmt: skip
    resuming.save(path, state)
    assert resuming.load(path, video=str(video), options=options)[0] == state
    got, why = resuming.load(path, video=str(video), options=replace(options, fps=Fraction(3)))
    assert got is None and "fps" in why
    got, why = resuming.load(path, video=str(video), options=replace(options, area="bottom"))
    assert got is None and "area" in why
    with open(video, "ab") as f:
        f.write(b"\0")
    got, why = resuming.load(path, video=str(video), options=options)
    assert got is None and "changed" in why


def test_jsonl_resumes_at_the_checkpoint_and_drops_what_came_after(tmp_path):
    path = tmp_path / "v.frames.jsonl"
    writer = JsonlWriter(path)
    writer.write(FrameText(0, 0, Fraction(0), ()))
    offset = writer.sync()
    writer.write(FrameText(5, 500, Fraction(1, 2), ()))  # after the checkpoint: written again by the resumed run
    writer.close(complete=False)
    with open(writer.part_path, "a") as f:
        f.write('{"index": 9, "pts"')  # a line cut short by a kill
    writer = JsonlWriter(path, resume_at=offset)
    writer.write(FrameText(5, 500, Fraction(1, 2), ()))
    writer.close(complete=True)
    assert [json.loads(line)["index"] for line in path.read_text().splitlines()] == [0, 5]


# --- killed runs, resumed ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minute_video(tmp_path_factory) -> Path:
    """40 s, 640x360, 13 cues: a run takes a few seconds, long enough to be killed at several moments."""
    return bench_script().generate_subtitled(tmp_path_factory.mktemp("resume") / "minute.mp4", seconds=40, cues=13,
                                       size="640x360", rate=25, font_size=20, preset="ultrafast",
                                       background_scale=2)  # fmt: skip


OUTPUTS = ("minute.srt", "minute.frames.jsonl")


def _checkpoint_frame(path: Path) -> int:
    try:
        return json.loads(path.read_text())["frame"]
    except (OSError, ValueError, KeyError):
        return -1


def _run_killed(video: Path, out: Path, *extra: str, past_frame: int) -> bool:
    """Start a run and SIGKILL it as soon as its checkpoint is past frame ``past_frame`` (nothing is cleaned up: as
    a power cut would). False when it finished first."""
    argv = [sys.executable, "-m", "flowocr", "run", str(video), "-o", str(out), "--quiet", *extra]
    env, _MARKS[video] = marked_env()
    env["FLOWOCR_CHECKPOINT_SECONDS"] = "0.05"  # a checkpoint at (almost) every quiet point
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    checkpoint = out / f"{video.stem}.resume.json"
    while proc.poll() is None and _checkpoint_frame(checkpoint) <= past_frame:
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


_MARKS: dict[Path, str] = {}  # the environment mark of the last killed run of each video


def _left_behind(video: Path) -> list[str]:
    """Processes the last killed run of ``video`` left (ffmpeg, ffprobe, its change detector), found by the
    environment mark they inherited (never another test's processes)."""
    return processes_marked(_MARKS[video])


def _wait_none_left(video: Path) -> None:
    for _ in range(50):
        left = _left_behind(video)
        if not left:
            return
        time.sleep(0.1)
    raise AssertionError(f"processes left behind by a killed run: {left}")


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "shares"), [((), (0.3, 0.5, 0.7)), (("--no-aux",), (0.5,))], ids=["aux", "no-aux"])
def test_a_run_killed_at_any_moment_resumes_to_the_same_outputs(minute_video, tmp_path, mode, shares):
    reference = tmp_path / "reference"
    done = run_cli("run", str(minute_video), "-o", str(reference), "--quiet", *mode)
    assert done.returncode == 0, done.stderr
    expected = {name: (reference / name).read_bytes() for name in OUTPUTS}
    frames = json.loads((reference / "minute.report.json").read_text())["facts"]["frames_from_header"] or 1000
    rng = random.Random(7)
    resumed_from = []
    for k, share in enumerate(shares):
        out = tmp_path / f"killed{k}"
        if not _run_killed(minute_video, out, *mode, past_frame=int((share + rng.uniform(-0.1, 0.1)) * frames)):
            continue  # it finished first: no kill to resume from
        _wait_none_left(minute_video)
        assert not (out / "minute.srt").exists(), "a killed run wrote final subtitles"
        done = run_cli("run", str(minute_video), "-o", str(out), "--resume", "--quiet", *mode)
        assert done.returncode == 0, done.stderr
        for name in OUTPUTS:
            assert (out / name).read_bytes() == expected[name], (k, name)
        report = json.loads((out / "minute.report.json").read_text())
        assert report["complete"] is True and report["cues"] == 13
        assert not (out / "minute.resume.json").exists()  # gone once complete
        resumed_from.append(report["resumed_from"])
    assert resumed_from and all(f is not None and f > 0 for f in resumed_from), resumed_from
    assert resumed_from == sorted(resumed_from)  # later kills resume later


@pytest.mark.slow
def test_a_batch_resumes_at_its_first_unfinished_video(minute_video, tmp_path):
    folder = tmp_path / "videos"
    folder.mkdir()
    (folder / "a.mp4").write_bytes((FIXTURES / "demo.mp4").read_bytes())
    (folder / "b.mp4").write_bytes(minute_video.read_bytes())
    out = tmp_path / "out"
    assert run_cli("run", str(folder / "a.mp4"), "-o", str(out), "--quiet").returncode == 0
    a_report = (out / "a.report.json").read_bytes()
    assert _run_killed(folder / "b.mp4", out, past_frame=200), "the run ended before the kill"
    assert not (out / "b.srt").exists()
    done = run_cli("run", str(folder), "-o", str(out), "--resume", "--progress", "plain")
    assert done.returncode == 0, done.stderr
    assert "a.mp4: skipped (its report says complete)" in done.stderr
    assert (out / "a.report.json").read_bytes() == a_report  # not run again
    report = json.loads((out / "b.report.json").read_text())
    assert report["complete"] is True and report["cues"] == 13 and report["resumed_from"] > 0


def test_resume_with_other_options_starts_afresh_and_says_why(tmp_path):
    out = tmp_path / "out"
    video = FIXTURES / "demo.mp4"
    options = RunOptions(out_dir=str(out))
    path = resuming.checkpoint_path(options.output(str(video), "json"))
    out.mkdir()
    resuming.save(path, resuming.Checkpoint(
        video=resuming.video_identity(str(video)), options=resuming.result_options(replace(options, lang="en")),
        frame=100, ref_index=None, jsonl_bytes=0, cues=[],
    ))  # fmt: skip
    done = run_cli("run", str(video), "-o", str(out), "--resume", "--progress", "plain")
    assert done.returncode == 0, done.stderr
    assert "options differ from the stopped run's (lang): starting from the beginning" in done.stderr
    report = json.loads((out / "demo.report.json").read_text())
    assert report["complete"] is True and report["resumed_from"] is None and report["cues"] == 6


@pytest.mark.parametrize("name", ["h264_bframes_2997.mp4", "vp9_60.webm"])
def test_source_over_a_range_is_that_slice_of_the_whole_stream(name):
    info = probe(str(FIXTURES / name))
    options = ShardOptions(block_sec=Fraction(2), first_block_sec=Fraction(1), aux=AuxSpec(scale=0.25))
    whole = _frames(ShardedSource(info, SW2, options))
    n = max(i for i, _ in whole["aux"]) + 1
    for start, until in ((0, 45), (37, 100), (61, n - 3)):
        got = _frames(ShardedSource(info, SW2, replace(options, from_index=start, until_index=until)))
        assert got == {k: [f for f in v if start <= f[0] < until] for k, v in whole.items()}, (name, start, until)
