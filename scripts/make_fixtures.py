"""Generate the committed test videos in ``fixtures/`` and their ground-truth subtitles.

Run ``python scripts/make_fixtures.py [--out fixtures] [--only NAME]``; it needs only the standard library
and an ffmpeg/ffprobe 5.1+ built with libass, libx264, libx265, libvpx and libsvtav1, plus the Noto Sans
CJK font (Debian: fonts-noto-cjk).

Every fixture is a lavfi background with a subtitle file we author burned in by ffmpeg's ``subtitles``
filter (libass), so the text on every frame is known:

* ``demo.mp4`` -- H.264 with B-frames, 25 fps, 640x360, 12 s over moving gradients; bilingual cues (a
  Chinese line above its English line), back-to-back cues, one cue drawn at the top of the picture. It is also
  the calibration's probe clip: ``fixtures/demo.mp4`` links to ``flowocr/calibrate/data/demo.mp4`` (package
  data), and ffmpeg writes the new one through that link.
* ``h264_bframes_2997.mp4`` -- H.264, 3 B-frames, GOP 30, 30000/1001 fps, 640x360, ~8 s over a grainy
  circular gradient; English cues, back-to-back cues and one cue shorter than 0.5 s.
* ``hevc_opengop.mkv`` -- HEVC (libx265) with open GOPs: CRA keyframes every 24 frames, 4 B-frames,
  25 fps, 640x360, 8 s over a zooming Mandelbrot; Chinese cues, one starting exactly on a CRA frame.
* ``vp9_60.webm`` -- VP9, 60 fps, keyframe every 60 frames, 640x360, 6 s over a cellular automaton; English.
* ``av1.mkv`` -- AV1 (SVT-AV1), 25 fps, 640x360, 5 s over SMPTE bars with noise; two English cues.
* ``vfr.mkv`` -- H.264 in Matroska (1 ms time base) with variable frame rate: 10 fps, then 25 fps, then
  50 fps, then irregular 20/40 ms steps, cut from a 50 fps Game of Life by ``select`` before the
  subtitles are burned, written with ``-fps_mode passthrough``; English cues across rate changes.
  Only the pts steps vary: ffmpeg's Matroska muxer writes DefaultDuration 20 ms, so every packet
  reports a 20 ms duration.
* ``start_offset.mkv`` -- H.264, 25 fps, 640x360, 6 s of noisy colour whose first frame is at 7.5 s
  (``-output_ts_offset``); bilingual cues, the first one starting on the first frame. ffprobe reports
  its format duration as 13.5 s (Matroska stores the end time); the manifest's ``duration`` is 6 s.

Ground truth convention: ``fixtures/NAME.srt`` sits beside ``fixtures/NAME.EXT``. Its times are seconds
relative to the presentation time of the video's first frame, and a cue is on screen on exactly the
frames whose relative time t satisfies ``start <= t < end`` (half-open). Cues are authored in seconds and
snapped to the first frame at or after that time; the SRT time written for a boundary frame is the
millisecond clock libass compares with, ``int(pts * av_q2d(time_base) * 1000)`` as vf_subtitles computes
it. That value lies in (previous frame time, boundary frame time], so the half-open rule selects exactly
the frames libass drew on. Cues meant for the top of the picture get an ``{\\an8}`` tag in the burned
copy only; the ground truth holds plain text.

After encoding, each fixture is checked: it decodes without error; a second render of the same filter
graph over a black picture says on which frames text was drawn, and that must equal the frames the SRT
predicts from the encoded file's own timestamps; HEVC must contain CRA pictures, the VFR file must have
differing frame intervals and the offset file must start at 7.5 s. OCR legibility is not checked here.
``fixtures/manifest.json`` lists what each file is. Output is deterministic: fixed seeds and bit-exact
muxing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from pathlib import Path

FFMPEG = "ffmpeg"
FFPROBE = "ffprobe"

# libass sizes fonts against PlayResY, which ffmpeg sets to 288 for tracks made from SRT, so FontSize 26
# draws roughly 32 px text at 360 lines (24 px at 270).
SUBTITLE_STYLE = (
    "FontName=Noto Sans CJK SC,FontSize=26,PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,"
    "BackColour=&H00000000,BorderStyle=1,Outline=2,Shadow=0,Alignment=2,MarginV=16"
)
# A pixel brighter than this in the black-background render means text was drawn on that frame.
TEXT_LUMA = 128
COMMON_OUTPUT_ARGS = ["-an", "-sn", "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact"]


@dataclass(frozen=True)
class Cue:
    """One subtitle as authored: seconds from the first frame, snapped to frames later."""

    start: Fraction
    end: Fraction
    text: str
    top: bool = False


@dataclass(frozen=True)
class KeepRule:
    """Keep source frame n (while n < until) when n % modulus is in residues; builds VFR timelines."""

    until: int
    modulus: int
    residues: tuple[int, ...]


@dataclass(frozen=True)
class Fixture:
    """One test video: background graph, timeline, encoder arguments and cues."""

    file: str
    description: str
    width: int
    height: int
    rate: Fraction
    source_frames: int
    background: str
    encode: tuple[str, ...]
    cues: tuple[Cue, ...]
    keep: tuple[KeepRule, ...] = ()
    ts_offset: Fraction = Fraction(0)

    @property
    def stem(self) -> str:
        return Path(self.file).stem

    @property
    def vfr(self) -> bool:
        return bool(self.keep)


def cue(start: str, end: str, *lines: str, top: bool = False) -> Cue:
    return Cue(Fraction(start), Fraction(end), "\n".join(lines), top)


def x264(gop: int, crf: int) -> tuple[str, ...]:
    return ("-c:v", "libx264", "-preset", "medium", "-crf", str(crf), "-bf", "3", "-g", str(gop),
            "-keyint_min", str(gop), "-sc_threshold", "0", "-pix_fmt", "yuv420p")


FIXTURES: tuple[Fixture, ...] = (
    Fixture(
        file="demo.mp4",
        description="H.264 (3 B-frames, GOP 50), 25 fps, bilingual zh+en cues over moving gradients",
        width=640, height=360, rate=Fraction(25), source_frames=300,
        background=("gradients=s=640x360:r=25:n=3:c0=0x1d3557:c1=0x6d597a:c2=0x2a9d8f:"
                    "x0=0:y0=0:x1=640:y1=360:speed=0.03:seed=7"),
        encode=x264(50, 26) + ("-movflags", "+faststart"),
        cues=(
            cue("0.48", "2.48", "欢迎观看本期节目", "Welcome to today's show"),
            cue("2.48", "4.40", "我们从视频里读取字幕", "We read subtitles from video"),
            cue("5.00", "6.80", "每一帧都有准确的时间", "Every frame has an exact time"),
            cue("6.80", "8.60", "解码被分成多个并行的块", "Decoding runs in parallel blocks"),
            cue("9.00", "10.40", "结果保存为字幕文件", "Results are saved as subtitles"),
            cue("10.60", "11.60", "感谢观看", "Thanks for watching", top=True),
        ),
    ),
    Fixture(
        file="h264_bframes_2997.mp4",
        description="H.264 (3 B-frames, GOP 30), 30000/1001 fps, English cues incl. back-to-back and 0.4 s",
        width=640, height=360, rate=Fraction(30000, 1001), source_frames=240,
        background=("gradients=s=640x360:r=30000/1001:type=circular:n=4:c0=0x264653:c1=0x8a5a44:"
                    "c2=0x3d405b:c3=0x81b29a:speed=0.05:seed=29,format=yuv420p,"
                    "noise=alls=10:allf=t:all_seed=3"),
        encode=x264(30, 30),
        cues=(
            cue("0.5", "2.0", "The train leaves at noon."),
            cue("2.0", "3.5", "Please take your seats now."),
            cue("3.5", "3.9", "Hurry!"),
            cue("4.5", "6.0", "Next stop: Central Station."),
            cue("6.5", "7.5", "Mind the gap, please."),
        ),
    ),
    Fixture(
        file="hevc_opengop.mkv",
        description="HEVC open GOP (CRA every 24 frames, 4 B-frames), 25 fps, Chinese cues over a Mandelbrot",
        width=640, height=360, rate=Fraction(25), source_frames=200,
        background="mandelbrot=s=640x360:r=25",
        encode=("-c:v", "libx265", "-preset", "fast", "-crf", "32", "-pix_fmt", "yuv420p", "-x265-params",
                "open-gop=1:keyint=24:min-keyint=24:bframes=4:scenecut=0:frame-threads=1:pools=none:"
                "log-level=error"),
        cues=(
            cue("0.40", "1.80", "今天天气很好"),
            cue("1.92", "3.60", "我们一起去公园散步吧"),
            cue("3.60", "5.00", "公园里开满了花"),
            cue("5.60", "7.20", "晚上回家吃饭"),
        ),
    ),
    Fixture(
        file="vp9_60.webm",
        description="VP9 realtime, keyframe every 60 frames, 60 fps, English cues over a cellular automaton",
        width=640, height=360, rate=Fraction(60), source_frames=360,
        background=("cellauto=s=80x45:r=60:rule=30:seed=3,scale=640:360:flags=neighbor,"
                    "format=yuv420p,lutyuv=y=val*0.22+24:u=val*0.9+14"),
        encode=("-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "0", "-crf", "42",
                "-g", "60", "-keyint_min", "60", "-threads", "1", "-row-mt", "0", "-pix_fmt", "yuv420p"),
        cues=(
            cue("0.5", "1.5", "Fast motion at sixty frames."),
            cue("1.5", "2.9", "Every frame is a new picture."),
            cue("3.2", "4.3", "Keyframes come once a second."),
            cue("4.6", "5.5", "The end is near."),
        ),
    ),
    Fixture(
        file="av1.mkv",
        description="AV1 (SVT-AV1 preset 12, GOP 50), 25 fps, 640x360, English cues over noisy SMPTE bars",
        width=640, height=360, rate=Fraction(25), source_frames=125,
        background="smptebars=s=640x360:r=25,noise=alls=10:allf=t:all_seed=5",
        encode=("-c:v", "libsvtav1", "-preset", "12", "-crf", "45", "-g", "50", "-pix_fmt", "yuv420p",
                "-svtav1-params", "lp=1"),
        cues=(
            cue("0.6", "2.2", "AV1 is a royalty-free codec."),
            cue("2.8", "4.4", "Decoding it takes more work."),
        ),
    ),
    Fixture(
        file="vfr.mkv",
        description="H.264 variable frame rate (100/40/20 ms, then irregular 20/40 ms), English cues",
        width=640, height=360, rate=Fraction(50), source_frames=400,
        background=("life=s=160x90:r=50:seed=11:ratio=0.3:mold=8:life_color=0x5d8aa8:"
                    "death_color=0x13315c:mold_color=0x2e4a6b,scale=640:360:flags=neighbor,gblur=sigma=2"),
        keep=(KeepRule(125, 5, (0,)), KeepRule(250, 2, (0,)), KeepRule(325, 1, (0,)),
              KeepRule(400, 3, (0, 1))),
        encode=x264(50, 30),
        cues=(
            cue("0.3", "1.5", "Slow frames at ten per second."),
            cue("2.2", "3.3", "Now the rate goes up."),
            cue("3.8", "4.6", "Twenty-five frames a second."),
            cue("5.1", "6.0", "Fifty frames a second now."),
            cue("6.7", "7.6", "Irregular gaps between frames."),
        ),
    ),
    Fixture(
        file="start_offset.mkv",
        description="H.264, 25 fps, first frame at 7.5 s (output_ts_offset), bilingual zh+en cues",
        width=640, height=360, rate=Fraction(25), source_frames=150,
        background="color=c=0x2a4d69:s=640x360:r=25,noise=alls=14:allf=t+u:all_seed=21",
        encode=x264(50, 28),
        ts_offset=Fraction(15, 2),
        cues=(
            cue("0.0", "1.6", "片头字幕", "Opening titles"),
            cue("2.0", "3.6", "时间戳不从零开始", "Timestamps do not start at zero"),
            cue("4.0", "5.4", "但字幕依然准确", "Yet subtitles stay accurate"),
        ),
    ),
)


# ---------------------------------------------------------------------------------------------------------
# Timeline and ground truth (pure)


def kept_source_frames(fx: Fixture) -> list[int]:
    """Source frame numbers that survive the VFR ``select``; every frame for a CFR fixture."""
    if not fx.keep:
        return list(range(fx.source_frames))
    kept = []
    for n in range(fx.source_frames):
        rule = next(r for r in fx.keep if n < r.until)
        if n % rule.modulus in rule.residues:
            kept.append(n)
    return kept


def select_expr(rules: tuple[KeepRule, ...]) -> str:
    """ffmpeg ``select`` expression equal to ``kept_source_frames`` (n = source frame number)."""
    expr = "0"
    for rule in reversed(rules):
        test = "+".join(f"eq(mod(n\\,{rule.modulus})\\,{r})" for r in rule.residues)
        expr = f"if(lt(n\\,{rule.until})\\,{test}\\,{expr})"
    return expr


def libass_ms(pts: int, time_base: Fraction) -> int:
    """The clock vf_subtitles hands libass: ``(double)pts * av_q2d(tb) * 1000`` truncated to an integer."""
    return int(float(pts) * (time_base.numerator / time_base.denominator) * 1000)


def snap(seconds: Fraction, times: list[Fraction]) -> int:
    """Index of the first frame shown at or after ``seconds``."""
    return next(i for i, t in enumerate(times) if t >= seconds)


def cue_ms(fx: Fixture, kept: list[int]) -> list[tuple[int, int]]:
    """Start/end milliseconds of every cue, as libass will compare them, checked against frame times."""
    tb = 1 / fx.rate
    times = [n * tb for n in kept]
    spans = []
    for c in fx.cues:
        first, stop = snap(c.start, times), snap(c.end, times)
        assert 0 <= first < stop < len(times), (fx.file, c)
        start_ms, end_ms = libass_ms(kept[first], tb), libass_ms(kept[stop], tb)
        for i, ms in ((first, start_ms), (stop, end_ms)):
            assert times[i] >= Fraction(ms, 1000) and (i == 0 or times[i - 1] < Fraction(ms, 1000))
        spans.append((start_ms, end_ms))
    return spans


def srt_time(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d},{millis:03d}"


def srt_text(cues: tuple[Cue, ...], spans: list[tuple[int, int]], burned: bool) -> str:
    """SRT document; the burned copy carries ``{\\an8}`` on top cues, the ground truth does not."""
    blocks = []
    for number, (c, (start, end)) in enumerate(zip(cues, spans, strict=True), start=1):
        text = ("{\\an8}" + c.text) if (burned and c.top) else c.text
        blocks.append(f"{number}\n{srt_time(start)} --> {srt_time(end)}\n{text}\n")
    return "\n".join(blocks)


def filter_graph(fx: Fixture, burn_srt: Path, black: bool) -> str:
    """Background, VFR cut, then subtitles; ``black`` blanks the picture so only the text remains."""
    steps = [fx.background, f"trim=end_frame={fx.source_frames}"]
    if fx.keep:
        steps.append(f"select='{select_expr(fx.keep)}'")
    tb = 1 / fx.rate
    steps += ["format=yuv420p", f"settb={tb.numerator}/{tb.denominator}"]
    if black:
        steps.append("drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill")
    steps.append(f"subtitles=filename={burn_srt}:force_style='{SUBTITLE_STYLE}'")
    return ",".join(steps) + "[v]"


# ---------------------------------------------------------------------------------------------------------
# ffmpeg / ffprobe


def run(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(argv, capture_output=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{argv[0]} exited with {proc.returncode}: {' '.join(argv)}\n{tail}")
    return proc


def encode(fx: Fixture, burn_srt: Path, out: Path) -> None:
    argv = [FFMPEG, "-v", "error", "-y", "-filter_complex", filter_graph(fx, burn_srt, black=False),
            "-map", "[v]", "-fps_mode", "passthrough", *fx.encode, *COMMON_OUTPUT_ARGS]
    if fx.ts_offset:
        argv += ["-output_ts_offset", str(float(fx.ts_offset))]
    run(argv + [str(out)])


def text_frames(fx: Fixture, burn_srt: Path) -> list[tuple[bool, str]]:
    """Per frame of the black render: (text drawn?, hash of the picture)."""
    argv = [FFMPEG, "-v", "error", "-filter_complex", filter_graph(fx, burn_srt, black=True),
            "-map", "[v]", "-fps_mode", "passthrough", "-pix_fmt", "gray", "-f", "rawvideo", "-"]
    raw = run(argv).stdout
    size = fx.width * fx.height
    frames = [raw[i:i + size] for i in range(0, len(raw), size)]
    return [(max(f) > TEXT_LUMA, hashlib.sha1(f).hexdigest()) for f in frames]


def probe(path: Path) -> dict:
    argv = [FFPROBE, "-v", "error", "-select_streams", "v:0", "-of", "json",
            "-show_entries", "stream=codec_name,width,height,time_base:format=start_time,duration",
            "-show_entries", "packet=pts,duration,flags", str(path)]
    return json.loads(run(argv).stdout)


def nal_types(path: Path) -> list[int]:
    """HEVC nal_unit_type of every VCL NAL unit, from the trace_headers bitstream filter."""
    argv = [FFMPEG, "-v", "info", "-i", str(path), "-map", "0:v", "-c", "copy", "-bsf:v", "trace_headers",
            "-f", "null", "-"]
    log = run(argv).stderr.decode(errors="replace")
    return [int(t) for t in re.findall(r"nal_unit_type\s+\d+\s+=\s+(\d+)", log) if int(t) < 32]


def decode_errors(path: Path) -> str:
    proc = subprocess.run([FFMPEG, "-v", "error", "-i", str(path), "-f", "null", "-"], capture_output=True)
    return proc.stderr.decode(errors="replace").strip() or ("" if proc.returncode == 0 else "nonzero exit")


# ---------------------------------------------------------------------------------------------------------
# Checks and manifest


def frame_times(info: dict) -> list[Fraction]:
    """Presentation times of all frames relative to the first one, from sorted packet pts."""
    tb = Fraction(info["streams"][0]["time_base"])
    pts = sorted(int(p["pts"]) for p in info["packets"])
    return [(p - pts[0]) * tb for p in pts]


def content_duration(info: dict) -> Fraction:
    """First frame's pts to the end of the last frame (pts + packet duration), in seconds."""
    tb = Fraction(info["streams"][0]["time_base"])
    packets = [(int(p["pts"]), int(p.get("duration", 0))) for p in info["packets"]]
    return (max(pts + dur for pts, dur in packets) - min(pts for pts, _ in packets)) * tb


