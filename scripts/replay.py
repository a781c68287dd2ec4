"""Replay the reader over cached evidence: tune and explain its decisions without decoding or OCR'ing again.

    python scripts/replay.py CORPUS_DIR [--only NAME,...] [--cache DIR] [--set MODULE.NAME=VALUE ...] [--log NAME]

For each corpus video it caches, once (``--cache``, default ``$XDG_CACHE_HOME/flowocr/replay``): every frame's change
detector result (the aux stream of the text area, as a run sends it), the grid frames' stroke maps, and every OCR
result the reader asks for, keyed by frame and bands and by a digest of the OCR stage's code, over a cache of the
engine's results keyed by the image read (so a change to what is read OCRs only the new images). Then it runs the real
reader (:mod:`flowocr.read.reader`) and cue builder over the cache and scores the cues against the truth, as
``scripts/eval.py corpus`` does, in seconds per video. ``--set`` overrides a module constant for the replay
(``events.STEP_MIN=60``) or a class attribute (``reader.ChangeReader.MAX_BETWEEN=1``). ``--log NAME`` prints the
reader's decisions for one video.

A replay equals a run of ``flowocr run --area full`` with default options, except for decoding (frames come from
one decode of the whole file, which the sharded decoder equals) and timing. OCR calls are counted as a run counts
them.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import pickle
import sys
import time
from fractions import Fraction
from pathlib import Path


def cache_root(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flowocr" / "replay"


class VideoCache:
    """One video's cached evidence (see the module docstring)."""

    def __init__(self, video: Path, root: Path, reads_version: str, engine: str) -> None:
        from flowocr.ocr.area import parse_area
        from flowocr.probe import probe, sample_grid, scan_index

        self.video = video
        digest = hashlib.sha256(f"{video.resolve()}:{video.stat().st_size}:{video.stat().st_mtime_ns}".encode())
        self.dir = root / f"{video.stem}-{digest.hexdigest()[:12]}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.info = probe(str(video))
        self.index = scan_index(self.info)
        self.grid = list(sample_grid(self.index, Fraction(2)))
        self.area = parse_area("full").rect(self.info.display_width, self.info.display_height)
        # every engine result, keyed by the image read (a change to what is read reuses the rest), and every
        # frame's reading, keyed by frame and bands, per version of the OCR stage's code
        self._crops_path = self.dir / f"crops-{engine}.pkl"
        self.crop_results: dict = pickle.loads(self._crops_path.read_bytes()) if self._crops_path.exists() else {}
        self._reads_path = self.dir / f"reads-{reads_version}.pkl"
        self.reads: dict = pickle.loads(self._reads_path.read_bytes()) if self._reads_path.exists() else {}
        # detections alone (the reader's probes), per version of the probe's code, and per image detected
        self._probes_path = self.dir / f"probes-{probe_version()}.pkl"
        self.probes, self.det_results = (
            pickle.loads(self._probes_path.read_bytes()) if self._probes_path.exists() else ({}, {})
        )
        # full-size grey crops of line boxes (the reader's second look at a line the stroke map cannot see)
        self._looks_path = self.dir / "looks.pkl"
        self.looks: dict = pickle.loads(self._looks_path.read_bytes()) if self._looks_path.exists() else {}
        self._dirty = False
        self._frames: dict[int, object] = {}
        self._load()

    def _load(self) -> None:
        from flowocr.aux import detector
        from flowocr.aux.detector import detect
        from flowocr.aux.protocol import PLANES
        from flowocr.decode.lane import AuxSpec, decode_all, main_format_for
        from flowocr.ocr.strokes import MIN_SCALE, STROKE_WIDTH, frame_strokes

        # made again when the detector's code, its cells or the stroke maps' size change
        path = self.dir / f"evidence-{PLANES}-{STROKE_WIDTH}-{MIN_SCALE:.3f}-{source_digest(detector)}.pkl"
        if path.exists():
            self.changes, self.strokes, self.aux_size = pickle.loads(path.read_bytes())
            return
        rect = self.area
        aux = AuxSpec(scale=0.35, area=(rect.x, rect.y, rect.w, rect.h), max_width=STROKE_WIDTH)
        self.aux_size = aux.size(self.info)
        frames, strokes = [], {}
        from flowocr.decode.lane import BlockDecoder
        from flowocr.plan import Block

        block = Block(number=0, lo=0, hi=len(self.index), seek=0)
        decoder = BlockDecoder(self.info, self.index, block, self.grid, aux=aux, main_format=main_format_for(self.info))
        for frame in decoder.frames():
            if frame.stream == "aux":
                frames.append((frame.index, frame.data))
            else:
                strokes[frame.index] = frame_strokes(frame, (rect.x, rect.y, rect.w, rect.h))
                self._frames[frame.index] = frame
        del decode_all
        self.changes = {c.index: c for c in detect(frames)}
        self.strokes = strokes
        path.write_bytes(pickle.dumps((self.changes, self.strokes, self.aux_size)))

    def frame(self, i: int):
        """Frame ``i`` at full size (decoded on first use)."""
        if i not in self._frames:
            from flowocr.decode.lane import BlockDecoder, main_format_for
            from flowocr.plan import Block
            from flowocr.probe import keyframe_at_or_before

            block = Block(0, i, i + 1, keyframe_at_or_before(self.index, i))
            decoder = BlockDecoder(self.info, self.index, block, [i], main_format=main_format_for(self.info))
            self._frames[i] = next(iter(decoder.frames()), None)
        return self._frames[i]

    def save(self) -> None:
        if self._dirty:
            self._crops_path.write_bytes(pickle.dumps(self.crop_results))
            self._reads_path.write_bytes(pickle.dumps(self.reads))
            self._probes_path.write_bytes(pickle.dumps((self.probes, self.det_results)))
            self._looks_path.write_bytes(pickle.dumps(self.looks))
            self._dirty = False


