"""Generate a random, realistic evaluation corpus of subtitle videos with frame-exact ground truth (DESIGN §13).

    python scripts/make_corpus.py --seed S --count N OUT [--jobs J] [--only K[,K...]] [--duration A,B]
                                  [--max-height H] [--quick] [--no-verify]

It needs ffmpeg/ffprobe 5.1+ with libass, libx264, libx265, libvpx, libsvtav1 and libxvid, fontconfig with at
least one CJK font (Debian: fonts-noto-cjk), and numpy (for the verifier). Real footage comes from
``../shared/videos`` (relative to the repository) when that folder is present.

**What is drawn.** Video ``k`` of seed ``S`` is drawn from ``random.Random(f"{S}:{k}")`` alone, so the first 60
videos of ``--count 61`` are those of ``--count 60`` and ``--only 7`` regenerates video 7 as it was. The draws also
depend on the options that bound them (``--duration``, ``--max-height``, ``--quick``) and on what this machine
offers (the installed font families, whether the footage is present), never on ``--jobs``. Each video draws a
resolution, frame rate (CFR or a VFR cut of a CFR timeline), codec, container, bitrate, GOP, B-frames and open
GOP; a background (lavfi sources or whitelisted footage; still, slow, fast, shot cuts, flashes, dark, bright);
a language (zh, en, ja, bilingual zh+en, or one Latin-script language with diacritics: fr, de, es, pt, pl, cs,
tr, it), fonts, styles and positions; a cue schedule (ordinary cues, 0.2-0.5 s cues, 1-3-frame cues,
back-to-back cues, one-frame gaps, 10 s cues, fades, short cues replaced at once by the next); sometimes a second
track of signs at the top or middle, and a corner logo.

**Files.** ``OUT/NAME.EXT`` (the video), ``OUT/NAME.srt`` (ground truth of the subtitle cues, signs included,
logos not), ``OUT/NAME.json`` (categories, ``lang`` among them: the ``--lang`` a user of the
video gives; per-cue truth and attributes, overlays; ``verified`` says whether the
checks below ran, and each cue's ``bbox`` and each overlay's ``box`` are then measured, else the overlay's box
is estimated) and ``OUT/corpus.json`` (all ``--count`` names in order, also with ``--only``). NAME is
``NNN-<codec>-<height>p-<fps label>`` (index from 000). Files of an index under another name (an earlier run
with other options) are removed when that index is generated again. One run at a time per OUT (a lock).

**Ground truth.** SRT times are seconds from the first frame's presentation time; a cue is on screen on exactly
the frames with ``start <= t < end``. Subtitles are burned by ffmpeg's ``ass`` filter (libass) from an ASS script
whose PlayResX/PlayResY are the video size, so font sizes, outlines and positions are in video pixels. libass
compares integer milliseconds, ``int(pts * time_base * 1000)`` (:func:`libass_ms`), with event times in
centiseconds: every event boundary is authored as a frame ``b`` and written as the largest centisecond ``c`` with
``10c <= ms(b)``, which is above ``ms(b-1)`` whenever frames are at least 10 ms apart (up to 100 fps). The SRT
value written for a truth boundary frame ``b`` is ``ms(b)``: it lies in ``(t(b-1), t(b)]``, so the half-open
rule (and ``flowocr.cues.score.frame_at_or_after``) selects exactly the frames libass drew on.

**Fades.** ``{\\fad(in,out)}`` makes libass fade the alpha linearly over the first ``in`` and last ``out`` ms of
the event. A faded cue counts as on screen while it is at least half opaque: from the first frame whose libass
time is at least ``event_start + in/2`` up to (not including) the first frame whose time is past
``event_end - out/2`` (at exactly that time libass draws it with alpha 127 of 255, still half opaque). Fade
lengths are even numbers of milliseconds, so these bounds are whole milliseconds. The JSON keeps the event times
(``event_start``/``event_end``) beside the truth (``start``/``end``).

**Verification** (default; ``--no-verify`` skips it). The same ASS script with each track's colour replaced by
one primary colour (dialogue green, signs red, logo blue; outlines, shadows and boxes black) is rendered over a
black picture on the same timeline (planar RGB rawvideo, nothing encoded). Per cue: its track's plane shows one
unchanging picture on every truth frame, different from the frames just before and after (for faded cues: at
least half of the cue's full intensity on the truth frames and at most about half on the other event frames);
the text lies inside the picture; texts of two tracks do not overlap; and nothing is drawn on a plane where no
event of its track is active. The encoded file must decode without an error (``ffmpeg -v error``), and its
packet timestamps (ffprobe) must give the planned frame count and times (within one tick of the container's time
base), with every SRT boundary selecting its truth frame on the file's own timestamps. A failed check is an
error naming the video and the cue.

**Determinism and caching.** Encoders run single-threaded with fixed parameters (x264 ``-threads 1``, x265
``frame-threads=1:pools=none``, libvpx ``-threads 1``, SVT-AV1 ``lp=1``), with ``-fflags +bitexact -flags:v
+bitexact -map_metadata -1``, so the same machine writes the same bytes; the truth depends only on the draws.
Parallelism comes from ``--jobs`` (processes; default: the CPUs), the decoders and filters of each ffmpeg use
``CPUs / jobs`` threads. ``params_hash`` (in the JSON) hashes the plan, the ASS script, the filter graph and the
encoder arguments: a video whose JSON, video and SRT exist with a matching hash is skipped. Files are written
under temporary names and renamed when the video is complete and verified (the JSON last).

**Footage.** Only regions and time windows of the shared clips that were checked free of text are used
(:data:`FOOTAGE`): by looking at extracted frames and by running flowocr's OCR engine on the region at 4 frames
per second over each window (its few detections there were looked at: shapes such as a jacket or a crossfade, no
text). Clips with timecodes, counters, test patterns, screen text or logos elsewhere are not listed.
"""

from __future__ import annotations

import argparse
import bisect
import fcntl
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

FFMPEG = "ffmpeg"
FFPROBE = "ffprobe"
#: Bump when the meaning of a drawn parameter changes without changing the plan, the ASS or the ffmpeg arguments.
VERSION = 1
REPO = Path(__file__).resolve().parent.parent
FOOTAGE_DIR = REPO.parent / "shared" / "videos"
COMMON_OUTPUT_ARGS = ("-an", "-sn", "-dn", "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact")
NAME_RE = re.compile(r"^\d{3,}-(h264|hevc|vp9|av1|mpeg4)-\d+p-(\d+(\.\d+)?|vfr)$")
OUR_SUFFIXES = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".srt", ".json")

Track = Literal["dialogue", "sign"]
Position = Literal["bottom", "top", "middle"]
Lang = Literal["zh", "en", "ja", "zh+en", "latin"]
Motion = Literal["still", "slow", "fast"]


# ---------------------------------------------------------------------------------------------------------
# Timeline and ground truth (pure)


@dataclass(frozen=True)
class KeepRule:
    """Keep source frame n (while n < until) when n % modulus is in residues; builds VFR timelines."""

    until: int
    modulus: int
    residues: tuple[int, ...]


@dataclass(frozen=True)
class Timeline:
    """The frames of one video: source frames ``0..source_frames-1`` at ``rate`` (``pts = n`` in time base
    ``1/rate``), of which a VFR timeline keeps those its rules select. Invariant: ``pts`` is strictly
    increasing and starts at 0, so ``times`` are seconds from the first frame."""

    rate: Fraction
    source_frames: int
    keep: tuple[KeepRule, ...] = ()

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.source_frames < 2:
            raise ValueError(f"a timeline needs a positive rate and 2+ frames, got {self.rate}, {self.source_frames}")
        if self.keep and not self.pts[0] == 0:
            raise ValueError("a VFR timeline must keep source frame 0")

    @property
    def vfr(self) -> bool:
        return bool(self.keep)

    @property
    def time_base(self) -> Fraction:
        return 1 / self.rate

    @cached_property
    def pts(self) -> tuple[int, ...]:
        if not self.keep:
            return tuple(range(self.source_frames))
        kept = []
        for n in range(self.source_frames):
            rule = next((r for r in self.keep if n < r.until), None)
            if rule is not None and n % rule.modulus in rule.residues:
                kept.append(n)
        return tuple(kept)

    @cached_property
    def times(self) -> tuple[Fraction, ...]:
        return tuple(p * self.time_base for p in self.pts)

    @cached_property
    def ms(self) -> tuple[int, ...]:
        """The clock libass is handed for each frame (see :func:`libass_ms`)."""
        return tuple(libass_ms(p, self.time_base) for p in self.pts)

    @property
    def frames(self) -> int:
        return len(self.pts)

    @property
    def duration(self) -> Fraction:
        """First frame to the end of the last one (a VFR timeline's last frame lasts one source frame)."""
        return self.times[-1] + self.time_base


def libass_ms(pts: int, time_base: Fraction) -> int:
    """The clock vf_subtitles/vf_ass hands libass: ``(double)pts * av_q2d(tb) * 1000`` truncated to an integer."""
    return int(float(pts) * (time_base.numerator / time_base.denominator) * 1000)


def select_expr(rules: Sequence[KeepRule]) -> str:
    """ffmpeg ``select`` expression equal to :attr:`Timeline.pts` (n = source frame number), commas escaped."""
    expr = "0"
    for rule in reversed(rules):
        test = "+".join(f"eq(mod(n\\,{rule.modulus})\\,{r})" for r in rule.residues)
        expr = f"if(lt(n\\,{rule.until})\\,{test}\\,{expr})"
    return expr


def boundary_cs(ms: Sequence[int], frame: int) -> int:
    """ASS time (centiseconds) of an event boundary on ``frame``: libass then switches exactly at that frame.

    The value is the largest ``c`` with ``10c <= ms[frame]``; it must exceed ``ms[frame - 1]``. ``frame ==
    len(ms)`` means after the last frame.
    """
    if frame == len(ms):
        return ms[-1] // 10 + 1
    if not 0 <= frame < len(ms):
        raise ValueError(f"frame {frame} is outside 0..{len(ms)}")
    c = ms[frame] // 10
    if frame > 0 and 10 * c <= ms[frame - 1]:
        raise ValueError(f"frames {frame - 1} and {frame} are less than 10 ms apart: no centisecond between them")
    return c


def shown_frames(ms: Sequence[int], start_cs: int, end_cs: int) -> tuple[int, int]:
    """Frames ``[lo, hi)`` on which libass shows an event from ``start_cs`` to ``end_cs`` (start <= now < end)."""
    return bisect.bisect_left(ms, 10 * start_cs), bisect.bisect_left(ms, 10 * end_cs)


def fade_truth(ms: Sequence[int], start_cs: int, end_cs: int, fade_in: int, fade_out: int) -> tuple[int, int]:
    """Frames ``[lo, hi)`` on which an event with ``\\fad(fade_in, fade_out)`` is at least half opaque.

    On screen while ``now - start >= fade_in / 2`` and ``end - now >= fade_out / 2`` (libass ms); with no fade
    this is :func:`shown_frames`. Computed on doubled milliseconds so odd fades stay exact.
    """
    doubled = [2 * m for m in ms]
    lo = bisect.bisect_left(doubled, 20 * start_cs + fade_in)
    hi = bisect.bisect_right(doubled, 20 * end_cs - fade_out) if fade_out else bisect.bisect_left(doubled, 20 * end_cs)
    return lo, hi


def srt_ms(timeline: Timeline, frame: int) -> int:
    """The SRT time (ms) written for a truth boundary on ``frame``: a value in ``(t[frame-1], t[frame]]``."""
    if frame == timeline.frames:
        value = math.ceil(timeline.duration * 1000)
    else:
        value = timeline.ms[frame]
    t = timeline.times
    exact = Fraction(value, 1000)
    if frame < len(t) and exact > t[frame] or frame > 0 and exact <= t[frame - 1]:
        raise ValueError(f"{value} ms does not select frame {frame} (frames at {float(t[frame - 1])}, ...)")
    return value


def srt_time(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d},{millis:03d}"


def ass_time(cs: int) -> str:
    hours, rest = divmod(cs, 360_000)
    minutes, rest = divmod(rest, 6000)
    seconds, centis = divmod(rest, 100)
    return f"{hours}:{minutes:02d}:{seconds:02d}.{centis:02d}"


def decimal_s(value: int, places: int) -> str:
    """``value`` in units of 10**-places seconds as a decimal string (``12345, 3 -> "12.345"``)."""
    whole, frac = divmod(value, 10**places)
    return f"{whole}.{frac:0{places}d}"


# ---------------------------------------------------------------------------------------------------------
# The plan of one video (pure data)


@dataclass(frozen=True)
class Style:
    """An ASS style in video pixels; colours are ASS ``&HAABBGGRR``."""

    font: str
    size: int
    bold: bool
    primary: str
    outline_colour: str
    back_colour: str
    outline: float
    shadow: float
    box: bool
    alignment: int
    margin_l: int
    margin_r: int
    margin_v: int
    colour: str  # the label recorded in the JSON (white, yellow, light-on-light, ...)


@dataclass(frozen=True)
class CuePlan:
    """One subtitle event. ``event_start``/``event_end`` are the frames it is shown on by libass, ``[start,
    end)``; its truth frames equal them unless it fades. ``lines`` are the text as drawn, one per line; a
    bilingual cue's second line may be drawn at ``second_size``."""

    track: Track
    lines: tuple[str, ...]
    lang: Lang
    style: Style
    position: Position
    event_start: int
    event_end: int
    fade_in_ms: int = 0
    fade_out_ms: int = 0
    pos: tuple[int, int] | None = None
    second_size: int | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class Logo:
    """A static corner text logo drawn on every frame (an overlay: not in the SRT)."""

    text: str
    style: Style
    pos: tuple[int, int]
    corner: Literal["top-left", "top-right"]