def expected_cue(times: list[Fraction], spans: list[tuple[int, int]]) -> list[int | None]:
    """Which cue (index) the ground truth puts on each frame, None for none."""
    result: list[int | None] = []
    for t in times:
        hits = [i for i, (s, e) in enumerate(spans) if Fraction(s, 1000) <= t < Fraction(e, 1000)]
        if len(hits) > 1:
            raise AssertionError(f"cues {hits} overlap at {float(t):.4f}s")
        result.append(hits[0] if hits else None)
    return result


def check_text_timing(fx: Fixture, times: list[Fraction], spans: list, drawn: list[tuple[bool, str]]) -> None:
    """The frames libass drew on are exactly those the SRT predicts, one distinct picture per cue."""
    if len(drawn) != len(times):
        raise AssertionError(f"{fx.file}: black render has {len(drawn)} frames, file has {len(times)}")
    expected = expected_cue(times, spans)
    pictures: dict[int, set[str]] = {}
    for index, (want, (has_text, digest)) in enumerate(zip(expected, drawn, strict=True)):
        if (want is not None) != has_text:
            raise AssertionError(f"{fx.file}: frame {index} at {float(times[index]):.4f}s text={has_text}, "
                                 f"ground truth says cue {want}")
        if want is not None:
            pictures.setdefault(want, set()).add(digest)
    if any(len(p) != 1 for p in pictures.values()) or len(set().union(*pictures.values())) != len(fx.cues):
        raise AssertionError(f"{fx.file}: cues do not map to one distinct rendered picture each")


