"""Where the OCR models run (``--device``, flowocr/ocr/device.py): the choice from onnxruntime's providers and the
GPU's presence, the providers each session gets, the fallback of ``auto`` when CUDA does not start (one warning
line), ``--device cuda`` refused in one line with exit 13 where it cannot run, and the calibration kept apart per
device. A run's report (``device``, the timing split) is checked in tests/test_progress.py, on its demo run; the
run on a GPU in tests/test_gpu.py."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from conftest import FIXTURES, cuda_usable, run_cli

from flowocr.calibrate import Fingerprint, Measurement, Store, load_or_calibrate
from flowocr.errors import DeviceUnavailable, UsageError
from flowocr.ocr import device as devices
from flowocr.ocr.device import (
    CPU_PROVIDER,
    CUDA_PROVIDER,
    DeviceChoice,
    choose_device,
    on_device,
    session_providers,
)

BOTH = (CUDA_PROVIDER, CPU_PROVIDER)
CPU_ONLY = ("AzureExecutionProvider", CPU_PROVIDER)


# --- the choice (pure) ------------------------------------------------------------------------------------------


def test_auto_reads_on_cuda_where_the_provider_and_a_gpu_are_both_there():
    assert choose_device("auto", providers=BOTH, gpu=True) == DeviceChoice("cuda", "auto")


@pytest.mark.parametrize(("providers", "gpu", "why"), [
    (CPU_ONLY, True, CUDA_PROVIDER), (BOTH, False, "no NVIDIA GPU"), (CPU_ONLY, False, "no NVIDIA GPU"),
], ids=["no-provider", "no-gpu", "neither"])  # fmt: skip
def test_auto_reads_on_the_cpu_when_either_is_missing_and_says_why(providers, gpu, why):
    choice = choose_device("auto", providers=providers, gpu=gpu)
    assert (choice.device, choice.asked) == ("cpu", "auto")
    assert why in choice.reason


def test_cpu_is_the_cpu_even_where_cuda_could_run():
    assert choose_device("cpu", providers=BOTH, gpu=True) == DeviceChoice("cpu", "cpu")


def test_cuda_asked_for_reads_on_cuda_where_it_can():
    assert choose_device("cuda", providers=BOTH, gpu=True) == DeviceChoice("cuda", "cuda")


def test_cuda_asked_for_without_the_provider_names_the_package_to_install():
    with pytest.raises(DeviceUnavailable) as caught:
        choose_device("cuda", providers=CPU_ONLY, gpu=True)
    message = str(caught.value)
    assert CUDA_PROVIDER in message and "AzureExecutionProvider, CPUExecutionProvider" in message
    assert "onnxruntime-gpu" in message and "--device cpu" in message
    assert caught.value.exit_code == 13


def test_cuda_asked_for_without_a_gpu_says_so():
    with pytest.raises(DeviceUnavailable, match="no NVIDIA GPU"):
        choose_device("cuda", providers=BOTH, gpu=False)


def test_an_unknown_device_names_the_supported_values():
    with pytest.raises(UsageError, match="Supported values are auto, cpu, cuda"):
        choose_device("gpu", providers=BOTH, gpu=True)
    with pytest.raises(UsageError):
        from flowocr.pipeline import RunOptions

        RunOptions(device="tpu")


def test_cpu_sessions_get_the_cpu_provider_alone_and_cuda_sessions_cuda_then_the_cpu():
    assert session_providers("cpu") == [CPU_PROVIDER]
    (name, options), fallback = session_providers("cuda")
    assert (name, fallback) == (CUDA_PROVIDER, CPU_PROVIDER)
    assert options["device_id"] == 0 and options["cudnn_conv_algo_search"] == "HEURISTIC"


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="an NVIDIA device node is present here")
def test_auto_without_a_gpu_is_the_cpu_without_importing_onnxruntime():
    code = ("import sys; from flowocr.ocr.device import resolve_device; c = resolve_device('auto'); "
            "print(c.device, 'onnxruntime' in sys.modules)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["cpu", "False"]


# --- loading on the device, and the fallback ----------------------------------------------------------------------


class FakeRuntime:
    """``onnxruntime.InferenceSession`` as it behaves where CUDA does not start: a session asked for the CUDA
    provider raises (``mode="raise"``) or silently lands on the CPU (``mode="silent"``); CPU sessions are real."""

    def __init__(self, real, mode: str) -> None:
        self.real, self.mode, self.cuda_attempts = real, mode, 0

    def __call__(self, path, options, providers):
        if providers != [CPU_PROVIDER]:
            self.cuda_attempts += 1
            if self.mode == "raise":
                raise RuntimeError("libcudnn.so.9: cannot open shared object file\n(second line of the error)")
            return self.real(path, options, providers=[CPU_PROVIDER])  # get_providers() says CPU only
        return self.real(path, options, providers=providers)


@pytest.fixture
def cuda_that_fails(monkeypatch):
    """This machine as one where ``auto`` chose CUDA and CUDA does not start (``mode`` set by the test)."""
    import onnxruntime

    fake = FakeRuntime(onnxruntime.InferenceSession, "raise")
    monkeypatch.setattr(onnxruntime, "InferenceSession", fake)
    monkeypatch.setattr(devices, "prepare_cuda", lambda: None)  # leave the process's ONNX Runtime logger alone
    choices = {"auto": DeviceChoice("cuda", "auto"), "cuda": DeviceChoice("cuda", "cuda"),
               "cpu": DeviceChoice("cpu", "cpu")}  # fmt: skip
    monkeypatch.setattr(devices, "resolve_device", lambda asked: choices[asked])
    return fake


@pytest.fixture
def cli_warnings(capsys):
    """The CLI's handler of the ``flowocr`` logger (one ``flowocr: warning:`` line each) writing into ``capsys``,
    removed afterwards."""
    from flowocr.cli.commands import _warnings_to_stderr

    log = logging.getLogger("flowocr")
    saved = (list(log.handlers), log.propagate, log.level)
    _warnings_to_stderr(quiet=False)
    yield
    log.handlers[:], log.propagate = saved[0], saved[1]
    log.setLevel(saved[2])


@pytest.mark.parametrize("mode", ["raise", "silent"])
def test_auto_falls_back_to_the_cpu_with_exactly_one_warning_line_when_cuda_does_not_start(
    mode, cuda_that_fails, cli_warnings, capsys
):  # fmt: skip
    from flowocr.ocr.rapid import RapidOcrEngine

    cuda_that_fails.mode = mode
    engine = RapidOcrEngine(device="auto", threads=1)
    assert engine.device == "cpu"
    assert cuda_that_fails.cuda_attempts == 1  # the detector's session failed; the recogniser was not tried on CUDA
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("flowocr: warning: the OCR models could not start on CUDA") and "on the CPU" in lines[0]
    blank = np.zeros((64, 256, 3), np.uint8)
    assert engine.recognize([blank])[0].lines == ()  # and it reads


def test_the_tesseract_engines_detector_falls_back_the_same_way(cuda_that_fails, caplog):
    from flowocr.ocr.rapid import load_detector

    with caplog.at_level(logging.WARNING, logger="flowocr"):
        detector, device = on_device(lambda where: load_detector(threads=1, device=where), DeviceChoice("cuda", "auto"))
    assert device == "cpu" and len(caplog.records) == 1
    assert detector(np.zeros((64, 256, 3), np.uint8)).boxes.shape == (0, 4, 2)


def test_cuda_asked_for_that_does_not_start_is_device_unavailable_not_a_fallback(cuda_that_fails, caplog):
    from flowocr.ocr.engine import get_engine

    with caplog.at_level(logging.WARNING, logger="flowocr"), pytest.raises(DeviceUnavailable) as caught:
        get_engine("rapidocr", device="cuda", threads=1)
    assert "cannot start on CUDA" in str(caught.value) and "libcudnn.so.9" in str(caught.value)
    assert caplog.records == []  # an error, not a warning


def test_a_load_on_the_cpu_is_never_tried_on_cuda():
    calls = []
    assert on_device(lambda where: calls.append(where) or "models", DeviceChoice("cpu", "auto")) == ("models", "cpu")
    assert calls == ["cpu"]


def test_engines_on_other_devices_are_other_instances_and_say_where_they_loaded():
    from flowocr.ocr.engine import engine_loaded, get_engine

    cpu = get_engine("rapidocr", device="cpu", threads=1)
    assert cpu.device == "cpu" and cpu.load_s is not None and cpu.load_s > 0
    assert engine_loaded("rapidocr", device="cpu", threads=1)
    assert get_engine("rapidocr", device="cpu", threads=1) is cpu
    if not cuda_usable():
        assert get_engine("rapidocr", device="auto", threads=1).device == "cpu"


# --- the CLI ---------------------------------------------------------------------------------------------------


@pytest.mark.skipif(cuda_usable(), reason="CUDA can run here")
def test_run_with_device_cuda_where_it_cannot_run_exits_13_with_one_line(tmp_path):
    done = run_cli("run", str(FIXTURES / "demo.mp4"), "-o", str(tmp_path / "out"), "--device", "cuda")
    assert done.returncode == 13, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flowocr: error: --device cuda cannot be used"), lines
    assert not (tmp_path / "out").exists()  # refused before any work


def test_an_unknown_device_is_a_usage_error():
    done = run_cli("run", str(FIXTURES / "demo.mp4"), "--device", "gpu")
    assert done.returncode == 2 and "'gpu' is not one of 'auto', 'cpu', 'cuda'" in done.stderr


# --- calibration ----------------------------------------------------------------------------------------------


def test_a_cpu_calibration_is_not_used_for_a_run_on_cuda(tmp_path):
    store = Store(tmp_path / "calibration.json")
    cpu = Fingerprint(ffmpeg="ffmpeg version 6.1", hwaccels=("cuda",), gpu="NVIDIA H200", cpu_model="Test CPU",
                      cpu_count=16, engine="rapidocr 3.10.0, onnxruntime-gpu 1.22.0", device="cpu")  # fmt: skip
    probes = []

    def probe(ratio):
        return lambda: probes.append(ratio) or Measurement(sw_ratio=0.05, ocr_ratio=ratio)

    load_or_calibrate(fingerprint=cpu, probe=probe(1.0), store=store, clock=lambda: 1e9)
    cuda = load_or_calibrate(fingerprint=replace(cpu, device="cuda"), probe=probe(0.1), store=store, clock=lambda: 1e9)
    assert cuda.source == "calibrated" and cuda.profile.measurement.ocr_ratio == 0.1 and probes == [1.0, 0.1]
    assert load_or_calibrate(fingerprint=cpu, probe=probe(9.0), store=store, clock=lambda: 1e9).source == "cached"


def test_the_calibration_probe_and_fingerprint_are_given_the_runs_device(monkeypatch, tmp_path):
    from flowocr.calibrate import auto, machine

    seen = {}

    def fingerprint(engine, *, device):
        seen["fingerprint"] = device
        return Fingerprint(ffmpeg="f", hwaccels=(), gpu="", cpu_model="c", cpu_count=2, engine=engine, device="cuda")

    def measure(engine, *, lang, device):
        seen["probe"] = device
        return Measurement(sw_ratio=0.05, ocr_ratio=0.1)

    monkeypatch.setattr(machine, "machine_fingerprint", fingerprint)
    monkeypatch.setattr(machine, "measure", measure)
    outcome = auto.calibrate(device="cuda", store=Store(tmp_path / "c.json"), say=lambda line: None)
    assert seen == {"fingerprint": "cuda", "probe": "cuda"} and outcome.fingerprint.device == "cuda"


def test_the_fingerprint_names_the_device_an_engine_reads_on():
    from flowocr.calibrate.machine import fingerprint_device

    assert fingerprint_device("rapidocr", "cpu") == "cpu"
    assert fingerprint_device("tesseract", "cpu") == "cpu"
    assert fingerprint_device("paddle", "auto") == "own"  # PaddleOCR chooses its own
    if not cuda_usable():
        assert fingerprint_device("rapidocr", "auto") == "cpu"
