"""The sharded decoder (DESIGN §3–5, §12): exact equality with one lane and with ffmpeg, faults, memory."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import (
    CONCEALED,
    FAILS_CLEANLY,
    FIXTURES,
    child_processes,
    digest,
    encode_testsrc,
    ffmpeg_framemd5,
    fixture_videos,
    lanes,
    needs_shared,
    reference_grid,
    run_cli,
    shared_videos,
)

from flowocr import ffmpeg
from flowocr.decode import AuxSpec
from flowocr.decode.lane import decode_all
from flowocr.decode.sharded import Faults, ShardedSource, ShardOptions
from flowocr.errors import DecodeError, ProcessFailed
from flowocr.probe import probe, sample_grid, scan_index


def single_lane(video: Path, aux: AuxSpec | None = None):
    info = probe(str(video))
    index = scan_index(info)
    return info, index, digest(decode_all(info, index, sample_grid(index, Fraction(2)), aux=aux))


def block_sec_for(index, blocks: int = 6) -> Fraction:
    return max(Fraction(1, 100), index.duration / blocks)


# --- the central equality -------------------------------------------------------------------------------------


@pytest.mark.parametrize("video", fixture_videos(), ids=lambda p: p.name)
def test_sharded_frames_equal_single_lane_and_ffmpeg_for_every_fixture(video):
    ref = ffmpeg_framemd5(video)
    want = [(i, ref[i].md5) for i in reference_grid(ref, Fraction(2))]
    info = probe(str(video))
    index = scan_index(info)
    block = block_sec_for(index)
    single = run_cli("frames", str(video), "--decode-shards", "1", "--block-sec", "10000").json_lines()
    assert [(line["index"], line["md5"]) for line in single] == want
    configs = [
        ("2", block, Fraction(0), "0"),  # budget below one frame
        ("3", block, block / 3, "1"),
        ("4", block / 2, block / 4, "4096"),
    ]
    for shards, bsec, first, budget in configs:
        got = run_cli("frames", str(video), "--decode-shards", shards, "--block-sec", str(bsec),
                      "--first-block-sec", str(first), "--budget-mb", budget, "--report", os.devnull)  # fmt: skip
        assert got.returncode == 0, got.stderr
        assert got.json_lines() == single, (shards, bsec, first, budget)


@pytest.mark.parametrize("name", ["hevc_opengop.mkv", "h264_bframes_2997.mp4", "vfr.mkv", "start_offset.mkv"])
def test_sharded_aux_frames_equal_the_single_lane_aux_frames(name):
    aux = AuxSpec(scale=0.35)
    info, index, want = single_lane(FIXTURES / name, aux=aux)
    for n, budget in ((2, 0.0), (4, 1.0)):
        source = ShardedSource(info, lanes(n), ShardOptions(block_sec=block_sec_for(index, 8),
                               first_block_sec=Fraction(1, 5), budget_mb=budget, aux=aux))  # fmt: skip
        got = digest(source)
        assert [g for g in got if g[0] == "main"] == [w for w in want if w[0] == "main"]
        assert [g for g in got if g[0] == "aux"] == [w for w in want if w[0] == "aux"]
        assert len(source.report()["blocks"]) >= min(5, len(index.keyframes) - 1)


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize("video", shared_videos(), ids=lambda p: p.name)
def test_sharded_frames_equal_the_single_lane_for_each_shared_clip(video):
    """A clip that is present decodes (or fails the way it is known to, sharded or not): never a skip. The single
    lane equals ffmpeg's own decode (tests/test_frames.py); here the sharded decode equals the single lane."""
    single = run_cli("frames", str(video), "--decode-shards", "1", "--block-sec", "10000")
    info = probe(str(video))
    index = scan_index(info) if video.name not in FAILS_CLEANLY else None
    for shards, budget in (("2", "0"), ("4", "64")):
        block = str(block_sec_for(index)) if index is not None else "0.5"
        got = run_cli("frames", str(video), "--decode-shards", shards, "--block-sec", block,
                      "--first-block-sec", "0.2", "--budget-mb", budget)  # fmt: skip
        if video.name in FAILS_CLEANLY:
            code, word = FAILS_CLEANLY[video.name]
            for result in (single, got):
                assert result.returncode == code and word in result.stderr and "Traceback" not in result.stderr
            continue
        assert single.returncode == 0 and got.returncode == 0, single.stderr + got.stderr
        want, have = single.json_lines(), got.json_lines()
        if video.name in CONCEALED:  # pixels aside (see CONCEALED)
            want, have = ([(x["index"], x["time"]) for x in lines] for lines in (want, have))
        assert have == want and want


# --- faults, injected for real ------------------------------------------------------------------------------