@dataclass(frozen=True)
class FootageInput:
    """One ``-ss start -t length -i clip`` input of the encode; the graph reads it as ``[i:v:0]``."""

    clip: str
    start: float
    length: float


@dataclass(frozen=True)
class Background:
    """The picture under the subtitles: ``graph`` is an ffmpeg filter graph ending in ``[bg]`` that yields
    frames of the video size (yuv420p) at the timeline's rate, reading ``inputs`` as ``[0:v:0]``, ``[1:v:0]``...;
    ``flashes`` are source-frame ranges ``[lo, hi)`` brightened after the timeline is fixed."""

    kind: str
    source: str
    inputs: tuple[FootageInput, ...]
    graph: str
    flashes: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class Encoding:
    codec: str
    container: str
    args: tuple[str, ...]
    bitrate: str
    open_gop: bool
    bframes: int
    gop: int


@dataclass(frozen=True)
class VideoPlan:
    seed: int
    index: int
    width: int
    height: int
    resolution: str
    fps_label: str
    timeline: Timeline
    encoding: Encoding
    background: Background
    cues: tuple[CuePlan, ...]
    logo: Logo | None

    @property
    def name(self) -> str:
        return video_name(self.index, self.encoding.codec, self.height, self.fps_label)

    @property
    def video_file(self) -> str:
        return f"{self.name}.{self.encoding.container}"

    @property
    def tracks(self) -> int:
        return len({c.track for c in self.cues})


def video_name(index: int, codec: str, height: int, fps_label: str) -> str:
    return f"{index:03d}-{codec}-{height}p-{fps_label}"


@dataclass(frozen=True)
class Footage:
    """A shared clip's region and time windows checked free of text (see the module docstring). ``region`` is
    ``(x, y, w, h)`` in the decoded, display-rotated picture; ``rate`` the clip's frame rate."""

    clip: str
    rate: Fraction
    region: tuple[int, int, int, int]
    windows: tuple[tuple[float, float], ...]
    tone: Literal["dark", "mid", "bright"]


#: Verified footage (module docstring): the subtitled clips only above their subtitles and away from logos
#: and painted signs (nezha: the "NAZA" shirt shots 0-2.4 s and 8-14.7 s are out; test_a: the "P&S" shots
#: and the logo are out; rapidvideocr_1: the "STANDPIPE" hallway shots and the watermark are out).
FOOTAGE: tuple[Footage, ...] = (
    Footage("rapidvideocr_nezha.mp4", Fraction(24), (0, 0, 1920, 680),
            ((2.45, 7.95), (14.7, 27.85), (28.0, 41.0)), "dark"),
    Footage("rapidvideocr_1.mp4", Fraction(24), (110, 40, 568, 260), ((0.1, 4.35), (7.5, 10.45)), "mid"),
    Footage("rapidvideocr_test_a.mp4", Fraction(25), (0, 120, 940, 470), ((1.3, 3.0), (5.8, 8.0)), "dark"),
    Footage("torchcodec_nasa_13013.mp4", Fraction(25), (0, 0, 320, 180), ((0.0, 12.95),), "dark"),
    Footage("fate_h264_anim.mkv", Fraction(24000, 1001), (0, 0, 320, 180), ((0.0, 1.95),), "bright"),
    Footage("jsonize_iphone_rotated.mov", Fraction(30000, 1001), (0, 0, 320, 568), ((0.0, 2.15),), "bright"),
    Footage("moviepy_bbb_432_433_vp8.webm", Fraction(24), (0, 0, 1280, 720), ((0.0, 1.0),), "mid"),
)


@dataclass(frozen=True)
class Environment:
    """What this machine offers the draws: font families per language (sorted) and the available footage."""

    fonts: Mapping[str, tuple[str, ...]]
    footage: tuple[Footage, ...]


@dataclass(frozen=True)
class DrawOptions:
    """Bounds on the draws: ``duration`` (seconds, inclusive range) overrides the default, ``max_height`` caps
    the resolution, ``quick`` means 10-15 s, at most 720p and fast encoder presets."""

    duration: tuple[float, float] | None = None
    max_height: int | None = None
    quick: bool = False


# ---------------------------------------------------------------------------------------------------------
# Drawing (pure: everything comes from the rng handed in)


def weighted(rng: random.Random, choices: Sequence[tuple[Any, float]]) -> Any:
    values = [c for c, _ in choices]
    weights = [w for _, w in choices]
    return rng.choices(values, weights=weights)[0]


def even(x: float) -> int:
    return max(2, int(round(x / 2)) * 2)


def rate_str(rate: Fraction) -> str:
    return f"{rate.numerator}/{rate.denominator}"


RESOLUTIONS: tuple[tuple[int, int, str, float], ...] = (
    (640, 360, "360p", 13), (854, 480, "480p", 11), (960, 540, "540p", 8), (1280, 720, "720p", 26),
    (1920, 1080, "1080p", 21), (640, 480, "480p", 4), (960, 720, "720p", 2), (1440, 1080, "1080p", 1),
    (1920, 800, "1080p", 4), (1280, 536, "720p", 2), (2560, 1440, "1440p", 2), (3840, 2160, "2160p", 2),
)
FPS_CHOICES: tuple[tuple[str, Fraction | None, float], ...] = (
    ("23.976", Fraction(24000, 1001), 18), ("24", Fraction(24), 10), ("25", Fraction(25), 16),
    ("29.97", Fraction(30000, 1001), 20), ("30", Fraction(30), 10), ("50", Fraction(50), 6),
    ("59.94", Fraction(60000, 1001), 6), ("60", Fraction(60), 6), ("vfr", None, 8),
)


def draw_format(rng: random.Random, opts: DrawOptions) -> tuple[int, int, str]:
    """Width, height and resolution label."""
    cap = opts.max_height or 10**9
    if opts.quick:
        cap = min(cap, 720)
    choices = [((w, h, label), weight) for w, h, label, weight in RESOLUTIONS if h <= cap]
    if opts.quick:  # a test slice: mostly small pictures, so ten videos take about a minute on 2 cores
        choices = [(c, wt * (3.0 if c[1] <= 480 else 1.0 if c[1] <= 540 else 0.4)) for c, wt in choices]
    if not choices:
        raise ValueError(f"--max-height {opts.max_height} allows no resolution (the smallest is 360)")
    return weighted(rng, choices)


def draw_timeline(rng: random.Random, height: int, opts: DrawOptions) -> tuple[Timeline, str]:
    """The frame timeline and its fps label; very large pictures are short and at most 30 fps."""
    choices = [(c, c[2]) for c in FPS_CHOICES if height < 1440 or (c[1] is not None and c[1] <= 30)]
    label, rate, _ = weighted(rng, choices)
    if opts.duration:
        seconds = rng.uniform(*opts.duration)
    elif opts.quick:
        seconds = rng.uniform(10, 15)
    elif height >= 1440:
        seconds = rng.uniform(8, 12)
    else:
        seconds = rng.uniform(20, 40)
    if rate is not None:
        return Timeline(rate, max(2, round(seconds * rate))), label
    base = Fraction(rng.choice((50, 60, 60, 30)))
    total = max(2, round(seconds * base))
    patterns = [(1, (0,)), (2, (0,)), (3, (0,)), (5, (0,)), (3, (0, 1)), (5, (0, 2)), (4, (0, 1, 2)), (6, (0, 3))]
    if base == 30:
        patterns = [p for p in patterns if p[0] <= 3]
    # The first two segments differ, so every VFR timeline has at least two frame intervals.
    first, second = rng.sample(patterns, 2)
    rules: list[KeepRule] = []
    n = 0
    while n < total:
        modulus, residues = first if not rules else second if len(rules) == 1 else rng.choice(patterns)
        n = min(total, n + max(12, round(rng.uniform(1.0, 6.0) * base)))
        rules.append(KeepRule(n, modulus, residues))
    return Timeline(base, total, tuple(rules)), "vfr"


CONTAINERS: dict[str, tuple[tuple[str, float], ...]] = {
    "h264": (("mp4", 60), ("mkv", 28), ("mov", 12)),
    "hevc": (("mp4", 55), ("mkv", 45)),
    "vp9": (("webm", 75), ("mkv", 25)),
    "av1": (("mkv", 40), ("mp4", 35), ("webm", 25)),
    "mpeg4": (("avi", 65), ("mp4", 25), ("mkv", 10)),
}
QUALITY: dict[str, dict[str, tuple[int, int]]] = {  # CRF (q for mpeg4) per bitrate class, inclusive
    "h264": {"low": (33, 40), "mid": (23, 29), "high": (16, 21)},
    "hevc": {"low": (33, 39), "mid": (25, 30), "high": (18, 23)},
    "vp9": {"low": (46, 56), "mid": (32, 40), "high": (20, 28)},
    "av1": {"low": (48, 58), "mid": (34, 44), "high": (22, 30)},
    "mpeg4": {"low": (9, 16), "mid": (4, 7), "high": (2, 3)},
}


def draw_encoding(rng: random.Random, width: int, height: int, timeline: Timeline, opts: DrawOptions) -> Encoding:
    """Codec, container and encoder arguments; presets get faster as pictures grow (encoders run
    single-threaded for determinism) and with ``quick``."""
    codecs = [("h264", 44), ("hevc", 20), ("vp9", 13), ("av1", 12), ("mpeg4", 11)]
    if timeline.vfr or height > 720:
        codecs = [c for c in codecs if c[0] != "mpeg4"]
    codec = weighted(rng, codecs)
    container = weighted(rng, CONTAINERS[codec])
    if timeline.vfr and container not in ("mkv", "mp4", "webm"):
        container = "mkv"
    bitrate = weighted(rng, [("low", 22), ("mid", 53), ("high", 25)])
    quality = rng.randint(*QUALITY[codec][bitrate])
    fps = float(timeline.rate) if not timeline.vfr else float(timeline.rate) / 2
    gop_s = 10.0 if rng.random() < 0.3 else rng.uniform(1.0, 10.0)
    gop = max(1, round(gop_s * fps))
    pixels = width * height
    # Speed tiers (single-threaded encoders): small <= 540p, mid <= 720p, big <= 1080p, huge above; quick
    # takes the fastest presets whatever the size.
    tier = 0 if pixels <= 960 * 540 else 1 if pixels <= 1280 * 720 else 2 if pixels <= 1920 * 1080 else 3
    if opts.quick:
        tier = 3
    open_gop = False
    bframes = 0
    scenecut = rng.random() < 0.7
    args: list[str]
    if codec == "h264":
        bframes = weighted(rng, [(0, 15), (1, 10), (2, 20), (3, 55)])
        open_gop = bframes > 0 and rng.random() < 0.18
        preset = rng.choice((("medium", "medium", "fast", "faster", "veryfast", "slow"),
                             ("medium", "fast", "faster", "veryfast"), ("fast", "faster", "veryfast"),
                             ("veryfast", "superfast", "ultrafast"))[min(tier, 3)])
        args = ["-c:v", "libx264", "-preset", preset, "-crf", str(quality), "-bf", str(bframes), "-g", str(gop),
                "-keyint_min", str(min(gop, max(1, round(fps))))]
        if not scenecut:
            args += ["-sc_threshold", "0"]
        if open_gop:
            args += ["-x264-params", "open-gop=1"]
        if rng.random() < 0.3:
            args += ["-tune", rng.choice(("film", "animation", "grain"))]
        args += ["-threads", "1", "-pix_fmt", "yuv420p"]
    elif codec == "hevc":
        bframes = weighted(rng, [(0, 10), (2, 15), (3, 25), (4, 50)])
        open_gop = bframes > 0 and rng.random() < 0.4
        preset = rng.choice((("fast", "faster", "veryfast", "superfast"), ("veryfast", "superfast", "ultrafast"),
                             ("superfast", "ultrafast"), ("ultrafast",))[min(tier, 3)])
        params = (f"keyint={gop}:min-keyint={min(gop, max(1, round(fps)))}:bframes={bframes}:"
                  f"open-gop={int(open_gop)}:scenecut={40 if scenecut else 0}:frame-threads=1:pools=none:"
                  "log-level=error")
        args = ["-c:v", "libx265", "-preset", preset, "-crf", str(quality), "-x265-params", params,
                "-pix_fmt", "yuv420p"]
        if container == "mp4" and rng.random() < 0.5:
            args += ["-tag:v", "hvc1"]
    elif codec == "vp9":
        # libvpx's "good" deadline runs at about 9 fps at 360p on one core: realtime only
        fastest = min(8, 6 + tier)
        speed = ["-deadline", "realtime", "-cpu-used", str(rng.randint(fastest, 8))]
        args = ["-c:v", "libvpx-vp9", "-b:v", "0", "-crf", str(quality), "-g", str(gop), *speed,
                "-row-mt", "0", "-threads", "1", "-pix_fmt", "yuv420p"]
    elif codec == "av1":
        preset = rng.randint(min(12, 10 + tier), 12) if tier < 2 else 12
        open_gop = rng.random() < 0.15
        svt = "lp=1" + (":irefresh-type=1" if open_gop else "")
        args = ["-c:v", "libsvtav1", "-preset", str(preset), "-crf", str(quality), "-g", str(min(gop, 300)),
                "-svtav1-params", svt, "-pix_fmt", "yuv420p"]
    else:
        native = container != "avi" or rng.random() < 0.5
        bframes = rng.choice((0, 1, 2)) if native and container != "avi" else 0
        args = ["-c:v", "mpeg4" if native else "libxvid", "-q:v", str(quality), "-bf", str(bframes),
                "-g", str(min(gop, 300)), "-threads", "1", "-pix_fmt", "yuv420p"]
        if container == "avi":
            args += ["-tag:v", rng.choice(("XVID", "DX50", "FMP4"))]
    if container in ("mp4", "mov") and rng.random() < 0.5:
        args += ["-movflags", "+faststart"]
    return Encoding(codec, container, tuple(args), bitrate, open_gop, bframes, gop)


