"""Shared test helpers: fixture paths, the CLI as a real process, and ffmpeg's own reference decode."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

# A shell without job control starts its background commands with SIGINT ignored, and an ignored signal stays
# ignored across exec: `make test &` from a script would hand every run the tests start a SIGINT it cannot receive,
# and the tests of Ctrl-C (exit 130) would see runs that finish. The tests' own processes take it again, so the runs
# they start get the default (Python's KeyboardInterrupt). flowocr itself keeps an ignored SIGINT ignored, as
# background programs do.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED_VIDEOS = ROOT.parent / "shared" / "videos"


def fixture_videos() -> list[Path]:
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    entries = manifest["fixtures"] if isinstance(manifest, dict) and "fixtures" in manifest else manifest
    return [FIXTURES / entry["file"] for entry in entries]


def shared_videos() -> list[Path]:
    if not SHARED_VIDEOS.is_dir():
        return []
    return sorted(p for p in SHARED_VIDEOS.iterdir() if p.suffix.lower() in {".mp4", ".mkv", ".mov", ".webm", ".avi"})


needs_shared = pytest.mark.skipif(not SHARED_VIDEOS.is_dir(), reason="../shared/videos is not present")


def cuda_usable() -> bool:
    """Whether ``--device cuda`` can run here: an NVIDIA device node, and onnxruntime with its CUDA provider (only
    looked for where the node is, so a machine without a GPU imports no onnxruntime for it)."""
    from flowocr.ocr.device import CUDA_PROVIDER, available_providers

    return os.path.exists("/dev/nvidiactl") and CUDA_PROVIDER in available_providers()


needs_cuda = pytest.mark.skipif(not cuda_usable(), reason="no NVIDIA GPU with onnxruntime's CUDAExecutionProvider "
                                "here (pip install 'flowocr[gpu]': README, GPU)")  # fmt: skip
#: Shared clips that must not decode, with the exit code and a word of the one line they fail with.
FAILS_CLEANLY = {"fate_displaymatrix_rot90.mp4": (3, "truncated")}  # its media data ends early
#: Shared clips that ffmpeg itself reports decoding errors in and conceals differently from one decode to the next
#: (frame threads): their frames are compared by index and time; no decode is a reference for their pixels.
CONCEALED = {"fate_empty_edit_5s.mp4"}


@pytest.fixture(scope="session", autouse=True)
def private_calibration(tmp_path_factory):
    """No test touches the real user cache, and no CLI test probes this machine: every test (and every process
    it starts) gets a private XDG_CACHE_HOME and FLOWOCR_CALIBRATION=conservative (the tier of an uncalibrated
    machine). tests/test_calibrate.py lifts the latter where it tests the real probe."""
    saved = {name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "FLOWOCR_CALIBRATION")}
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    os.environ["FLOWOCR_CALIBRATION"] = "conservative"
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    def json_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def run_cli(*args: str, prog: str = "flowocr", timeout: float = 600, env: dict | None = None) -> CliResult:
    """Run the installed command as a real process (``python -m flowocr`` for ``flowocr``)."""
    if prog == "flowocr":
        argv = [sys.executable, "-m", "flowocr", *args]
    else:
        argv = [str(Path(sys.executable).parent / prog), *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    return CliResult(done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class RefFrame:
    time: Fraction  # seconds relative to the first frame
    duration: Fraction
    md5: str


def ffmpeg_framemd5(path: Path, *extra_filters: str, pix_fmt: str = "bgr24") -> list[RefFrame]:
    """ffmpeg's own decode of the whole file: every frame's time (exact, stream time base) and md5. (A damaged
    stream's concealment differs from run to run with frame threads: see ``CONCEALED``.)"""
    argv = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough",
            "-enc_time_base", "-1"]  # fmt: skip
    if extra_filters:
        argv += ["-vf", ",".join(extra_filters)]
    argv += ["-pix_fmt", pix_fmt, "-f", "framemd5", "-"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    out = done.stdout
    tb = None
    rows = []
    for line in out.splitlines():
        if line.startswith("#tb 0:"):
            tb = Fraction(line.split(":", 1)[1].strip())
        if line.startswith("#") or not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        rows.append((int(fields[2]), int(fields[3]), fields[5]))
    assert tb is not None and rows, f"ffmpeg gave no frames for {path}"
    first = rows[0][0]
    return [RefFrame((pts - first) * tb, dur * tb, md5) for pts, dur, md5 in rows]


def reference_grid(frames: list[RefFrame], fps: Fraction) -> list[int]:
    """DESIGN §2 applied naively to ffmpeg's frames: sample t_k = k / fps, the frame on screen at t_k."""
    end = frames[-1].time + frames[-1].duration
    chosen: list[int] = []
    i = 0
    k = 0
    while Fraction(k) / fps < end:
        t = Fraction(k) / fps
        while i + 1 < len(frames) and frames[i + 1].time <= t:
            i += 1
        if not chosen or chosen[-1] != i:
            chosen.append(i)
        k += 1
    return chosen


def child_processes() -> list[str]:
    """Command names of this process's live children (ffmpeg/ffprobe leaks show up here)."""
    me = str(os.getpid())
    names = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], fields[1]
        if ppid == me and state != "Z":
            names.append(stat.split("(", 1)[1].rsplit(")", 1)[0])
    return names


