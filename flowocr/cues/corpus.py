"""Evaluation over a corpus (DESIGN §13): per-cue outcomes of each video, aggregated per category. Pure: plain
data in, plain data out; ``scripts/eval.py corpus`` is the shell that runs the videos and prints these tables.

**Outcomes.** A video's truth cues are scored with :func:`~flowocr.cues.score.score_cues` (its matching, 0.5
similarity). Each truth cue is *matched* (exact or not, its edits, start/end error in frames) or *missed*.
Each prediction is *matched*, *split* (a second piece of a matched truth cue) or *phantom*, except that a
prediction that would be a phantom but reads an **overlay** (a logo, a channel bug: text on screen that is not a
subtitle) counts as *overlay*: its text is alike the overlay's (:func:`~flowocr.cues.text.similarity` >= 0.5) and
it overlaps the overlay's time. Overlays are never missed: reading them or not is neither right nor wrong.

**Categories.** Per video: ``codec``, ``fps_label``, ``resolution``, ``bitrate``, ``background``, ``tracks``,
``logo`` (from the video's JSON). Per truth cue: ``size`` (text height ``size_px``: <20, 20-29, 30-44, >=45),
``length`` (frames on screen: 1-2 frames, 3 frames-0.5 s, 0.5-1 s, 1-3 s, >=3 s; seconds from the frame times),
``lang``, ``position``, ``track``, ``fade`` (yes when ``fade_in_ms`` or ``fade_out_ms`` > 0) and ``style``
(``box``, ``outline 0``, ``outline >0``). A field a video or cue lacks puts it in no row of that category.

**Columns** of a row (:class:`Stats`), over the truth cues of the row:

* ``cues``: truth cues; ``exact``: share of them whose match has the exact text (score.py's normalisation);
  ``cer``: edits of matched cues plus characters of missed ones, over all their characters;
* ``missed``: truth cues without a match; ``missed_long``: among those of the length buckets from 0.5 s up
  (``long_cues``); ``missed_short``: among those of the bucket 3 frames-0.5 s (``short_cues``);
* ``within`` (0, 1, 2 frames): share of the ``2 x matched`` boundaries (each start and each end counts) off by at
  most that many frames;
* per-video rows only (None in per-cue rows, where a phantom belongs to no truth cue): ``phantom``, ``overlay``
  and ``split`` predictions, ``calls_per_cue`` (OCR calls of the row's videos over their truth cues) and
  ``ratio`` (median over the row's videos of run wall time / ffmpeg's own decode wall time).

A run that failed counts as one that predicted nothing: all its truth cues are missed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from flowocr.cues.score import TimedText, frame_at_or_after, score_cues
from flowocr.cues.text import normalise_whitespace, similarity

PredKind = Literal["matched", "split", "phantom", "overlay"]

#: Per-video categories, in table order, and the order of their values (others sort after these, by name).
VIDEO_CATEGORIES: tuple[str, ...] = ("codec", "fps_label", "resolution", "bitrate", "background", "tracks", "logo")
#: Per-cue categories, in table order.
CUE_CATEGORIES: tuple[str, ...] = ("size", "length", "lang", "position", "track", "fade", "style")
SIZE_BUCKETS: tuple[str, ...] = ("<20", "20-29", "30-44", ">=45")
LENGTH_BUCKETS: tuple[str, ...] = ("1-2 frames", "3 frames-0.5 s", "0.5-1 s", "1-3 s", ">=3 s")
_VALUE_ORDER: dict[str, tuple[str, ...]] = {
    "resolution": ("360p", "480p", "540p", "720p", "1080p", "1440p", "2160p"),
    "bitrate": ("low", "mid", "high"),
    "size": SIZE_BUCKETS,
    "length": LENGTH_BUCKETS,
    "logo": ("no", "yes"),
    "fade": ("no", "yes"),
    "position": ("bottom", "middle", "top"),
    "track": ("dialogue", "sign"),
    "style": ("outline 0", "outline >0", "box"),
}
#: How alike a prediction's text must be to an overlay's to be a reading of it.
OVERLAY_SIMILARITY = 0.5


def size_bucket(size_px: float) -> str:
    """The text height bucket of ``size_px`` pixels: <20, 20-29, 30-44, >=45."""
    if size_px < 20:
        return "<20"
    if size_px < 30:
        return "20-29"
    if size_px < 45:
        return "30-44"
    return ">=45"


def length_bucket(frames: int, seconds: Fraction | float) -> str:
    """The length bucket of a cue shown on ``frames`` frames for ``seconds``: 1-2 frames (also 0: a cue that no
    frame shows), 3 frames-0.5 s, 0.5-1 s, 1-3 s, >=3 s."""
    if frames <= 2:
        return "1-2 frames"
    if seconds < Fraction(1, 2):
        return "3 frames-0.5 s"
    if seconds < 1:
        return "0.5-1 s"
    if seconds < 3:
        return "1-3 s"
    return ">=3 s"


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def video_categories(meta: Mapping[str, Any]) -> dict[str, str]:
    """The per-video categories of a video's JSON (its ``categories`` object); absent fields are left out."""
    found = meta.get("categories") or {}
    return {name: _label(found[name]) for name in VIDEO_CATEGORIES if found.get(name) is not None}


