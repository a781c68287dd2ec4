"""flowocr as a pip user gets it (issue 15): the wheel built from this tree, installed into a fresh virtualenv and
used from a folder outside the checkout, calibrates and reads a video."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from fractions import Fraction
from importlib.metadata import version
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from flowocr.calibrate.machine import PROBE_CLIP
from flowocr.output import read_srt


def test_the_probe_clip_is_package_data_and_the_demo_fixture_is_that_clip():
    assert ROOT / "flowocr" in PROBE_CLIP.parents  # so it goes into the wheel
    assert (FIXTURES / "demo.mp4").read_bytes() == PROBE_CLIP.read_bytes()  # one clip: make demo's and the probe's


def _run(*argv, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kw)
    assert done.returncode == 0, f"{' '.join(map(str, argv))}: exit code {done.returncode}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtualenv holding only the wheel of this tree. Nothing is downloaded: the wheel is built without
    build isolation, and the dependencies are this venv's site-packages, named by a plain path in a ``.pth`` file
    (a path line does not run the ``.pth`` files in that folder, so this venv's editable flowocr stays out)."""
    assert int(version("setuptools").split(".")[0]) >= 77, "the build needs setuptools >= 77: pip install -e '.[dev]'"
    tmp = tmp_path_factory.mktemp("wheel")
    # Built from a copy: a build in the checkout would leave build/ and egg-info there.
    src = tmp / "src"
    shutil.copytree(ROOT / "flowocr", src / "flowocr", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", tmp / "dist", src, cwd=tmp)
    (wheel,) = (tmp / "dist").glob("flowocr-*.whl")
    env = tmp / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", env)
    _run(*pip, "--python", env / "bin" / "python", "install", "--no-deps", "--no-index", wheel)
    site = _run(env / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout
    deps = dict.fromkeys(sysconfig.get_path(kind) for kind in ("purelib", "platlib"))
    Path(site.strip(), "flowocr-test-deps.pth").write_text("".join(f"{path}\n" for path in deps))
    return env


@pytest.mark.slow
def test_the_installed_wheel_calibrates_and_reads_a_video_from_outside_the_checkout(venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FLOWOCR_CALIBRATION")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # measured for real, but not into the user's cache
    where = _run(venv / "bin" / "python", "-c", "import flowocr; print(flowocr.__file__)", cwd=tmp_path, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel's flowocr, not the checkout's
    calibrated = _run(venv / "bin" / "flowocr", "calibrate", cwd=tmp_path, env=env)
    assert "calibrated" in calibrated.stdout and (tmp_path / "cache" / "flowocr" / "calibration.json").is_file()
    video = FIXTURES / "h264_bframes_2997.mp4"
    ran = _run(venv / "bin" / "flowocr", "run", video, "-o", "out", "--quiet", cwd=tmp_path, env=env)
    assert "calibrat" not in ran.stderr, ran.stderr  # the stored calibration was used
    page = (tmp_path / "out" / f"{video.stem}.review.html").read_text()
    assert "flowocrReview" in page and "li.cue" in page  # its script and style are package data, inlined
    cues, truth = read_srt(tmp_path / "out" / f"{video.stem}.srt"), read_srt(video.with_suffix(".srt"))
    assert [c.text for c in cues] == [c.text for c in truth]
    near = Fraction(1001, 30000) + Fraction(1, 1000)  # a frame (29.97 fps), and the millisecond SRT floors to
    assert all(abs(c.start - t.start) <= near and abs(c.end - t.end) <= near for c, t in zip(cues, truth))