# --- backgrounds ------------------------------------------------------------------------------------------

PALETTES = {
    "dark": ((0x08, 0x40), (0x08, 0x40), (0x10, 0x58)),
    "mid": ((0x30, 0xb0), (0x30, 0xb0), (0x30, 0xb0)),
    "bright": ((0xb8, 0xf4), (0xb8, 0xf4), (0xb0, 0xf0)),
}
MANDELBROT_POINTS = ((-0.743644, -0.131826), (-0.7453, 0.1127), (-1.25066, 0.02012), (-0.16, 1.0405),
                     (0.2549, 0.0005), (-1.768778, -0.001738), (-0.748, 0.1))


def colour_hex(rng: random.Random, tone: str) -> str:
    (r0, r1), (g0, g1), (b0, b1) = PALETTES[tone]
    return f"0x{rng.randint(r0, r1):02x}{rng.randint(g0, g1):02x}{rng.randint(b0, b1):02x}"


def tone_filter(tone: str, rng: random.Random) -> str:
    """A lutyuv that darkens or brightens whatever is under it (empty for mid)."""
    if tone == "dark":
        return f"lutyuv=y=val*{rng.uniform(0.22, 0.45):.3f}"
    if tone == "bright":
        gain, lift, chroma = rng.uniform(0.22, 0.4), rng.randint(140, 178), rng.uniform(0.3, 0.7)
        return (f"lutyuv=y={lift}+val*{gain:.3f}:u=128+(val-128)*{chroma:.3f}:"
                f"v=128+(val-128)*{chroma:.3f}")
    return ""


def lavfi_chain(rng: random.Random, w: int, h: int, rate: Fraction, motion: Motion, frames: int,
                tone: str) -> tuple[str, str]:
    """A lavfi source chain producing ``w x h`` yuv420p at ``rate``: (chain, source name). Sources are rendered
    small and scaled where they are slow to compute; never testsrc/testsrc2 (they draw digits)."""
    r = rate_str(rate)
    seed = rng.randint(0, 2**31 - 1)
    names = [("gradients", 24), ("mandelbrot", 14), ("noise", 16), ("life", 12), ("cellauto", 10),
             ("sierpinski", 6)]
    if motion == "still" or tone == "mid":
        names += [("bars", 5)]
    name = weighted(rng, names)
    scale = f"scale={w}:{h}:flags=bicubic"
    if name == "gradients":
        gw = even(max(160, w / 4))
        gh = even(gw * h / w)
        n = rng.randint(2, 6)
        colours = ":".join(f"c{i}={colour_hex(rng, tone)}" for i in range(n))
        speed = {"still": 0.01, "slow": rng.uniform(0.004, 0.02), "fast": rng.uniform(0.05, 0.15)}[motion]
        kind = rng.choice(("linear", "radial", "circular", "spiral"))
        chain = f"gradients=s={gw}x{gh}:r={r}:n={n}:{colours}:type={kind}:speed={speed:.4f}:seed={seed},{scale}"
    elif name == "mandelbrot":
        mw = even(min(w, 480))
        mh = even(mw * h / w)
        x, y = rng.choice(MANDELBROT_POINTS)
        s0 = rng.uniform(0.5, 3.0)
        s1 = s0 * (rng.uniform(0.3, 0.7) if motion != "fast" else rng.uniform(0.001, 0.02))
        outer = rng.choice(("iteration_count", "normalized_iteration_count"))
        chain = (f"mandelbrot=s={mw}x{mh}:r={r}:maxiter={rng.randint(200, 600)}:start_x={x}:start_y={y}:"
                 f"start_scale={s0:.4f}:end_scale={s1:.6f}:end_pts={frames}:outer={outer},{scale}")
    elif name == "noise":
        strength = rng.randint(6, 24)
        flags = "t+u" if motion == "fast" else ("u" if motion == "still" else rng.choice(("t+u", "t+a", "u")))
        chain = (f"color=c={colour_hex(rng, tone)}:s={w}x{h}:r={r},format=yuv420p,"
                 f"noise=alls={strength}:allf={flags}:all_seed={seed % 100000}")
        if rng.random() < 0.4:
            chain += f",vignette=angle={rng.uniform(0.3, 0.8):.3f}"
    elif name == "life":
        cell = rng.choice((2, 3, 4, 6, 8))
        src_rate = rate if motion == "fast" else max(Fraction(2), rate / rng.choice((3, 5, 8)))
        chain = (f"life=s={max(16, w // cell)}x{max(9, h // cell)}:r={rate_str(src_rate)}:seed={seed}:"
                 f"ratio={rng.uniform(0.1, 0.5):.3f}:mold={rng.randint(0, 30)}:"
                 f"life_color={colour_hex(rng, tone)}:death_color={colour_hex(rng, 'dark')}:"
                 f"mold_color={colour_hex(rng, tone)},scale={w}:{h}:flags=neighbor,fps={r}")
        if rng.random() < 0.4:
            chain += f",gblur=sigma={rng.uniform(0.8, 3):.2f}"
    elif name == "cellauto":
        cell = rng.choice((4, 6, 8, 10))
        src_rate = rate if motion == "fast" else max(Fraction(2), rate / rng.choice((2, 4, 6)))
        rule = rng.choice((18, 30, 45, 73, 90, 105, 110, 150))
        chain = (f"cellauto=s={max(16, w // cell)}x{max(9, h // cell)}:r={rate_str(src_rate)}:rule={rule}:"
                 f"ratio={rng.uniform(0.2, 0.7):.3f}:seed={seed},scale={w}:{h}:flags=neighbor,fps={r},"
                 f"format=yuv420p,lutyuv=y=val*{rng.uniform(0.15, 0.5):.3f}+{rng.randint(10, 60)}:"
                 f"u=val*0.8+{rng.randint(10, 40)}:v=val*0.8+{rng.randint(10, 40)}")
    elif name == "sierpinski":
        sw = even(min(w, 640))
        sh = even(sw * h / w)
        jump = rng.randint(1, 4) if motion != "fast" else rng.randint(20, 200)
        chain = (f"sierpinski=s={sw}x{sh}:r={r}:seed={seed}:jump={jump}:type={rng.choice(('carpet', 'triangle'))},"
                 f"{scale},eq=saturation={rng.uniform(0.3, 0.9):.2f}:brightness={rng.uniform(-0.25, 0.0):.2f}")
    else:
        bars = rng.choice(("smptehdbars", "smptebars", "pal75bars", "rgbtestsrc", "colorchart", "colorspectrum",
                           "yuvtestsrc"))
        source = f"colorchart=r={r}" if bars == "colorchart" else f"{bars}=s={even(w / 2)}x{even(h / 2)}:r={r}"
        chain = f"{source},{scale},format=yuv420p,noise=alls={rng.randint(3, 12)}:allf=t+u:all_seed={seed % 1000}"
        name = bars
    if motion == "still":
        chain += ",trim=end_frame=1,loop=loop=-1:size=1:start=0"
    return f"{chain},setsar=1,format=yuv420p", name


def footage_chain(rng: random.Random, fx: Footage, index: int, w: int, h: int, rate: Fraction, motion: Motion,
                  seconds: float) -> tuple[FootageInput, str]:
    """A chain reading input ``index`` (a window of ``fx``), cropped inside the verified region to the video's
    aspect, looped when the window is short, panned or sped up by ``motion``, scaled to ``w x h``."""
    weights = [t1 - t0 for t0, t1 in fx.windows]
    t0, t1 = rng.choices(fx.windows, weights=weights)[0]
    length = min(t1 - t0, 8.0, seconds * 2.5 + 0.5)
    start = round(t0 + rng.uniform(0, t1 - t0 - length), 3)
    length = round(min(length, t1 - start), 3)
    rx, ry, rw, rh = fx.region
    aspect = w / h
    zoom = rng.uniform(0.7, 1.0) if motion != "still" else rng.uniform(0.6, 1.0)
    if rw / rh > aspect:
        ch = even(rh * zoom)
        cw = even(min(rw, ch * aspect))
    else:
        cw = even(rw * zoom)
        ch = even(min(rh, cw / aspect))
    x0, y0 = rng.randint(0, rw - cw), rng.randint(0, rh - ch)
    r = rate_str(rate)
    chain = f"[{index}:v:0]setpts=PTS-STARTPTS,crop={rw}:{rh}:{rx}:{ry}"
    if motion == "still":
        chain += f",trim=end_frame=1,loop=loop=-1:size=1:start=0,setpts=N/({r})/TB,crop={cw}:{ch}:{x0}:{y0}"
    else:
        speed = 1.0 if motion == "slow" else rng.uniform(1.5, 2.5)
        size = min(32767, math.ceil(length * fx.rate) + 4)
        chain += (f",loop=loop=-1:size={size}:start=0,setpts=N/({rate_str(fx.rate)}*{speed:.3f})/TB,fps={r}")
        x1, y1 = rng.randint(0, rw - cw), rng.randint(0, rh - ch)
        if motion == "slow" and rng.random() < 0.6:
            span = max(seconds, 1.0)
            chain += (f",crop={cw}:{ch}:x='{x0}+({x1 - x0})*min(t/{span:.3f}\\,1)':"
                      f"y='{y0}+({y1 - y0})*min(t/{span:.3f}\\,1)'")
        else:
            chain += f",crop={cw}:{ch}:{x0}:{y0}"
    chain += f",scale={w}:{h}:flags=bicubic,setsar=1,format=yuv420p"
    return FootageInput(fx.clip, start, length), chain


def draw_background(rng: random.Random, w: int, h: int, timeline: Timeline, env: Environment) -> Background:
    """One background: kind (still|slow|fast|cuts|flashes|dark|bright), its sources and filter graph."""
    kind = weighted(rng, [("still", 11), ("slow", 28), ("fast", 18), ("cuts", 16), ("flashes", 8),
                          ("dark", 10), ("bright", 9)])
    rate = timeline.rate
    frames = timeline.source_frames
    seconds = float(frames / rate)
    inputs: list[FootageInput] = []

    def segment(motion: Motion, tone: str, seg_frames: int, seg_seconds: float) -> tuple[str, str]:
        footage = [f for f in env.footage if tone == "mid" or f.tone == tone or tone == "dark"]
        if footage and rng.random() < 0.5:
            fx = rng.choice(footage)
            inp, chain = footage_chain(rng, fx, len(inputs), w, h, rate, motion, seg_seconds)
            inputs.append(inp)
            source = f"footage:{fx.clip}"
            if tone != "mid" and fx.tone != tone:
                chain += "," + tone_filter(tone, rng)
            return chain, source
        chain, name = lavfi_chain(rng, w, h, rate, motion, seg_frames, tone)
        # gradients, noise and life take the tone in their colours; the others are toned afterwards
        if tone != "mid" and (name not in ("gradients", "noise", "life") or rng.random() < 0.4):
            chain += "," + tone_filter(tone, rng)
        return chain, f"lavfi:{name}"

    flashes: list[tuple[int, int, str]] = []
    if kind == "cuts":
        parts, sources = [], []
        n = 0
        while n < frames:
            seg = min(frames - n, round(rng.uniform(2.0, 6.0) * rate))
            if frames - n - seg < round(2 * rate):
                seg = frames - n
            motion = weighted(rng, [("still", 2), ("slow", 5), ("fast", 3)])
            tone = weighted(rng, [("mid", 6), ("dark", 3), ("bright", 1)])
            chain, source = segment(motion, tone, seg, float(seg / rate))
            parts.append(f"{chain},trim=end_frame={seg},setpts=PTS-STARTPTS[s{len(parts)}]")
            sources.append(source)
            n += seg
        labels = "".join(f"[s{i}]" for i in range(len(parts)))
        graph = ";".join(parts) + f";{labels}concat=n={len(parts)}:v=1:a=0[bg]"
        return Background(kind, "cuts:" + "+".join(sources), tuple(inputs), graph)
    motion: Motion = {"still": "still", "slow": "slow", "fast": "fast"}.get(kind) or weighted(
        rng, [("still", 1), ("slow", 3), ("fast", 2)])
    tone = kind if kind in ("dark", "bright") else "mid"
    chain, source = segment(motion, tone, frames, seconds)
    if kind == "flashes":
        n = rng.randint(3, 8)
        for _ in range(n):
            at = rng.randrange(0, frames - 12)
            if rng.random() < 0.6:
                flashes.append((at, at + rng.randint(1, 3), "white"))
            else:
                flashes.append((at, at + rng.randint(4, 12), "pulse"))
        flashes.sort()
    return Background(kind, source, tuple(inputs), chain + "[bg]", tuple(flashes))


# --- text and styles --------------------------------------------------------------------------------------

ASS_COLOURS: dict[str, tuple[str, ...]] = {
    "white": ("&H00FFFFFF", "&H00F4F4F4", "&H00FFFFFF"),
    "yellow": ("&H0000FFFF", "&H0033E6FF", "&H0080FFFF"),
    "light-on-light": ("&H00FFFFFF", "&H00E6E6E6", "&H00F0F8FF"),
    "cyan": ("&H00FFFF80", "&H00FFE0A0"),
    "green": ("&H0080FF80", "&H00A0FFC0"),
    "pink": ("&H00C0A0FF", "&H00D0B0FF"),
    "orange": ("&H0040B0FF", "&H0060C0FF"),
    "light-blue": ("&H00FFC080", "&H00FFD0A0"),
}
OUTLINE_COLOURS = (("&H00000000", 80), ("&H00402000", 7), ("&H00303030", 7), ("&H00200030", 6))


def is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def is_cjk_text(text: str) -> bool:
    return any(is_wide(ch) for ch in text)


