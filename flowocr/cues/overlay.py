"""Overlays: text that is not subtitles (a channel logo, a watermark, a station bug, a permanent title). Pure.

A subtitle comes and goes; an overlay stays in one place while other text comes and goes. The rule, on a run's
final cues (:func:`find_overlays`), with the numbers of :class:`OverlayOptions` (defaults in brackets):

1. **Places.** Two cues are one *place* when their boxes cover mostly the same pixels (intersection over union
   at least ``same_box`` [0.5]: a logo does not move, while two subtitle lines of different lengths at the bottom
   centre overlap far less) and their texts are alike (:func:`~flowocr.cues.text.similarity` at least
   ``same_text`` [0.5]: a stylised logo read slightly differently from frame to frame is still one text). Places
   are closed under both (a chain of readings joins), comparing each cue with those that ended at most ``near``
   [5 s] before it started (a logo's readings follow one another; comparing every pair would be quadratic in a
   film's cues).
2. **Long share.** A place is an overlay when the union of its cues' times covers at least ``min_share`` [0.5] of
   the video's duration, and either more than ``long_s`` [12 s] or at least ``whole_share`` [0.9] of it. The
   longest subtitles and signs last a few seconds to about 10 s (a third of a 30 s clip), while a logo is on
   screen for most or all of the video; in a clip of a few seconds a 6 s sign over half of it is still text, and a
   logo there is on screen from the first frame to the last (seed 2027: a 6.4 s sign in a 9.3 s clip).
3. **Other text comes and goes.** ... and at least ``min_others`` [2] cues that are not in that place start or
   end while the place is on screen: a video whose only text is one long title (a slide, a title card) keeps it
   as text. A lower third or a sign that changes is text: each of its texts is a place of its own and covers a
   short share.
4. **Pieces.** A cue that is no overlay's but lies inside one's box (at least ``piece_inside`` [0.8] of its own
   box), on screen while it is (or within ``near`` of it), and whose text is alike a part of the overlay's text (its
   :func:`~flowocr.cues.text.similarity` with the most alike run of as many characters at least ``piece_text``
   [0.6]) is a part of that overlay read alone: a 4K frame read whole once found only the right part of a logo
   ("-ス7" of "ニュース7").

An overlay keeps its cues' times in the run report and the JSONL (``"kind": "overlay"``, its box and its best
reading: the text on screen the longest, summed over the place's cues); the subtitle files leave it out unless
``--keep-overlays``. The rule needs the whole run: cues streamed while a run goes on (progress, the Python API's
iterator) are not yet told apart.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from flowocr.cues.builder import find_root
from flowocr.cues.model import Cue
from flowocr.cues.text import similarity
from flowocr.ocr.types import box_iou, inside_share

Bounds = tuple[float, float, float, float]


@dataclass(frozen=True)
class OverlayOptions:
    """The thresholds of the module docstring's rule."""

    same_box: float = 0.5
    same_text: float = 0.5
    min_share: float = 0.5
    long_s: Fraction = Fraction(12)
    whole_share: float = 0.9
    min_others: int = 2
    near: Fraction = Fraction(5)
    piece_inside: float = 0.8
    piece_text: float = 0.6


@dataclass(frozen=True)
class Overlay:
    """One overlay: its best reading, mean box, the span of its cues (exact seconds) and how much of it they
    cover, and the indices of its cues in the list given to :func:`find_overlays`."""

    text: str
    box: Bounds
    start: Fraction
    end: Fraction
    covered: Fraction
    cues: tuple[int, ...]

    def to_json(self) -> dict:
        return {"kind": "overlay", "text": self.text, "box": [round(v, 1) for v in self.box],
                "start": float(self.start), "end": float(self.end), "covered_s": float(self.covered),
                "cues": len(self.cues)}  # fmt: skip