def cue_categories(meta_cue: Mapping[str, Any] | None, frames: int, seconds: Fraction | float) -> dict[str, str]:
    """The per-cue categories of one truth cue: ``length`` always, the others from its entry in the video's JSON
    (None: no entry) where the fields are present."""
    out = {"length": length_bucket(frames, seconds)}
    if meta_cue is None:
        return out
    if meta_cue.get("size_px") is not None:
        out["size"] = size_bucket(float(meta_cue["size_px"]))
    for name in ("lang", "position", "track"):
        if meta_cue.get(name) is not None:
            out[name] = _label(meta_cue[name])
    fades = [meta_cue.get(k) for k in ("fade_in_ms", "fade_out_ms")]
    if any(v is not None for v in fades):
        out["fade"] = "yes" if any((v or 0) > 0 for v in fades) else "no"
    if meta_cue.get("box"):
        out["style"] = "box"
    elif meta_cue.get("outline") is not None:
        out["style"] = "outline >0" if float(meta_cue["outline"]) > 0 else "outline 0"
    return out


@dataclass(frozen=True)
class TruthCue:
    """One truth cue of a video: exact times (s from the first frame), text, the frames that show it
    (``start_frame`` to ``end_frame``, half open) and how long that is (s), and its per-cue categories."""

    start: Fraction
    end: Fraction
    text: str
    start_frame: int
    end_frame: int
    seconds: Fraction
    categories: Mapping[str, str] = field(default_factory=dict)

    @property
    def frames(self) -> int:
        return self.end_frame - self.start_frame


def truth_cues(
    entries: Sequence[TimedText],
    frame_times: Sequence[Fraction],
    end_time: Fraction,
    meta_cues: Sequence[Mapping[str, Any]] = (),
) -> tuple[TruthCue, ...]:
    """The truth cues of a video from its SRT ``entries`` and the ``cues`` of its JSON (``meta_cues``).

    ``frame_times``: every frame's time; ``end_time``: when the last frame stops being shown. An entry takes its
    categories from the JSON cue of the same position when the two lists agree in length and text, else from the
    JSON cue with the same text nearest in start time (none: only ``length``).
    """
    parsed = [(_seconds(c.get("start")), c) for c in meta_cues]
    aligned = len(parsed) == len(entries) and all(
        _same_text(c.get("text"), text) for (_, c), (_, _, text) in zip(parsed, entries)
    )
    out = []
    for k, (start, end, text) in enumerate(entries):
        if aligned:
            meta = parsed[k][1]
        else:
            alike = [(abs(s - start) if s is not None else math.inf, n) for n, (s, c) in enumerate(parsed)
                     if _same_text(c.get("text"), text)]  # fmt: skip
            meta = parsed[min(alike)[1]][1] if alike else None
        lo, hi = frame_at_or_after(frame_times, start), frame_at_or_after(frame_times, end)
        seconds = _time_of(frame_times, hi, end_time) - _time_of(frame_times, lo, end_time)
        out.append(TruthCue(start, end, text, lo, hi, seconds, cue_categories(meta, hi - lo, seconds)))
    return tuple(out)


