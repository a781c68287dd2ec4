"""Controllers behind the CLI commands: they do the work after click has parsed the options."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from fractions import Fraction

from flowocr.errors import UsageError


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")


def probe_command(video: str, *, as_json: bool, count: bool, keyframes: bool) -> None:
    from flowocr.probe import PacketScan, probe
    from flowocr.probe.index import build_index

    info = probe(video)
    facts = info.to_json()
    if count or keyframes:
        scan = PacketScan(info)
        packets = list(scan)
        shown = [p for p in packets if not p.discard]
        if count:
            facts["frames_from_content"] = len(shown)
            facts["truncated"] = scan.truncated
        if keyframes:
            facts["keyframes"] = sum(1 for p in shown if p.key)
        if shown and count:
            index = build_index(shown, info.time_base, info.frame_rate)
            facts["duration_from_content"] = float(index.duration)
    if as_json:
        _emit(json.dumps(facts, ensure_ascii=False))
        return
    rows = [
        ("file", info.path),
        ("container", info.container),
        ("codec", info.codec),
        ("size", f"{info.width}x{info.height}"),
        ("rotation", f"{info.rotation}° (frames are {info.display_width}x{info.display_height})"),
        ("pixel format", info.pix_fmt),
        ("time base", facts["time_base"]),
        ("frame rate", f"{facts['frame_rate']} ({float(info.frame_rate):.3f} fps)"),
        ("start time", _seconds(info.start_time)),
        ("duration", _seconds(info.duration)),
        ("frames (header)", "unknown" if info.frames_from_header is None else str(info.frames_from_header)),
    ]
    if "frames_from_content" in facts:
        truncated = " (file is truncated)" if facts["truncated"] else ""
        rows.append(("frames (content)", f"{facts['frames_from_content']}{truncated}"))
    if "keyframes" in facts:
        rows.append(("keyframes", str(facts["keyframes"])))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        _emit(f"{key:<{width}}  {value}")


def _seconds(value: Fraction | None) -> str:
    return "unknown" if value is None else f"{float(value):.6f} s"


def _sharded_source(video: str, *, fps: Fraction, decode: dict, aux=None, start=None, end=None):
    """Probe the video, choose its lanes, and build the sharded source (notes go to stderr once)."""
    from flowocr.decode.hwaccel import resolve_lanes
    from flowocr.decode.sharded import ShardedSource, ShardOptions
    from flowocr.probe import probe

    info = probe(video)
    lanes, notes = resolve_lanes(
        video, lanes=decode.get("lanes"), shards=decode.get("decode_shards"), hwaccel=decode.get("hwaccel", "auto")
    )
    asked_for_hw = bool(decode.get("decode_shards") or (decode.get("lanes") and "hw" in decode["lanes"]))
    if asked_for_hw or decode.get("hwaccel", "auto") != "auto":
        for note in notes:
            sys.stderr.write(f"flowocr: {note}\n")
    options = ShardOptions(
        fps=fps, block_sec=decode.get("block_sec", Fraction(20)),
        first_block_sec=decode.get("first_block_sec", Fraction(2)), budget_mb=decode.get("budget_mb", 1024.0),
        ahead=decode.get("ahead"), aux=aux, start=start, end=end,
    )  # fmt: skip
    return ShardedSource(info, lanes, options), notes


def frames_command(
    video: str, *, fps: Fraction, start: Fraction | None, end: Fraction | None, out_dir: str | None,
    report_path: str | None = None, decode: dict | None = None,
) -> None:  # fmt: skip
    if start is not None and end is not None and end <= start:
        raise UsageError(f"--end ({float(end)}) must be after --start ({float(start)})")
    source, notes = _sharded_source(video, fps=fps, decode=decode or {}, start=start, end=end)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        import cv2
    index = source.index
    try:
        for frame in source:
            md5 = hashlib.md5(frame.image.tobytes()).hexdigest()
            record = {"index": frame.index, "pts": frame.pts, "time": float(index.seconds(frame.index)), "md5": md5}
            _emit(json.dumps(record))
            if out_dir:
                path = os.path.join(out_dir, f"{frame.index:06d}.png")
                if not cv2.imwrite(path, frame.image):
                    raise UsageError(f"{path}: cannot write the frame; check that the folder is writable")
    finally:
        source.close()
    report = source.report()
    report["hw_notes"] = notes
    gaps = report["gaps"]["material"]
    if gaps:
        sys.stderr.write(f"flowocr: note: {gaps} grid frames are absent from the source itself; they were skipped\n")
    if report["plan_error"]:
        sys.stderr.write(f"flowocr: note: planning failed part way ({report['plan_error']}); the rest was decoded "
                         "as one block\n")  # fmt: skip
    if report_path:
        with open(report_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


def plan_command(video: str, *, as_json: bool, block_sec: Fraction, first_block_sec: Fraction) -> None:
    from flowocr.plan.stream import plan_video
    from flowocr.probe import probe

    info = probe(video)
    blocks, index = plan_video(info, block_sec=block_sec, first_block_sec=first_block_sec)
    rows = []
    for b in blocks:
        end = index.end_pts if b.hi == len(index) else index.pts_of(b.hi)
        rows.append({
            "block": b.number, "lo": b.lo, "hi": b.hi, "seek": b.seek, "frames": b.hi - b.lo,
            "start": float(index.seconds(b.lo)), "end": float((end - index.pts_of(0)) * index.time_base),
        })  # fmt: skip
    if as_json:
        _emit(json.dumps({"video": video, "frames": len(index), "keyframes": len(index.keyframes),
                          "block_sec": float(block_sec), "first_block_sec": float(first_block_sec),
                          "blocks": rows}))  # fmt: skip
        return
    _emit(f"{video}: {len(index)} frames, {len(index.keyframes)} keyframes, {len(rows)} blocks")
    _emit(f"{'block':>5} {'frames [lo, hi)':>18} {'seek':>7} {'start s':>9} {'end s':>9}")
    for r in rows:
        _emit(f"{r['block']:>5} {'[' + str(r['lo']) + ', ' + str(r['hi']) + ')':>18} {r['seek']:>7} "
              f"{r['start']:>9.3f} {r['end']:>9.3f}")  # fmt: skip


def run_command(
    inputs: list[str], *, out_dir: str, fps: Fraction, area: str, lang: str, engine: str, formats: str,
    skip_existing: bool, quiet: bool, decode: dict, aux: dict | None = None,
) -> None:  # fmt: skip
    from flowocr.cli.progress import make_progress
    from flowocr.errors import BatchFailed, FlowOcrError, one_line
    from flowocr.ocr.area import parse_area
    from flowocr.pipeline import RunOptions, VideoRun, expand_inputs, report_says_complete

    parse_area(area)  # a bad --area is a usage error before any work
    options = RunOptions(
        fps=fps, area=area, lang=lang, engine=engine, out_dir=out_dir,
        formats=tuple(f.strip() for f in formats.split(",") if f.strip()),
        lanes=decode.get("lanes"), decode_shards=decode.get("decode_shards"), hwaccel=decode.get("hwaccel", "auto"),
        block_sec=decode.get("block_sec", Fraction(20)), first_block_sec=decode.get("first_block_sec", Fraction(2)),
        budget_mb=decode.get("budget_mb", 1024.0), ahead=decode.get("ahead"), **(aux or {}),
    )  # fmt: skip
    videos, failed = expand_inputs(inputs)
    # One plain path is not a batch: its failure is the run's own error (its exit code, its one line).
    single = len(inputs) == 1 and not os.path.isdir(inputs[0]) and not any(ch in inputs[0] for ch in "*?[")
    if single and failed:
        from flowocr.errors import MissingInput

        raise MissingInput(failed[0][1])
    progress = make_progress(quiet=quiet, total=len(videos))
    done = 0
    try:
        for n, video in enumerate(videos, start=1):
            if skip_existing and report_says_complete(options.output(video, "json")):
                progress.note(f"[{n}/{len(videos)}] {video}: skipped (its report says complete)")
                continue
            run = VideoRun(video, options, listener=progress.listener(n, video))
            try:
                for _ in run.cues():
                    pass
            except FlowOcrError as exc:
                if single:
                    raise
                failed.append((video, one_line(exc)))
                progress.failed(video, one_line(exc))
                continue
            done += 1
            progress.finished(video, run.report)
    finally:
        progress.close()
    if failed:
        lines = [f"{len(failed)} of {len(videos) + sum(1 for f in failed if f[0] not in videos)} inputs failed:"]
        lines += [f"  {reason}" for _, reason in failed]
        sys.stderr.write("\n".join(lines) + "\n")
        raise BatchFailed(f"{len(failed)} input(s) failed; {done} completed")
