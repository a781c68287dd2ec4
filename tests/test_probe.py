"""`flowocr probe`: facts from one ffprobe call, and a clear line (never a traceback) for what it can't read."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from conftest import FIXTURES, fixture_videos, needs_shared, run_cli, shared_videos

from flowocr.errors import NoVideoStream
from flowocr.probe.facts import parse_probe


def stream(**extra):
    base = {"index": 0, "codec_type": "video", "codec_name": "h264", "width": 640, "height": 360,
            "pix_fmt": "yuv420p", "time_base": "1/12800", "r_frame_rate": "30000/1001", "start_pts": 0}  # fmt: skip
    base.update(extra)
    return base


def test_parse_keeps_the_rate_exact_and_swaps_the_size_for_a_quarter_turn():
    data = {"format": {"format_name": "mov"}, "streams": [stream(side_data_list=[{"rotation": -90}])]}
    info = parse_probe("x.mp4", data)
    assert info.frame_rate == Fraction(30000, 1001)
    assert info.rotation == 90
    assert (info.display_width, info.display_height) == (360, 640)
    assert info.frame_bytes == 360 * 640 * 3


def test_parse_skips_cover_art_and_reports_audio_only_files():
    art = stream(index=0, disposition={"attached_pic": 1})
    info = parse_probe("x.mkv", {"format": {}, "streams": [art, stream(index=1)]})
    assert info.stream_index == 1
    with pytest.raises(NoVideoStream, match="audio"):
        parse_probe("a.m4a", {"format": {}, "streams": [{"index": 0, "codec_type": "audio"}]})


def test_parse_reads_the_start_time_as_exact_pts_times_time_base():
    info = parse_probe("x.mkv", {"format": {"start_time": "7.500000"}, "streams": [stream(start_pts=96000)]})
    assert info.start_time == Fraction(96000, 12800)
    assert info.format_start_time == Fraction(15, 2)


@pytest.mark.parametrize("video", fixture_videos(), ids=lambda p: p.name)
def test_probe_json_of_each_fixture_matches_its_manifest(video):
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    entries = manifest["fixtures"] if isinstance(manifest, dict) and "fixtures" in manifest else manifest
    entry = next(e for e in entries if e["file"] == video.name)
    result = run_cli("probe", str(video), "--json", "--count", "--keyframes")
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert facts["codec"] == entry["codec"]
    assert (facts["display_width"], facts["display_height"]) == (entry["width"], entry["height"])
    assert abs(facts["start_seconds"] - entry["start_time"]) < 0.01
    assert facts["frames_from_content"] > 0 and facts["keyframes"] >= 1
    if not entry.get("vfr"):
        assert Fraction(facts["frame_rate"]) == Fraction(entry["fps"])


def test_probe_text_output_names_every_fact():
    result = run_cli("probe", str(FIXTURES / "demo.mp4"), "--count", "--keyframes")
    assert result.returncode == 0, result.stderr
    for key in ("codec", "size", "rotation", "pixel format", "time base", "frame rate", "start time",
                "duration", "frames (header)", "frames (content)", "keyframes"):  # fmt: skip
        assert key in result.stdout


@needs_shared
@pytest.mark.parametrize("video", shared_videos(), ids=lambda p: p.name)
def test_probe_of_each_shared_clip_prints_facts_or_one_clear_line(video):
    result = run_cli("probe", str(video), "--count")
    assert "Traceback" not in result.stderr
    if result.returncode == 0:
        assert "codec" in result.stdout and "frame rate" in result.stdout
    else:
        assert len(result.stderr.strip().splitlines()) == 1
        assert str(video) in result.stderr


@needs_shared
def test_probe_counts_reveal_the_truncated_shared_clip():
    from conftest import SHARED_VIDEOS

    result = run_cli("probe", str(SHARED_VIDEOS / "fate_displaymatrix_rot90.mp4"), "--json", "--count")
    facts = json.loads(result.stdout)
    assert facts["truncated"] is True
    assert facts["frames_from_content"] < facts["frames_from_header"]
    assert facts["rotation"] == 90


@needs_shared
def test_probe_reads_the_edit_list_start_and_variable_rate_of_shared_clips():
    from conftest import SHARED_VIDEOS

    edit = json.loads(run_cli("probe", str(SHARED_VIDEOS / "fate_empty_edit_5s.mp4"), "--json").stdout)
    assert abs(edit["start_seconds"] - 5.0) < 1e-6
    vfr = json.loads(run_cli("probe", str(SHARED_VIDEOS / "torchcodec_var_fps_video.mp4"), "--json").stdout)
    assert Fraction(vfr["avg_frame_rate"]) != Fraction(vfr["frame_rate"])