def _time_of(frame_times: Sequence[Fraction], frame: int, end_time: Fraction) -> Fraction:
    return frame_times[frame] if frame < len(frame_times) else end_time


def _same_text(a: Any, b: str) -> bool:
    return isinstance(a, str) and " ".join(a.split()) == " ".join(b.split())


def _seconds(value: Any) -> Fraction | None:
    """A time from the corpus JSON ("12.345", 12.345, "1/3"), exact; None when absent or unreadable."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        return None


@dataclass(frozen=True)
class Overlay:
    """Text on screen that is not a subtitle (a logo): its text and time (s from the first frame; None: from the
    start / to the end)."""

    text: str
    start: Fraction | None = None
    end: Fraction | None = None

    def overlaps(self, start: Fraction, end: Fraction) -> bool:
        lo = self.start if self.start is not None else start
        hi = self.end if self.end is not None else end
        return min(hi, end) > max(lo, start)


def overlays_of(meta: Mapping[str, Any]) -> tuple[Overlay, ...]:
    """The overlays of a video's JSON (entries without text are left out)."""
    return tuple(
        Overlay(str(o["text"]), _seconds(o.get("start")), _seconds(o.get("end")))
        for o in meta.get("overlays") or ()
        if o.get("text")
    )


@dataclass(frozen=True)
class CueOutcome:
    """How a method read one truth cue: matched or missed; when matched, ``exact``, ``edits`` (characters, of
    ``chars`` in the truth text), start/end error in frames (predicted - truth) and the prediction's position."""

    matched: bool
    chars: int
    edits: int
    exact: bool = False
    start_error: int | None = None
    end_error: int | None = None
    pred: int | None = None


@dataclass(frozen=True)
class PredOutcome:
    """One predicted cue (exact times, text) and what it was: matched, split, phantom or overlay."""

    start: Fraction
    end: Fraction
    text: str
    kind: PredKind


@dataclass(frozen=True)
class MethodOutcome:
    """One method's reading of one video: an outcome per truth cue (in truth order), per prediction, its OCR
    calls, its wall time (s; None when not timed), and whether the run completed (``error``: why not)."""

    cues: tuple[CueOutcome, ...]
    preds: tuple[PredOutcome, ...]
    ocr_calls: int
    seconds: float | None
    complete: bool = True
    error: str | None = None

    def count(self, kind: PredKind) -> int:
        return sum(p.kind == kind for p in self.preds)


def method_outcome(
    pred: Sequence[TimedText],
    truth: Sequence[TruthCue],
    frame_times: Sequence[Fraction],
    overlays: Sequence[Overlay] = (),
    *,
    ocr_calls: int,
    seconds: float | None,
    complete: bool = True,
    error: str | None = None,
) -> MethodOutcome:
    """Score ``pred`` against ``truth`` (module docstring: outcomes and the overlay rule)."""
    score = score_cues(pred, [(c.start, c.end, c.text) for c in truth], frame_times)
    by_truth = {m.truth: m for m in score.matches}
    cues = []
    for i, cue in enumerate(truth):
        chars = len(normalise_whitespace(cue.text))
        m = by_truth.get(i)
        if m is None:
            cues.append(CueOutcome(matched=False, chars=chars, edits=chars))
        else:
            cues.append(CueOutcome(True, chars, m.edits, m.exact, m.start_error, m.end_error, m.pred))
    kinds: dict[int, PredKind] = {m.pred: "matched" for m in score.matches}
    kinds.update({j: "split" for j in score.split_cues})
    for j in score.phantom_cues:
        start, end, text = pred[j]
        reads_overlay = any(o.overlaps(start, end) and similarity(o.text, text) >= OVERLAY_SIMILARITY for o in overlays)
        kinds[j] = "overlay" if reads_overlay else "phantom"
    preds = tuple(PredOutcome(Fraction(s), Fraction(e), t, kinds[j]) for j, (s, e, t) in enumerate(pred))
    return MethodOutcome(tuple(cues), preds, ocr_calls, seconds, complete, error)


