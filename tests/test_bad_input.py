"""Bad input (DESIGN §8): one clear line naming the file, a non-zero exit, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, SHARED_VIDEOS, needs_shared, run_cli


def assert_one_clear_line(result, path: Path, *words: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert str(path) in lines[0]
    for word in words:
        assert word in lines[0].lower()
    assert result.stdout == ""


@pytest.fixture(params=["probe", "frames"])
def command(request):
    return request.param


def test_missing_path(command, tmp_path):
    path = tmp_path / "nope.mp4"
    assert_one_clear_line(run_cli(command, str(path)), path, "no such file")


def test_directory(command, tmp_path):
    assert_one_clear_line(run_cli(command, str(tmp_path)), tmp_path, "directory")


def test_not_a_video(command, tmp_path):
    path = tmp_path / "notes.mp4"
    path.write_text("these are not the frames you are looking for\n" * 20)
    assert_one_clear_line(run_cli(command, str(path)), path, "not a readable video")


def test_audio_only(command, tmp_path):
    path = tmp_path / "tone.m4a"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=d=1", str(path)], check=True)
    assert_one_clear_line(run_cli(command, str(path)), path, "no video stream", "audio")


def test_zero_frames(command, tmp_path):
    # An AVI whose header declares the video stream but that holds no packet (a recorder that died at once).
    path = tmp_path / "empty.avi"
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(FIXTURES / "demo.mp4"), "-an", "-c", "copy",
                    "-frames:v", "0", str(path)], check=True)  # fmt: skip
    result = run_cli(command, str(path), *(["--count"] if command == "probe" else []))
    if command == "probe":
        assert result.returncode == 0 and "frames (content)  0" in result.stdout
    else:
        assert_one_clear_line(result, path, "no frames")


def test_truncated_file(command, tmp_path):
    # Keep the index (moov) at the front, then cut the media data in half.
    whole = tmp_path / "whole.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(FIXTURES / "demo.mp4"), "-c", "copy",
                    "-movflags", "+faststart", str(whole)], check=True)  # fmt: skip
    cut = tmp_path / "cut.mp4"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    result = run_cli(command, str(cut), *(["--count"] if command == "probe" else []))
    if command == "probe":
        assert result.returncode == 0 and "truncated" in result.stdout
    else:
        assert_one_clear_line(result, cut, "truncated")


@needs_shared
def test_truncated_shared_clip_gives_one_line_when_decoding(tmp_path):
    path = SHARED_VIDEOS / "fate_displaymatrix_rot90.mp4"
    assert_one_clear_line(run_cli("frames", str(path)), path, "truncated")


def test_paths_with_spaces_and_non_ascii_work(tmp_path):
    odd = tmp_path / "字幕 test video.mp4"
    shutil.copy(FIXTURES / "demo.mp4", odd)
    plain = run_cli("frames", str(FIXTURES / "demo.mp4"), "--fps", "1")
    result = run_cli("frames", str(odd), "--fps", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == plain.stdout != ""


def test_missing_ffmpeg_is_one_line_naming_the_package(tmp_path):
    result = run_cli("frames", str(FIXTURES / "demo.mp4"), env={"PATH": str(tmp_path)})
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not found on PATH" in lines[0] and "apt-get install ffmpeg" in lines[0]


def test_bad_options_are_rejected_before_any_work():
    result = run_cli("frames", str(FIXTURES / "demo.mp4"), "--fps", "abc")
    assert result.returncode == 2 and "not a number" in result.stderr
    result = run_cli("frames", str(FIXTURES / "demo.mp4"), "--start", "3", "--end", "2")
    assert result.returncode != 0 and "--end" in result.stderr