def check_container(fx: Fixture, path: Path, info: dict, times: list[Fraction]) -> None:
    start = float(info["format"]["start_time"])
    if abs(start - float(fx.ts_offset)) > 0.002:
        raise AssertionError(f"{fx.file}: start_time {start}, wanted {float(fx.ts_offset)}")
    # A CFR stream in a 1 ms container still shows 16/17 ms steps at 60 fps: allow one tick of rounding.
    tick = Fraction(info["streams"][0]["time_base"])
    intervals = {b - a for a, b in pairwise(times)}
    is_cfr = all(abs(i - 1 / fx.rate) <= tick for i in intervals)
    if fx.vfr == is_cfr:
        raise AssertionError(f"{fx.file}: frame intervals {sorted(intervals)} do not match vfr={fx.vfr}")
    if fx.file.startswith("hevc"):
        types = nal_types(path)
        if 21 not in types or not {19, 20} & set(types):
            raise AssertionError(f"{fx.file}: expected IDR and CRA pictures, found NAL types {set(types)}")
    errors = decode_errors(path)
    if errors:
        raise AssertionError(f"{fx.file}: decode errors: {errors}")


def manifest_entry(fx: Fixture, path: Path, info: dict, times: list[Fraction]) -> dict:
    stream = info["streams"][0]
    return {
        "file": fx.file,
        "srt": f"{fx.stem}.srt",
        "codec": stream["codec_name"],
        "fps": f"{fx.rate.numerator}/{fx.rate.denominator}",
        "vfr": fx.vfr,
        "frame_intervals_ms": sorted({float((b - a) * 1000) for a, b in pairwise(times)}),
        "start_time": round(float(info["format"]["start_time"]), 6),
        "time_base": stream["time_base"],
        "width": stream["width"],
        "height": stream["height"],
        "duration": round(float(content_duration(info)), 6),
        # What ffprobe reports; Matroska stores the end timestamp, so this includes a start offset.
        "format_duration": round(float(info["format"]["duration"]), 6),
        "frames": len(times),
        "keyframes": sum("K" in p["flags"] for p in info["packets"]),
        "cues": len(fx.cues),
        "bytes": path.stat().st_size,
        "description": fx.description,
    }