def _is_piece(c: Cue, o: Overlay, opts: OverlayOptions) -> bool:
    """Whether ``c`` is a part of overlay ``o`` read alone (rule 4)."""
    if not c.text.strip() or not (o.start - opts.near < c.end and c.start < o.end + opts.near):
        return False
    if inside_share(c.box, o.box) < opts.piece_inside:
        return False
    n, whole = len(c.text), o.text
    runs = [whole[k : k + n] for k in range(max(1, len(whole) - n + 1))]
    return max(similarity(c.text, run) for run in runs) >= opts.piece_text


def covered(spans: Sequence[tuple[Fraction, Fraction]]) -> Fraction:
    """The length of the union of ``[start, end)`` spans."""
    total, reach = Fraction(0), None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def places(cues: Sequence[Cue], options: OverlayOptions | None = None) -> list[list[int]]:
    """The cues grouped into places (rule 1), each a sorted list of indices into ``cues``; every cue is in one."""
    opts = options or OverlayOptions()
    parent = list(range(len(cues)))

    def root(i: int) -> int:
        return find_root(parent, i)

    order = sorted(range(len(cues)), key=lambda k: (cues[k].start, cues[k].end))
    for n, j in enumerate(order):
        b = cues[j]
        for i in order[:n]:
            a = cues[i]
            if a.end + opts.near < b.start or root(i) == root(j):
                continue
            if box_iou(a.box, b.box) >= opts.same_box and similarity(a.text, b.text) >= opts.same_text:
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(cues)):
        groups[root(i)].append(i)
    return sorted(groups.values())


def find_overlays(cues: Sequence[Cue], duration: Fraction, options: OverlayOptions | None = None) -> list[Overlay]:
    """The overlays among a run's cues (module docstring), in time order; none for a video without duration."""
    opts = options or OverlayOptions()
    if duration <= 0:
        return []
    found = []
    for place in places(cues, opts):
        members = [cues[i] for i in place]
        span = covered([(c.start, c.end) for c in members])
        if span < opts.min_share * duration or (span <= opts.long_s and span < opts.whole_share * duration):
            continue
        start, end = min(c.start for c in members), max(c.end for c in members)
        inside = set(place)
        others = sum(
            1
            for k, c in enumerate(cues)
            if k not in inside and (start < c.start < end or start < c.end < end)
        )
        if others < opts.min_others:
            continue
        on_screen: dict[str, Fraction] = defaultdict(Fraction)
        for c in members:
            on_screen[c.text] += c.end - c.start
        text = max(on_screen, key=on_screen.__getitem__)  # the earliest of equals (dicts keep insertion order)
        box = tuple(sum(c.box[k] for c in members) / len(members) for k in range(4))
        found.append(Overlay(text, box, start, end, span, tuple(place)))  # type: ignore[arg-type]
    taken = {i for o in found for i in o.cues}
    for n, o in enumerate(found):
        pieces = [k for k, c in enumerate(cues) if k not in taken and _is_piece(c, o, opts)]
        taken.update(pieces)
        every = sorted((*o.cues, *pieces))
        found[n] = dataclasses.replace(o, cues=tuple(every), start=min(cues[k].start for k in every),
                                       end=max(cues[k].end for k in every),
                                       covered=covered([(cues[k].start, cues[k].end) for k in every]))
    return sorted(found, key=lambda o: (o.start, o.box[1]))


def written_cues(cues: Sequence[Cue], keep_overlays: bool = False) -> list[Cue]:
    """The cues the subtitle files get: all with ``keep_overlays``, else those that are not an overlay's."""
    return list(cues) if keep_overlays else [c for c in cues if c.kind != "overlay"]


def mark_overlays(cues: Sequence[Cue], duration: Fraction,
                  options: OverlayOptions | None = None) -> tuple[list[Cue], list[Overlay]]:
    """``cues`` with those of an overlay marked ``kind="overlay"`` (same order), and the overlays."""
    overlays = find_overlays(cues, duration, options)
    marked = {i for o in overlays for i in o.cues}
    out = [dataclasses.replace(c, kind="overlay") if i in marked else c for i, c in enumerate(cues)]
    return out, overlays