@dataclass(frozen=True)
class VideoOutcome:
    """One video of the corpus: its name, per-video categories, truth cues, ffmpeg's own decode time (s; None
    when not timed), and the outcomes of flowocr (``ours``) and of the naive method (None when not run)."""

    name: str
    categories: Mapping[str, str]
    truth: tuple[TruthCue, ...]
    decode_s: float | None
    ours: MethodOutcome
    naive: MethodOutcome | None = None

    def __post_init__(self) -> None:
        for method in (self.ours, self.naive):
            if method is not None and len(method.cues) != len(self.truth):
                raise ValueError(f"{self.name}: one outcome per truth cue ({len(self.truth)}), got {len(method.cues)}")


Method = Literal["ours", "naive"]


@dataclass(frozen=True)
class Stats:
    """One method over one row (module docstring: columns). A rate without anything to count is None."""

    cues: int
    exact: float | None
    cer: float | None
    missed: int
    missed_long: int
    long_cues: int
    missed_short: int
    short_cues: int
    within: tuple[float, float, float] | None
    phantom: int | None = None
    overlay: int | None = None
    split: int | None = None
    calls_per_cue: float | None = None
    ratio: float | None = None
    videos: int | None = None


def _method(video: VideoOutcome, method: Method) -> MethodOutcome | None:
    return video.ours if method == "ours" else video.naive


def stats(
    videos: Sequence[VideoOutcome], method: Method, cue_filter: Callable[[TruthCue], bool] | None = None
) -> Stats | None:
    """``method`` over ``videos``: per-video columns too when ``cue_filter`` is None (every cue of each video),
    only the per-cue ones otherwise. None when a video lacks that method's outcome."""
    pairs: list[tuple[TruthCue, CueOutcome]] = []
    for v in videos:
        outcome = _method(v, method)
        if outcome is None:
            return None
        pairs += [(c, o) for c, o in zip(v.truth, outcome.cues) if cue_filter is None or cue_filter(c)]
    n = len(pairs)
    chars = sum(o.chars for _, o in pairs)
    errors = [e for _, o in pairs if o.matched for e in (o.start_error, o.end_error)]
    buckets = [length_bucket(c.frames, c.seconds) for c, _ in pairs]
    long = [o for b, (_, o) in zip(buckets, pairs) if b in LENGTH_BUCKETS[2:]]
    short = [o for b, (_, o) in zip(buckets, pairs) if b == LENGTH_BUCKETS[1]]
    within = None
    if errors:
        w0, w1, w2 = (sum(abs(e) <= k for e in errors) / len(errors) for k in (0, 1, 2))
        within = (w0, w1, w2)
    result = Stats(
        cues=n,
        exact=sum(o.exact for _, o in pairs) / n if n else None,
        cer=sum(o.edits for _, o in pairs) / chars if chars else None,
        missed=sum(not o.matched for _, o in pairs),
        missed_long=sum(not o.matched for o in long),
        long_cues=len(long),
        missed_short=sum(not o.matched for o in short),
        short_cues=len(short),
        within=within,
    )
    if cue_filter is not None:
        return result
    outcomes = [_method(v, method) for v in videos]
    truth_cues_total = sum(len(v.truth) for v in videos)
    ratios = [o.seconds / v.decode_s for v, o in zip(videos, outcomes) if o.seconds is not None and v.decode_s]
    return replace(
        result,
        phantom=sum(o.count("phantom") for o in outcomes),
        overlay=sum(o.count("overlay") for o in outcomes),
        split=sum(o.count("split") for o in outcomes),
        calls_per_cue=sum(o.ocr_calls for o in outcomes) / truth_cues_total if truth_cues_total else None,
        ratio=statistics.median(ratios) if ratios else None,
        videos=len(videos),
    )


@dataclass(frozen=True)
class Row:
    """One line of a table: ``category`` = ``value`` (``all``/``all`` for the totals), ours and naive (None when
    naive was not run)."""

    category: str
    value: str
    ours: Stats
    naive: Stats | None = None

    @property
    def label(self) -> str:
        return "all" if self.category == "all" else f"{self.category}={self.value}"


def _value_order(category: str, values: Iterable[str]) -> list[str]:
    known = _VALUE_ORDER.get(category, ())

    def key(value: str) -> tuple:
        if value in known:
            return (0, known.index(value), 0.0, value)
        try:
            return (1, 0, float(value), value)
        except ValueError:
            return (2, 0, 0.0, value)

    return sorted(set(values), key=key)


