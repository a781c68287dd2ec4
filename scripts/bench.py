"""Benchmarks, printed as ratios against ffmpeg's own decode of the same file in the same run.

    python scripts/bench.py decode VIDEO [--fps 2] [--lanes 1,2,4] [--aux]
    python scripts/bench.py decode --generate 1080p60        # makes a 60 s 1080p H.264 input first
    python scripts/bench.py run VIDEO | --generate subs1080p60|small1080p60|strip [--device cuda]
        # flowocr run vs the limit vs naive, wall and CPU; the run's CPU by stage; one OCR call on a subtitle band
    python scripts/bench.py batch [--videos 50] [--lanes 3] [--budget-mb 16]   # many short videos in one run

Each measurement runs in a fresh process, so its peak RSS (the process and its ffmpeg children) is its own.
The decode limit is ``ffmpeg -i F -f null -``: what decoding every frame costs with nothing else to do.
``run`` splits the run's CPU by stage (:func:`stage_split`: the lanes' decode, the aux stream's scaling, the packet
scans, the change detector, OCR detection, OCR recognition, the rest in Python) from the run report's ``cpu`` and the
CPU of its whole process tree, and times one OCR call on a 1920-wide subtitle band (:func:`measure_band`).
Goal (issue 3): 2 sw lanes no slower than 1.10 x the single lane on a 60 s 1080p input on a 2-core machine.
Goal (issue 5): ``flowocr run`` at most 1.5 x the limit on a 60 s 1080p video with about 20 cues. The naive
method most tools use is measured beside it: OCR of every frame sampled at 3 fps with the same engine,
merging similar consecutive texts.
Load (issue 7): ``batch`` generates N short videos and runs ``flowocr run`` over their folder (N lanes each, a small
budget) in a fresh process; it prints the wall time, the peak RSS of that process tree (its largest process) and
whether every report says complete.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: Inputs ``run --generate`` makes (:func:`generate_subtitled`'s arguments). libass sizes SRT text on a 288-line
#: script: FontSize 6 on 1080 lines is about 20 px tall, 90 on a 90-line strip about 30 px.
GENERATED_RUN = {
    "subs1080p60": ({}, "1920x1080, 25 fps, 60 s, 20 cues"),
    "small1080p60": ({"seconds": 33, "cues": 12, "rate": 60, "font_size": 6, "bold": True},
                     "1920x1080, 60 fps, 33 s, 12 cues of small (about 20 px) bold text"),
    "strip": ({"seconds": 600, "cues": 200, "size": "1120x90", "rate": 24, "font_size": 90},
              "1120x90, 24 fps, 10 min, 200 cues: a subtitle strip"),
}  # fmt: skip

GENERATED = {
    "1080p60": ["testsrc2=s=1920x1080:r=25:d=60", "1920x1080, 25 fps, 60 s, H.264 (keyframe every 2 s)"],
}


def generate(name: str) -> Path:
    spec, _ = GENERATED[name]
    path = Path(tempfile.gettempdir()) / f"flowocr-bench-{name}.mp4"
    if not path.exists():
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", spec, "-c:v", "libx264", "-preset",
                        "veryfast", "-g", "50", "-bf", "2", "-pix_fmt", "yuv420p", str(path)], check=True)  # fmt: skip
    return path


def generate_subtitled(
    path: Path,
    seconds: int = 60,
    cues: int = 20,
    *,
    size: str = "1920x1080",
    rate: int = 25,
    font_size: int = 28,
    preset: str = "veryfast",
    background_scale: int = 1,
    bold: bool = False,
) -> Path:
    """An H.264 video (1080p by default) with ``cues`` burned-in English subtitles over a moving background (not
    testsrc2, whose clock and counters are text that OCR reads too), and its SRT beside it. Kept if it exists."""
    if path.exists():
        return path
    srt = path.with_suffix(".srt")
    step = seconds / cues
    lines = []
    for k in range(cues):
        start, end = k * step + 0.3, k * step + step * 0.8
        lines.append(f"{k + 1}\n{_srt_time(start)} --> {_srt_time(end)}\nSubtitle number {k + 1} of the benchmark\n")
    srt.write_text("\n".join(lines))
    width, height = (int(v) for v in size.split("x"))
    small = f"{width // background_scale}x{height // background_scale}"  # a smaller background is quicker to make
    background = f"gradients=s={small}:r={rate}:d={seconds}:speed=0.02"  # moving, and no text of its own
    scale = f"scale={width}:{height}," if background_scale > 1 else ""
    partial = path.with_name(path.stem + ".part" + path.suffix)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", background,
                    "-vf", f"{scale}subtitles={srt}:force_style='FontSize={font_size},Bold={int(bold)}'",
                    "-c:v", "libx264",
                    "-preset", preset, "-g", str(2 * rate), "-pix_fmt", "yuv420p", str(partial)],
                   check=True)  # fmt: skip
    partial.replace(path)
    return path


def _srt_time(t: float) -> str:
    ms = round(t * 1000)
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def measure_run(video: str, device: str = "auto") -> dict:
    out = tempfile.mkdtemp(prefix="flowocr-bench-")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "flowocr", "run", video, "-o", out, "--quiet", "--device", device],
                   check=True)  # fmt: skip
    wall = time.perf_counter() - started
    report = json.loads((Path(out) / (Path(video).stem + ".report.json")).read_text())
    return {"wall_s": wall, "peak_rss_mb": _peak_rss_mb(), "cues": report["cues"], "ocr_calls": report["ocr"]["calls"],
            "device": report.get("device"), "timing": report["timing"], "cpu_s": _cpu_s(), "cpu": report["cpu"],
            "lanes": len(report["decode"]["lanes"])}  # fmt: skip


def measure_naive(video: str, device: str = "auto") -> dict:
    """The naive method (:func:`flowocr.read.naive.naive_cues`): OCR of every frame of the 3 fps grid, similar
    consecutive texts merged, with the same engine on the same device."""
    from flowocr.ocr.engine import get_engine
    from flowocr.read.naive import naive_cues

    started = time.perf_counter()
    result = naive_cues(video, engine=get_engine(device=device))
    return {"wall_s": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(), "cues": len(result.cues),
            "ocr_calls": result.ocr_calls, "cpu_s": _cpu_s()}  # fmt: skip


def bench_run(video: str, repeat: int, device: str = "auto") -> None:
    limit = min((run_measure(["ffmpeg", video]) for _ in range(repeat)), key=lambda r: r["wall_s"])
    ours = min((run_measure(["run", video, device]) for _ in range(repeat)), key=lambda r: r["wall_s"])
    naive = run_measure(["naive", video, device])
    print(f"run benchmark: {video} (best of {repeat}, {os.cpu_count()} cores, --device {device}: the run read on "
          f"{ours['device']})")  # fmt: skip
    print(f"{'what':<34} {'wall s':>8} {'x limit':>8} {'CPU s':>8} {'x limit':>8} {'cues':>6} {'OCR calls':>10} "
          f"{'peak RSS MB':>12}")  # fmt: skip
    for name, r in (("ffmpeg -i F -f null - (limit)", limit), ("flowocr run", ours), ("naive: OCR at 3 fps", naive)):
        print(f"{name:<34} {r['wall_s']:>8.2f} {r['wall_s'] / limit['wall_s']:>8.2f} {r['cpu_s']:>8.2f} "
              f"{r['cpu_s'] / limit['cpu_s']:>8.2f} {r.get('cues', '-'):>6} {r.get('ocr_calls', '-'):>10} "
              f"{r['peak_rss_mb']:>12.1f}")  # fmt: skip
    print_split(video, ours, limit)
    band = run_measure(["band", video, device])
    print(f"one OCR call on a 1920 x 108 single-line subtitle band ({band['device']}): {band['cpu_s']:.3f} CPU s "
          f"(detection {band['det_cpu_s']:.3f}, recognition {band['rec_cpu_s']:.3f}), {band['wall_s']:.3f} s wall; "
          f"read {band['text']!r}")  # fmt: skip
    timing = ours["timing"]
    split = ", ".join(f"{key} {timing[key]}" for key in ("startup_s", "model_load_s", "first_block_s", "first_ocr_s",
                                                          "first_cue_s", "ocr_s") if key in timing)  # fmt: skip
    print(f"flowocr run timing: {split}")


def stage_split(run: dict, plain: dict, with_aux: dict) -> list[tuple[str, float | None]]:
    """The CPU seconds of a ``flowocr run`` (:func:`measure_run`) by stage, from its report's ``cpu`` and the run's
    whole process tree: the lanes' ffmpeg without the aux stream's scaling, that scaling (the lanes' share measured
    as the extra CPU one sharded decode with the aux stream takes over one without: ``plain``, ``with_aux``, from
    :func:`measure_sharded`), the packet scans, the change detector, the OCR models' detection and recognition,
    and the rest (Python: start-up and imports, the reader, the frame pipes; what no other row counts)."""
    cpu = run["cpu"]
    lanes = cpu.get("lanes_s")
    aux = None
    if lanes is not None and plain.get("lanes_cpu_s") and with_aux.get("lanes_cpu_s"):
        aux = min(lanes, lanes * max(0.0, 1 - plain["lanes_cpu_s"] / with_aux["lanes_cpu_s"]))
    rows = [("lanes: ffmpeg decode", None if lanes is None else lanes - (aux or 0.0)), ("lanes: aux stream scale", aux),
            ("packet scans (ffprobe)", cpu.get("scan_s")), ("change detector", cpu.get("detector_s")),
            ("OCR detection", cpu.get("ocr_det_s")), ("OCR recognition", cpu.get("ocr_rec_s"))]  # fmt: skip
    known = sum(v for _, v in rows if v is not None)
    rows.append(("Python (the rest)", max(0.0, run["cpu_s"] - known)))
    return rows


def print_split(video: str, ours: dict, limit: dict) -> None:
    lanes = ours.get("lanes", 1)
    plain = run_measure(["sharded", video, str(lanes), "2"])
    with_aux = run_measure(["sharded", video, str(lanes), "2", "--aux"])
    print(f"flowocr run CPU by stage ({lanes} lane{'s' if lanes > 1 else ''}; the aux share from a sharded decode with "
          f"the aux stream, {with_aux['lanes_cpu_s']:.2f} lane CPU s, against one without, "
          f"{plain['lanes_cpu_s']:.2f}):")  # fmt: skip
    print(f"  {'stage':<32} {'CPU s':>8} {'share':>7} {'x limit':>8}")
    for name, value in stage_split(ours, plain, with_aux):
        if value is None:
            print(f"  {name:<32} {'-':>8}")
            continue
        print(f"  {name:<32} {value:>8.2f} {value / ours['cpu_s']:>7.1%} {value / limit['cpu_s']:>8.2f}")
    print(f"  {'total (process tree)':<32} {ours['cpu_s']:>8.2f} {1:>7.1%} {ours['cpu_s'] / limit['cpu_s']:>8.2f}")


BAND_TEXT = "Where were you when the lights went out last night?"


def subtitle_band(width: int = 1920, height: int = 108) -> np.ndarray:
    """A single-line subtitle band as a 1080p video shows it: white text with a black outline, about 40 px tall,
    centred over a mid-grey gradient, ``width`` x ``height`` BGR."""
    import cv2
    import numpy as np

    band = np.tile(np.linspace(60, 160, width, dtype=np.uint8)[None, :, None], (height, 1, 3))
    font, scale = cv2.FONT_HERSHEY_DUPLEX, 1.6
    (text_w, text_h), _ = cv2.getTextSize(BAND_TEXT, font, scale, 3)
    origin = ((width - text_w) // 2, (height + text_h) // 2)
    cv2.putText(band, BAND_TEXT, origin, font, scale, (0, 0, 0), 9, cv2.LINE_AA)
    cv2.putText(band, BAND_TEXT, origin, font, scale, (255, 255, 255), 3, cv2.LINE_AA)
    return band


def measure_band(device: str = "auto", calls: int = 7) -> dict:
    """One OCR call on a 1920-wide single-line subtitle band (:func:`subtitle_band`) with the engine a run uses:
    CPU seconds of this process per call (every thread) and wall seconds, the least of ``calls`` after a warm-up,
    and what it read."""
    from flowocr.ocr.engine import get_engine

    engine = get_engine(device=device)
    band = subtitle_band()
    engine.run([band])
    best = None
    for _ in range(calls):
        cpu, wall = time.process_time(), time.perf_counter()
        batch = engine.run([band])
        sample = (time.process_time() - cpu, time.perf_counter() - wall, batch)
        best = sample if best is None or sample[0] < best[0] else best
    cpu_s, wall_s, batch = best
    return {"cpu_s": round(cpu_s, 4), "wall_s": round(wall_s, 4), "det_cpu_s": round(batch.times.det_cpu_s or 0, 4),
            "rec_cpu_s": round(batch.times.rec_cpu_s or 0, 4), "device": engine.device,
            "text": " | ".join(line.text for line in batch.results[0].lines)}  # fmt: skip


def _cpu_s() -> float:
    """CPU seconds (user + system) of this measuring process and every child it reaped (and their children)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime, 3)


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)


