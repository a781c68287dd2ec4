"""The exhaustive reference of a clip without ground truth: OCR of every frame's text area, merged into cues.

Real clips have no ground truth (DESIGN §13). Their reference -- flowocr's own engine reading *every* frame, merged
by flowocr's own cue builder -- says what flowocr's sampling and reuse lose, apart from what the model misreads.

    python scripts/reference.py build VIDEO [--area A] [--cache DIR] [--srt OUT] [--json]
    python scripts/reference.py compare VIDEO [--pred PRED.srt [--frames F.jsonl] | --run-args "..."] [--area A]
                                              [--json]
    python scripts/reference.py all [--videos DIR] [--run-args "..."] [--json]

Every command also takes ``--jobs N`` (OCR threads of a build) and ``--python PY``: the interpreter whose
flowocr ``compare`` and ``all`` run (default this one; a venv importing another checkout measures a baseline).

**Build.** One plain ffmpeg process decodes every frame (``-copyts -fps_mode passthrough``), converts it to BGR
and crops the text area (``--area`` as flowocr's: ``full`` (default), ``bottom``, ``top``, ``X,Y,W,H``; not
``auto``), as rawvideo. Each frame's pts comes from ffmpeg's ``showinfo`` and must be a later frame of the packet
scan's index (:mod:`flowocr.probe`): identity is (index, pts). A frame the index has but ffmpeg does not decode
(the skip frames of a screencast codec, damaged packets) is absent from the reference, as from a flowocr run; the
build says how many. Frames go in batches of ``BATCH_FRAMES`` to flowocr's default engine (``get_engine()``),
shared by ``--jobs`` threads; boxes are mapped to frame pixels (``result_to_frame``). A frame whose area is byte
for byte the one before it is not read again: the engine is deterministic, so it would read the same.

**Cache.** ``DIR/<stem>-<sha256 of the file, 16 hex>-<area>-<engine id>.jsonl``; DIR is ``--cache``, else
``$FLOWOCR_REFERENCE_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/flowocr/reference``. The first line is a header
(video, sha256, area, rectangle, engine, index length), then one line per decoded frame (``index``, ``pts``,
``time``, ``lines``: ``text``, ``score``, ``box``), flushed each, and last ``{"done": true, "frames": N, ...}`` with
the build's wall and CPU seconds (ffmpeg, detection, recognition apart). A build finding no done line continues
after the last complete line (a partial or unreadable last line is cut off; earlier frames are decoded again but
not read); a done file is used without decoding; a header for another file, area or engine starts afresh. The
engine id hashes the engine's name, language, options and package versions (a change of flowocr's engine code is
not seen: delete the cache after one).

**Merge.** Every decoded frame's lines go, as :class:`FrameText`, into flowocr's :class:`CueBuilder` with its
rules (``flowocr/cues/builder.py``) and defaults, except two thresholds the builder counts in fed frames, which the
reference sets in *time* to what they mean at flowocr's 2 samples/s: ``confirm_frames`` = frames in
``CONFIRM_S`` = 1 s (3 samples: a reading alike its neighbour is a text of its own only when it persists that
long) and ``max_gap`` = frames in ``GAP_S`` = 0.5 s (one missed sample: a track unread for longer closes). The
frame rate is the reference's decoded frames per second. A reference cue is kept when at least ``MIN_FRAMES`` = 3
decoded frames lie in its span. Starts and ends are frame-exact by construction: a cue starts at the first frame
that reads it and ends at the first frame after its last reading. Lines under the builder's ``min_line_score``
(0.5) are ignored as in a run. Measured (``all`` clips and five fixtures, every frame read):

- The builder's defaults fed every frame (``confirm_frames`` 3 = 0.12 s at 25 fps) split a cue wherever a
  misreading persists for 3 frames, which at 25 fps it does (consecutive frames are nearly identical, so a
  misreading repeats): rapidvideocr_test_a's 77-frame line split at an extra glyph read on 19 frames (``...网络
  补被...``); fate_h264_anim's sign split into 3 cues by one glyph read は/け for 5-9 frames. With the times
  above each is one cue with the majority reading.
- On the fixtures (ground truth known: h264_bframes_2997, demo, hevc_opengop, vp9_60, vfr; 24 cues over moving
  backgrounds, 25-60 fps and VFR) the reference equals the truth under both settings: no cue missed, split or
  added, every text exact, every start and end frame-exact.
- No score threshold separates the junk a model reads on texture from real text: rapidvideocr_1 reads "2V" on
  a floor for 5 frames (mean 0.77), nezha "一" for 4 frames (0.76), while fate_h264_anim's sign reads at 0.75 (its
  small print is misread). Such junk stays in the reference; it is short, so it counts only in the recall of
  cues under 0.5 s.
- A text that changes every frame (moviepy_smpte's frame counter) has no cue structure: the builder merges alike
  readings (``14.000``, ``15.000``) into cues of 4 to 93 frames with a voted text. The reference is then what
  flowocr's builder would make of every frame, which is what a run is compared with.

**Compare.** Runs ``python -m flowocr run VIDEO -o TMP --formats srt,jsonl,json --area A`` (``--area`` as the
reference's unless ``--run-args`` gives one) or takes ``--pred``. The predicted cues are scored against the
reference cues with :func:`~flowocr.cues.score.score_cues` (truth = the reference): a reference cue is *found* when
a prediction overlapping it in time with :func:`~flowocr.cues.text.similarity` >= 0.5 is paired with it, pairs
taken one to one, most alike first (so two reference cues merged into one prediction are one found, one missed).
Reported: recall of reference cues lasting >= 0.5 s (``LONG_S``) and of shorter ones, phantoms (predictions like
no reference cue) and split pieces, exact text of the found cues, start and end errors in frames (predicted -
reference) as the share of found cues within 0, 1 and 2 frames. Every missed reference cue gets a cause from the
run's ``<stem>.frames.jsonl`` (the frames it fed its cue builder) and the cue's span: see :func:`miss_cause`
(``not fed``, ``dropped``, ``misread``, ``reused``); a miss overlapped by an alike prediction paired with
another reference cue is marked merged.

**All.** Builds and compares each clip of :data:`CLIPS` (the text-bearing clips of ``../shared/videos``, each
with the area a user would give) and prints one summary table: the reference's frames, its cold build time
(wall and CPU seconds, from the cache's done line), reference cues, recall, phantoms, share within 1 frame, misses
by cause.
"""

