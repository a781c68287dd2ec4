"""The impure side of calibration: this machine's fingerprint and the probe that measures it.

The probe (:func:`measure`, a few seconds) uses the clip the package ships, :data:`PROBE_CLIP` (12 s, 640 x 360,
H.264, subtitles from 0.5 s on):

1. software lane: one :class:`BlockDecoder` decodes the whole clip as a run's lane does (grid frames at 2 fps
   as BGR, the aux stream of every frame); ``sw_ratio`` = wall seconds / clip seconds. The whole clip rather
   than a few seconds of it: decoding it takes about half a second here, and ffmpeg's start would otherwise
   weigh too much in the ratio;
2. hardware lane: the same with the first hwaccel that :func:`check_hwaccel` finds initialising (none: no
   ratio, and the reason is kept); a hw lane that fails on the clip gives no ratio either;
3. OCR: the default engine (loaded once; a run in the same process reuses it) reads one frame untimed (the
   runtime's first call is slow), then the grid frames at 1/4 and 1/2 of the clip (both with text), one at a
   time; ``ocr_ratio`` = mean seconds per frame x 2 frames per video second (the default ``--fps``).

Model files are identified by a cheap hash (:func:`model_hash`), computed on every run to look up the store:
SHA-256 over the size, the first MiB and the last MiB. A different model file differs in size or in its first
or last weights with near certainty; a full hash of the 31 MB of RapidOCR's models would cost every run about
a tenth of a second for no practical gain.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

from flowocr import ffmpeg
from flowocr.calibrate.store import Fingerprint, Measurement
from flowocr.errors import CalibrationFailed, FlowOcrError
from flowocr.system import cpu_count

#: The clip the probe measures with: package data (``pyproject.toml``), so that an installed wheel has it. It is the
#: demo video too: ``fixtures/demo.mp4`` is a symbolic link to this file, one copy in the repository that
#: ``make demo``, the tests and ``scripts/make_fixtures.py`` (writing through the link) all use.
PROBE_CLIP = Path(__file__).resolve().parent / "data" / "demo.mp4"
#: Grid rate of the probe: the default ``--fps``, so that ``ocr_ratio`` is that of a default run.
PROBE_FPS = Fraction(2)
#: Where the timed OCR frames are, as shares of the clip (on demo.mp4: 3 s and 6 s, both with two lines).
OCR_PROBE_AT = (Fraction(1, 4), Fraction(1, 2))
#: Python packages whose versions are part of the fingerprint, per engine (the engine and its runtime).
ENGINE_PACKAGES = {"rapidocr": ("rapidocr", "onnxruntime"), "tesseract": ("tesserocr", "rapidocr", "onnxruntime"),
                   "paddle": ("paddleocr", "paddle")}  # fmt: skip
_MIB = 1024 * 1024


def model_hash(path: Path) -> str:
    """16 hex digits of SHA-256 over the file's size, its first MiB and its last MiB (see module docstring)."""
    size = path.stat().st_size
    digest = hashlib.sha256(f"{size}:".encode())
    with open(path, "rb") as f:
        digest.update(f.read(_MIB))
        if size > _MIB:
            f.seek(max(_MIB, size - _MIB))
            digest.update(f.read(_MIB))
    return digest.hexdigest()[:16]


def engine_models(engine: str) -> tuple[tuple[str, str], ...]:
    """``(file name, hash)`` of the engine's model files, found without importing the engine.

    rapidocr: the ``.onnx`` files shipped in its wheel (``rapidocr/models``), which are the files it loads;
    tesseract finds its lines with the same detector (its data files are per language: only tesserocr's version
    counts). Other engines keep their models elsewhere (PaddleOCR downloads them); there only the versions count.
    """
    if engine not in ("rapidocr", "tesseract"):
        return ()
    spec = importlib.util.find_spec("rapidocr")
    if spec is None or not spec.submodule_search_locations:
        return ()
    models = sorted(Path(next(iter(spec.submodule_search_locations)), "models").glob("*.onnx"))
    return tuple((p.name, model_hash(p)) for p in models)


def engine_label(engine: str) -> str:
    """``rapidocr 3.10.0, onnxruntime 1.22.0``: the engine and its runtime with installed versions."""
    parts = []
    for module in ENGINE_PACKAGES.get(engine, (engine,)):
        parts.append(f"{module} {_installed_version(module)}")
    return ", ".join(parts)


def _installed_version(module: str) -> str:
    names = [module, f"{module}-gpu", f"{module}paddle"]
    for name in names:
        version = _dist_info_version(name)
        if version is not None:
            return version
    import importlib.metadata  # slower (its import alone is ~0.08 s of every run): only when the above fails

    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "not installed"


def _dist_info_version(name: str) -> str | None:
    """The version in the name of the distribution's ``NAME-VERSION.dist-info`` folder, the first on sys.path."""
    prefix = re.sub(r"[-_.]+", "_", name).lower() + "-"
    for entry in sys.path:
        try:
            listing = os.listdir(entry or ".")
        except OSError:
            continue
        for item in listing:
            if item.endswith(".dist-info") and item.lower().startswith(prefix):
                return item[len(prefix) : -len(".dist-info")]
    return None


