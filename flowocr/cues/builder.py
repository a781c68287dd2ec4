"""The cue builder: per-frame OCR results in, cues out. Pure (no I/O, no clock), fed in time order.

How a cue is found, step by step, with the thresholds of :class:`CueOptions` (defaults in brackets):

1. **Lines.** A line scoring below ``min_line_score`` [0.5], or with no letters (empty, whitespace, only
   punctuation), is ignored: at that confidence PP-OCR recognition is mostly wrong, and it would open cues.
2. **Blocks.** The lines of one frame are grouped into blocks of text, one block being one cue text. Two lines
   belong together when they sit on one row (vertical overlap of at least half the smaller height, horizontal gap
   at most ``row_gap`` [2.0] line heights: a line the detector split in two) or are stacked (their x ranges
   overlap and their centres are at most ``block_pitch`` [1.5] line heights apart, the mean height of the two:
   rendered subtitle lines are about 1 line height apart, a top caption and a bottom subtitle are many). A block's
   text is its rows top to bottom joined by ``\\n``; its score is the mean of its lines' scores.
3. **Tracks.** A block continues the open track whose last box it overlaps (vertical overlap of at least half the
   smaller height and overlapping x ranges), best text similarity first, one block per track; other blocks open
   new tracks. A track missed by more than ``max_gap`` [1] consecutive sampled frames is closed: a one-sample
   dropout is an OCR miss and bridged, two samples are a real gap. Track numbers count from the bottom: a new
   track gets the smallest free number above those of the open tracks below it (tracks are never renumbered,
   so a caption opened first above a later subtitle keeps the lower number).
4. **Runs and cues.** Along one track, consecutive readings with the same :func:`~flowocr.cues.text.text_key`
   form runs. A *real* change of text persists: a run shorter than ``confirm_frames`` [3] samples is taken as
   flicker of a neighbour and merged into it when their :func:`~flowocr.cues.text.similarity` is at least
   ``same_text`` [0.6] (a long neighbour first, then the most similar). Runs of ``confirm_frames`` samples or
   more stay apart however similar they are ("I love you." vs "I love you too.", two Chinese lines differing in
   2 of 8 glyphs). A short run unlike both neighbours is a cue of its own (a 0.4 s cue sampled once). Why these
   numbers: 0.6 keeps one or two misread glyphs of a 5-glyph line, and a sample that read only one line of a
   two-line cue, alike (see ``similarity``) while unrelated lines fall far below; 3 samples (1 to 1.5 s at 2
   samples/s) because a misreading caused by a moving background seldom repeats 3 times in a row, while
   subtitles stay longer than that.
5. **Noise.** A cue seen in one sample only is kept when its best line scores at least ``single_min_score``
   [0.8], otherwise dropped; equal texts on both sides of a dropped reading join across it. The best line, not
   the mean: a sign or a two-line subtitle seen once (at the end of a video) whose small print reads at 0.55
   is still text, while a fluke on background texture reads low on every line.
6. **Text, times, box.** The text is the confidence-weighted vote among the raw readings of the cue: each of the
   ``alike_vote`` [12] distinct readings with the most summed score is supported by the scores of every reading,
   weighted by how alike the two are (:func:`~flowocr.cues.text.ratio` of their keys; 1 for the same reading), and
   the best supported wins (then the most summed score, then the earliest). Readings that agree vote as with plain
   sums; where no two agree (a busy picture garbles each a little differently), the reading most alike the others
   wins, not a partial one that scored high on its own (dev seed 11: CER 0.041 -> 0.033, a bilingual cue had been
   read without its English line). The cap keeps the vote linear in a cue's readings (``scripts/reference.py``
   merges every frame of a counter clip, hundreds of distinct readings a cue; it sets ``alike_vote`` 0: the plain
   sum of scores per reading). ``start`` is the time of the first sampled frame showing it, ``end`` the time of
   the first sampled frame after its last reading (or ``end_time`` when it lasts to the end);
   ``start_index``/``end_index`` likewise. ``score`` is the mean score of its readings; ``box`` is the mean box of
   the winning reading (a partial reading's box would be too small).

Finality: a cue is final, and returned by :meth:`CueBuilder.feed`, once a run of ``confirm_frames`` samples
follows it on its track, or its track closes. So a cue is usually reported ``confirm_frames`` (or ``max_gap + 1``)
samples after it ends; a next text that never reads the same way ``confirm_frames`` times in a row delays it, up
to ``MAX_OPEN_RUNS`` runs. Known limitation: the same misreading in ``confirm_frames`` consecutive samples is
taken for a change of text and splits a cue (raise ``confirm_frames`` for an OCR that flickers that way); a new
text similar to the previous one and shown for fewer samples is taken for flicker and merged into it.
"""