from __future__ import annotations

import argparse
import bisect
import concurrent.futures
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import queue
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from flowocr import ffmpeg
from flowocr.cues import Cue, CueBuilder, CueOptions, FrameText, Score, score_cues, text_blocks
from flowocr.cues.text import normalise_whitespace, similarity
from flowocr.errors import DecodeError, FlowOcrError, UsageError
from flowocr.ocr.area import Rect, parse_area, result_to_frame
from flowocr.ocr.engine import OcrBatch, OcrEngine, StageTimes, get_engine
from flowocr.ocr.types import TextLine
from flowocr.output import read_srt, write_srt
from flowocr.probe import FrameIndex, VideoInfo, probe, scan_index

CACHE_VERSION = 1
Lines = tuple[TextLine, ...]
#: Frames per engine call: a few, so one call's crops are recognised together (results do not depend on it).
BATCH_FRAMES = 4
#: Batches in flight per OCR thread: the decoder stays this far ahead, so no thread waits for a frame.
AHEAD_BATCHES = 2


# --- the reference's frames and their cache --------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """Every decoded frame of a video's text area, OCR'd: ``frames`` in presentation order (a frame the source
    does not yield when decoded is absent, as in a flowocr run), with the facts to place them in time."""

    video: Path
    info: VideoInfo
    index: FrameIndex
    area: str
    rect: Rect
    engine: str
    cache: Path
    frames: tuple[FrameText, ...]
    #: the cache's done marker: frames, absent, build_s (wall seconds of the session that completed it: the cold
    #: build time when it was not resumed), cpu_s (of this process and ffmpeg), ffmpeg_s, det_s, rec_s, crops,
    #: identical (frames that repeat the one before byte for byte, not OCR'd again), resumed, decoder_errors
    done: dict
    #: frames OCR'd by this call (0 when the cache was complete); ``decoded`` says whether ffmpeg ran
    read_now: int
    decoded: bool

    @property
    def build_s(self) -> float:
        return float(self.done.get("build_s", 0.0))

    @property
    def decoder_errors(self) -> int:
        return int(self.done.get("decoder_errors", 0))

    @property
    def end_time(self) -> Fraction:
        return self.index.duration

    def frame_times(self) -> list[Fraction]:
        return [self.index.seconds(i) for i in range(len(self.index))]


def default_cache_dir() -> Path:
    """``$FLOWOCR_REFERENCE_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/flowocr/reference``."""
    if os.environ.get("FLOWOCR_REFERENCE_CACHE"):
        return Path(os.environ["FLOWOCR_REFERENCE_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "flowocr" / "reference"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def engine_id(engine: OcrEngine) -> str:
    """``<name>-<lang>-<8 hex>``: the hash covers the engine's options and the versions of its packages, so a
    cache made with other models or settings is not reused. (A change of flowocr's own engine code is not seen:
    delete the cache after one.)"""
    versions = []
    for package in engine.REQUIRES:
        try:
            versions.append(f"{package}={importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{package}=?")
    facts = f"{engine.NAME}|{engine.lang}|{getattr(engine, 'options', None)!r}|{','.join(versions)}"
    return f"{engine.NAME}-{engine.lang}-{hashlib.sha256(facts.encode()).hexdigest()[:8]}"


def area_slug(area: str, rect: Rect) -> str:
    """The area in a file name: its name (``full``, ``bottom``, ``top``), or the pixel rectangle ``x_y_w_h``."""
    name = area.strip().lower()
    return name if name in ("full", "bottom", "top") else f"{rect.x}_{rect.y}_{rect.w}_{rect.h}"


def resolve_area(area: str, info: VideoInfo) -> Rect:
    spec = parse_area(area)
    if spec.is_auto:
        raise UsageError("The reference needs a fixed area: give full, bottom, top or X,Y,W,H, not auto.")
    return spec.rect(info.display_width, info.display_height)


def frame_record(frame: FrameText) -> dict:
    return {
        "index": frame.index,
        "pts": frame.pts,
        "time": round(float(frame.time), 6),
        "lines": [
            {"text": line.text, "score": round(line.score, 4), "box": [[round(x, 1), round(y, 1)] for x, y in line.box]}
            for line in frame.lines
        ],
    }


def frame_from_record(record: dict, index: FrameIndex) -> FrameText:
    i = record["index"]
    if not 0 <= i < len(index) or index.pts_of(i) != record["pts"]:
        raise ValueError(f"cached frame {i} (pts {record['pts']}) is not in this video's frame index")
    lines = tuple(
        TextLine(line["text"], line["score"], tuple((x, y) for x, y in line["box"]))  # type: ignore[arg-type]
        for line in record["lines"]
    )
    return FrameText(index=i, pts=record["pts"], time=index.seconds(i), lines=lines)


@dataclass
class _CacheState:
    frames: list[FrameText]
    done: dict | None
    good_bytes: int  # length of the complete, valid lines; anything after them is cut off


def read_cache(path: Path, header: dict, index: FrameIndex) -> _CacheState:
    """What a cache file holds for ``header``: its frames and its done marker. A file for another header (video,
    area, engine, version) or unreadable from the start holds nothing; a trailing partial or broken line (a killed
    build) is not counted, so the build continues after the last complete line."""
    empty = _CacheState([], None, 0)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return empty
    frames: list[FrameText] = []
    done = None
    offset = 0
    first = True
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            break  # a partial last line
        try:
            record = json.loads(data[offset:end])
        except ValueError:
            break
        if first:
            if record != header:
                return empty
            first = False
        elif record.get("done"):
            if record.get("frames") != len(frames):
                break
            done = record
            offset = end + 1
            break
        else:
            try:
                frame = frame_from_record(record, index)
            except (KeyError, TypeError, ValueError):
                break
            if frames and frame.index <= frames[-1].index:
                break
            frames.append(frame)
        offset = end + 1
    if first:
        return empty
    return _CacheState(frames, done, offset)


_SHOWINFO_FRAME = re.compile(r"\[showinfo@ref @ [^\]]+\] (?:\[\w+\] )?n:\s*\d+\s+pts:\s*(-?\d+|NOPTS)")
_ERROR_LINE = re.compile(r"\[(?:error|fatal|panic)\] ")


class AreaDecoder:
    """Every frame of a video, in presentation order, as (pts, the area's BGR pixels): one plain ffmpeg process,
    timestamps as in the file (``-copyts``), no frame dropped or duplicated (``-fps_mode passthrough``), each
    frame's pts from ffmpeg's own report (``showinfo``). A frame is converted to BGR whole, then cropped, so its
    pixels are those flowocr crops from a full frame. After iteration, ``errors`` counts ffmpeg's error lines
    (decoding errors: damaged packets)."""

    def __init__(self, info: VideoInfo, rect: Rect) -> None:
        self.info = info
        self.rect = rect
        self.errors = 0
        self._reports: queue.Queue[int | None] = queue.Queue()

    def argv(self) -> list[str]:
        info, rect = self.info, self.rect
        steps = []
        if not rect.is_full(info.display_width, info.display_height):
            steps += ["format=bgr24", f"crop={rect.w}:{rect.h}:{rect.x}:{rect.y}:exact=1"]
        steps.append("showinfo@ref=checksum=0")
        return [ffmpeg.tool("ffmpeg"), "-hide_banner", "-nostdin", "-nostats", "-loglevel", "level+info", "-copyts",
                "-i", str(info.path), "-map", f"0:{info.stream_index}", "-vf", ",".join(steps),
                "-fps_mode", "passthrough", "-pix_fmt", "bgr24", "-f", "rawvideo", "pipe:1"]  # fmt: skip

    def _on_line(self, line: str) -> bool:
        m = _SHOWINFO_FRAME.search(line)
        if m is not None:
            self._reports.put(None if m.group(1) == "NOPTS" else int(m.group(1)))
            return True
        if _ERROR_LINE.search(line):
            self.errors += 1
        return False

    def __iter__(self) -> Iterator[tuple[int | None, np.ndarray]]:
        size = self.rect.w * self.rect.h * 3
        what = f"ffmpeg reference decode of {self.info.path}"
        with ffmpeg.Process(self.argv(), what=what, on_stderr_line=self._on_line) as proc:
            while True:
                buf = proc.stdout.read(size)
                if not buf:
                    break
                if len(buf) < size:
                    raise DecodeError(f"{what}: a partial frame ({len(buf)} of {size} bytes)")
                try:
                    pts = self._reports.get(timeout=60)
                except queue.Empty:
                    raise DecodeError(f"{what}: ffmpeg wrote a frame it did not report") from None
                yield pts, np.frombuffer(buf, np.uint8).reshape(self.rect.h, self.rect.w, 3)
            rc = proc.wait()
            if rc != 0:
                raise proc.failure(rc)


def build(
    video: str | Path,
    area: str = "full",
    cache_dir: str | Path | None = None,
    *,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Reference:
    """OCR every frame of ``video``'s text area, or take it from the cache; see the module docstring (Cache).

    ``jobs`` OCR threads share the one engine (default: 2 on a machine with at least 2 CPUs, else 1).
    Raises :class:`~flowocr.errors.FlowOcrError` subclasses for unusable input (as ``flowocr run`` does) and
    DecodeError when ffmpeg's frames do not match the frame index.
    """
    video = Path(video)
    info = probe(str(video))
    index = scan_index(info)
    rect = resolve_area(area, info)
    engine = get_engine()
    eid = engine_id(engine)
    sha = file_sha256(video)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = folder / f"{video.stem}-{sha[:16]}-{area_slug(area, rect)}-{eid}.jsonl"
    header = {"reference": CACHE_VERSION, "video": video.name, "sha256": sha, "area": area_slug(area, rect),
              "rect": [rect.x, rect.y, rect.w, rect.h], "engine": eid, "index_frames": len(index)}  # fmt: skip
    state = read_cache(path, header, index)
    common = dict(video=video, info=info, index=index, area=area, rect=rect, engine=eid, cache=path)
    if state.done is not None:
        return Reference(**common, frames=tuple(state.frames), done=state.done, read_now=0, decoded=False)

    folder.mkdir(parents=True, exist_ok=True)
    if state.good_bytes == 0:
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(header, ensure_ascii=False) + "\n")
    else:
        with open(path, "r+b") as f:
            f.truncate(state.good_bytes)
    frames = list(state.frames)
    cached = {f.index for f in frames}
    resume_after = frames[-1].index if frames else -1
    threads = jobs or (2 if (os.cpu_count() or 1) >= 2 else 1)
    started = time.perf_counter()
    read_now = 0
    last_note = started

    stages = {"det_s": 0.0, "rec_s": 0.0, "crops": 0}

    def ocr(batch: list[tuple[int, int, np.ndarray | None]]) -> tuple[list[tuple[int, int, Lines | None]], OcrBatch]:
        """OCR a batch; an entry without an image repeats the frame before it (lines None)."""
        images = [image for _, _, image in batch if image is not None]
        read = engine.run(images) if images else OcrBatch((), StageTimes(0.0, 0.0, 0.0, 0.0))
        results = iter(read.results)
        return [(i, pts, None if image is None else result_to_frame(next(results), rect).lines)
                for i, pts, image in batch], read  # fmt: skip

    decoded_count = 0
    identical = 0
    cpu0, children0 = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "a", encoding="utf-8") as out, concurrent.futures.ThreadPoolExecutor(threads) as pool:
        pending: list[concurrent.futures.Future] = []

        def write_oldest() -> None:
            nonlocal read_now, last_note
            entries, read = pending.pop(0).result()
            stages["det_s"] += read.times.det_s or 0.0
            stages["rec_s"] += read.times.rec_s or 0.0
            stages["crops"] += read.crops
            for i, pts, lines in entries:
                frame = FrameText(index=i, pts=pts, time=index.seconds(i), lines=frames[-1].lines if lines is None
                                  else lines)  # fmt: skip
                record = frame_record(frame)
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                out.flush()
                frames.append(frame_from_record(record, index))  # rounded as the cache holds it: same cues
                read_now += 1
            now = time.perf_counter()
            if progress is not None and now - last_note >= 10:
                last_note = now
                rate = read_now / (now - started)
                progress(f"{video.name}: {frames[-1].index + 1}/{len(index)} frames, {rate:.1f} frames/s")

        batch: list[tuple[int, int, np.ndarray | None]] = []
        expected = 0  # the index the next decoded frame must have at least
        previous: np.ndarray | None = None
        decoder = AreaDecoder(info, rect)
        for pts, image in decoder:
            decoded_count += 1
            i = index.index_of(pts) if pts is not None else None
            if i is None or i < expected:
                raise DecodeError(f"{video}: ffmpeg's frame {decoded_count - 1} (pts {pts}) is not the next frame "
                                  f"of the frame index (from {expected} on)")  # fmt: skip
            expected = i + 1
            # The engine is deterministic: a frame whose area is byte for byte the one before reads the same.
            repeat = previous is not None and np.array_equal(image, previous)
            previous = image
            if i <= resume_after:
                if i not in cached:
                    raise DecodeError(f"{video}: frame {i} was not decoded by the build this cache comes from")
                continue
            identical += repeat
            batch.append((i, pts, None if repeat else image))
            if len(batch) == BATCH_FRAMES:
                pending.append(pool.submit(ocr, batch))
                batch = []
                while len(pending) > threads * AHEAD_BATCHES:
                    write_oldest()
        if batch:
            pending.append(pool.submit(ocr, batch))
        while pending:
            write_oldest()
        errors = decoder.errors
        if len(frames) != decoded_count:
            raise DecodeError(f"{video}: {decoded_count} frames decoded but {len(frames)} in the reference")
        build_s = round(time.perf_counter() - started, 2)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        ffmpeg_s = children.ru_utime + children.ru_stime - children0.ru_utime - children0.ru_stime
        cpu_s = time.process_time() - cpu0 + ffmpeg_s
        done = {"done": True, "frames": len(frames), "absent": len(index) - len(frames), "build_s": build_s,
                "cpu_s": round(cpu_s, 2), "ffmpeg_s": round(ffmpeg_s, 2), "det_s": round(stages["det_s"], 2),
                "rec_s": round(stages["rec_s"], 2), "crops": stages["crops"], "identical": identical,
                "resumed": resume_after >= 0,
                "decoder_errors": errors}  # fmt: skip
        out.write(json.dumps(done) + "\n")
        out.flush()
    return Reference(**common, frames=tuple(frames), done=done, read_now=read_now, decoded=True)



# --- merge: every frame's reading into reference cues --------------------------------------------------------

#: How long a reading must persist to be a text of its own when it is alike its neighbour, and how long a track may
#: go unread before it closes: the cue builder's defaults at its 2 samples/s (3 samples, 1 missed sample), in time.
CONFIRM_S = Fraction(1)
GAP_S = Fraction(1, 2)
#: A reference cue is kept when at least this many decoded frames lie in its span.
MIN_FRAMES = 3


def reference_options(fps: Fraction) -> dict[str, float]:
    """Cue builder options for every frame of a video at ``fps`` frames/s (see the module docstring, Merge)."""
    # alike_vote 0: the plain vote (most summed score per reading); a counter clip's cue has hundreds of readings
    return {"confirm_frames": max(3, round(CONFIRM_S * fps)), "max_gap": max(1, round(GAP_S * fps)), "alike_vote": 0}


def reference_cues(
    frames: Sequence[FrameText],
    end_time: Fraction,
    end_index: int,
    *,
    options: dict[str, float] | None = None,
    min_frames: int = MIN_FRAMES,
) -> list[Cue]:
    """The reference cues of every frame's reading (rule: module docstring, Merge), sorted by (start, track).

    Pure. ``frames`` are every decoded frame in presentation order; ``end_time``/``end_index`` are where the
    last frame stops being shown and the index after it, as for :meth:`CueBuilder.finish`. ``options`` default
    to :func:`reference_options` at the mean frame rate of ``frames``.
    """
    if options is None:
        fps = Fraction(len(frames)) / end_time if frames else Fraction(1)
        options = reference_options(fps)
    builder = CueBuilder(**options)
    cues: list[Cue] = []
    for frame in frames:
        cues += builder.feed(frame)
    cues += builder.finish(end_time, end_index)
    indices = [f.index for f in frames]
    kept = [c for c in cues if frames_inside(indices, c.start_index, c.end_index) >= min_frames]
    return sorted(kept, key=lambda c: (c.start, c.track))


def frames_inside(indices: Sequence[int], lo: int, hi: int) -> int:
    """How many of the sorted frame ``indices`` lie in ``[lo, hi)``."""
    return bisect.bisect_left(indices, hi) - bisect.bisect_left(indices, lo)


# --- compare: a flowocr run against the reference ------------------------------------------------------------

#: Reference cues at least this long (s) are the ones flowocr must find (the recall the tests hold it to).
LONG_S = Fraction(1, 2)
SIMILAR = 0.5  # as score_cues' default: a prediction finds a reference cue at this similarity
CAUSES = ("not fed", "reused", "misread", "dropped")


def read_fed_frames(path: Path, index: FrameIndex) -> list[FrameText]:
    """The frames a run fed to its cue builder, from its ``<stem>.frames.jsonl`` (README: one line per OCR'd or
    reused sampled frame); ``reused`` as the run recorded it. Times are taken from the frame index."""
    frames = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        record = json.loads(raw)
        if "kind" in record:  # an overlay's line after the frames (README, the outputs)
            continue
        i = record["index"]
        if not 0 <= i < len(index) or index.pts_of(i) != record["pts"]:
            raise ValueError(f"{path}:{n}: frame {i} (pts {record['pts']}) is not in the video's frame index")
        lines = tuple(
            TextLine(text, score, tuple((x, y) for x, y in box))  # type: ignore[arg-type]
            for text, score, box in zip(record["texts"], record["scores"], record["boxes"])
        )
        frames.append(FrameText(i, record["pts"], index.seconds(i), lines, reused=bool(record["reused"])))
    return frames


def closest_reading(frame: FrameText, text: str) -> tuple[str, float]:
    """The block of the frame's lines (grouped as the cue builder groups them, whatever their score) most alike
    ``text``, and its :func:`similarity`; ``("", 0.0)`` for a frame without lines."""
    blocks = text_blocks(frame.lines, CueOptions(min_line_score=0.0))
    scored = [(b.text, similarity(b.text, text)) for b in blocks]
    return max(scored, key=lambda item: item[1], default=("", 0.0))


def reads_like(frame: FrameText, text: str) -> bool:
    """Whether some block of the frame's lines reads like ``text``: :func:`similarity` at least :data:`SIMILAR`."""
    return closest_reading(frame, text)[1] >= SIMILAR


def miss_cause(cue: Cue, fed: Sequence[FrameText]) -> tuple[str, list[FrameText]]:
    """Why flowocr lost a reference cue, from the frames its run fed inside the cue's span (first that applies):

    - ``not fed``: none of its frames was fed (it fell between samples and no extra frame was read);
    - ``dropped``: a fed frame inside it holds a similar reading (read or reused), yet no cue came out of it:
      the cue builder dropped it or merged it into another text;
    - ``misread``: a frame inside it was read (not reused), but no reading is similar to the reference text;
    - ``reused``: every fed frame inside it carries a reused result, of another text or of no text.

    Returns the cause and the fed frames inside the span.
    """
    inside = [f for f in fed if cue.start_index <= f.index < cue.end_index]
    if not inside:
        return "not fed", inside
    if any(reads_like(f, cue.text) for f in inside):
        return "dropped", inside
    if any(not f.reused for f in inside):
        return "misread", inside
    return "reused", inside


@dataclass(frozen=True)
class Miss:
    """A reference cue no prediction was paired with: its cause (:func:`miss_cause`), the fed frames inside it, and
    ``taken_by``: a prediction that overlaps it with alike text but was paired with another reference cue (the
    two were merged into one cue), else None."""

    cue: Cue
    cause: str
    fed: tuple[FrameText, ...]
    taken_by: int | None = None


@dataclass(frozen=True)
class Comparison:
    """A prediction scored against the reference (``score``: truth = the reference cues), with every miss
    explained. ``fed`` is None when the run's per-frame JSONL is not known (causes are then ``unknown``)."""

    reference: tuple[Cue, ...]
    pred: tuple[tuple[Fraction, Fraction, str], ...]
    score: Score
    misses: tuple[Miss, ...]
    fed: tuple[FrameText, ...] | None

    def long(self, i: int) -> bool:
        cue = self.reference[i]
        return cue.end - cue.start >= LONG_S

    def summary(self) -> dict:
        ref = self.reference
        long_ids = [i for i in range(len(ref)) if self.long(i)]
        short_ids = [i for i in range(len(ref)) if not self.long(i)]
        missed = set(self.score.missed_cues)
        matches = self.score.matches

        def recall(ids: list[int]) -> float | None:
            return None if not ids else sum(i not in missed for i in ids) / len(ids)

        def within(k: int, which: str = "both") -> float | None:
            if not matches:
                return None
            ok = [
                (abs(m.start_error) <= k or which == "end") and (abs(m.end_error) <= k or which == "start")
                for m in matches
            ]
            return sum(ok) / len(ok)

        causes = {cause: 0 for cause in (*CAUSES, "unknown")}
        for miss in self.misses:
            causes[miss.cause] += 1
        return {
            "reference_cues": len(ref),
            "reference_long": len(long_ids),
            "reference_short": len(short_ids),
            "pred_cues": len(self.pred),
            "recall": recall(list(range(len(ref)))),
            "recall_long": recall(long_ids),
            "recall_short": recall(short_ids),
            "missed_long": sum(i in missed for i in long_ids),
            "missed_short": sum(i in missed for i in short_ids),
            "phantoms": self.score.phantom,
            "splits": self.score.split,
            "exact_of_matched": None if not matches else sum(m.exact for m in matches) / len(matches),
            "cer": self.score.cer,
            **{f"within_{k}": within(k) for k in (0, 1, 2)},
            **{f"start_within_{k}": within(k, "start") for k in (0, 1, 2)},
            **{f"end_within_{k}": within(k, "end") for k in (0, 1, 2)},
            "misses_by_cause": {k: v for k, v in causes.items() if v or k != "unknown"},
        }


def compare(
    reference: Sequence[Cue],
    pred: Sequence[tuple[Fraction, Fraction, str]],
    frame_times: Sequence[Fraction],
    fed: Sequence[FrameText] | None,
) -> Comparison:
    """Score ``pred`` against the reference cues with :func:`score_cues` (truth = the reference) and give every
    missed reference cue its cause (:func:`miss_cause`; ``unknown`` without the run's fed frames). Pure."""
    truth = [(c.start, c.end, c.text) for c in reference]
    score = score_cues(pred, truth, frame_times, min_similarity=SIMILAR)
    misses = []
    for i in score.missed_cues:
        cue = reference[i]
        alike = [j for j, (start, end, text) in enumerate(pred)
                 if min(end, cue.end) > max(start, cue.start) and similarity(text, cue.text) >= SIMILAR]  # fmt: skip
        taken_by = alike[0] if alike else None
        if fed is None:
            misses.append(Miss(cue, "unknown", (), taken_by))
        else:
            cause, inside = miss_cause(cue, fed)
            misses.append(Miss(cue, cause, tuple(inside), taken_by))
    return Comparison(tuple(reference), tuple(pred), score, tuple(misses), None if fed is None else tuple(fed))


@dataclass(frozen=True)
class RunOutput:
    srt: Path
    frames_jsonl: Path | None
    report: dict | None


def run_flowocr(
    video: Path, out_dir: Path, area: str, run_args: Sequence[str] = (), *, python: str | None = None
) -> RunOutput:
    """``PYTHON -m flowocr run VIDEO -o OUT --formats srt,jsonl,json --area AREA -q`` plus ``run_args`` (an
    ``--area`` among them wins), in ``out_dir`` (so no checkout in the current folder shadows the installed
    flowocr). ``python`` defaults to this interpreter; another one runs the flowocr it imports (a baseline).
    This flowocr's run gets ``--keep-overlays``: the reference has every text on screen, a logo's too, and the
    comparison measures reading, not the overlay rule (README, Overlays). Raises FlowOcrError with flowocr's exit
    code when the run fails."""
    argv = [python or sys.executable, "-m", "flowocr", "run", str(video.resolve()), "-o", str(out_dir),
            "--formats", "srt,jsonl,json", "-q"]  # fmt: skip
    if python is None:
        argv.append("--keep-overlays")
    if not any(a == "--area" or a.startswith("--area=") for a in run_args):
        argv += ["--area", area]
    argv += list(run_args)
    done = subprocess.run(argv, capture_output=True, text=True, cwd=out_dir)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        error = FlowOcrError(f"flowocr run failed on {video}: {tail[0]}")
        error.exit_code = done.returncode
        raise error
    stem = video.stem
    report_path = out_dir / f"{stem}.report.json"
    jsonl = out_dir / f"{stem}.frames.jsonl"
    return RunOutput(
        out_dir / f"{stem}.srt",
        jsonl if jsonl.is_file() else None,
        json.loads(report_path.read_text(encoding="utf-8")) if report_path.is_file() else None,
    )


# --- the text-bearing clips of ../shared/videos ----------------------------------------------------------------

#: clip -> (area, why): the area a user would give flowocr for it.
CLIPS: dict[str, tuple[str, str]] = {
    "rapidvideocr_nezha.mp4": ("bottom", "anime film, one subtitle line at 91 % of the height"),
    "rapidvideocr_test_a.mp4": ("bottom", "film clips, subtitles at 88-90 %; the channel logo top right is not text"),
    "rapidvideocr_1.mp4": ("bottom", "film, bilingual two-line subtitles at 88-97 %; a small watermark top left"),
    "moviepy_smpte-2997.mp4": ("full", "test pattern: frame count, seconds and timecode mid-frame, new every frame"),
    "moviepy_doc_result.mp4": ("full", "titles over colour bars: a caption at the top, a title and timecode mid-frame"),
    "fate_tscc_screencap_uebung9.avi": ("full", "screencast of a slide editor: text all over the screen"),
    "fate_h264_anim.mkv": ("full", "animation ending on a sign that fills the frame (Japanese and English)"),
}


# --- printing ------------------------------------------------------------------------------------------------


def clock(t: Fraction) -> str:
    ms = int(t * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def one_line(text: str) -> str:
    return " / ".join(normalise_whitespace(text).splitlines())


def cue_line(cue: Cue) -> str:
    frames = cue.end_index - cue.start_index
    return (f"{clock(cue.start)} --> {clock(cue.end)}  [{cue.start_index}, {cue.end_index}) {frames:>4} fr"
            f"  {one_line(cue.text)}")  # fmt: skip


def fed_list(frames: Sequence[FrameText], text: str) -> str:
    """Fed frames as ``index`` (read) or ``index*`` (reused), each with its reading closest to ``text`` and their
    similarity: ``24* "I love you" 0.73``."""
    if not frames:
        return "-"
    parts = []
    for f in frames[:5]:
        reading, sim = closest_reading(f, text)
        parts.append(f'{f.index}{"*" if f.reused else ""} "{one_line(reading)[:20]}" {sim:.2f}')
    more = f" +{len(frames) - 5}" if len(frames) > 5 else ""
    return ", ".join(parts) + more


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def comparison_text(name: str, comp: Comparison, run: RunOutput | None) -> str:
    s = comp.summary()
    rows = [
        ("video", name),
        ("reference cues", f"{s['reference_cues']} ({s['reference_long']} >= 0.5 s, {s['reference_short']} shorter)"),
        ("predicted cues", str(s["pred_cues"])),
        ("recall >= 0.5 s", f"{pct(s['recall_long'])} ({s['missed_long']} missed)"),
        ("recall < 0.5 s", f"{pct(s['recall_short'])} ({s['missed_short']} missed)"),
        ("phantoms", str(s["phantoms"])),
        ("split pieces", str(s["splits"])),
        ("exact text (matched)", pct(s["exact_of_matched"])),
        ("start within 0/1/2 fr", " / ".join(pct(s[f"start_within_{k}"]) for k in (0, 1, 2))),
        ("end within 0/1/2 fr", " / ".join(pct(s[f"end_within_{k}"]) for k in (0, 1, 2))),
        ("both within 0/1/2 fr", " / ".join(pct(s[f"within_{k}"]) for k in (0, 1, 2))),
        ("misses by cause", ", ".join(f"{k} {v}" for k, v in s["misses_by_cause"].items())),
    ]
    if run is not None and run.report is not None:
        ocr = run.report.get("ocr", {})
        rows.append(("run", f"{ocr.get('calls')} OCR calls, {ocr.get('reused')} reused, "
                            f"{run.report.get('timing', {}).get('total_s', 0):.1f} s"))  # fmt: skip
    width = max(len(k) for k, _ in rows)
    out = [f"{k:<{width}}  {v}" for k, v in rows]
    if comp.misses:
        out += ["", "missed reference cues:"]
        for miss in comp.misses:
            cue = miss.cue
            dur = cue.end - cue.start
            merged = "" if miss.taken_by is None else f"  (merged into {clock(comp.pred[miss.taken_by][0])})"
            out.append(f"  {clock(cue.start)} {float(dur):5.2f} s {cue.end_index - cue.start_index:>4} fr  "
                       f"{miss.cause:<8}  {one_line(cue.text)[:40]:<40}  fed: {fed_list(miss.fed, cue.text)}{merged}")
    phantoms = comp.score.phantom_cues
    if phantoms:
        out += ["", "phantoms (predictions like no reference cue):"]
        for j in phantoms:
            start, end, text = comp.pred[j]
            out.append(f"  {clock(start)} --> {clock(end)}  {one_line(text)[:60]}")
    return "\n".join(out)


def cue_json(cue: Cue) -> dict:
    return {"start": float(cue.start), "end": float(cue.end), "start_index": cue.start_index,
            "end_index": cue.end_index, "text": cue.text, "track": cue.track, "score": round(cue.score, 4)}  # fmt: skip


def frame_json(frame: FrameText) -> dict:
    return {"index": frame.index, "time": round(float(frame.time), 6), "reused": frame.reused,
            "texts": [line.text for line in frame.lines]}  # fmt: skip


def comparison_json(comp: Comparison) -> dict:
    return {
        "summary": comp.summary(),
        "reference": [cue_json(c) for c in comp.reference],
        "pred": [{"start": float(s), "end": float(e), "text": t} for s, e, t in comp.pred],
        "matches": [dataclasses.asdict(m) for m in comp.score.matches],
        "misses": [{**cue_json(m.cue), "cause": m.cause, "taken_by": m.taken_by, "fed": [frame_json(f) for f in m.fed]}
                   for m in comp.misses],  # fmt: skip
        "phantoms": list(comp.score.phantom_cues),
        "splits": list(comp.score.split_cues),
    }


def reference_json(ref: Reference, cues: Sequence[Cue]) -> dict:
    return {"video": str(ref.video), "area": ref.area, "rect": [ref.rect.x, ref.rect.y, ref.rect.w, ref.rect.h],
            "engine": ref.engine, "cache": str(ref.cache), "frames": len(ref.frames), "index_frames": len(ref.index),
            "build_s": ref.build_s, "read_now": ref.read_now, "cues": [cue_json(c) for c in cues]}  # fmt: skip


# --- commands ------------------------------------------------------------------------------------------------


def note(message: str) -> None:
    print(f"reference: {message}", file=sys.stderr, flush=True)


def build_reference(video: Path, area: str, cache: str | None, jobs: int | None = None) -> tuple[Reference, list[Cue]]:
    ref = build(video, area, cache, jobs=jobs, progress=note)
    if ref.decoded:
        note(f"{video.name}: {ref.read_now} frames read in {ref.build_s:.1f} s -> {ref.cache}")
    if len(ref.frames) != len(ref.index):
        note(f"{video.name}: ffmpeg decodes {len(ref.frames)} of the {len(ref.index)} frames of its index "
             f"({ref.decoder_errors} decoding errors); the others are absent, as in a flowocr run")  # fmt: skip
    return ref, reference_cues(ref.frames, ref.end_time, len(ref.index))


def compare_video(
    video: Path, area: str, cache: str | None, *, pred: Path | None = None, frames: Path | None = None,
    run_args: Sequence[str] = (), python: str | None = None, jobs: int | None = None,
) -> tuple[Reference, Comparison, RunOutput | None]:  # fmt: skip
    ref, cues = build_reference(video, area, cache, jobs)
    run = None
    if pred is None:
        with tempfile.TemporaryDirectory(prefix="flowocr-reference-") as tmp:
            run = run_flowocr(video, Path(tmp), area, run_args, python=python)
            predicted = read_srt(run.srt)
            fed = None if run.frames_jsonl is None else read_fed_frames(run.frames_jsonl, ref.index)
    else:
        predicted = read_srt(pred)
        jsonl = frames or pred.with_name(f"{video.stem}.frames.jsonl")
        fed = read_fed_frames(jsonl, ref.index) if jsonl.is_file() else None
    return ref, compare(cues, [tuple(p) for p in predicted], ref.frame_times(), fed), run


def cmd_build(args: argparse.Namespace) -> int:
    ref, cues = build_reference(Path(args.video), args.area, args.cache, args.jobs)
    if args.srt:
        write_srt(cues, args.srt)
    if args.json:
        print(json.dumps(reference_json(ref, cues), indent=2, ensure_ascii=False))
    elif not args.srt:
        for cue in cues:
            print(cue_line(cue))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    video = Path(args.video)
    pred = Path(args.pred) if args.pred else None
    frames = Path(args.frames) if args.frames else None
    ref, comp, run = compare_video(video, args.area, args.cache, pred=pred, frames=frames,
                                   run_args=shlex.split(args.run_args), python=args.python, jobs=args.jobs)  # fmt: skip
    if args.json:
        print(json.dumps({**reference_json(ref, comp.reference), **comparison_json(comp)}, indent=2,
                         ensure_ascii=False, default=float))  # fmt: skip
    else:
        print(comparison_text(video.name, comp, run))
    return 0


def cmd_all(args: argparse.Namespace) -> int:
    folder = Path(args.videos)
    rows = []
    results = {}
    for name, (area, why) in CLIPS.items():
        video = folder / name
        if not video.is_file():
            note(f"{video}: not found; skipped")
            continue
        t0 = time.perf_counter()
        ref, comp, run = compare_video(video, area, args.cache, run_args=shlex.split(args.run_args),
                                       python=args.python, jobs=args.jobs)  # fmt: skip
        s = comp.summary()
        results[name] = {"area": area, "why": why, "build_s": ref.build_s, "cached": not ref.decoded,
                         "frames": len(ref.frames), **comparison_json(comp)}  # fmt: skip
        rows.append((name, area, ref, s))
        if not args.json:
            print(comparison_text(name, comp, run), end="\n\n", flush=True)
        note(f"{name}: done in {time.perf_counter() - t0:.1f} s")
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False, default=float))
        return 0
    print(summary_table(rows))
    return 0


