"""OCR on the GPU end to end (``--device cuda``): where CUDA can run, a run on it writes the same cues as the run on
the CPU, and says so in its report. Skipped, with the reason, on a machine without an NVIDIA GPU and
onnxruntime-gpu (scripts/gpu_check.sh runs it where there is one)."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, needs_cuda, run_cli

pytestmark = needs_cuda
#: Short fixtures with text in several places and codecs: demo (H.264, two-line cues), vp9_60 (60 fps, centred
#: text on a busy picture), vfr (variable frame rate).
VIDEOS = ("demo.mp4", "vp9_60.webm", "vfr.mkv")


def run_on(device: str, video: str, out) -> tuple[str, dict]:
    done = run_cli("run", str(FIXTURES / video), "-o", str(out), "--quiet", "--device", device,
                   "--formats", "srt,json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    stem = video.rsplit(".", 1)[0]
    return (out / f"{stem}.srt").read_text(encoding="utf-8"), json.loads((out / f"{stem}.report.json").read_text())


@pytest.mark.parametrize("video", VIDEOS)
def test_a_run_on_cuda_writes_the_cues_of_the_run_on_the_cpu(video, tmp_path):
    gpu_srt, gpu = run_on("cuda", video, tmp_path / "cuda")
    cpu_srt, cpu = run_on("cpu", video, tmp_path / "cpu")
    assert (gpu["device"], cpu["device"]) == ("cuda", "cpu")
    assert gpu_srt == cpu_srt  # texts and frame-exact times alike
    assert gpu["cues"] == cpu["cues"] > 0


def test_auto_reads_on_cuda_where_it_can(tmp_path):
    _, report = run_on("auto", "demo.mp4", tmp_path)
    assert report["device"] == "cuda"
    assert report["timing"]["model_load_s"] is not None and report["timing"]["first_ocr_s"] is not None