from __future__ import annotations

import bisect
import dataclasses
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

from flowocr.cues.model import Cue, FrameText
from flowocr.cues.text import ratio, similarity, text_key
from flowocr.ocr.types import TextLine

Bounds = tuple[float, float, float, float]

# A safety bound on the runs one track keeps undecided (readings that change every sample without any of them
# persisting): past it they are decided as they stand, so memory and work per frame stay bounded.
MAX_OPEN_RUNS = 64


@dataclass(frozen=True)
class CueOptions:
    """Thresholds of the cue builder; see the module docstring for what each decides and why."""

    min_line_score: float = 0.5
    row_gap: float = 2.0
    block_pitch: float = 1.5
    same_text: float = 0.6
    confirm_frames: int = 3
    max_gap: int = 1
    single_min_score: float = 0.8
    alike_vote: int = 12

    def __post_init__(self) -> None:
        for name in ("min_line_score", "same_text", "single_min_score"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        for name in ("row_gap", "block_pitch"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.confirm_frames < 1:
            raise ValueError(f"confirm_frames must be >= 1, got {self.confirm_frames}")
        if self.alike_vote < 0:
            raise ValueError(f"alike_vote must be >= 0, got {self.alike_vote}")
        if self.max_gap < 0:
            raise ValueError(f"max_gap must be >= 0, got {self.max_gap}")


@dataclass(frozen=True)
class TextBlock:
    """Lines of one frame that form one cue text: rows top to bottom joined by ``\\n``, the union box of the
    lines (frame pixels, x0 y0 x1 y1), their mean score and the best of their scores."""

    text: str
    score: float
    box: Bounds
    best: float | None = None  # None: the mean (one line)

    def __post_init__(self) -> None:
        if self.best is None:
            object.__setattr__(self, "best", self.score)


def find_root(parent: list[int], i: int) -> int:
    """The root of ``i`` in the union-find forest ``parent`` (halving the path on the way)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def text_blocks(lines: Iterable[TextLine], options: CueOptions | None = None) -> tuple[TextBlock, ...]:
    """Group one frame's lines into blocks (rules 1 and 2 of the module docstring), ordered bottom to top."""
    opts = options or CueOptions()
    kept = [line for line in lines if line.score >= opts.min_line_score and text_key(line.text)]
    parent = list(range(len(kept)))

    def root(i: int) -> int:
        return find_root(parent, i)

    for i, a in enumerate(kept):
        for j in range(i + 1, len(kept)):
            b = kept[j]
            if _same_row(a.bounds, b.bounds, opts.row_gap) or _stacked(a.bounds, b.bounds, opts.block_pitch):
                parent[root(j)] = root(i)
    members: dict[int, list[TextLine]] = {}
    for i, line in enumerate(kept):
        members.setdefault(root(i), []).append(line)
    blocks = [_block(group) for group in members.values()]
    return tuple(sorted(blocks, key=lambda b: (-_centre_y(b.box), b.box[0])))


def _height(b: Bounds) -> float:
    return max(b[3] - b[1], 1e-6)


def _centre_y(b: Bounds) -> float:
    return (b[1] + b[3]) / 2


def same_place(a: Bounds, b: Bounds) -> bool:
    """Whether two boxes are one place on screen (one track's): a vertical overlap of at least half the smaller
    height, and overlapping x ranges."""
    return _v_overlap(a, b) >= 0.5 and _x_overlaps(a, b)


def _v_overlap(a: Bounds, b: Bounds) -> float:
    """Vertical overlap as a fraction of the smaller height."""
    return max(0.0, min(a[3], b[3]) - max(a[1], b[1])) / min(_height(a), _height(b))


def _x_overlaps(a: Bounds, b: Bounds) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0])


def _same_row(a: Bounds, b: Bounds, row_gap: float) -> bool:
    gap = max(a[0], b[0]) - min(a[2], b[2])
    return _v_overlap(a, b) >= 0.5 and gap <= row_gap * max(_height(a), _height(b))