def text_width(text: str, size: int, bold: bool, font: str) -> float:
    """A generous estimate of the drawn width in pixels (measured on DejaVu and Noto CJK at FontSize 100:
    CJK 0.68, DejaVu capitals up to 0.79, a typical Latin sentence 0.44 per character)."""
    mono = "Mono" in font
    width = 0.0
    for ch in text:
        if is_wide(ch):
            width += 0.72
        elif mono:
            width += 0.62
        elif ch in "MWmw@%":
            width += 0.82
        elif ch.isupper() or ch.isdigit():
            width += 0.68
        elif ch == " ":
            width += 0.34
        elif ch in ".,:;!'|il":
            width += 0.32
        else:
            width += 0.56
    return width * size * (1.08 if bold else 1.0)


def split_line(text: str) -> tuple[str, str] | None:
    """Split a line near its middle: at a space for Latin text, after punctuation or in the middle for CJK."""
    middle = len(text) / 2
    if " " in text.strip():
        cuts = [i for i, ch in enumerate(text) if ch == " "]
        cut = min(cuts, key=lambda i: abs(i - middle))
        return text[:cut].strip(), text[cut + 1:].strip()
    if is_cjk_text(text) and len(text) >= 4:
        marks = [i + 1 for i, ch in enumerate(text[:-1]) if ch in "，、。！？；：…,"]
        cut = min(marks, key=lambda i: abs(i - middle)) if marks else round(middle)
        if 0 < cut < len(text):
            return text[:cut], text[cut:]
    return None


def fit_lines(lines: Sequence[str], size: int, second_size: int | None, bold: bool, font: str,
              avail: float, can_split: bool) -> tuple[tuple[str, ...], int, int | None]:
    """Lines and sizes that fit ``avail`` pixels: split one too-long single line in two (subtitle style),
    else shrink the font (down to 12 px)."""
    out = list(lines)
    if can_split and len(out) == 1 and text_width(out[0], size, bold, font) > avail:
        halves = split_line(out[0])
        if halves:
            out = list(halves)

    def widest(s: int, s2: int | None) -> float:
        return max(text_width(line, s2 if (i == 1 and s2) else s, bold, font) for i, line in enumerate(out))

    while widest(size, second_size) > avail and size > 12:
        ratio = (second_size / size) if second_size else None
        size = max(12, int(size * 0.92))
        second_size = max(12, int(size * ratio)) if ratio else None
    return tuple(out), size, second_size


class Deck:
    """Lines of a bank drawn without replacement (reshuffled when spent), so a video rarely repeats a line and
    never repeats the one it just drew."""

    def __init__(self, rng: random.Random, bank: Sequence[Any]) -> None:
        self.rng = rng
        self._bank = list(bank)
        self._cards: list[Any] = []
        self._last: Any = None

    def draw(self, fits: Callable[[Any], bool] = lambda _: True) -> Any:
        for _ in range(2):
            if not self._cards:
                self._cards = list(self._bank)
                self.rng.shuffle(self._cards)
            for i, card in enumerate(self._cards):
                if card != self._last and fits(card):
                    self._last = self._cards.pop(i)
                    return card
            self._cards = []
        card = self.rng.choice([c for c in self._bank if c != self._last])
        self._last = card
        return card


def pick_font(rng: random.Random, env: Environment, lang: Lang) -> str:
    """Any installed family covering ``lang``; monospaced and light faces are drawn less often."""
    fonts = env.fonts.get({"zh+en": "zh"}.get(lang, lang), ())
    if not fonts:
        raise ValueError(f"no installed font covers {lang}")
    return weighted(rng, [(f, 0.3 if "Mono" in f else 0.5 if "Light" in f else 1.0) for f in fonts])


def draw_style(rng: random.Random, env: Environment, lang: Lang, w: int, h: int, bg_kind: str,
               *, role: Literal["dialogue", "sign", "logo"]) -> Style:
    """A style for one role; sizes 14-60 px at up to 1080 lines (scaled above), light-on-light only on bright
    backgrounds and never without some outline or shadow."""
    font = pick_font(rng, env, lang)
    cap = 60 * max(1.0, h / 1080)
    if role == "logo":
        size = round(min(cap, max(14, h * rng.uniform(0.03, 0.05))))
    else:
        lo, hi = max(14.0, 0.035 * h), min(cap, 0.085 * h)
        size = round(rng.triangular(lo, hi, min(hi, max(lo, 0.055 * h))))
        if role == "sign":
            size = round(min(cap * 1.2, max(14, size * rng.uniform(0.8, 1.35))))
    bold = rng.random() < (0.45 if role == "dialogue" else 0.65)
    bright = bg_kind == "bright"
    colours = [("white", 60), ("yellow", 14), ("cyan", 3), ("green", 2), ("pink", 2), ("orange", 2),
               ("light-blue", 3)]
    if bright:
        colours = [("light-on-light", 55), ("white", 25), ("yellow", 10), ("light-blue", 5), ("cyan", 5)]
    if role == "sign":
        colours = [("white", 40), ("yellow", 25), ("cyan", 10), ("orange", 10), ("light-blue", 10)]
    colour = weighted(rng, colours)
    primary = rng.choice(ASS_COLOURS[colour])
    outline_colour = weighted(rng, OUTLINE_COLOURS)
    box = rng.random() < (0.08 if role == "dialogue" else 0.3)
    outline = float(weighted(rng, [(0, 8), (0.5, 6), (1, 14), (1.5, 14), (2, 22), (2.5, 10), (3, 12), (4, 6)]))
    shadow = float(weighted(rng, [(0, 50), (1, 20), (1.5, 10), (2, 12), (3, 8)]))
    back_alpha = rng.choice((0x00, 0x40, 0x80))
    back_colour = f"&H{back_alpha:02X}000000"
    if colour == "light-on-light" or (bright and colour != "light-on-light"):
        # A thin or no outline over a bright picture, but never invisible: a grey edge or a shadow.
        outline = rng.choice((0.0, 0.5, 1.0, 1.5)) if colour == "light-on-light" else max(outline, 1.0)
        outline_colour = rng.choice(("&H00606060", "&H00404040", "&H00202020", "&H00000000"))
        if outline < 1.0:
            shadow = max(shadow, rng.choice((1.0, 1.5, 2.0)))
    if outline == 0 and shadow == 0 and not box:
        shadow = rng.choice((1.0, 2.0)) if rng.random() < 0.7 else 0.0
        outline = 0.0 if shadow else 1.0
    if box:
        outline = float(rng.randint(2, 8))  # BorderStyle 3: the box padding
        shadow = float(rng.choice((0, 0, 2)))
        outline_colour = f"&H{rng.choice((0x00, 0x20, 0x50, 0x80)):02X}000000"
    if role == "logo":
        alpha = rng.choice((0x00, 0x30, 0x60, 0x90))
        primary = f"&H{alpha:02X}{primary[4:]}"
        box = box and rng.random() < 0.5
    margin_v = round(h * rng.uniform(0.03, 0.1))
    margin_h = round(w * rng.uniform(0.02, 0.07))
    return Style(font, size, bold, primary, outline_colour, back_colour, outline, shadow, box, 2,
                 margin_h, margin_h, margin_v, colour)


def edge(style: Style) -> float:
    """Pixels the outline, shadow or box adds around the text on each side."""
    return style.outline + style.shadow + 2


def draw_schedule(rng: random.Random, times: Sequence[float], fade_rate: float,
                  pace: float) -> list[tuple[int, int, int, int]]:
    """Dialogue events as ``(first frame, end frame, fade_in_ms, fade_out_ms)``, in order, never overlapping.

    Patterns mix ordinary cues (1-5 s) and gaps (0.1-2 s) with the hard cases: back-to-back chains, a 0.2-0.5 s
    cue between back-to-back neighbours, 1-3-frame cues (alone or back to back), one-frame gaps, 6-10 s cues
    and fades (only with gaps around them). Every event ends at least 0.3 s before the last frame.
    """
    n = len(times)

    def at(t: float) -> int:
        return min(n - 1, bisect.bisect_left(times, t))

    limit = at(times[-1] - 0.3)
    events: list[tuple[int, int, int, int]] = []
    f = at(rng.uniform(0.15, 2.0))

    def length(kind: str, start: int) -> int:
        if kind == "tiny":
            return start + rng.randint(1, 3)
        seconds = {"ord": lambda: rng.triangular(1.0, 4.8, 1.8) * pace,
                   "short": lambda: rng.uniform(0.2, 0.5),
                   "long": lambda: rng.uniform(6.5, 10.0),
                   "fade": lambda: rng.uniform(1.3, 4.5)}[kind]()
        return max(start + 1, at(times[start] + seconds))

    def gap(kind: str, end: int) -> int:
        if kind == "b2b":
            return end
        if kind == "one":
            return end + 1
        if kind == "two":
            return end + 2
        seconds = rng.uniform(2.5, 5.0) if rng.random() < 0.05 else rng.triangular(0.1, 1.6, 0.3) * pace
        return max(end + 1, at(times[end] + seconds))

    patterns = [
        ([("ord", "gap")], 38), ([("ord", "b2b")] * 2 + [("ord", "gap")], 8),
        ([("ord", "b2b")] * 3 + [("ord", "gap")], 4),
        ([("ord", "b2b"), ("short", "b2b"), ("ord", "gap")], 10), ([("short", "gap")], 6),
        ([("tiny", "gap")], 5), ([("ord", "b2b"), ("tiny", "b2b"), ("ord", "gap")], 3),
        ([("ord", "one"), ("ord", "gap")], 6), ([("ord", "two"), ("ord", "gap")], 2),
        ([("short", "b2b"), ("short", "b2b"), ("ord", "gap")], 3), ([("long", "gap")], 3),
        ([("fade", "gap")], 40 * fade_rate),
    ]
    misses = 0
    while misses < 8:
        pattern = weighted(rng, patterns)
        planned: list[tuple[int, int, int, int]] = []
        start = f
        for kind, after in pattern:
            if start >= limit:
                break
            end = length(kind, start)
            fades = (0, 0)
            if kind == "fade":
                fi = rng.choice((0, 100, 120, 160, 200, 240, 300, 400, 500))
                fo = rng.choice((0, 100, 120, 160, 200, 240, 300, 400, 500))
                fades = (fi, fo) if fi or fo else (200, 200)
            planned.append((start, end, *fades))
            start = gap(after, end)
        if len(planned) < len(pattern) or planned[-1][1] > limit:
            misses += 1  # the pattern does not fit in what is left: try a shorter one
            continue
        events.extend(planned)
        f = start
    if not events:  # a very short video: one ordinary cue
        start = min(f, max(0, limit - 2))
        events.append((start, max(start + 1, min(limit, at(times[start] + 1.5))), 0, 0))
    return events


def pick_lines(deck: Deck, lang: Lang, short: bool) -> tuple[str, ...]:
    """One cue's lines in ``lang``; ``short`` cues (under half a second) get short texts."""

    wordy = not short and deck.rng.random() < 0.8

    def fits(card: Any) -> bool:
        text = card if isinstance(card, str) else card[0 if lang != "en" else 1]
        cjk = is_cjk_text(text)
        if short:
            return len(text) <= (6 if cjk else 14)
        return not wordy or len(text) >= (5 if cjk else 10)

    card = deck.draw(fits)
    if lang == "zh":
        return (card[0],)
    if lang == "en":
        return (card[1],)
    if lang == "zh+en":
        return (card[0], card[1])
    return (card,)


def bank_for(lang: Lang, latin: str, signs: bool = False) -> Sequence[Any]:
    """The lines a video in ``lang`` draws from; a Latin-script video keeps to one language (``latin``)."""
    if lang == "latin":
        return (SIGNS_LATIN if signs else LATIN)[latin]
    if signs:
        return SIGNS_JA if lang == "ja" else SIGNS_ZH_EN
    return JA if lang == "ja" else ZH_EN


def draw_cues(rng: random.Random, env: Environment, w: int, h: int, timeline: Timeline, bg_kind: str,
              logo: Logo | None) -> tuple[CuePlan, ...]:
    """The dialogue track and, sometimes, a sign track (at the top or middle while dialogue runs below)."""
    langs: list[tuple[Lang, float]] = [("zh", 30), ("en", 22), ("zh+en", 18), ("ja", 14), ("latin", 16)]
    langs = [(lang, wt) for lang, wt in langs if env.fonts.get({"zh+en": "zh"}.get(lang, lang))]
    lang: Lang = weighted(rng, langs)
    latin = rng.choice(sorted(LATIN)) if lang == "latin" else ""
    base = draw_style(rng, env, lang, w, h, bg_kind, role="dialogue")
    two_tracks = rng.random() < 0.2
    layout = "bottom" if two_tracks else weighted(rng, [("bottom", 78), ("some-top", 10), ("top", 5),
                                                        ("some-middle", 7)])
    fade_rate = 1.0 if rng.random() < 0.25 else 0.08
    pace = rng.uniform(0.7, 1.2)
    second_ratio = rng.uniform(0.7, 1.0) if lang == "zh+en" and rng.random() < 0.6 else None
    times = [float(t) for t in timeline.times]
    deck = Deck(rng, bank_for(lang, latin))
    cues: list[CuePlan] = []
    for start, end, fi, fo in draw_schedule(rng, times, fade_rate, pace):
        style = base
        if rng.random() < 0.12:
            style = replace(style, font=pick_font(rng, env, lang), bold=not style.bold)
        position: Position = "bottom"
        if layout == "top" or (layout == "some-top" and rng.random() < 0.2):
            position = "top"
        elif layout == "some-middle" and rng.random() < 0.2:
            position = "middle"
        if logo is not None and position == "top":
            position = "bottom"
        short = times[end] - times[start] < 0.55
        lines = pick_lines(deck, lang, short)
        avail = w - style.margin_l - style.margin_r - 2 * edge(style)
        second = round(style.size * second_ratio) if second_ratio else None
        lines, size, second = fit_lines(lines, style.size, second, style.bold, style.font, avail,
                                        can_split=lang != "zh+en")
        size = min(size, max(12, int(h * 0.3 / (1.3 * len(lines)))))
        alignment = {"bottom": 2, "top": 8, "middle": 5}[position]
        style = replace(style, size=size, alignment=alignment)
        cues.append(CuePlan("dialogue", lines, lang, style, position, start, end, fi, fo,
                            second_size=second if second and second < size else None))
    if two_tracks:
        cues.extend(draw_signs(rng, env, lang, latin, w, h, timeline, bg_kind, logo))
    return tuple(sorted(cues, key=lambda c: (c.event_start, c.track)))