def video_row(video: VideoOutcome) -> Row:
    """The row of one video (``video``/its name)."""
    ours = stats([video], "ours")
    assert ours is not None
    return Row("video", video.name, ours, stats([video], "naive"))


def totals(videos: Sequence[VideoOutcome]) -> Row:
    """The row of the whole corpus."""
    ours = stats(videos, "ours")
    assert ours is not None
    return Row("all", "all", ours, stats(videos, "naive"))


def category_rows(videos: Sequence[VideoOutcome]) -> list[Row]:
    """A row per value of every per-video category, then per value of every per-cue category (module
    docstring), in table order; categories no video or cue has give no rows."""
    rows = []
    for category in VIDEO_CATEGORIES:
        for value in _value_order(category, (v.categories[category] for v in videos if category in v.categories)):
            chosen = [v for v in videos if v.categories.get(category) == value]
            ours = stats(chosen, "ours")
            assert ours is not None
            rows.append(Row(category, value, ours, stats(chosen, "naive")))
    for category in CUE_CATEGORIES:
        values = (c.categories[category] for v in videos for c in v.truth if category in c.categories)
        for value in _value_order(category, values):

            def wanted(cue: TruthCue, category: str = category, value: str = value) -> bool:
                return cue.categories.get(category) == value

            ours = stats(videos, "ours", wanted)
            assert ours is not None
            rows.append(Row(category, value, ours, stats(videos, "naive", wanted)))
    return rows


def worse_than_naive(rows: Iterable[Row]) -> list[tuple[Row, tuple[str, ...]]]:
    """The rows where flowocr is worse than the naive method, with the columns where it is: ``exact`` (lower),
    ``missed`` (more), ``phantom`` (more; per-video rows only). Rows without naive are skipped."""
    out = []
    for row in rows:
        ours, naive = row.ours, row.naive
        if naive is None:
            continue
        worse = []
        if ours.exact is not None and naive.exact is not None and ours.exact < naive.exact - 1e-12:
            worse.append("exact")
        if ours.missed > naive.missed:
            worse.append("missed")
        if ours.phantom is not None and naive.phantom is not None and ours.phantom > naive.phantom:
            worse.append("phantom")
        if worse:
            out.append((row, tuple(worse)))
    return out


# --- text ------------------------------------------------------------------------------------------------------