def _stacked(a: Bounds, b: Bounds, block_pitch: float) -> bool:
    mean_height = (_height(a) + _height(b)) / 2
    return _x_overlaps(a, b) and abs(_centre_y(a) - _centre_y(b)) <= block_pitch * mean_height


#: A box at least this much taller than wide holds a vertical line (as :mod:`flowocr.ocr.rapid` reads it).
VERTICAL_RATIO = 1.5


def _vertical(b: Bounds) -> bool:
    return b[3] - b[1] >= VERTICAL_RATIO * (b[2] - b[0])


def _block(lines: list[TextLine]) -> TextBlock:
    if len(lines) > 1 and all(_vertical(line.bounds) for line in lines):
        # vertical Japanese / Chinese: each column is a line, read top to bottom (by the engine), and the columns
        # are read right to left; not one row of pieces joined left to right
        columns = sorted(lines, key=lambda ln: -(ln.bounds[0] + ln.bounds[2]))
        return _block_of(lines, "\n".join(line.text.strip() for line in columns))
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda ln: _centre_y(ln.bounds)):
        if rows and _v_overlap(rows[-1][-1].bounds, line.bounds) >= 0.5:
            rows[-1].append(line)
        else:
            rows.append([line])
    return _block_of(lines, "\n".join(_join_row(_row_order(row)) for row in rows))


def _block_of(lines: list[TextLine], text: str) -> TextBlock:
    bounds = [line.bounds for line in lines]
    box = (min(b[0] for b in bounds), min(b[1] for b in bounds), max(b[2] for b in bounds), max(b[3] for b in bounds))
    return TextBlock(text, sum(line.score for line in lines) / len(lines), box, max(line.score for line in lines))


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def right_to_left(text: str) -> bool:
    """Whether ``text`` is a right-to-left paragraph by Unicode's rule (UAX #9, P2): its first strong character is
    Hebrew or Arabic script (bidirectional class R or AL). Digits and punctuation have no direction; a text without
    a strong character is left to right."""
    for ch in text:
        kind = unicodedata.bidirectional(ch)
        if kind in ("R", "AL"):
            return True
        if kind == "L":
            return False
    return False


def _strong_rtl_share(text: str) -> float:
    kinds = [unicodedata.bidirectional(ch) for ch in text]
    rtl, ltr = sum(k in ("R", "AL") for k in kinds), kinds.count("L")
    return rtl / max(1, rtl + ltr)


def _row_order(row: Sequence[TextLine]) -> list[TextLine]:
    """The pieces of one row in reading order: left to right, or right to left when the row is right-to-left.

    OCR gives each piece's text in logical order, and the first piece of an RTL line is its rightmost. The row is
    RTL when both its outer pieces are (:func:`right_to_left`: a line starts at one edge and ends at the other);
    when they differ, when most of its strong characters are RTL. An LTR piece inside an RTL row (a name, a title)
    keeps its place in that order, as a bidi display shows it."""
    ordered = sorted(row, key=lambda ln: ln.bounds[0])
    if len(ordered) < 2:
        return ordered
    left, right = right_to_left(ordered[0].text), right_to_left(ordered[-1].text)
    rtl = left if left == right else _strong_rtl_share("".join(line.text for line in row)) > 0.5
    return ordered[::-1] if rtl else ordered


def _join_row(row: Sequence[TextLine]) -> str:
    """Pieces of one row in reading order; a space between them unless both sides are CJK (no spaces there)."""
    text = row[0].text.strip()
    for line in row[1:]:
        piece = line.text.strip()
        glue = "" if text and piece and _wide(text[-1]) and _wide(piece[0]) else " "
        text = f"{text}{glue}{piece}"
    return text