def bench_script():
    """scripts/bench.py as a module (its video generators make the long inputs some tests need)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("flowocr_bench", ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def marked_env() -> tuple[dict[str, str], str]:
    """An environment that tags a CLI run and every process it starts (children inherit it)."""
    mark = uuid.uuid4().hex
    return {**os.environ, "FLOWOCR_TEST_MARK": mark}, mark


def processes_marked(mark: str) -> list[str]:
    """Live processes (any parent: orphans too) whose environment carries ``mark``, as ``pid name``."""
    found = []
    needle = f"FLOWOCR_TEST_MARK={mark}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if needle not in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                continue
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(f"{pid} {stat.split('(', 1)[1].rsplit(')', 1)[0]}")
    return found


def page_data(page: str) -> dict:
    """The data a review page (``<stem>.review.html``) holds: its cues, crops, times."""
    match = re.search(r'<script type="application/json" id="flowocr-data">(.*?)</script>', page, re.S)
    assert match, "the page holds its data"
    return json.loads(match.group(1))


def fixture_batch(tmp_path_factory) -> Path:
    """Every fixture through ``flowocr run`` once per test session, as one batch over the fixtures folder with the
    default options: the outputs tests/test_run.py scores and tests/test_cluster.py takes as the single-machine
    result. The first test that asks runs it, in whichever xdist worker; a test of another worker that asks
    meanwhile waits for it (one batch, not one per file: a minute of make test's two CPUs). Tests only read it."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's folder, above each worker's own
    out = root / "fixture-batch"
    done = root / "fixture-batch.done"
    with open(root / "fixture-batch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.is_file():
            shutil.rmtree(out, ignore_errors=True)  # a failed batch of another worker: run it again, fail here too
            result = run_cli("run", str(FIXTURES), "-o", str(out), "--quiet")
            assert result.returncode == 0, result.stderr
            done.touch()
    return out


def lanes(n: int, kind: str = "sw"):
    """``n`` decoder lanes of one kind, named sw0, sw1, ..."""
    from flowocr.decode.sharded import LaneSpec

    return [LaneSpec(f"{kind}{i}", kind=kind) for i in range(n)]


def digest(frames) -> list[tuple[str, int, int, str]]:
    """Each stream's frames in delivery order (aux, then main), with an md5 of each picture: how the two streams
    interleave is not specified."""
    import hashlib

    rows = [(f.stream, f.index, f.pts, hashlib.md5(f.image.tobytes()).hexdigest()) for f in frames]
    return sorted(rows, key=lambda row: row[0])


def encode_testsrc(path: Path, *, size: str, seconds: float, gop: int) -> Path:
    """``seconds`` of ffmpeg's testsrc2 (moving, with changing text) at ``size`` and 25 fps, H.264 ultrafast,
    a keyframe every ``gop`` frames."""
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc2=s={size}:r=25:d={seconds:g}", "-c:v",
                    "libx264", "-preset", "ultrafast", "-g", str(gop), "-pix_fmt", "yuv420p", str(path)],
                   check=True)  # fmt: skip
    return path


#: Test files by their running time in `make test` (seconds on the 2-core machine, fresh clone, Dec 2026), longest
#: first. ``--dist loadfile --no-loadscope-reorder`` (the Makefile) hands whole files to the workers in collection
#: order (without the flag, xdist puts the files with the most tests first); taking the long ones first
#: (longest processing time first) keeps one worker from starting a 200 s file when the other is nearly done: the
#: suite took 15-16.5 min in alphabetical order, with one worker idle for minutes at the end.
LONGEST_FIRST = ("test_corpus_slice.py", "test_cluster.py", "test_run.py", "test_reliability.py", "test_reference.py",
                 "test_resume.py", "test_sharded.py", "test_progress.py", "test_frames.py", "test_decode_hardening.py")


def pytest_collection_modifyitems(session, config, items) -> None:
    """Long test files first (see ``LONGEST_FIRST``); the order within a file, and of the other files, is kept."""
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(rank)))


def subtitled_video(tmp_path: Path, name: str, cues: list[tuple[str, str, str]], *, then: str = "") -> Path:
    """A 4.5 s 640 x 360 video of a Mandelbrot zoom with ``cues`` (start, end, text) burned in by libass (and the
    filters ``then`` after it)."""
    srt = tmp_path / f"{name}.truth.srt"
    srt.write_text("\n".join(f"{n}\n{a} --> {b}\n{t}\n" for n, (a, b, t) in enumerate(cues, 1)), encoding="utf-8")
    video = tmp_path / f"{name}.mp4"
    style = "FontName=Noto Sans CJK SC,FontSize=26,PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,Outline=2,Shadow=0"
    filters = f"subtitles=filename={srt}:force_style='{style}'" + (f",{then}" if then else "")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "mandelbrot=s=640x360:r=25,trim=duration=4.5",
                    "-vf", filters, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(video)],
                   check=True)  # fmt: skip
    return video