# ---------------------------------------------------------------------------------------------------------
# Driver


def build(fx: Fixture, out_dir: Path, tmp: Path) -> dict:
    kept = kept_source_frames(fx)
    spans = cue_ms(fx, kept)
    (out_dir / f"{fx.stem}.srt").write_text(srt_text(fx.cues, spans, burned=False), encoding="utf-8")
    burn_srt = tmp / f"{fx.stem}.burn.srt"
    burn_srt.write_text(srt_text(fx.cues, spans, burned=True), encoding="utf-8")
    video = out_dir / fx.file
    encode(fx, burn_srt, video)
    info = probe(video)
    times = frame_times(info)
    if len(times) != len(kept):
        raise AssertionError(f"{fx.file}: {len(times)} frames in the file, {len(kept)} planned")
    check_container(fx, video, info, times)
    check_text_timing(fx, times, spans, text_frames(fx, burn_srt))
    return manifest_entry(fx, video, info, times)


def print_summary(entries: list[dict]) -> None:
    header = (f"{'file':24} {'bytes':>8} {'codec':6} {'fps':>11} {'vfr':>5} {'frames':>6} {'keys':>4} "
              f"{'start':>7}")
    print(header)
    print("-" * len(header))
    for e in entries:
        print(f"{e['file']:24} {e['bytes']:>8} {e['codec']:6} {e['fps']:>11} {e['vfr']!s:>5} "
              f"{e['frames']:>6} {e['keyframes']:>4} {e['start_time']:>7.3f}")
    print(f"{'total':24} {sum(e['bytes'] for e in entries):>8}")