def draw_signs(rng: random.Random, env: Environment, lang: Lang, latin: str, w: int, h: int,
               timeline: Timeline, bg_kind: str, logo: Logo | None) -> list[CuePlan]:
    """1-3 signs of 2.5-8 s, apart from each other, at the top or in the middle; at most half the width at
    the top when a logo is in a top corner."""
    sign_lang: Lang = lang if rng.random() < 0.7 else "en"
    if sign_lang == "zh+en":
        sign_lang = rng.choice(("zh", "en"))
    style = draw_style(rng, env, sign_lang, w, h, bg_kind, role="sign")
    position: Position = rng.choice(("top", "top", "middle"))
    deck = Deck(rng, bank_for(sign_lang, latin, signs=True))
    times = [float(t) for t in timeline.times]
    n = len(times)
    taken: list[tuple[int, int]] = []
    signs: list[CuePlan] = []
    for _ in range(rng.randint(1, 3)):
        for _attempt in range(20):
            seconds = rng.uniform(2.5, 8.0)
            t0 = rng.uniform(0.2, max(0.3, times[-1] - seconds - 0.5))
            a = bisect.bisect_left(times, t0)
            b = min(n - 2, bisect.bisect_left(times, t0 + seconds))
            if b - a < 2 or any(a < y + 1 and x < b + 1 for x, y in taken):
                continue
            taken.append((a, b))
            card = deck.draw()
            text = card if isinstance(card, str) else card[0 if sign_lang in ("zh", "zh+en") else 1]
            avail = (w * 0.5 if logo is not None and position == "top" else w * 0.9) - 2 * edge(style)
            lines, size, _ = fit_lines((text,), style.size, None, style.bold, style.font, avail, can_split=False)
            width = text_width(lines[0], size, style.bold, style.font)
            half = width / 2 + edge(style)
            x = round(rng.uniform(min(w / 2, half + 4), max(w / 2, w - half - 4)))
            if logo is not None and position == "top":
                x = w // 2
            y = round(h * rng.uniform(0.04, 0.16)) if position == "top" else round(h * rng.uniform(0.36, 0.48))
            fades = (rng.choice((200, 300, 400)), rng.choice((0, 200, 300))) if rng.random() < 0.4 else (0, 0)
            signs.append(CuePlan("sign", lines, sign_lang, replace(style, size=size,
                                                                  alignment=8 if position == "top" else 5),
                                 position, a, b, *fades, pos=(x, y)))
            break
    return signs


def draw_logo(rng: random.Random, env: Environment, w: int, h: int, bg_kind: str) -> Logo | None:
    if rng.random() >= 0.2:
        return None
    text = rng.choice(LOGOS)
    lang: Lang = "zh" if is_cjk_text(text) else "latin" if env.fonts.get("latin") else "en"
    style = draw_style(rng, env, lang, w, h, bg_kind, role="logo")
    corner = rng.choice(("top-left", "top-right"))
    mx, my = round(w * rng.uniform(0.015, 0.05)), round(h * rng.uniform(0.02, 0.06))
    x = mx if corner == "top-left" else w - mx
    return Logo(text, replace(style, alignment=7 if corner == "top-left" else 9), (x, my), corner)


def draw_video(seed: int, index: int, env: Environment, opts: DrawOptions) -> VideoPlan:
    """Everything about video ``index`` of ``seed``, from ``random.Random(f"{seed}:{index}")`` alone (in a
    fixed order of draws), bounded by ``opts`` and what ``env`` offers."""
    rng = random.Random(f"{seed}:{index}")
    w, h, resolution = draw_format(rng, opts)
    timeline, fps_label = draw_timeline(rng, h, opts)
    encoding = draw_encoding(rng, w, h, timeline, opts)
    background = draw_background(rng, w, h, timeline, env)
    logo = draw_logo(rng, env, w, h, background.kind)
    cues = draw_cues(rng, env, w, h, timeline, background.kind, logo)
    return VideoPlan(seed, index, w, h, resolution, fps_label, timeline, encoding, background, cues, logo)


# ---------------------------------------------------------------------------------------------------------
# Truth, ASS, SRT and JSON documents (pure)


@dataclass(frozen=True)
class CueTruth:
    """A cue's ASS event times (cs), its truth frames ``[start_frame, end_frame)`` and SRT times (ms)."""

    event_start_cs: int
    event_end_cs: int
    start_frame: int
    end_frame: int
    start_ms: int
    end_ms: int


def cue_truth(cue: CuePlan, timeline: Timeline) -> CueTruth:
    """Event centiseconds for the planned event frames and the frames the cue counts as on screen (the fade
    rule of the module docstring); checks that libass shows the event on exactly the planned frames."""
    ms = timeline.ms
    start_cs, end_cs = boundary_cs(ms, cue.event_start), boundary_cs(ms, cue.event_end)
    if shown_frames(ms, start_cs, end_cs) != (cue.event_start, cue.event_end):
        raise ValueError(f"event {cue.text!r} would be shown on other frames than planned")
    lo, hi = fade_truth(ms, start_cs, end_cs, cue.fade_in_ms, cue.fade_out_ms)
    if not cue.event_start <= lo < hi <= cue.event_end:
        raise ValueError(f"faded cue {cue.text!r} is never half opaque")
    return CueTruth(start_cs, end_cs, lo, hi, srt_ms(timeline, lo), srt_ms(timeline, hi))


def track_colour(track: str) -> str:
    """Primary colour of a track in the verification render: dialogue green, sign red, logo blue."""
    return {"dialogue": "&H0000FF00", "sign": "&H000000FF", "logo": "&H00FF0000"}[track]


def style_line(name: str, s: Style, verify_track: str | None) -> str:
    primary, outline, back = s.primary, s.outline_colour, s.back_colour
    if verify_track is not None:
        primary = primary[:4] + track_colour(verify_track)[4:]
        outline, back = outline[:4] + "000000", back[:4] + "000000"
    fields = [name, s.font, str(s.size), primary, primary, outline, back, str(-1 if s.bold else 0), "0", "0", "0",
              "100", "100", "0", "0", "3" if s.box else "1", f"{s.outline:g}", f"{s.shadow:g}", str(s.alignment),
              str(s.margin_l), str(s.margin_r), str(s.margin_v), "1"]
    return "Style: " + ",".join(fields)


def ass_text(lines: Sequence[str], second_size: int | None) -> str:
    parts = list(lines)
    if second_size and len(parts) > 1:
        parts[1] = f"{{\\fs{second_size}}}{parts[1]}"
    return "\\N".join(parts)


def ass_document(plan: VideoPlan, *, verify: bool = False) -> str:
    """The ASS script burned into the video (or, with ``verify``, its one-colour-per-track twin)."""
    ms = plan.timeline.ms
    out = ["[Script Info]", "; generated by scripts/make_corpus.py", "ScriptType: v4.00+",
           f"PlayResX: {plan.width}", f"PlayResY: {plan.height}", "WrapStyle: 2", "ScaledBorderAndShadow: yes",
           "YCbCr Matrix: None", "", "[V4+ Styles]",
           "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, "
           "Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, "
           "MarginL, MarginR, MarginV, Encoding"]
    for i, cue in enumerate(plan.cues):
        out.append(style_line(f"c{i}", cue.style, cue.track if verify else None))
    if plan.logo:
        out.append(style_line("logo", plan.logo.style, "logo" if verify else None))
    out += ["", "[Events]", "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text"]
    for i, cue in enumerate(plan.cues):
        tags = ""
        if cue.pos:
            tags += f"\\pos({cue.pos[0]},{cue.pos[1]})"
        if cue.fade_in_ms or cue.fade_out_ms:
            tags += f"\\fad({cue.fade_in_ms},{cue.fade_out_ms})"
        start, end = boundary_cs(ms, cue.event_start), boundary_cs(ms, cue.event_end)
        layer = 1 if cue.track == "sign" else 0
        text = (f"{{{tags}}}" if tags else "") + ass_text(cue.lines, cue.second_size)
        out.append(f"Dialogue: {layer},{ass_time(start)},{ass_time(end)},c{i},,0,0,0,,{text}")
    if plan.logo:
        end = boundary_cs(ms, plan.timeline.frames) + 100
        out.append(f"Dialogue: 2,{ass_time(0)},{ass_time(end)},logo,,0,0,0,,"
                   f"{{\\pos({plan.logo.pos[0]},{plan.logo.pos[1]})}}{plan.logo.text}")
    return "\n".join(out) + "\n"


def srt_document(plan: VideoPlan) -> str:
    blocks = []
    for number, cue in enumerate(plan.cues, start=1):
        truth = cue_truth(cue, plan.timeline)
        blocks.append(f"{number}\n{srt_time(truth.start_ms)} --> {srt_time(truth.end_ms)}\n{cue.text}\n")
    return "\n".join(blocks)


def estimated_box(text: str, style: Style, pos: tuple[int, int], width: int) -> list[int]:
    """Approximate ``[x0, y0, x1, y1]`` of a logo from the width estimate (used without the verifier)."""
    w = text_width(text, style.size, style.bold, style.font)
    x = pos[0] if style.alignment == 7 else pos[0] - w
    return [max(0, round(x)), pos[1], min(width, round(x + w)), round(pos[1] + style.size * 1.2)]


def json_document(plan: VideoPlan, params_hash: str, verified: bool,
                  boxes: Mapping[str, list[int]] | None = None) -> dict[str, Any]:
    """The per-video JSON (see the brief in the module docstring); ``boxes`` are measured bounding boxes
    (``cue{i}``, ``logo``) from the verifier."""
    tl = plan.timeline
    enc = plan.encoding
    cues = []
    for i, cue in enumerate(plan.cues):
        truth = cue_truth(cue, tl)
        entry = {
            "start": decimal_s(truth.start_ms, 3), "end": decimal_s(truth.end_ms, 3),
            "start_frame": truth.start_frame, "end_frame": truth.end_frame, "text": cue.text, "lang": cue.lang,
            "font": cue.style.font, "bold": cue.style.bold, "size_px": cue.style.size,
            "outline": cue.style.outline, "shadow": cue.style.shadow, "box": cue.style.box,
            "colour": cue.style.colour, "position": cue.position, "track": cue.track,
            "fade_in_ms": cue.fade_in_ms, "fade_out_ms": cue.fade_out_ms,
            "event_start": decimal_s(truth.event_start_cs, 2), "event_end": decimal_s(truth.event_end_cs, 2),
        }
        if boxes and f"cue{i}" in boxes:
            entry["bbox"] = boxes[f"cue{i}"]
        cues.append(entry)
    overlays = []
    if plan.logo:
        box = (boxes or {}).get("logo") or estimated_box(plan.logo.text, plan.logo.style, plan.logo.pos, plan.width)
        overlays.append({"kind": "overlay", "text": plan.logo.text, "box": box, "start": "0.000",
                         "end": decimal_s(math.ceil(tl.duration * 1000), 3)})
    return {
        "name": plan.name, "video": plan.video_file, "srt": f"{plan.name}.srt", "seed": plan.seed,
        "index": plan.index, "params_hash": params_hash, "verified": verified,
        "categories": {
            "codec": enc.codec, "container": enc.container,
            "fps": "vfr" if tl.vfr else rate_str(tl.rate), "fps_label": plan.fps_label, "vfr": tl.vfr,
            "width": plan.width, "height": plan.height, "resolution": plan.resolution, "bitrate": enc.bitrate,
            "open_gop": enc.open_gop, "bframes": enc.bframes, "background": plan.background.kind,
            "background_source": plan.background.source, "duration_s": round(float(tl.duration), 3),
            "tracks": plan.tracks, "logo": plan.logo is not None, "lang": run_lang(cues),
        },
        "frames": tl.frames,
        "cues": cues,
        "overlays": overlays,
    }


def run_lang(cues: Sequence[Mapping[str, Any]]) -> str:
    """The ``--lang`` a user of this video would give ``flowocr run``, from its JSON cues (``text``, ``lang``):
    ``ja`` for Japanese, the language of a Latin-script video (the bank its words come from: ``es``, ``fr``...),
    else ``ch`` (Chinese, English and the two together)."""
    langs = {str(c.get("lang")) for c in cues}
    if "latin" in langs:
        words = {w for c in cues if c.get("lang") == "latin" for w in str(c.get("text", "")).split()}

        def shared(code: str) -> int:
            return len(words & {w for line in (*LATIN[code], *SIGNS_LATIN.get(code, ())) for w in line.split()})

        return max(sorted(LATIN), key=shared)
    return "ja" if langs == {"ja"} else "ch"


ASS_PLACEHOLDER = "@ASS@"


def filter_graph(plan: VideoPlan, ass_path: str, *, black: bool) -> str:
    """The encode graph (background, timeline, flashes, VFR cut, subtitles) or, with ``black``, the
    verification graph: the same timeline over black, planar RGB."""
    tl = plan.timeline
    tb = tl.time_base
    # fps= changes no frame (pts are already n / rate) but declares the rate: the encoder takes its time base
    # from it, and a held footage frame would otherwise carry the clip's own rate through.
    tail = [f"trim=end_frame={tl.source_frames}", f"settb={tb.numerator}/{tb.denominator}", "setpts=N",
            f"fps={rate_str(tl.rate)}"]
    if not black:
        white = [(a, b) for a, b, kind in plan.background.flashes if kind == "white"]
        pulse = [(a, b) for a, b, kind in plan.background.flashes if kind == "pulse"]
        for spans, lut in ((white, "y=235:u=128:v=128"), (pulse, "y=val*0.45+140")):
            if spans:
                enable = "+".join(f"between(n\\,{a}\\,{b - 1})" for a, b in spans)
                tail.append(f"lutyuv={lut}:enable='{enable}'")
    if tl.vfr:
        tail.append(f"select='{select_expr(tl.keep)}'")
    tail += ["format=gbrp" if black else "format=yuv420p", f"ass=filename={ass_path}"]
    if black:
        head = f"color=c=black:s={plan.width}x{plan.height}:r={rate_str(tl.rate)}"
        return ",".join([head, *tail]) + "[v]"
    return plan.background.graph + ";[bg]" + ",".join(tail) + "[v]"


