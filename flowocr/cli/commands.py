"""Controllers behind the CLI commands: they do the work after click has parsed the options."""

from __future__ import annotations

import bisect
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


def frames_command(
    video: str, *, fps: Fraction, start: Fraction | None, end: Fraction | None, out_dir: str | None
) -> None:
    from flowocr.decode import BlockDecoder
    from flowocr.plan import Block
    from flowocr.probe import keyframe_at_or_before, probe, sample_grid, scan_index

    if start is not None and end is not None and end <= start:
        raise UsageError(f"--end ({float(end)}) must be after --start ({float(start)})")
    info = probe(video)
    index = scan_index(info)
    grid = sample_grid(index, fps)
    times = [index.seconds(i) for i in grid]
    first = 0 if start is None else bisect.bisect_left(times, start)
    last = len(grid) if end is None else bisect.bisect_left(times, end)
    wanted = grid[first:last]
    if not wanted:
        return
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        import cv2
    hi = wanted[-1] + 1
    block = Block(number=0, lo=wanted[0], hi=hi, seek=keyframe_at_or_before(index, wanted[0]))
    decoder = BlockDecoder(info, index, block, wanted)
    for frame in decoder.frames():
        md5 = hashlib.md5(frame.image.tobytes()).hexdigest()
        record = {"index": frame.index, "pts": frame.pts, "time": float(index.seconds(frame.index)), "md5": md5}
        _emit(json.dumps(record))
        if out_dir:
            path = os.path.join(out_dir, f"{frame.index:06d}.png")
            if not cv2.imwrite(path, frame.image):
                raise UsageError(f"{path}: cannot write the frame; check that the folder is writable")
    gaps = decoder.stats.material_main
    if gaps:
        sys.stderr.write(
            f"flowocr: note: {len(gaps)} grid frames are absent from the source itself "
            f"(first: {gaps[0]}); they were skipped\n"
        )