def _rate(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _pair(ours: str, naive: str | None) -> str:
    return ours if naive is None else f"{ours}|{naive}"


TABLE_COLUMNS = ("row", "cues", "exact", "CER", "missed", "missed>=0.5s", "phantom", "overlay", "within0",
                 "within1", "within2", "calls/cue", "run/decode")  # fmt: skip


def table_lines(rows: Sequence[Row]) -> list[str]:
    """The rows as an aligned text table (columns: :data:`TABLE_COLUMNS`; ``ours|naive`` for exact, missed,
    phantom and within1 when naive was run)."""

    def cells(row: Row) -> list[str]:
        o, n = row.ours, row.naive
        return [
            row.label,
            str(o.cues),
            _pair(_rate(o.exact), n and _rate(n.exact)),
            _rate(o.cer, 3),
            _pair(str(o.missed), n and str(n.missed)),
            str(o.missed_long),
            _pair(_count(o.phantom), n and _count(n.phantom)),
            _count(o.overlay),
            _rate(o.within[0] if o.within else None),
            _pair(_rate(o.within[1] if o.within else None), n and _rate(n.within[1] if n.within else None)),
            _rate(o.within[2] if o.within else None),
            _rate(o.calls_per_cue),
            _rate(o.ratio),
        ]

    body = [list(TABLE_COLUMNS), *(cells(r) for r in rows)]
    widths = [max(len(line[k]) for line in body) for k in range(len(TABLE_COLUMNS))]
    return ["  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(line, widths)))
            for line in body]  # fmt: skip


def _share(count: int, of: int) -> str:
    return f"{count}/{of} ({count / of:.1%})" if of else f"{count}/0"


def totals_lines(row: Row, videos: Sequence[VideoOutcome]) -> list[str]:
    """The totals as ``name  ours [| naive]`` lines."""
    failed = [v.name for v in videos if not v.ours.complete]

    def lines_of(s: Stats) -> dict[str, str]:
        return {
            "videos": str(s.videos),
            "truth cues": str(s.cues),
            "exact": _rate(s.exact, 3),
            "CER": _rate(s.cer, 4),
            "missed": _share(s.missed, s.cues),
            "missed, cues >= 0.5 s": _share(s.missed_long, s.long_cues),
            "missed, cues 3 frames-0.5 s": _share(s.missed_short, s.short_cues),
            "phantom (of truth cues)": _share(s.phantom or 0, s.cues),
            "overlay readings": _count(s.overlay),
            "split pieces": _count(s.split),
            "boundaries within 0 frames": _rate(s.within[0] if s.within else None, 3),
            "boundaries within 1 frame": _rate(s.within[1] if s.within else None, 3),
            "boundaries within 2 frames": _rate(s.within[2] if s.within else None, 3),
            "OCR calls per cue": _rate(s.calls_per_cue),
            "run/decode ratio (median)": _rate(s.ratio),
        }

    ours = lines_of(row.ours)
    naive = lines_of(row.naive) if row.naive else None
    body = [["", "flowocr", *(["naive"] if naive else [])]]
    body += [[k, v, *([naive[k]] if naive else [])] for k, v in ours.items()]
    widths = [max(len(line[k]) for line in body) for k in range(len(body[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
    if failed:
        out.append(f"failed runs: {len(failed)}: {', '.join(failed)}")
    return out


def video_line(video: VideoOutcome) -> str:
    """One line per video: name, cues, exact, missed, phantom, within1, calls/cue, ratio (``ours|naive``)."""
    row = video_row(video)
    o, n = row.ours, row.naive
    parts = [
        video.name,
        f"cues {o.cues}",
        f"exact {_pair(_rate(o.exact), n and _rate(n.exact))}",
        f"missed {_pair(str(o.missed), n and str(n.missed))}",
        f"phantom {_pair(_count(o.phantom), n and _count(n.phantom))}",
        f"within1 {_pair(_rate(o.within[1] if o.within else None), n and _rate(n.within[1] if n.within else None))}",
        f"calls/cue {_pair(_rate(o.calls_per_cue), n and _rate(n.calls_per_cue))}",
        f"ratio {_pair(_rate(o.ratio), n and _rate(n.ratio))}",
    ]
    if not video.ours.complete:
        parts.append(f"FAILED: {video.ours.error}")
    return "  ".join(parts)


# --- JSON ------------------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _method_json(video: VideoOutcome, outcome: MethodOutcome) -> dict[str, Any]:
    missed = [
        {"start": c.start, "end": c.end, "text": c.text, "frames": c.frames, "categories": c.categories}
        for c, o in zip(video.truth, outcome.cues)
        if not o.matched
    ]
    return {
        "complete": outcome.complete,
        "error": outcome.error,
        "ocr_calls": outcome.ocr_calls,
        "seconds": outcome.seconds,
        "cues": [asdict(o) for o in outcome.cues],
        "preds": [asdict(p) for p in outcome.preds],
        "missed": missed,
        "phantom": [{"start": p.start, "end": p.end, "text": p.text} for p in outcome.preds if p.kind == "phantom"],
    }


def report_json(videos: Sequence[VideoOutcome]) -> dict[str, Any]:
    """Everything as JSON-ready data: totals, category rows, rows worse than naive, per-video details (truth cues,
    per-cue and per-prediction outcomes, the missed and phantom cues with times and texts). Times as float s."""
    rows = category_rows(videos)
    total = totals(videos)
    return _plain(
        {
            "totals": asdict(total),
            "rows": [asdict(r) for r in rows],
            "worse_than_naive": [{"row": r.label, "columns": list(cols)} for r, cols in worse_than_naive(rows)],
            "videos": [
                {
                    "name": v.name,
                    "categories": v.categories,
                    "decode_s": v.decode_s,
                    "truth": [{**asdict(c), "frames": c.frames} for c in v.truth],
                    "ours": _method_json(v, v.ours),
                    "naive": _method_json(v, v.naive) if v.naive else None,
                    "summary": asdict(video_row(v)),
                }
                for v in videos
            ],
        }
    )