def source_digest(*modules, extra: str = "") -> str:
    """A short digest of the modules' source code (and ``extra``)."""
    import inspect

    code = "".join(inspect.getsource(m) for m in modules) + extra
    return hashlib.sha1(code.encode()).hexdigest()[:12]


def read_version(overrides: list[str]) -> str:
    """A digest of the code that turns a frame and bands into lines (the engine's too), and of the ``--set``
    ``overrides``."""
    import flowocr.ocr.area
    import flowocr.ocr.strokes

    return source_digest(flowocr.ocr.area, flowocr.ocr.strokes, extra=repr(overrides) + engine_version())


def engine_version() -> str:
    """A digest of the engine's code (its results per image change with it)."""
    import flowocr.ocr.ppocr
    import flowocr.ocr.rapid

    return source_digest(flowocr.ocr.rapid, flowocr.ocr.ppocr)


def probe_version() -> str:
    """A digest of the code that turns a frame and bands into the boxes of a probe."""
    import flowocr.ocr.detect
    import flowocr.ocr.strokes

    return source_digest(flowocr.ocr.detect, flowocr.ocr.strokes)


_ENGINE: list[str] = []  # engine_version(), once


class CachedEngine:
    """The OCR engine's ``recognize`` and ``detect`` over a video's cache of results per image (read on first
    use)."""

    def __init__(self, cache: VideoCache) -> None:
        self.cache = cache
        if not _ENGINE:
            _ENGINE.append(engine_version())

    SHOWN_TOO = True  # as the real engine (rapidocr)

    @property
    def detect_side(self):
        from flowocr.ocr.engine import get_engine

        return get_engine().detect_side

    def recognize(self, images, known=None, shown=None, full_size=False):
        assert known is None  # replay's ``ocr`` puts known lines in itself, over the cached whole reading
        return self._cached(images, self.cache.crop_results, "recognize", shown, full_size)

    def detect(self, images, full_size=False):
        return self._cached(images, self.cache.det_results, "detect", full_size=full_size)

    def _cached(self, images, store: dict, method: str, shown=None, full_size=False):
        from flowocr.ocr.engine import get_engine

        if shown is None:
            salt = b"full:" if full_size else b""  # detected at full size: another result of the same image
            keys = [hashlib.sha1(salt + f"{im.shape}".encode() + im.tobytes()).hexdigest() for im in images]
        else:  # read as shown too: the engine's own choice, cached by its code
            salt = b"shown:" + _ENGINE[0].encode() + (b"full:" if full_size else b"")
            keys = [hashlib.sha1(salt + f"{a.shape}".encode() + a.tobytes() + b.tobytes()).hexdigest()
                    for a, b in zip(images, shown)]  # fmt: skip
        todo = [k for k, key in enumerate(keys) if key not in store]
        if todo:
            run = getattr(get_engine(), method)
            todo_images = [images[k] for k in todo]
            more = {"full_size": True} if full_size else {}
            if shown is not None:
                more["shown"] = [shown[k] for k in todo]
            found = run(todo_images, **more)
            for k, result in zip(todo, found):
                store[keys[k]] = result
            self.cache._dirty = True
        return [store[key] for key in keys]