def test_a_lane_killed_mid_block_stops_the_run_with_its_exit_code_and_leaves_nothing_running():
    info = probe(str(FIXTURES / "hevc_opengop.mkv"))
    # A zero budget keeps the lanes of later blocks waiting (alive) while the consumer pauses.
    source = ShardedSource(info, lanes(3), ShardOptions(fps=Fraction(25), block_sec=Fraction(1), budget_mb=0))
    frames = iter(source)
    next(frames)
    victim = None
    deadline = time.monotonic() + 60
    while victim is None:
        assert time.monotonic() < deadline, "no running lane to kill"
        with source._cond:  # noqa: SLF001 - reach a running ffmpeg to kill it
            running = [d._proc for d in source._active if d._proc is not None and d._proc.running]  # noqa: SLF001
        victim = running[0] if running else None
        time.sleep(0.01)
    os.kill(victim.pid, signal.SIGKILL)
    with pytest.raises(ProcessFailed, match="code -9"):
        for _ in frames:
            pass
    assert ffmpeg.live_processes() == [] and "ffmpeg" not in child_processes()


def test_a_sw_lane_that_silently_drops_a_frame_is_an_error():
    video = FIXTURES / "h264_bframes_2997.mp4"
    info, index, _ = single_lane(video)
    grid = sample_grid(index, Fraction(2))
    source = ShardedSource(info, lanes(2), ShardOptions(block_sec=Fraction(1)), faults=Faults(drop={2: ()}))
    blocks = [b for b in digest(source)]
    assert blocks  # no fault in an empty drop list
    plan = source.report()["blocks"][2]
    victim = next(i for i in grid if plan["lo"] <= i < plan["hi"])
    source = ShardedSource(info, lanes(2), ShardOptions(block_sec=Fraction(1)), faults=Faults(drop={2: (victim,)}))
    with pytest.raises(DecodeError, match=f"frames {victim}"):
        for _ in source:
            pass
    assert ffmpeg.live_processes() == []


def test_an_aux_stream_shorter_than_its_block_stops_the_run_with_a_clear_error():
    info = probe(str(FIXTURES / "demo.mp4"))
    source = ShardedSource(info, lanes(2), ShardOptions(block_sec=Fraction(2), aux=AuxSpec()),
                           faults=Faults(drop_aux={1: (60,)}))  # fmt: skip
    with pytest.raises(DecodeError, match=r"1 aux frames that the source has were not delivered \(frames 60\)"):
        for _ in source:
            pass
    assert ffmpeg.live_processes() == []


def test_a_hw_lane_that_drops_a_frame_is_redone_in_software_and_the_output_stays_exact():
    video = FIXTURES / "h264_bframes_2997.mp4"
    info, index, want = single_lane(video)
    grid = sample_grid(index, Fraction(2))
    probe_run = ShardedSource(info, lanes(1), ShardOptions(block_sec=Fraction(1)))
    list(probe_run)
    plan = probe_run.report()["blocks"][2]
    victims = tuple(i for i in grid if plan["lo"] <= i < plan["hi"])[1:3]
    # "hw" lanes without a hwaccel: hardware lanes as the sharded source treats them, decoding on the CPU.
    source = ShardedSource(info, lanes(3, "hw"), ShardOptions(block_sec=Fraction(1)), faults=Faults(drop={2: victims}))
    assert digest(source) == want
    report = source.report()
    assert report["redone_blocks"] == [2]
    assert report["blocks"][2]["lane"].startswith("hw")