def summary_table(rows: Sequence[tuple[str, str, Reference, dict]]) -> str:
    head = ("clip", "area", "frames", "build s", "cpu s", "ref", ">=0.5s", "recall>=0.5s", "recall<0.5s",
            "phantoms", "within 1", *CAUSES)  # fmt: skip
    table = [head]
    for name, area, ref, s in rows:
        c = s["misses_by_cause"]
        table.append((name, area, str(len(ref.frames)), f"{ref.build_s:.0f}", f"{ref.done.get('cpu_s', 0):.0f}",
                      str(s["reference_cues"]), str(s["reference_long"]), pct(s["recall_long"]),
                      pct(s["recall_short"]), str(s["phantoms"]), pct(s["within_1"]),
                      *(str(c.get(k, 0)) for k in CAUSES)))  # fmt: skip
    widths = [max(len(r[k]) for r in table) for k in range(len(head))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--cache", metavar="DIR", help=f"cache folder (default {default_cache_dir()})")
    shared.add_argument("--json", action="store_true", help="print everything as JSON")
    shared.add_argument("--jobs", type=int, metavar="N", help="OCR threads of a build (default 2 on 2+ CPUs)")
    shared.add_argument("--python", metavar="PY", help="the interpreter whose flowocr is run (default: this one; "
                        "e.g. a venv importing another checkout, for a baseline)")  # fmt: skip

    p = sub.add_parser("build", parents=[shared], help="OCR every frame (cached) and print the reference cues")
    p.add_argument("video")
    p.add_argument("--area", default="full", help="full, bottom, top or X,Y,W,H (as flowocr's --area); default full")
    p.add_argument("--srt", metavar="OUT", help="write the reference cues as SRT instead of printing them")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("compare", parents=[shared], help="score a flowocr run (or an SRT) against the reference")
    p.add_argument("video")
    p.add_argument("--area", default="full", help="the reference's area, also given to the run; default full")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--pred", metavar="PRED.srt", help="score this SRT instead of running flowocr")
    group.add_argument("--run-args", default="", metavar="ARGS", help="more options for `flowocr run` (quoted)")
    p.add_argument("--frames", metavar="FRAMES.jsonl", help="with --pred: the run's per-frame JSONL "
                   "(default: <stem>.frames.jsonl beside PRED.srt)")  # fmt: skip
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("all", parents=[shared], help="build and compare every text-bearing clip of ../shared/videos")
    p.add_argument("--videos", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "videos"),
                   metavar="DIR", help="the clips' folder (default ../shared/videos of the repository)")  # fmt: skip
    p.add_argument("--run-args", default="", metavar="ARGS", help="more options for `flowocr run` (quoted)")
    p.set_defaults(func=cmd_all)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except FlowOcrError as exc:
        print(f"reference: {exc}", file=sys.stderr)
        return exc.exit_code
    except (OSError, ValueError) as exc:
        print(f"reference: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