def params_hash(plan: VideoPlan) -> str:
    """SHA-256 over everything that decides the files: the plan, the ASS script, the graph, the encoder."""
    doc = {"version": VERSION, "plan": jsonable(plan), "ass": ass_document(plan),
           "graph": filter_graph(plan, ASS_PLACEHOLDER, black=False), "encode": list(plan.encoding.args)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def jsonable(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {k: jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Fraction):
        return rate_str(value)
    return value


def corpus_names(seed: int, count: int, env: Environment, opts: DrawOptions) -> list[str]:
    return [draw_video(seed, k, env, opts).name for k in range(count)]


# ---------------------------------------------------------------------------------------------------------
# ffmpeg / ffprobe (the impure shell)


class CorpusError(Exception):
    """A video could not be generated or failed verification; the message names the video (and cue)."""


def run(argv: Sequence[str], what: str) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(list(argv), capture_output=True, check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip()[-1500:]
        raise CorpusError(f"{what}: {argv[0]} exited with {proc.returncode}\n{tail}")
    return proc


#: The font families a corpus draws from: those of the packages flowocr's make installs or that every Debian has
#: (fonts-dejavu-core, fonts-noto-cjk), by name. Other installed fonts are left out, so a seed draws the same
#: corpus on every machine: chromium (the review page's tests) brings fonts-liberation, and a seed's corpus with
#: it differed from the one measured without it.
CORPUS_FONT_PREFIXES = ("DejaVu ", "Noto Sans CJK ", "Noto Serif CJK ", "Noto Sans Mono CJK ")


def discover_environment() -> Environment:
    """Font families per language from fontconfig (among :data:`CORPUS_FONT_PREFIXES`) and the whitelisted footage
    present on this machine."""

    def families(lang: str) -> set[str]:
        out = subprocess.run(["fc-list", f":lang={lang}", "family"], capture_output=True, text=True).stdout
        names = {name.strip() for line in out.splitlines() for name in line.split(",") if name.strip()}
        return {n for n in names if "Math" not in n and n.startswith(CORPUS_FONT_PREFIXES)}

    fonts = {"zh": sorted(families("zh")), "ja": sorted(families("ja")), "en": sorted(families("en"))}
    latin = families("fr")
    for lang in ("de", "es", "pt", "pl", "cs", "tr", "it"):
        latin &= families(lang)
    fonts["latin"] = sorted(latin)
    footage = tuple(f for f in FOOTAGE if (FOOTAGE_DIR / f.clip).is_file())
    return Environment({k: tuple(v) for k, v in fonts.items()}, footage)


def encode_argv(plan: VideoPlan, ass_path: str, out: Path, threads: int) -> list[str]:
    argv = [FFMPEG, "-v", "error", "-y", "-nostdin"]
    for inp in plan.background.inputs:
        argv += ["-threads", str(threads), "-ss", f"{inp.start:.3f}", "-t", f"{inp.length:.3f}",
                 "-i", str(FOOTAGE_DIR / inp.clip)]
    argv += ["-filter_complex", filter_graph(plan, ass_path, black=False), "-filter_complex_threads", str(threads),
             "-map", "[v]", "-fps_mode", "passthrough", *plan.encoding.args, *COMMON_OUTPUT_ARGS]
    fmt = {"mkv": "matroska", "webm": "webm", "mp4": "mp4", "mov": "mov", "avi": "avi"}[plan.encoding.container]
    return argv + ["-f", fmt, str(out)]


@dataclass(frozen=True)
class PlaneStats:
    """Per frame of the verification render and per track plane: brightest value, picture hash and the
    bounding box ``[x0, y0, x1, y1]`` (inclusive) of drawn pixels (None when nothing is drawn)."""

    peak: list[list[int]]
    digest: list[list[bytes | None]]
    bbox: list[list[tuple[int, int, int, int] | None]]


#: Plane of each track in a gbrp frame (planes G, B, R).
PLANES = {"dialogue": 0, "logo": 1, "sign": 2}


def render_planes(plan: VideoPlan, ass_path: str, threads: int) -> PlaneStats:
    import numpy as np

    w, h = plan.width, plan.height
    argv = [FFMPEG, "-v", "error", "-nostdin", "-filter_complex", filter_graph(plan, ass_path, black=True),
            "-filter_complex_threads", str(threads), "-map", "[v]", "-fps_mode", "passthrough",
            "-f", "rawvideo", "-pix_fmt", "gbrp", "-"]
    frame_bytes = 3 * w * h
    buf = bytearray(frame_bytes)
    view = memoryview(buf)
    planes = np.frombuffer(buf, np.uint8).reshape(3, h, w)
    stats = PlaneStats([[], [], []], [[], [], []], [[], [], []])
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        try:
            while True:
                got = 0
                while got < frame_bytes:
                    n = proc.stdout.readinto(view[got:])
                    if not n:
                        break
                    got += n
                if got == 0:
                    break
                if got < frame_bytes:
                    raise CorpusError(f"{plan.name}: verification render ended inside a frame")
                for c in range(3):
                    plane = planes[c]
                    peak = int(plane.max())
                    stats.peak[c].append(peak)
                    if not peak:
                        stats.digest[c].append(None)
                        stats.bbox[c].append(None)
                        continue
                    digest = hashlib.sha1(plane).digest()
                    prev = stats.digest[c][-1] if stats.digest[c] else None
                    if digest == prev:
                        box = stats.bbox[c][-1]
                    else:
                        rows = np.flatnonzero(plane.any(axis=1))
                        cols = np.flatnonzero(plane.any(axis=0))
                        box = (int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1]))
                    stats.digest[c].append(digest)
                    stats.bbox[c].append(box)
        finally:
            proc.stdout.close()
            rc = proc.wait()
        if rc != 0:
            err.seek(0)
            raise CorpusError(f"{plan.name}: verification render failed ({rc}): {err.read().decode()[-1500:]}")
    return stats


def check_render(plan: VideoPlan, stats: PlaneStats) -> dict[str, list[int]]:
    """The render checks of the module docstring; returns the measured boxes (``cue{i}``, ``logo``)."""
    name = plan.name
    n = plan.timeline.frames
    w, h = plan.width, plan.height
    if any(len(p) != n for p in stats.peak):
        raise CorpusError(f"{name}: verification render has {len(stats.peak[0])} frames, the plan {n}")
    boxes: dict[str, list[int]] = {}
    active: dict[int, list[bool]] = {c: [False] * n for c in range(3)}
    for i, cue in enumerate(plan.cues):
        c = PLANES[cue.track]
        truth = cue_truth(cue, plan.timeline)
        label = f"{name}: cue {i} ({cue.text!r}, {cue.track}, frames {truth.start_frame}-{truth.end_frame})"
        for f in range(cue.event_start, cue.event_end):
            if active[c][f]:
                raise CorpusError(f"{label}: overlaps another event of its track at frame {f}")
            active[c][f] = True
        peaks = stats.peak[c]
        digests = stats.digest[c]
        if cue.fade_in_ms or cue.fade_out_ms:
            full = max(peaks[cue.event_start:cue.event_end])
            for f in range(cue.event_start, cue.event_end):
                inside = truth.start_frame <= f < truth.end_frame
                if inside and peaks[f] < 0.45 * full or not inside and peaks[f] > 0.55 * full:
                    raise CorpusError(f"{label}: frame {f} drawn at {peaks[f]}/{full}, "
                                      f"{'inside' if inside else 'outside'} its half-opaque frames")
            middle = (truth.start_frame + truth.end_frame) // 2
        else:
            first = digests[truth.start_frame]
            for f in range(truth.start_frame, truth.end_frame):
                if peaks[f] < 96 or digests[f] != first:
                    raise CorpusError(f"{label}: frame {f} does not show the cue's one picture (peak {peaks[f]})")
            for f in (truth.start_frame - 1, truth.end_frame):
                if 0 <= f < n and digests[f] == first:
                    raise CorpusError(f"{label}: frame {f}, outside the cue, shows the same picture")
            middle = truth.start_frame
        box = stats.bbox[c][middle]
        assert box is not None
        margin = 1 + (0 if cue.style.box else int(cue.style.outline))
        if box[0] < margin or box[1] < margin or box[2] > w - 1 - margin or box[3] > h - 1 - margin:
            raise CorpusError(f"{label}: text at {list(box)} leaves the {w}x{h} picture")
        boxes[f"cue{i}"] = list(box)
    if plan.logo:
        c = PLANES["logo"]
        if any(p == 0 for p in stats.peak[c]) or len(set(stats.digest[c])) != 1:
            raise CorpusError(f"{name}: the logo is not one unchanging picture on every frame")
        active[c] = [True] * n
        box = stats.bbox[c][0]
        assert box is not None
        boxes["logo"] = list(box)
    for c in range(3):
        for f in range(n):
            if not active[c][f] and stats.peak[c][f]:
                track = next(t for t, p in PLANES.items() if p == c)
                raise CorpusError(f"{name}: frame {f} shows {track} text where no {track} event is active")
    grow = 3
    for f in range(n):
        present = [stats.bbox[c][f] for c in range(3) if stats.bbox[c][f] is not None]
        for a in range(len(present)):
            for b in range(a + 1, len(present)):
                p, q = present[a], present[b]
                assert p is not None and q is not None
                if p[0] - grow <= q[2] and q[0] - grow <= p[2] and p[1] - grow <= q[3] and q[1] - grow <= p[3]:
                    raise CorpusError(f"{name}: frame {f}: texts of two tracks overlap ({list(p)}, {list(q)})")
    return boxes


def check_file(plan: VideoPlan, path: Path, threads: int) -> None:
    """The encoded file: codec and size, frame count and timestamps as planned (ffprobe packets), every SRT
    boundary selecting its truth frame on the file's own timestamps, and a decode without errors."""
    name = plan.name
    argv = [FFPROBE, "-v", "error", "-select_streams", "v:0", "-of", "json",
            "-show_entries", "stream=codec_name,width,height,time_base", "-show_entries", "packet=pts,dts",
            str(path)]
    info = json.loads(run(argv, f"{name}: ffprobe").stdout)
    stream = info["streams"][0]
    if stream["codec_name"] != plan.encoding.codec or (stream["width"], stream["height"]) != (plan.width,
                                                                                                plan.height):
        raise CorpusError(f"{name}: the file is {stream['codec_name']} {stream['width']}x{stream['height']}")
    tick = Fraction(stream["time_base"])
    pts = sorted(int(p["pts"] if p.get("pts") is not None else p["dts"]) for p in info["packets"])
    planned = plan.timeline.times
    if len(pts) != len(planned):
        raise CorpusError(f"{name}: {len(pts)} frames in the file, {len(planned)} planned")
    times = [(p - pts[0]) * tick for p in pts]
    for i, (got, want) in enumerate(zip(times, planned)):
        if abs(got - want) > tick:
            raise CorpusError(f"{name}: frame {i} at {float(got):.6f} s in the file, planned {float(want):.6f} s")
    for i, cue in enumerate(plan.cues):
        truth = cue_truth(cue, plan.timeline)
        for ms, frame in ((truth.start_ms, truth.start_frame), (truth.end_ms, truth.end_frame)):
            if bisect.bisect_left(times, Fraction(ms, 1000)) != frame:
                raise CorpusError(f"{name}: cue {i} ({cue.text!r}): {ms} ms does not select frame {frame} "
                                  "on the file's timestamps")
    proc = subprocess.run([FFMPEG, "-v", "error", "-nostdin", "-threads", str(threads), "-i", str(path),
                           "-map", "0:v:0", "-fps_mode", "passthrough", "-enc_time_base", "-1", "-f", "null", "-"],
                          capture_output=True)  # the stream's own time base: VFR frames closer than 1/fps stay apart
    errors = proc.stderr.decode(errors="replace").strip()
    if proc.returncode or errors:
        raise CorpusError(f"{name}: decoding reports errors: {errors[-800:] or proc.returncode}")


# ---------------------------------------------------------------------------------------------------------
# Driver


@dataclass(frozen=True)
class Job:
    seed: int
    index: int
    out: str
    opts: DrawOptions
    env: Environment
    verify: bool
    threads: int


def paths(out: Path, plan: VideoPlan) -> tuple[Path, Path, Path]:
    return out / plan.video_file, out / f"{plan.name}.srt", out / f"{plan.name}.json"


def cached(out: Path, plan: VideoPlan, digest: str) -> dict[str, Any] | None:
    video, srt, meta = paths(out, plan)
    if not (video.is_file() and srt.is_file() and meta.is_file()):
        return None
    try:
        doc = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if doc.get("params_hash") != digest:
        return None
    categories = doc.get("categories")
    if isinstance(categories, dict) and "lang" not in categories:  # written before the field: add it
        categories["lang"] = run_lang(doc.get("cues") or ())
        meta.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return doc


def remove_stale(out: Path, plan: VideoPlan) -> None:
    """Delete files of this index under another name or container (an earlier run with other options) and
    leftover temporary files."""
    prefix = f"{plan.index:03d}-"
    for path in out.iterdir():
        stem = path.name
        if stem.startswith("." + prefix) and ".part" in stem:
            path.unlink(missing_ok=True)
            continue
        ours = path.suffix in OUR_SUFFIXES and stem.startswith(prefix) and NAME_RE.match(path.stem)
        if ours and (path.stem != plan.name or path.suffix not in (".srt", ".json", f".{plan.encoding.container}")):
            path.unlink(missing_ok=True)


def build(job: Job) -> tuple[str, str, float]:
    """Generate (or find cached) one video; returns (name, what happened, seconds)."""
    began = time.monotonic()
    out = Path(job.out)
    plan = draw_video(job.seed, job.index, job.env, job.opts)
    digest = params_hash(plan)
    video, srt, meta = paths(out, plan)
    doc = cached(out, plan, digest)
    if doc is not None and (doc.get("verified") or not job.verify):
        return plan.name, "cached", time.monotonic() - began
    remove_stale(out, plan)
    with tempfile.TemporaryDirectory(prefix="flowocr-corpus-") as tmp:
        if not re.fullmatch(r"[\w./-]+", tmp):
            raise CorpusError(f"temporary folder {tmp!r} has characters ffmpeg filter graphs cannot take")
        burn, check = Path(tmp) / "burn.ass", Path(tmp) / "verify.ass"
        burn.write_text(ass_document(plan), encoding="utf-8")
        check.write_text(ass_document(plan, verify=True), encoding="utf-8")
        srt_text = srt_document(plan)
        # A matching but unverified entry (an earlier --no-verify run) is only verified now.
        tmp_video = out / f".{plan.name}.part.{plan.encoding.container}" if doc is None else video
        action = "generated" if doc is None else "verified"
        boxes = None
        try:
            if doc is None:
                run(encode_argv(plan, str(burn), tmp_video, job.threads), f"{plan.name}: encoding")
            if job.verify:
                check_file(plan, tmp_video, job.threads)
                boxes = check_render(plan, render_planes(plan, str(check), job.threads))
        except BaseException:
            if tmp_video != video:
                tmp_video.unlink(missing_ok=True)
            raise
    tmp_srt, tmp_meta = out / f".{plan.name}.part.srt", out / f".{plan.name}.part.json"
    tmp_srt.write_text(srt_text, encoding="utf-8")
    document = json_document(plan, digest, job.verify, boxes)
    tmp_meta.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if tmp_video != video:
        os.replace(tmp_video, video)
    os.replace(tmp_srt, srt)
    os.replace(tmp_meta, meta)
    return plan.name, action, time.monotonic() - began


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def parse_pair(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"Invalid duration range ({text}). Expected A,B in seconds.") from None
    if not 2 <= a <= b:
        raise argparse.ArgumentTypeError(f"Invalid duration range ({text}). Expected 2 <= A <= B.")
    return a, b


def parse_only(text: str) -> list[int]:
    try:
        values = sorted({int(x) for x in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"Invalid --only ({text}). Expected indices like 3 or 0,7,12.") from None
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"Invalid --only ({text}). Indices start at 0.")
    return values


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--seed", type=int, required=True, help="corpus seed")
    parser.add_argument("--count", type=int, required=True, help="number of videos (indices 0..count-1)")
    parser.add_argument("--jobs", type=int, default=cpu_count(), help="videos generated in parallel (default: CPUs)")
    parser.add_argument("--only", type=parse_only, help="generate only these indices (comma-separated)")
    parser.add_argument("--duration", type=parse_pair, help="duration range A,B in seconds (default 20,40)")
    parser.add_argument("--max-height", type=int, help="largest picture height to draw")
    parser.add_argument("--quick", action="store_true", help="10-15 s, at most 720p, fast presets")
    parser.add_argument("--no-verify", dest="verify", action="store_false", help="skip the verification")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error(f"Invalid --count ({args.count}). Expected at least 1.")
    if args.jobs < 1:
        parser.error(f"Invalid --jobs ({args.jobs}). Expected at least 1.")
    if args.max_height is not None and args.max_height < 360:
        parser.error(f"Invalid --max-height ({args.max_height}). The smallest height drawn is 360.")
    indices = args.only if args.only is not None else list(range(args.count))
    if any(k >= args.count for k in indices):
        parser.error(f"Invalid --only ({','.join(map(str, indices))}). Indices must be below --count {args.count}.")
    opts = DrawOptions(args.duration, args.max_height, args.quick)
    env = discover_environment()
    if not env.fonts.get("en"):
        raise SystemExit("make_corpus: fontconfig lists no font at all; install fonts-noto-cjk and fonts-dejavu")
    args.out.mkdir(parents=True, exist_ok=True)
    lock = open(args.out / ".make_corpus.lock", "w")  # noqa: SIM115 - held until the process exits
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise SystemExit(f"make_corpus: another run is writing {args.out}; wait or use another folder") from None
    jobs = min(args.jobs, len(indices))
    threads = max(1, cpu_count() // jobs)
    work = [Job(args.seed, k, str(args.out), opts, env, args.verify, threads) for k in indices]
    failures: list[str] = []
    began = time.monotonic()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(build, job): job.index for job in work}
        for future in as_completed(futures):
            try:
                name, action, seconds = future.result()
                print(f"{name}: {action} in {seconds:.1f} s", file=sys.stderr, flush=True)
            except Exception as exc:  # one failing video must not stop the others
                failures.append(f"video {futures[future]:03d}: {exc}")
                print(f"video {futures[future]:03d} FAILED: {exc}", file=sys.stderr, flush=True)
    names = corpus_names(args.seed, args.count, env, opts)
    doc = {"generator": "make_corpus", "version": VERSION, "seed": args.seed, "count": args.count, "videos": names}
    tmp = args.out / ".corpus.part.json"
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, args.out / "corpus.json")
    print(f"{len(work) - len(failures)}/{len(work)} videos ready in {time.monotonic() - began:.1f} s "
          f"({jobs} jobs x {threads} threads)", file=sys.stderr)
    if failures:
        print("failed:\n  " + "\n  ".join(f.splitlines()[0] for f in failures), file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------------------
# Phrase banks (written for this corpus). ZH_EN pairs a Chinese line with its English translation: zh videos
# draw the left side, en videos the right, bilingual videos both (Chinese above).


def _pairs(block: str) -> tuple[tuple[str, str], ...]:
    rows = [line.split(" | ") for line in block.strip().splitlines()]
    return tuple((zh.strip(), en.strip()) for zh, en in rows)


def _lines(block: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in block.strip().splitlines() if line.strip())


def _groups(block: str) -> dict[str, tuple[str, ...]]:
    """Lines under ``[code]`` headers, per language code."""
    groups: dict[str, list[str]] = {}
    for line in _lines(block):
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1], [])
        else:
            current.append(line)
    return {code: tuple(lines) for code, lines in groups.items()}