@dataclass(frozen=True)
class _Votes:
    """Support of one raw reading within a run: sum of scores, count, first frame index, summed box."""

    weight: float
    count: int
    first: int
    box_sum: Bounds

    def __add__(self, other: _Votes) -> _Votes:
        return _Votes(
            self.weight + other.weight,
            self.count + other.count,
            min(self.first, other.first),
            tuple(a + b for a, b in zip(self.box_sum, other.box_sum)),  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class _Run:
    """Readings of one track over consecutive samples (possibly several runs merged). Never mutated."""

    first_index: int
    first_time: Fraction
    last_index: int
    count: int
    score_sum: float
    best: float  # the best line score of any of its readings
    readings: Mapping[str, _Votes]
    alike: int = 0  # CueOptions.alike_vote

    @staticmethod
    def of(frame: FrameText, block: TextBlock, alike: int = 0) -> _Run:
        votes = _Votes(block.score, 1, frame.index, block.box)
        return _Run(frame.index, frame.time, frame.index, 1, block.score, block.best, {block.text: votes}, alike)

    @cached_property
    def text(self) -> str:
        """The confidence-weighted vote (rule 6): among the ``alike`` readings of most summed score, the one with
        most support from alike readings, then most summed score, then the earliest (with ``alike`` 0 or one
        reading: most summed score, earliest on a tie)."""
        plain = sorted(self.readings.items(), key=lambda kv: (-kv[1].weight, kv[1].first))
        if self.alike == 0 or len(plain) == 1:
            return plain[0][0]
        keys = {t: text_key(t) for t in self.readings}

        def support(t: str) -> float:
            return sum(v.weight * (1.0 if u == t else ratio(keys[t], keys[u])) for u, v in self.readings.items())

        return max(plain[: self.alike], key=lambda kv: (support(kv[0]), kv[1].weight, -kv[1].first))[0]

    @cached_property
    def key(self) -> str:
        return text_key(self.text)

    @property
    def score(self) -> float:
        return self.score_sum / self.count

    def then(self, later: _Run, *, votes: bool = True) -> _Run:
        """This run extended by a later one; ``votes=False`` spans its frames without counting its readings."""
        if not votes:
            return _Run(
                self.first_index, self.first_time, later.last_index, self.count, self.score_sum, self.best,
                self.readings, self.alike,
            )  # fmt: skip
        readings = dict(self.readings)
        for text, v in later.readings.items():
            readings[text] = readings[text] + v if text in readings else v
        return _Run(
            self.first_index,
            self.first_time,
            later.last_index,
            self.count + later.count,
            self.score_sum + later.score_sum,
            max(self.best, later.best),
            readings,
            self.alike,
        )


@dataclass(frozen=True)
class _Group:
    """The runs ``runs[lo:hi]`` of a track taken as one candidate cue. ``counted`` lists the runs whose readings
    vote (a dropped noise reading inside a group spans time but does not vote); ``run`` is their sum over the
    whole span. A ``dropped`` group is noise and emits nothing."""

    lo: int
    hi: int
    counted: tuple[int, ...]
    run: _Run
    dropped: bool = False


def _merge(groups: Sequence[_Group]) -> _Group:
    """Consecutive groups as one; the first is live, so the result is."""
    run = groups[0].run
    for g in groups[1:]:
        run = run.then(g.run, votes=not g.dropped)
    counted = tuple(k for g in groups if not g.dropped for k in g.counted)
    return _Group(groups[0].lo, groups[-1].hi, counted, run)


def _segment(runs: Sequence[_Run], opts: CueOptions) -> list[_Group]:
    """Rules 4 and 5: merge flicker into its neighbours, drop single low-score readings. Deterministic."""
    groups = [_Group(k, k + 1, (k,), r) for k, r in enumerate(runs)]
    while True:
        groups = _join_equal(groups)
        pick = _flicker_merge(groups, opts)
        if pick is not None:
            lo, hi = min(pick), max(pick)
            groups[lo : hi + 1] = [_merge(groups[lo : hi + 1])]
            continue
        noise = next(
            (
                k
                for k, g in enumerate(groups)
                if not g.dropped and g.run.count == 1 and g.run.best < opts.single_min_score
            ),
            None,
        )
        if noise is None:
            return groups
        groups[noise] = dataclasses.replace(groups[noise], dropped=True)


def _join_equal(groups: list[_Group]) -> list[_Group]:
    """Adjacent live groups with equal keys become one, across dropped noise between them."""
    out: list[_Group] = []
    for g in groups:
        if not g.dropped:
            k = len(out) - 1
            while k >= 0 and out[k].dropped:
                k -= 1
            if k >= 0 and out[k].run.key == g.run.key:
                out[k:] = [_merge([*out[k:], g])]
                continue
        out.append(g)
    return out


def _flicker_merge(groups: list[_Group], opts: CueOptions) -> tuple[int, int] | None:
    """(short group, neighbour to merge it into), or None: a long similar neighbour first, then a short one."""
    best: tuple[tuple[bool, float], int, int] | None = None
    for i, g in enumerate(groups):
        if g.dropped or g.run.count >= opts.confirm_frames:
            continue
        for j in (_live_neighbour(groups, i, -1), _live_neighbour(groups, i, +1)):
            if j is None:
                continue
            sim = similarity(g.run.text, groups[j].run.text)
            if sim < opts.same_text:
                continue
            rank = (groups[j].run.count >= opts.confirm_frames, sim)
            if best is None or rank > best[0]:
                best = (rank, i, j)
        if best is not None and best[0][0]:
            break  # the leftmost short group with a long similar neighbour goes first
    return None if best is None else (best[1], best[2])


def _live_neighbour(groups: list[_Group], i: int, step: int) -> int | None:
    j = i + step
    while 0 <= j < len(groups) and groups[j].dropped:
        j += step
    return j if 0 <= j < len(groups) else None


@dataclass(eq=False)  # identity: tracks are keys of the per-frame matching
class _Track:
    """One region of the frame while it shows text (mutable state of the builder, never shared)."""

    number: int
    region: Bounds
    runs: list[_Run] = field(default_factory=list)
    misses: int = 0

    def add(self, frame: FrameText, block: TextBlock, alike: int = 0) -> None:
        run = _Run.of(frame, block, alike)
        if self.runs and self.runs[-1].key == run.key:
            self.runs[-1] = self.runs[-1].then(run)
        else:
            self.runs.append(run)
        self.region = block.box
        self.misses = 0


class CueBuilder:
    """Turns :class:`FrameText` fed in time order into :class:`Cue` s (rules in the module docstring).

    :meth:`feed` returns the cues that became final with that frame; :meth:`finish` returns the rest. Every cue
    is returned exactly once, in start order within one call. Cues of one track never overlap in time.
    """

    def __init__(self, **options: float) -> None:
        self.options = CueOptions(**options)  # type: ignore[arg-type]
        self._tracks: list[_Track] = []
        # (index, time) of the fed frames still needed to find where an open cue ends; trimmed as cues settle.
        self._frames: list[tuple[int, Fraction]] = []
        self._last: tuple[int, Fraction] | None = None
        self._finished = False

    @property
    def idle(self) -> bool:
        """No cue is open: every cue of the frames fed so far has been returned. A fresh builder fed the frames
        after this point returns what this one would (what ``flowocr run --resume`` relies on)."""
        return not self._tracks

    def oldest_open(self) -> int | None:
        """The first frame of the oldest cue still open (None when idle): a cue returned later starts there or
        after it."""
        return min((t.runs[0].first_index for t in self._tracks if t.runs), default=None)

    def snapshot(self) -> tuple:
        """Everything that decides what the frames fed from now on give, as plain comparable data: two builders
        with equal snapshots return the same cues from the same later frames (what split runs are stitched by)."""
        tracks = tuple(
            (t.number, t.region, t.misses,
             tuple((r.first_index, r.first_time, r.last_index, r.count, r.score_sum, r.best,
                    tuple(sorted(r.readings.items()))) for r in t.runs))
            for t in self._tracks
        )  # fmt: skip
        return tracks, tuple(self._frames)

    def feed(self, frame: FrameText) -> list[Cue]:
        """Add one sampled frame (later than every frame fed before); return the cues that became final."""
        if self._finished:
            raise ValueError("feed() after finish()")
        if self._last is not None and (frame.time <= self._last[1] or frame.index <= self._last[0]):
            raise ValueError(
                f"frames must come in time order: frame {frame.index} at {frame.time} s after "
                f"frame {self._last[0]} at {self._last[1]} s"
            )
        self._last = (frame.index, frame.time)
        self._frames.append(self._last)
        blocks = list(text_blocks(frame.lines, self.options))

        done: list[Cue] = []
        matched = self._match(blocks)
        for track in list(self._tracks):
            if track in matched:
                track.add(frame, matched[track], self.options.alike_vote)
                done += self._settle(track)
            else:
                track.misses += 1
                if track.misses > self.options.max_gap:
                    self._tracks.remove(track)
                    done += self._emit(track, _segment(track.runs, self.options))
        continued = set(map(id, matched.values()))
        for block in blocks:  # bottom to top, so each new track sees the ones opened below it
            if id(block) not in continued:
                track = _Track(self._number_for(block.box), block.box)
                track.add(frame, block, self.options.alike_vote)
                self._tracks.append(track)
        self._trim()
        return sorted(done, key=lambda c: (c.start, c.track))

    def finish(self, end_time: Fraction, end_index: int) -> list[Cue]:
        """End of the stream: ``end_time`` (s) is when the last frame stops being shown and ``end_index`` the
        index after the last frame. Returns every cue not returned yet."""
        if self._last is not None and (end_time <= self._last[1] or end_index <= self._last[0]):
            raise ValueError(f"the end ({end_index} at {end_time} s) must come after the last frame {self._last}")
        self._finished = True
        self._frames.append((end_index, Fraction(end_time)))
        done: list[Cue] = []
        for track in self._tracks:
            done += self._emit(track, _segment(track.runs, self.options))
        self._tracks = []
        return sorted(done, key=lambda c: (c.start, c.track))

    def _match(self, blocks: list[TextBlock]) -> dict[_Track, TextBlock]:
        """Blocks to open tracks, one to one: overlapping regions, most similar text first."""
        pairs = []
        for t in self._tracks:
            for b in blocks:
                if same_place(t.region, b.box):
                    current = t.runs[-1].text
                    pairs.append((similarity(current, b.text), _v_overlap(t.region, b.box), t, b))
        pairs.sort(key=lambda p: (p[0], p[1]), reverse=True)
        matched: dict[_Track, TextBlock] = {}
        taken: set[int] = set()
        for _, _, t, b in pairs:
            if t not in matched and id(b) not in taken:
                matched[t] = b
                taken.add(id(b))
        return matched

    def _number_for(self, box: Bounds) -> int:
        used = {t.number for t in self._tracks}
        below = [t.number for t in self._tracks if _centre_y(t.region) > _centre_y(box)]
        number = max(below, default=-1) + 1
        while number in used:
            number += 1
        return number

    def _settle(self, track: _Track) -> list[Cue]:
        """Emit what can no longer change and fold the settled runs into one (see Finality).

        The last run of ``confirm_frames`` samples or more is a fixed point: the groups before the group holding
        it are final, and that group up to this run becomes one run, so later frames extend or follow it but
        never re-split it, and the work per frame stays bounded however long a text stays on screen. Runs after
        it stay raw: whether they are flicker or a new text is not decided yet.
        """
        runs = track.runs
        groups = _segment(runs, self.options)
        long_runs = [k for k, r in enumerate(runs) if r.count >= self.options.confirm_frames]
        if len(runs) > MAX_OPEN_RUNS:
            fixed = len(runs) - 1  # endless flicker with no run persisting: decide now rather than never
        elif long_runs:
            fixed = long_runs[-1]
        else:
            return []
        at = next(k for k, g in enumerate(groups) if g.lo <= fixed < g.hi)
        holder = groups[at]
        head = runs[holder.lo]
        for k in range(holder.lo + 1, fixed + 1):
            head = head.then(runs[k], votes=k in holder.counted)
        track.runs = [head, *runs[fixed + 1 :]]
        return self._emit(track, groups[:at])

    def _emit(self, track: _Track, groups: Sequence[_Group]) -> list[Cue]:
        cues = []
        for g in groups:
            if g.dropped:
                continue
            run = g.run
            winner = run.readings[run.text]
            end_index, end_time = self._frame_after(run.last_index)
            cues.append(
                Cue(
                    start=run.first_time,
                    end=end_time,
                    text=run.text,
                    box=tuple(v / winner.count for v in winner.box_sum),  # type: ignore[arg-type]
                    score=run.score,
                    track=track.number,
                    start_index=run.first_index,
                    end_index=end_index,
                )
            )
        return cues

    def _frame_after(self, index: int) -> tuple[int, Fraction]:
        k = bisect.bisect_right(self._frames, index, key=lambda f: f[0])
        if k == len(self._frames):
            raise AssertionError(f"no frame after {index} is known; a cue was emitted too early")
        return self._frames[k]

    def _trim(self) -> None:
        oldest = min((t.runs[0].last_index for t in self._tracks if t.runs), default=self._last[0] if self._last else 0)
        k = bisect.bisect_left(self._frames, oldest, key=lambda f: f[0])
        if k > 0:
            del self._frames[:k]


def build_cues(frames: Iterable[FrameText], end_time: Fraction, end_index: int, **options: float) -> list[Cue]:
    """All cues of a stream of frames, sorted by (start, track). Same rules and options as :class:`CueBuilder`."""
    builder = CueBuilder(**options)
    cues: list[Cue] = []
    for frame in frames:
        cues += builder.feed(frame)
    cues += builder.finish(end_time, end_index)
    return sorted(cues, key=lambda c: (c.start, c.track))