class LazyFrame:
    """A grid or fetched frame whose pixels are decoded only when the reader reads it."""

    stream = "main"

    def __init__(self, cache: VideoCache, index: int) -> None:
        self.cache, self.index, self.pts = cache, index, cache.index.pts_of(index)

    @property
    def image(self):
        return self  # the OCR tool below takes the frame itself


PROBES = [0]  # the reader's probes (detection alone) over every replayed video
SOUGHT = [0]  # frames the reader decoded to place a boundary by looks alone, over every replayed video


def replay(cache: VideoCache, log=None, lang: str = "ch") -> tuple[list, int]:
    """The cues of one video, read over the cache by the real reader and builder (reading for ``lang``), and the OCR
    calls made."""
    import dataclasses

    from flowocr.cues.builder import CueBuilder
    from flowocr.cues.model import FrameText
    from flowocr.ocr.area import read_bands, read_frame, read_whole, whole_bands
    from flowocr.ocr.detect import probe_frame
    from flowocr.ocr.langs import as_written
    from flowocr.ocr.strokes import frame_strokes
    from flowocr.ocr.types import box_intersection, plausible
    from flowocr.read.events import CellMap
    from flowocr.read.reader import ChangeReader, ReadTools, box_grey

    rect, info, index = cache.area, cache.info, cache.index
    calls = [0]
    engine = CachedEngine(cache)

    def strokes_of(frame):
        if frame is None:
            return None
        if frame.index in cache.strokes:
            return cache.strokes[frame.index]
        real = cache.frame(frame.index)
        return frame_strokes(real, (rect.x, rect.y, rect.w, rect.h))

    def read_cached(frame, key, read) -> tuple:
        """``read(image)`` of the frame's full image, cached under ``key``; its plausible lines, as the language
        writes them (as a run's OCR stage gives them)."""
        if key not in cache.reads:
            cache.reads[key] = read(cache.frame(frame.index).image)
            cache._dirty = True
        lines = [line for line in cache.reads[key] if plausible(line)]
        written = [as_written(lang, line.text) for line in lines]
        return tuple(line if text == line.text else dataclasses.replace(line, text=text)
                     for line, text in zip(lines, written))  # fmt: skip

    def ocr(frame, strokes=None, rows=(), lines=(), slop=0, whole=False, known=()):
        found = read(frame, strokes, rows, lines, slop, whole)
        if not known:
            return found
        # as the engine reads it: a box that is a known line's is that line, unrecognised (the reader passes known
        # lines only where every other box it found that touches one lies on it, a part of it found again, and drops
        # such a part's reading: ChangeReader.KEEP_PARTS)
        return tuple(known) + tuple(ln for ln in found if not any(box_intersection(ln.bounds, k.bounds) > 0
                                                                  for k in known))  # fmt: skip

    def read(frame, strokes, rows, lines, slop, whole):
        calls[0] += 1
        if whole:
            bands = whole_bands(rect, strokes, info.display_height)
            if len(bands) > 1:  # as read_whole reads it
                return read_cached(frame, (frame.index, "whole"),
                                   lambda image: read_whole(engine, image, rect, strokes, info.display_height))
            # a frame read whole in one band is its area's one band, keyed so (as before read_whole)
        else:
            bands = [rect] if strokes is None else read_bands(strokes, rect, info.display_height, rows, lines, slop)
        return read_cached(frame, (frame.index, tuple((b.x, b.y, b.w, b.h) for b in bands)),
                           lambda image: read_frame(engine, image, rect, bands))

    def probe(frame, strokes, rows=(), lines=(), slop=0, whole=False):
        if whole:
            bands = whole_bands(rect, strokes, info.display_height)
        else:
            bands = read_bands(strokes, rect, info.display_height, rows, lines, slop)
        PROBES[0] += 1
        key = (frame.index, tuple((b.x, b.y, b.w, b.h) for b in bands))
        if key not in cache.probes:
            cache.probes[key] = probe_frame(engine, cache.frame(frame.index).image, rect, bands)
            cache._dirty = True
        return cache.probes[key]

    def fetch(i):
        return LazyFrame(cache, i) if i in index_set else None

    def crop(frame, box):
        key = (frame.index, box)
        if key not in cache.looks:
            cache.looks[key] = box_grey(cache.frame(frame.index), box)
            cache._dirty = True
        return cache.looks[key]

    def crops(indices, box):
        return {i: crop(LazyFrame(cache, i), box) for i in indices if i in index_set}

    index_set = range(len(index))
    tools = ReadTools(strokes=strokes_of, ocr=ocr, fetch=fetch, index=index, origin=(rect.x, rect.y), probe=probe,
                      crop=crop, crops=crops)
    aux_w, aux_h = cache.aux_size
    changes = dict(cache.changes)
    reader = ChangeReader(tools, changes, CellMap(rect.x, rect.y, rect.w, rect.h, aux_w, aux_h), log=log)
    builder = CueBuilder()
    cues = []
    for g in cache.grid:
        for r in reader.read(LazyFrame(cache, g)):
            text = FrameText(r.index, r.pts, index.seconds(r.index), r.lines, r.reused)
            cues += [c for c in map(reader.settle, builder.feed(text)) if c is not None]
    cues += [c for c in map(reader.settle, builder.finish(index.duration, len(index))) if c is not None]
    cache.save()
    SOUGHT[0] += reader.sought
    return sorted(cues, key=lambda c: (c.start, c.track)), calls[0]