def test_a_packet_scan_failing_half_way_is_run_again_and_every_block_is_planned_and_checked():
    video = FIXTURES / "vp9_60.webm"
    info, index, want = single_lane(video, aux=AuxSpec())
    source = ShardedSource(info, lanes(3), ShardOptions(block_sec=Fraction(1, 2), first_block_sec=Fraction(0),
                           aux=AuxSpec()), faults=Faults(scan_fail_after=len(index) // 2))  # fmt: skip
    assert digest(source) == want
    report = source.report()
    assert "killed after" in report["plan_error"] and report["scan_attempts"] == 2
    # No block numbered by counting: the plan reaches the end of the index, a block per GOP (half a second asked).
    assert report["blocks"][-1]["hi"] == len(index) and report["index_complete"]
    assert [b["lo"] for b in report["blocks"]] == list(index.keyframes)
    assert ffmpeg.live_processes() == []


def test_a_packet_scan_that_keeps_failing_is_an_error_never_a_shorter_video():
    video = FIXTURES / "vp9_60.webm"
    info = probe(str(video))
    source = ShardedSource(info, lanes(2), ShardOptions(block_sec=Fraction(1, 2)),
                           faults=Faults(scan_fail_after=100, scan_kills=3))  # fmt: skip
    with pytest.raises(DecodeError, match="packet scan failed 3 times"):
        digest(source)
    assert ffmpeg.live_processes() == []


def test_the_consumer_stopping_early_leaves_no_process_behind():
    info = probe(str(FIXTURES / "demo.mp4"))
    source = ShardedSource(info, lanes(4), ShardOptions(fps=Fraction(25), block_sec=Fraction(1), aux=AuxSpec()))
    for n, _ in enumerate(source):
        if n == 20:
            break
    source.close()
    assert ffmpeg.live_processes() == [] and "ffmpeg" not in child_processes() and "ffprobe" not in child_processes()


def test_sigint_during_a_run_exits_130_and_leaves_no_ffmpeg(tmp_path):
    video = tmp_path / "sigint probe.mkv"
    video.write_bytes((FIXTURES / "hevc_opengop.mkv").read_bytes())
    proc = subprocess.Popen([sys.executable, "-m", "flowocr", "frames", str(video), "--fps", "25", "--decode-shards",
                             "3", "--block-sec", "0.5", "--budget-mb", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    left = subprocess.run(["pgrep", "-af", str(video)], capture_output=True, text=True).stdout
    assert left.strip() == ""


# --- memory and liveness ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def video_1080p(tmp_path_factory) -> Path:
    return encode_testsrc(tmp_path_factory.mktemp("big") / "hd.mp4", size="1920x1080", seconds=6, gop=25)


@pytest.mark.parametrize("budget_frames", [0, 2, 10])
def test_a_busy_consumer_never_has_more_than_the_budget_and_one_frame_buffered(video_1080p, budget_frames):
    # Blocks of 3 s (30 grid frames of 6 MB each) against budgets of 0-10 frames, and a consumer busy between frames
    # as OCR would be: the block being consumed may exceed the budget only by the frame the consumer waits for.
    info = probe(str(video_1080p))
    budget_mb = budget_frames * info.frame_bytes / (1024 * 1024)
    source = ShardedSource(info, lanes(3), ShardOptions(fps=Fraction(10), block_sec=Fraction(3), budget_mb=budget_mb))
    count = 0
    for _ in source:
        count += 1
        time.sleep(0.02)
    report = source.report()
    assert count == 60
    assert report["peak_buffered_bytes"] <= budget_frames * info.frame_bytes + info.frame_bytes
    assert report["over_budget_peak_bytes"] <= info.frame_bytes
    assert report["over_budget_frames"] > 0 or budget_frames == 10  # it waited, and got one frame at a time
    assert report["peak_buffered_bytes"] >= min(budget_frames, 1) * info.frame_bytes  # frames were buffered


def test_many_tiny_blocks_four_lanes_a_one_frame_budget_and_a_dawdling_consumer_finish_exactly():
    video = FIXTURES / "h264_bframes_2997.mp4"
    info, index, want = single_lane(video, aux=AuxSpec(scale=0.2))
    rnd = random.Random(7)
    budget = info.frame_bytes / (1024 * 1024)
    source = ShardedSource(info, lanes(4), ShardOptions(block_sec=Fraction(1, 100), first_block_sec=Fraction(0),
                           budget_mb=budget, aux=AuxSpec(scale=0.2)))  # fmt: skip
    got = []
    done = threading.Event()

    def consume():
        for frame in source:
            got.append(frame)
            time.sleep(rnd.random() * 0.004)
        done.set()

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    worker.join(timeout=300)
    assert done.is_set(), "the sharded source hung"
    assert digest(got) == want
    assert len(source.report()["blocks"]) == len(index.keyframes)


@needs_shared
def test_frames_the_source_itself_lacks_are_counted_as_material_gaps(tmp_path):
    from conftest import SHARED_VIDEOS

    report_path = tmp_path / "r.json"
    result = run_cli("frames", str(SHARED_VIDEOS / "fate_tscc_screencap_uebung9.avi"), "--decode-shards", "2",
                     "--block-sec", "2", "--report", str(report_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    import json

    report = json.loads(report_path.read_text())
    assert report["gaps"]["material"] > 0
    assert "absent from the source" in result.stderr


needs_nvidia = pytest.mark.skipif(not os.path.exists("/dev/nvidiactl"), reason="no NVIDIA GPU on this machine")


@needs_nvidia
@pytest.mark.parametrize("video", fixture_videos(), ids=lambda p: p.name)
def test_hw_lanes_equal_sw_lanes_where_cuda_is_present(video):
    sw = run_cli("frames", str(video), "--lanes", "sw,sw", "--block-sec", "1")
    hw = run_cli("frames", str(video), "--lanes", "hw,hw,sw", "--hwaccel", "cuda", "--block-sec", "1")
    assert hw.returncode == 0 and hw.json_lines() == sw.json_lines()