ZH_EN = _pairs("""
嗯 | Mm.
啊！ | Ah!
哦。 | Oh.
好。 | OK.
喂？ | Hello?
谁？ | Who?
不！ | No!
走吧。 | Let's go.
等等！ | Wait!
什么？ | What?
真的吗？ | Really?
快跑！ | Run!
小心！ | Watch out!
谢谢你。 | Thank you.
没关系。 | It's fine.
我知道。 | I know.
别动。 | Don't move.
对不起。 | I'm sorry.
再见。 | Goodbye.
04:15 | 04:15
214号房间 | Room 214
李明？ | Li Ming?
“快跑！” | "Run!"
现在几点了？ | What time is it now?
已经十点半了。 | It's already half past ten.
火车几点出发？ | When does the train leave?
下午三点十五分。 | At a quarter past three.
你把钥匙放哪儿了？ | Where did you put the keys?
就在桌子上。 | Right on the table.
我们得马上离开这里。 | We have to leave right now.
外面在下雨。 | It's raining outside.
带把伞吧。 | Take an umbrella.
你昨天去哪儿了？ | Where were you yesterday?
我一直在图书馆。 | I was at the library all day.
这不是我的错。 | It's not my fault.
你为什么不早点告诉我？ | Why didn't you tell me sooner?
因为你不会相信我。 | Because you wouldn't believe me.
王老师在办公室等你。 | Mr. Wang is waiting in his office.
请把门关上。 | Please close the door.
我饿死了。 | I'm starving.
冰箱里还有饺子。 | There are dumplings in the fridge.
明天见。 | See you tomorrow.
你确定吗？ | Are you sure?
百分之百确定。 | One hundred percent.
他说他会回来的。 | He said he'd come back.
那是三年前的事了。 | That was three years ago.
我们再试一次。 | Let's try once more.
电话一直占线。 | The line is always busy.
你听到那个声音了吗？ | Did you hear that sound?
可能只是风。 | Maybe it's just the wind.
我从来没见过这么大的雪。 | I've never seen this much snow.
今天的会议取消了。 | Today's meeting is cancelled.
老板知道吗？ | Does the boss know?
他还不知道。 | He doesn't know yet.
这道菜太辣了！ | This dish is too spicy!
给我一杯水。 | Give me a glass of water.
第3号站台 | Platform 3
航班推迟了两个小时。 | The flight is delayed two hours.
我们在5楼见面。 | Let's meet on the fifth floor.
别担心，我会处理的。 | Don't worry, I'll handle it.
你看起来很累。 | You look tired.
我昨晚只睡了四个小时。 | I only slept four hours last night.
妈妈打电话来了。 | Mom is calling.
告诉她我马上到。 | Tell her I'll be right there.
这条路通向哪里？ | Where does this road lead?
一直走就到海边了。 | Keep going and you reach the sea.
你相信命运吗？ | Do you believe in fate?
我只相信我自己。 | I only believe in myself.
这是我最后一次警告你。 | This is my last warning.
他们已经出发了。 | They have already left.
地图在我包里。 | The map is in my bag.
我们迷路了吗？ | Are we lost?
没有，再往左拐。 | No, turn left again.
生日快乐！ | Happy birthday!
许个愿吧。 | Make a wish.
这个多少钱？ | How much is this?
二十八块五。 | Twenty-eight fifty.
能便宜一点吗？ | Can you make it cheaper?
医生说你需要休息。 | The doctor says you need rest.
我没事，真的。 | I'm fine, really.
你的手在发抖。 | Your hands are shaking.
外面有人吗？ | Is anyone out there?
陈警官，请进。 | Come in, Officer Chen.
案发时间是晚上九点。 | It happened at nine in the evening.
监控录像在哪里？ | Where is the security footage?
硬盘被人拿走了。 | Someone took the hard drive.
我们还有多少时间？ | How much time do we have left?
不到十分钟。 | Less than ten minutes.
把灯打开。 | Turn on the lights.
停电了。 | The power is out.
我去找蜡烛。 | I'll go find candles.
你会游泳吗？ | Can you swim?
小时候学过一点。 | I learned a little as a kid.
那座桥是1958年建的。 | That bridge was built in 1958.
我们下周去北京。 | We're going to Beijing next week.
票已经订好了。 | The tickets are booked.
别忘了带护照。 | Don't forget your passport.
你在笑什么？ | What are you laughing at?
没什么。 | Nothing.
他们是双胞胎。 | They're twins.
我分不清他们谁是谁。 | I can't tell them apart.
猫又跑到屋顶上去了。 | The cat is on the roof again.
这本书我看了三遍。 | I've read this book three times.
结局太让人难过了。 | The ending is so sad.
我们可以重新开始。 | We can start over.
你真的这么想吗？ | Do you really think so?
天快黑了。 | It's getting dark.
营地就在山那边。 | The camp is over the hill.
把火生起来。 | Get the fire going.
我听不清你说什么。 | I can't hear what you're saying.
信号太差了。 | The signal is too weak.
再说一遍？ | Say that again?
我会想你的。 | I'll miss you.
记得给我写信。 | Remember to write to me.
欢迎回家。 | Welcome home.
你长高了。 | You've grown taller.
饭做好了，快来吃吧。 | Dinner's ready, come and eat.
我不想去上学。 | I don't want to go to school.
今天是星期一。 | Today is Monday.
还有五分钟。 | Five more minutes.
比赛开始了！ | The game has started!
进球了！ | Goal!
裁判在干什么？ | What is the referee doing?
我们赢了！ | We won!
这是谁的车？ | Whose car is this?
车牌号是A 3721。 | The plate number is A 3721.
钱不是问题。 | Money is not the problem.
那什么才是问题？ | Then what is the problem?
我需要一个答案。 | I need an answer.
给我一点时间想想。 | Give me some time to think.
我们没有时间了！ | We're out of time!
计划有变。 | Change of plans.
所有人撤退！ | Everyone fall back!
他醒了。 | He's awake.
这里是哪里？ | Where am I?
你在医院里，很安全。 | You're in a hospital, you're safe.
我什么都不记得了。 | I don't remember anything.
慢慢来。 | Take your time.
那天晚上下着大雨，街上一个人都没有。 | It poured that night and the street was empty.
如果你现在不走，就永远走不了了。 | If you don't leave now, you never will.
我花了整整十年才明白这个道理。 | It took me ten whole years to understand that.
你知道我等这一天等了多久吗？ | Do you know how long I've waited for this day?
只要我们在一起，什么都不怕。 | As long as we're together, we fear nothing.
对面那家店的面条是全城最好吃的。 | The noodles across the street are the best in town.
其实我一直都知道真相，只是不敢说出来而已。 | I always knew the truth, I just never dared to say it.
明天早上七点，老地方见。 | Tomorrow at seven, the usual place.
这已经是本周第三次停电了。 | That's the third blackout this week.
请各位乘客注意，列车即将进站。 | Attention passengers, the train is arriving.
前方到站：人民广场。 | Next stop: People's Square.
你到底站在哪一边？ | Whose side are you on?
我谁也不帮。 | I'm not helping anyone.
别开玩笑了。 | Stop joking.
我是认真的。 | I'm serious.
嘘，别出声。 | Shh, be quiet.
他们来了。 | They're here.
哈哈哈！ | Hahaha!
哎呀！ | Oops!
加油！ | Go for it!
干杯！ | Cheers!
当然。 | Of course.
也许吧。 | Maybe.
为什么？ | Why?
怎么了？ | What's wrong?
没问题。 | No problem.
太好了！ | Great!
救命！ | Help!
安静！ | Quiet!
跟我来。 | Follow me.
我明白了。 | I see.
不可能。 | Impossible.
你疯了吗？ | Are you crazy?
今天气温零下五度。 | It's minus five degrees today.
海拔三千二百米。 | Altitude: 3,200 metres.
她叫林小雨。 | Her name is Lin Xiaoyu.
张伟和我是大学同学。 | Zhang Wei and I were classmates.
我们的目标是1号仓库。 | Our target is warehouse 1.
电梯坏了，只能走楼梯。 | The lift is broken, take the stairs.
你的咖啡，不加糖。 | Your coffee, no sugar.
请出示您的车票。 | Your ticket, please.
我们走错路了。 | We took the wrong road.
他在电话里说：“别等我。” | On the phone he said: "Don't wait for me."
那个箱子里到底装的是什么？ | What on earth is in that box?
我把所有的钱都存进了银行。 | I put all the money in the bank.
我们约好了晚上八点在电影院门口见面，可他一直没来。 | We agreed to meet at the cinema at eight, but he never came.
如果明天还下雨的话，我们就把比赛推迟到下个星期六再说吧。 | If it rains tomorrow, the match moves to next Saturday.
从这里坐地铁到机场大概要四十分钟，中间还得换乘一次二号线。 | The metro to the airport takes forty minutes, one change.
他一句话也没说就走了，桌上只留下一张写着地址的纸条。 | He left without a word, just a note with an address.
""")

