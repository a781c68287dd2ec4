"""Where a run's CPU goes (issue 18, item 4): child processes' own accounts, the OCR stages' thread CPU, and the
benchmark's split of a run's process tree by stage."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import FIXTURES, bench_script

from flowocr import ffmpeg
from flowocr.system import exited_cpu_s, process_cpu_s

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"


def test_a_child_s_cpu_is_read_after_it_exits_and_before_it_is_reaped():
    child = subprocess.Popen([sys.executable, "-c", BURN])
    assert exited_cpu_s(child.pid, block=False) is None  # still running (it burns 0.4 s): nothing yet
    used = exited_cpu_s(child.pid)
    assert used is not None and used >= 0.35, used
    assert child.poll() == 0  # not reaped by the reading: the usual wait still gets the exit code
    assert exited_cpu_s(child.pid) is None  # reaped: nothing to read any more


def test_a_live_process_s_cpu_grows():
    before = process_cpu_s()
    t = time.process_time()
    while time.process_time() - t < 0.2:
        pass
    assert before is not None and process_cpu_s() >= before + 0.15


def test_an_ffmpeg_process_knows_its_cpu_once_waited_or_stopped():
    done = ffmpeg.Process([ffmpeg.tool("ffmpeg"), "-v", "error", "-i", str(FIXTURES / "demo.mp4"), "-f", "null", "-"],
                          what="decode")  # fmt: skip
    assert done.wait() == 0
    assert done.cpu_s is not None and done.cpu_s > 0
    endless = ffmpeg.Process([ffmpeg.tool("ffmpeg"), "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=s=640x360",
                              "-f", "null", "-"], what="endless")  # fmt: skip
    time.sleep(1.0)
    endless.stop()
    assert endless.cpu_s is not None and endless.cpu_s > 0  # what it used until it was stopped


def test_ocr_stage_cpu_is_counted_per_thread():
    from flowocr.ocr.engine import get_engine, stage_cpu

    engine = get_engine()
    band = bench_script().subtitle_band()
    others = []
    worker = threading.Thread(target=lambda: others.append(stage_cpu()))
    det0, rec0 = stage_cpu()
    batch = engine.run([band])
    det1, rec1 = stage_cpu()
    worker.start()
    worker.join()
    assert batch.results[0].lines, "the band has a line to read"
    assert det1 - det0 == pytest.approx(batch.times.det_cpu_s) and batch.times.det_cpu_s > 0
    assert rec1 - rec0 == pytest.approx(batch.times.rec_cpu_s) and batch.times.rec_cpu_s > 0
    assert others == [(0.0, 0.0)]  # another thread did no OCR


def test_the_benchmark_splits_a_run_s_cpu_by_stage():
    bench = bench_script()
    run = {"cpu_s": 10.0, "cpu": {"lanes_s": 4.0, "scan_s": 0.2, "detector_s": 0.8, "ocr_det_s": 1.5,
                                  "ocr_rec_s": 2.0, "process_s": 4.5}}  # fmt: skip
    rows = dict(bench.stage_split(run, {"lanes_cpu_s": 3.0}, {"lanes_cpu_s": 4.0}))
    # a quarter of the lanes' CPU went to the aux stream's scaling (one decode with it took 4 s, one without 3 s)
    assert rows["lanes: aux stream scale"] == pytest.approx(1.0)
    assert rows["lanes: ffmpeg decode"] == pytest.approx(3.0)
    assert rows["Python (the rest)"] == pytest.approx(10.0 - 4.0 - 0.2 - 0.8 - 1.5 - 2.0)
    assert sum(rows.values()) == pytest.approx(run["cpu_s"])
    unknown = dict(bench.stage_split({"cpu_s": 5.0, "cpu": {"lanes_s": None, "ocr_det_s": 1.0, "ocr_rec_s": 1.0}},
                                     {}, {}))  # fmt: skip
    assert unknown["lanes: ffmpeg decode"] is None and unknown["change detector"] is None
    assert unknown["Python (the rest)"] == pytest.approx(3.0)


def test_the_benchmark_band_is_one_readable_line():
    band = bench_script().subtitle_band()
    assert band.shape == (108, 1920, 3) and band.dtype == np.uint8
    from flowocr.ocr.engine import get_engine

    lines = get_engine().run([band]).results[0].lines
    assert [line.text for line in lines] == [bench_script().BAND_TEXT]