def write_manifest(out_dir: Path, entries: list[dict]) -> None:
    """Merge ``entries`` into manifest.json, keeping the fixture order of FIXTURES."""
    path = out_dir / "manifest.json"
    known = {e["file"]: e for e in json.loads(path.read_text())["fixtures"]} if path.exists() else {}
    known.update({e["file"]: e for e in entries})
    ordered = [known[fx.file] for fx in FIXTURES if fx.file in known]
    doc = {
        "generator": "scripts/make_fixtures.py",
        "convention": "SRT times are seconds from the first frame's presentation time; a cue is on screen "
                      "on frames with start <= t < end",
        "fixtures": ordered,
    }
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def select_fixtures(only: str | None) -> list[Fixture]:
    if only is None:
        return list(FIXTURES)
    chosen = [fx for fx in FIXTURES if only in (fx.file, fx.stem)]
    if not chosen:
        names = ", ".join(fx.stem for fx in FIXTURES)
        raise SystemExit(f"Unknown fixture ({only}). Supported values are {names}.")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("fixtures"), help="output folder (default fixtures)")
    parser.add_argument("--only", help="build one fixture, by file name or stem")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    entries = []
    with tempfile.TemporaryDirectory(prefix="flowocr-fixtures-") as tmp:
        for fx in select_fixtures(args.only):
            print(f"building {fx.file} ...", file=sys.stderr, flush=True)
            entries.append(build(fx, args.out, Path(tmp)))
    write_manifest(args.out, entries)
    print_summary(entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