JA = _lines("""
え？
うん。
はい。
いいえ。
ねえ。
よし！
あっ！
何？
誰？
どうして？
ちょっと待って！
ありがとう。
ごめんなさい。
大丈夫？
行こう。
早く！
静かに。
おはよう。
おやすみ。
ただいま。
おかえり。
いただきます。
ごちそうさまでした。
本当に？
嘘でしょう？
わかった。
知らない。
危ない！
助けて！
頑張って！
田中さん、おはようございます。
今何時ですか？
午後3時15分です。
電車が遅れています。
駅まで歩いて10分です。
明日は雨が降るそうです。
傘を持って行きなさい。
この店のラーメンは最高だ。
もう一度言ってください。
聞こえない！
窓を開けてもいいですか？
宿題は終わったの？
まだ半分しか終わってない。
先生が呼んでいるよ。
彼女はもう帰りました。
鍵をなくしてしまった。
一緒に探そうか？
東京タワーが見える。
夏休みはどこに行くの？
海に行きたいな。
お腹が空いた。
冷蔵庫に何かある？
卵と牛乳しかない。
誕生日おめでとう！
プレゼントは何がいい？
君のことをずっと待っていた。
約束したでしょう？
忘れていないよ。
時間がない、急げ！
扉を閉めろ！
誰かいるのか？
返事をしてくれ。
電話に出ないんだ。
心配しないで。
すぐに戻るから。
三年ぶりだね。
元気だった？
相変わらずだよ。
この写真、覚えてる？
懐かしいな。
彼は何も言わなかった。
それが答えだ。
明日の朝七時に出発する。
準備はできた？
まだだ。あと五分。
404号室はどこですか？
二階の奥です。
切符を見せてください。
次は渋谷です。
お降りの方はご注意ください。
雪が降ってきた。
寒くない？
手が冷たいよ。
夢を見ていたんだ。
どんな夢？
覚えていない。
猫がいなくなった。
昨日の夜から見ていない。
警察に連絡しよう。
犯人はこの中にいる。
証拠はあるのか？
もちろんだ。
信じられない。
嘘じゃないよ。
本当のことを教えて。
僕は逃げない。
もう遅いよ。
まだ間に合う！
走れ！
勝ったぞ！
やった！
残念だったね。
次は負けない。
お茶をどうぞ。
熱いから気をつけて。
いい天気ですね。
散歩に行きませんか？
花が咲き始めた。
桜の季節だね。
駅前で待ち合わせしよう。
遅れてごめん！
十分も待ったよ。
映画は何時から？
七時半からだよ。
チケットは買った？
山田くん、ちょっといい？
話があるんだ。
何の話？
実は、引っ越すことになった。
いつ？
来月の三日。
寂しくなるね。
手紙を書くよ。
絶対だよ。
空が赤い。
風が強くなってきた。
船が出るぞ！
地図を見せて。
この道で合ってる？
たぶん。
静かすぎる。
何かがおかしい。
気のせいだよ。
足音が聞こえる。
隠れて！
今だ！
終わった……
まだ終わっていない。
私の名前は佐藤花子です。
よろしくお願いします。
こちらこそ。
日本語が上手ですね。
まだまだです。
会議は午前十時からです。
資料を準備してください。
社長が来ました。
今日は本当に楽しかった。
また来週ね。
気をつけて帰ってね。
星がきれいだ。
流れ星！
願い事をした？
秘密だよ。
「逃げろ」と彼は言った。
三丁目の角を右に曲がってください。
あの日のことは、一生忘れない。
君がいなければ、ここまで来られなかった。
電気代が先月の二倍になっている。
明日の天気は晴れのち曇り、最高気温は二十八度です。
駅の北口を出て五分ほど歩くと、右側に小さな本屋が見えます。
もし明日も雨だったら、試合は来週の土曜日に延期しましょう。
""")

LATIN: dict[str, tuple[str, ...]] = _groups("""
[fr]
Non !
Oui.
Pardon ?
Déjà ?
Voilà.
C'est déjà l'été.
Le garçon a oublié son écharpe.
Tu es sûr de ta réponse ?
Je préfère le thé à la crème.
Ça fait trois jours qu'il pleut.
Où sont passées mes clés ?
Nous arriverons vers 18 h 45.
Il faut réfléchir avant de parler.
La fenêtre est restée ouverte.
Bon appétit !
Quelle journée épouvantable !
Elle s'appelle Hélène Dupré.
Appartement 12, deuxième étage.
Ne t'inquiète pas, ça ira.
J'ai reçu ta lettre hier.
Tu veux un café ?
Pourquoi pas ?
Noël approche à grands pas.
Merci beaucoup, monsieur.
« Partez ! » cria-t-il.
[de]
Nein!
Ja.
Genau.
Tschüss!
Schön, dich zu sehen.
Wo ist der Bahnhof?
Es ist schon halb neun.
Ich möchte einen Kaffee, bitte.
Die Tür ist nicht abgeschlossen.
Müssen wir wirklich gehen?
Das Wetter wird morgen schlechter.
Grüß Gott!
Mein Bruder wohnt in München.
Hör auf damit!
Wir treffen uns um 19:30 Uhr.
Ich habe keine Ahnung.
Das ist ja großartig!
Vorsicht, Stufe!
Die Brücke über den Fluss ist gesperrt.
Zimmer 307, bitte.
Frau Schäfer ist nicht da.
Ich wünsche dir viel Glück.
Fünf Minuten noch.
Übermorgen fahren wir ans Meer.
Könnten Sie das bitte wiederholen?
[es]
¡No!
¿Qué?
Sí, claro.
¡Vámonos!
¿Dónde está mi teléfono?
Mañana será otro día.
La reunión empieza a las 9:15.
¿Cuántos años tienes?
Tengo diecisiete.
No entiendo nada.
¡Qué sorpresa!
El niño está durmiendo.
La canción de mi abuela.
¿Quién llamó a la puerta?
Hace mucho frío aquí.
Te espero en la estación.
¿Por qué no me lo dijiste?
Lo siento muchísimo.
Señor Núñez, pase por favor.
Habitación 118.
El último tren sale a medianoche.
Ojalá tengas razón.
¡Feliz cumpleaños, Inés!
¿Está lejos el aeropuerto?
Sigue recto y gira a la izquierda en la plaza.
[pt]
Não!
Sim.
Obrigado.
Olá, tudo bem?
Estou com saudade de você.
Onde fica a estação?
São três e meia da tarde.
A comida está ótima.
Não se preocupe.
Você já almoçou?
Amanhã vai chover o dia todo.
O avião pousou às 6h20.
Minha irmã mora em Lisboa.
Espera aí!
Ninguém sabe a verdade.
Vou pegar o ônibus.
Bom dia, João!
É possível, mas difícil.
A lição começa às oito.
Quanto custa isto?
Já são dez horas.
Pode repetir, por favor?
Até amanhã!
Cuidado com o degrau.
[pl]
Nie!
Tak.
Dziękuję.
Cześć!
Gdzie jest dworzec?
Jest już po północy.
Proszę zamknąć drzwi.
Nie wiem, co powiedzieć.
Zadzwoń do mnie jutro.
Czy możesz mi pomóc?
Święta są już za tydzień.
Żółty samochód stoi przed domem.
Jesteś pewien?
Łódź jest piękna jesienią.
Pokój 12 jest na drugim piętrze.
Zaczekaj chwilę!
Mój brat ma na imię Paweł.
Co się stało?
Mam nadzieję, że zdążymy.
Ile to kosztuje?
Do zobaczenia jutro!
Pociąg odjeżdża o 7:40.
Nie martw się.
Gdzie są moje klucze?
[cs]
Ne!
Ano.
Děkuji.
Ahoj!
Kde je nádraží?
Je čtvrt na devět.
Můžeš mi pomoct?
To je úžasné!
Přijdu zítra ráno.
Nevím, kde jsou klíče.
Pojď sem!
Řekni mi pravdu.
Vlak má zpoždění.
Dobrou noc, Jiří.
Příští týden jedeme do Brna.
Čaj, nebo kávu?
Ještě pět minut.
Mám hlad.
Kolik to stojí?
Kde jsi byl včera?
Nemám čas.
Uvidíme se v pátek.
Tohle je můj pes Žeryk.
Počkej na mě!
[tr]
Hayır!
Evet.
Teşekkürler.
Merhaba!
Nasılsın?
Çok güzel bir gün.
İstasyon nerede?
Saat dokuzu çeyrek geçiyor.
Yarın görüşürüz.
Kapıyı kapatır mısın?
Bilmiyorum.
Çay ister misin?
Öğretmen sınıfa girdi.
Ağabeyim İstanbul'da yaşıyor.
Lütfen bekleyin.
Şaka yapıyorsun!
Bu çok pahalı.
Oda 214 nerede?
Geç kaldık, acele et!
Ne oldu?
Saat kaç?
Yarın sabah yedide buluşalım.
Çok teşekkür ederim.
Güle güle.
[it]
Sì.
Perché?
Andiamo!
Dov'è la stazione?
È già mezzanotte.
Che città meravigliosa!
Il caffè è pronto.
Non è colpa mia.
Ci vediamo alle 20:00.
Più tardi, forse.
La verità è più semplice di quanto pensi.
Grazie mille.
Buongiorno, signora Rossi.
Quanto costa?
Non lo so.
Aspetta un attimo!
Il treno è in ritardo di dieci minuti.
Ti voglio bene.
Dove sono le chiavi?
Che ore sono?
Ci vediamo domani.
È una bella giornata.
""")

SIGNS_ZH_EN = _pairs("""
三年后 | Three years later
第一章 | Chapter One
第二章：归来 | Chapter Two: The Return
东京，1998年 | Tokyo, 1998
次日清晨 | The next morning
警告 | WARNING
禁止入内 | NO ENTRY
出口 | EXIT
急诊 | EMERGENCY
营业中 | OPEN
现场直播 | LIVE
突发新闻 | BREAKING NEWS
未完待续 | To be continued
十年前 | Ten years earlier
北京站 | Beijing Station
2号楼 | Building 2
晚上11:40 | 11:40 PM
星期六 | Saturday
终点站 | Terminus
请勿吸烟 | No smoking
欢迎光临 | Welcome
图书馆 | Library
第47天 | Day 47
回忆 | Memories
特别报道 | Special Report
明日天气：晴 | Tomorrow: sunny
全剧终 | The End
香港，1984 | Hong Kong, 1984
序幕 | Prologue
上海·外滩 | Shanghai, the Bund
""")

SIGNS_JA = _lines("""
三年後
第一章
東京 1998年
翌朝
立入禁止
出口
営業中
次回予告
第5話「約束」
非常口
大阪駅
午前6時
回想
完
つづく
夏の終わり
北海道・札幌
本日休業
新宿三丁目
放課後
""")

SIGNS_LATIN: dict[str, tuple[str, ...]] = _groups("""
[fr]
Paris, 1962
Trois jours plus tard
Sortie
Fin
Épilogue
Marseille, le lendemain
[de]
KAPITEL 3
Berlin – Kreuzberg
ENDE
Ausgang
Zwei Wochen später
[es]
Al día siguiente
Madrid, 23:40
Salida
Años después
Capítulo dos
[pt]
Lisboa, Alfama
Saída
Três dias depois
Fim
[pl]
Rozdział pierwszy
Koniec
Uwaga!
Kraków, zima 1981
[cs]
Praha, léto 1989
Konec
Východ
O týden později
[tr]
İki yıl sonra
Çıkış
Son
İstanbul, 1974
[it]
Roma, 1975
Uscita
Fine
Tre giorni dopo
""")

LOGOS = _lines("""
NEWS 24
TV5 Nord
CH 8
频道一
新闻台
LIVE
DailyVlog
MovieBox
东方影视
アニメ+
KANAL 3
Radio Sol
HD
4K UHD
Cine+
SPORT 1
极速体育
看点视频
Canal Ámbar
Studio 9
NOVA TV
PixelTube
LumaCast
Lecture Hall
蓝海卫视
星光影院
ニュース7
ちゃんねるA
Żyrafa TV
Çizgi Film
""")

if __name__ == "__main__":
    sys.exit(main())