def generate_batch(folder: Path, videos: int, seconds: float, size: str) -> list[Path]:
    """``videos`` short H.264 clips (testsrc2: moving text for the OCR), a keyframe every 5 frames so that a short
    block size spreads each over the lanes. One is encoded; the others are copies under their own names."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    first = folder / "clip_000.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=s={size}:r=25:d={seconds}",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "5", "-pix_fmt", "yuv420p", str(first)],
                   check=True)  # fmt: skip
    paths = [first]
    for n in range(1, videos):
        paths.append(folder / f"clip_{n:03d}.mp4")
        shutil.copy(first, paths[-1])
    return paths


def measure_batch(folder: str, lanes: int, budget_mb: str) -> dict:
    out = tempfile.mkdtemp(prefix="flowocr-bench-batch-")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "flowocr", "run", folder, "-o", out, "--quiet",
                           "--lanes", ",".join(["sw"] * lanes), "--budget-mb", budget_mb, "--block-sec", "0.2",
                           "--first-block-sec", "0"], capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    reports = [json.loads(p.read_text()) for p in sorted(Path(out).glob("*.report.json"))]
    return {"wall_s": wall, "peak_rss_mb": _peak_rss_mb(), "exit": done.returncode, "reports": len(reports),
            "complete": sum(1 for r in reports if r["complete"]),
            "peak_buffered_mb": max((r["decode"]["peak_buffered_mb"] for r in reports if r["decode"]), default=0.0),
            "stderr": done.stderr.strip().splitlines()[-3:]}  # fmt: skip


def bench_batch(videos: int, lanes: int, budget_mb: str, seconds: float, size: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="flowocr-bench-batch-in-"))
    generate_batch(folder, videos, seconds, size)
    r = run_measure(["batch", str(folder), str(lanes), budget_mb])
    all_complete = r["complete"] == videos and r["exit"] == 0
    print(f"batch benchmark: {videos} videos of {seconds:g} s at {size}, {lanes} sw lanes, --budget-mb {budget_mb}, "
          f"{os.cpu_count()} cores")  # fmt: skip
    print(f"{'wall s':>8} {'s/video':>8} {'peak RSS MB':>12} {'peak buffer MB':>15} {'complete':>9}")
    print(f"{r['wall_s']:>8.2f} {r['wall_s'] / videos:>8.2f} {r['peak_rss_mb']:>12.1f} {r['peak_buffered_mb']:>15.2f} "
          f"{'yes' if all_complete else 'no':>9}")  # fmt: skip
    if not all_complete:
        print(f"{r['complete']} of {videos} complete (exit {r['exit']}): " + " | ".join(r["stderr"]))
        sys.exit(1)


def measure_ffmpeg(video: str) -> dict:
    started = time.perf_counter()
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", video, "-map", "0:v:0", "-f", "null", "-"], check=True)
    return {"wall_s": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(), "cpu_s": _cpu_s()}


def measure_sharded(video: str, lanes: int, fps: Fraction, aux: bool) -> dict:
    from flowocr.decode import AuxSpec
    from flowocr.decode.sharded import LaneSpec, ShardedSource, ShardOptions
    from flowocr.probe import probe

    started = time.perf_counter()
    info = probe(video)
    options = ShardOptions(fps=fps, aux=AuxSpec() if aux else None)
    source = ShardedSource(info, [LaneSpec(f"sw{i}") for i in range(lanes)], options)
    frames = sum(1 for _ in source)
    report = source.report()
    return {"wall_s": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(), "frames": frames,
            "blocks": len(report["blocks"]), "peak_buffered_mb": report["peak_buffered_mb"], "cpu_s": _cpu_s(),
            "lanes_cpu_s": report["lanes_cpu_s"]}  # fmt: skip


def run_measure(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "_measure", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_decode(video: str, lanes: list[int], fps: str, aux: bool, repeat: int) -> None:
    rows = []
    limit = min((run_measure(["ffmpeg", video]) for _ in range(repeat)), key=lambda r: r["wall_s"])
    rows.append(("ffmpeg -i F -f null - (limit)", limit))
    for n in lanes:
        extra = ["--aux"] if aux else []
        best = min((run_measure(["sharded", video, str(n), fps, *extra]) for _ in range(repeat)),
                   key=lambda r: r["wall_s"])  # fmt: skip
        rows.append((f"flowocr {n} sw lane{'s' if n > 1 else ''}", best))
    print(f"decode benchmark: {video} (grid {fps} fps{', aux stream' if aux else ''}, best of {repeat}, "
          f"{os.cpu_count()} cores)")  # fmt: skip
    print(f"{'what':<34} {'wall s':>8} {'x limit':>8} {'x 1 lane':>9} {'peak RSS MB':>12}")
    one_lane = next((r for name, r in rows if name.startswith("flowocr 1 ")), None)
    for name, r in rows:
        vs_one = f"{r['wall_s'] / one_lane['wall_s']:.2f}" if one_lane and name.startswith("flowocr") else "-"
        print(f"{name:<34} {r['wall_s']:>8.2f} {r['wall_s'] / limit['wall_s']:>8.2f} {vs_one:>9} "
              f"{r['peak_rss_mb']:>12.1f}")  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_measure":
        kind, video = sys.argv[2], sys.argv[3]
        if kind == "ffmpeg":
            result = measure_ffmpeg(video)
        elif kind == "run":
            result = measure_run(video, *sys.argv[4:5])
        elif kind == "naive":
            result = measure_naive(video, *sys.argv[4:5])
        elif kind == "band":
            result = measure_band(*sys.argv[4:5])
        elif kind == "batch":
            result = measure_batch(video, int(sys.argv[4]), sys.argv[5])
        else:
            result = measure_sharded(video, int(sys.argv[4]), Fraction(sys.argv[5]), "--aux" in sys.argv)
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    dec = sub.add_parser("decode", help="sharded decoding against ffmpeg's own decode")
    dec.add_argument("video", nargs="?")
    dec.add_argument("--generate", choices=sorted(GENERATED), help="generate the input instead of giving one")
    dec.add_argument("--fps", default="2")
    dec.add_argument("--lanes", default="1,2,4")
    dec.add_argument("--aux", action="store_true", help="also produce the aux stream (every frame, small)")
    dec.add_argument("--repeat", type=int, default=1)
    run = sub.add_parser("run", help="flowocr run against the decode limit and the naive method")
    run.add_argument("video", nargs="?")
    run.add_argument("--generate", choices=sorted(GENERATED_RUN),
                     help="generate the input: " + "; ".join(f"{k}: {v[1]}" for k, v in GENERATED_RUN.items()))
    run.add_argument("--repeat", type=int, default=1)
    run.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                     help="where flowocr run (and the naive method) read: flowocr run --device")  # fmt: skip
    batch = sub.add_parser("batch", help="flowocr run over a folder of many short generated videos")
    batch.add_argument("--videos", type=int, default=50)
    batch.add_argument("--lanes", type=int, default=3)
    batch.add_argument("--budget-mb", default="16")
    batch.add_argument("--seconds", type=float, default=1.0, help="length of each video")
    batch.add_argument("--size", default="160x90", help="frame size of each video")
    args = parser.parse_args()
    if args.command == "batch":
        bench_batch(args.videos, args.lanes, args.budget_mb, args.seconds, args.size)
        return
    if args.command == "run":
        video = args.video
        if args.generate:
            target = Path(tempfile.gettempdir()) / f"flowocr-bench-{args.generate}.mp4"
            video = str(generate_subtitled(target, **GENERATED_RUN[args.generate][0]))
        if not video:
            parser.error("give VIDEO or --generate")
        bench_run(video, args.repeat, args.device)
        return
    video = str(generate(args.generate)) if args.generate else args.video
    if not video:
        parser.error("give VIDEO or --generate")
    bench_decode(video, [int(n) for n in args.lanes.split(",")], args.fps, args.aux, args.repeat)


if __name__ == "__main__":
    main()