def main(argv: list[str] | None = None) -> int:
    from flowocr.cues.corpus import (
        VideoOutcome,
        category_rows,
        method_outcome,
        overlays_of,
        table_lines,
        totals,
        totals_lines,
        truth_cues,
        video_categories,
        video_line,
    )
    from flowocr.ocr.langs import DEFAULT_LANG
    from flowocr.output import read_srt

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--only")
    parser.add_argument("--cache")
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    parser.add_argument("--log", metavar="NAME", help="print the reader's decisions for this video")
    parser.add_argument("--log-to", metavar="FILE", help="write every video's decisions to FILE (JSON lines)")
    parser.add_argument("--misses", action="store_true", help="list every cue not exact or not within a frame")
    parser.add_argument("--table", action="store_true", help="print the per-category table too")
    parser.add_argument("--one-lang", dest="own_lang", action="store_false",
                        help="no opening marks of the video's language (eval.py's --one-lang)")
    args = parser.parse_args(argv)
    # once, at the start: the code on disk may change while a replay runs
    reads_version, engine = read_version(args.set), engine_version()
    for item in args.set:
        target, value = item.split("=", 1)
        head, *path, name = target.split(".")
        owner = importlib.import_module(f"flowocr.read.{head}")  # then a class in it, or a module constant
        for part in path:
            owner = getattr(owner, part)
        kind = type(getattr(owner, name))
        if kind is bool and value.lower() not in ("true", "false", "1", "0"):
            parser.error(f"--set {target}: a bool is true or false, not {value!r}")
        setattr(owner, name, value.lower() in ("true", "1") if kind is bool else kind(value))
    folder = Path(args.dir)
    names = json.loads((folder / "corpus.json").read_text())["videos"]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    root = cache_root(args.cache)
    log_to = open(args.log_to, "w", encoding="utf-8") if args.log_to else None  # noqa: SIM115 (closed at the end)
    outcomes = []
    all_whys: dict[str, int] = {}
    refusals: dict[str, int] = {}  # the elsewhere and between reads, by why no probe vouched
    for name in names:
        if not (folder / f"{name}.json").exists():
            print(f"{name}: not in the corpus (the generator did not write it)", flush=True)
            continue
        meta = json.loads((folder / f"{name}.json").read_text())
        video = folder / meta["video"]
        started = time.perf_counter()
        cache = VideoCache(video, root, reads_version, engine)
        index = cache.index
        times = [index.seconds(i) for i in range(len(index))]
        truth = truth_cues(read_srt(folder / meta["srt"]), times, index.duration, meta.get("cues") or ())
        whys: dict[str, int] = {}
        last: list = [None]

        def log(record, name=name, whys=whys, last=last):
            if "why" in record:
                same = not record.get("reused") and record.get("texts") == last[0]
                key = record["why"] + ("" if record.get("reused") else "*") + ("=" if same else "")
                whys[key] = whys.get(key, 0) + 1
                if record["why"] in ("elsewhere", "between", "news"):  # why a probe did not let it be reused
                    probe = record.get("probe")
                    why_read = (f"not probed ({probe})" if isinstance(probe, str)
                                else "not probed" if probe == -1 else f"probe found {probe}")  # fmt: skip
                    key = f"{record['why']}{'=' if same else ''}: {why_read}"
                    refusals[key] = refusals.get(key, 0) + 1
                last[0] = record.get("texts")
            if args.log == name:
                print(json.dumps(record, ensure_ascii=False))
            if log_to is not None:
                log_to.write(json.dumps({"video": name, **record}, ensure_ascii=False) + "\n")

        lang = (meta.get("categories") or {}).get("lang") if args.own_lang else None  # as eval.py's runs
        cues, calls = replay(cache, log, lang or DEFAULT_LANG)
        for key, n in whys.items():
            all_whys[key] = all_whys.get(key, 0) + n
        pred = [(c.start, c.end, c.text) for c in cues]  # written for the language line by line (replay's read)
        ours = method_outcome(pred, truth, times, overlays_of(meta), ocr_calls=calls, seconds=0.0)
        outcome = VideoOutcome(name, video_categories(meta), truth, 1.0, ours, None)
        outcomes.append(outcome)
        print(f"{video_line(outcome)}  ({time.perf_counter() - started:.1f} s)", flush=True)
        if args.misses:
            for c, o in zip(truth, ours.cues):
                if not o.matched or not o.exact or abs(o.start_error) > 1 or abs(o.end_error) > 1:
                    got = "" if o.exact or not o.matched else f" read {ours.preds[o.pred].text!r}"
                    print(f"    {c.start_frame}-{c.end_frame} {c.text!r}: "
                          f"{'missed' if not o.matched else f'{o.start_error:+d}/{o.end_error:+d}'}{got}")
            for p in ours.preds:
                if p.kind in ("phantom", "split"):
                    print(f"    {p.kind} {float(p.start):.2f}-{float(p.end):.2f} {p.text!r}")
    if log_to is not None:
        log_to.close()
    ranked = sorted(all_whys.items(), key=lambda kv: -kv[1])
    print("decisions (* = read, *= = read the texts of the reading before):", ", ".join(f"{k} {v}" for k, v in ranked))
    ranked = sorted(refusals.items(), key=lambda kv: -kv[1])
    print("elsewhere and between reads:", ", ".join(f"{k} {v}" for k, v in ranked))
    print("\n".join(totals_lines(totals(outcomes), outcomes)))
    cues = sum(len(o.truth) for o in outcomes)
    print(f"detection probes per cue     {PROBES[0] / max(1, cues):.2f}  (each about a fifth of an OCR call)")
    print(f"frames sought per cue        {SOUGHT[0] / max(1, cues):.2f}  (decoded to place a boundary by looks)")
    if args.table:
        print("\n".join(table_lines(category_rows(outcomes))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