def ffmpeg_identity() -> tuple[str, tuple[str, ...]]:
    """ffmpeg's version line (without the copyright) and its compiled-in hwaccels; ``"ffmpeg unavailable"``
    when it cannot be run (the probe then fails on its own)."""
    try:
        out, err = ffmpeg.capture(ffmpeg.identity_argv(), what="ffmpeg -hwaccels", timeout=15)
    except FlowOcrError:
        return "ffmpeg unavailable", ()
    first = [line for line in err.splitlines() if line.startswith("ffmpeg version")][:1]
    hwaccels = out.splitlines()[1:]
    version = first[0].split(" Copyright")[0].strip() if first else "ffmpeg (no version line)"
    return version, tuple(h.strip() for h in hwaccels if h.strip())


def gpu_names() -> str:
    """NVIDIA GPU names from ``nvidia-smi`` ("; " between several), "" without one (or without the tool)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ""
    try:
        done = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=15, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if done.returncode != 0:
        return ""
    return "; ".join(line.strip() for line in done.stdout.splitlines() if line.strip())


def cpu_model() -> str:
    """The CPU's ``model name`` from /proc/cpuinfo (Linux), else what the platform module says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def fingerprint_device(engine: str, device: str) -> str:
    """The device an engine reads on for ``device`` (``auto``, ``cpu``, ``cuda``), as the fingerprint names it:
    ``cpu`` or ``cuda`` (:func:`flowocr.ocr.device.resolve_device`); ``own`` for an engine that chooses its own."""
    from flowocr.ocr.device import resolve_device

    if engine not in ("rapidocr", "tesseract"):  # the engines on ONNX Runtime
        return "own"
    return resolve_device(device).device


def machine_fingerprint(engine: str = "rapidocr", *, device: str = "auto") -> Fingerprint:
    """This machine as the calibration sees it, with the OCR models on ``device``. Never raises (but for
    ``--device cuda`` where it cannot be used, which the CLI has said before): what cannot be read is named as
    such."""
    version, hwaccels = ffmpeg_identity()
    return Fingerprint(
        ffmpeg=version, hwaccels=hwaccels, gpu=gpu_names(), cpu_model=cpu_model(), cpu_count=cpu_count(),
        engine=engine_label(engine), models=engine_models(engine), device=fingerprint_device(engine, device),
    )  # fmt: skip


def measure(
    engine: str = "rapidocr", *, lang: str = "ch", device: str = "auto", clip: Path = PROBE_CLIP
) -> Measurement:  # fmt: skip
    """Time a sw lane, a hw lane (when a hwaccel initialises) and the OCR engine on ``clip`` (module docstring).

    Raises :class:`CalibrationFailed` when the clip is missing, and whatever the decode or the engine raise.
    """
    from flowocr.decode.hwaccel import HWACCELS, check_hwaccel
    from flowocr.decode.lane import AuxSpec, BlockDecoder, main_format_for
    from flowocr.ocr.engine import get_engine
    from flowocr.ocr.strokes import STROKE_WIDTH
    from flowocr.plan import Block
    from flowocr.probe import probe, sample_grid, scan_index

    started = time.perf_counter()
    if not clip.is_file():
        raise CalibrationFailed(f"the probe clip {clip} is missing (it ships with flowocr: reinstall it)")
    info = probe(str(clip))
    index = scan_index(info)
    grid = sample_grid(index, PROBE_FPS)
    seconds = float(index.duration)
    wanted = [grid[min(len(grid) - 1, int(share * len(grid)))] for share in OCR_PROBE_AT]

    def lane_seconds(**lane) -> tuple[float, dict[int, object]]:
        decoder = BlockDecoder(info, index, Block(0, 0, len(index), 0), grid, aux=AuxSpec(max_width=STROKE_WIDTH),
                               main_format=main_format_for(info), **lane)  # as a run's lane decodes  # fmt: skip
        kept = {}
        t0 = time.perf_counter()
        try:
            for frame in decoder.frames():
                if frame.stream == "main" and (frame.index in wanted or frame.index == grid[0]):
                    kept[frame.index] = frame.image
        finally:
            decoder.close()
        return time.perf_counter() - t0, kept

    sw_s, images = lane_seconds(kind="sw", name="calibrate-sw")
    hw_ratio, hwaccel, hw_note = None, None, ""
    notes = []
    for candidate in HWACCELS:
        check = check_hwaccel(candidate, str(clip))
        if not check.ok:
            notes.append(f"{candidate}: {check.reason}")
            continue
        try:
            hw_s, _ = lane_seconds(hwaccel=candidate, kind="hw", name=f"calibrate-{candidate}")
        except FlowOcrError as exc:
            notes.append(f"{candidate}: initialises but failed on the clip ({exc})")
            continue
        hw_ratio, hwaccel = hw_s / seconds, candidate
        break
    if hwaccel is None:
        hw_note = "; ".join(notes)

    reader = get_engine(engine, lang=lang, device=device)
    reader.run([images[grid[0]]])  # the runtime's first call is slow: not timed
    ocr_times = []
    for frame_index in wanted:
        t0 = time.perf_counter()
        reader.run([images[frame_index]])
        ocr_times.append(time.perf_counter() - t0)
    per_frame = sum(ocr_times) / len(ocr_times)
    return Measurement(
        sw_ratio=sw_s / seconds, ocr_ratio=per_frame * float(PROBE_FPS), hw_ratio=hw_ratio, hwaccel=hwaccel,
        hw_note=hw_note, clip=clip.name, clip_pixels=info.display_width * info.display_height,
        clip_seconds=seconds, probe_s=time.perf_counter() - started,
    )  # fmt: skip
