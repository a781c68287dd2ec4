"""The readers: for each sampled frame, read it or reuse what was read, and which frames between samples to read.

A reader is fed the sampled (main) frames in order and returns :class:`Reading` s, the per-frame results the cue
builder takes; at the end :meth:`refine` moves each final cue's start and end to the frames where its text
appeared and vanished. It is handed what it needs as plain callables (:class:`ReadTools`: a frame's stroke map, an
OCR call, a decode of one frame) and, with the change detector, the detector's per-frame changes as a mapping; it
never sees the run, the decoder or a socket (:mod:`flowocr.pipeline` wires it).

Every decision can be logged (:attr:`ChangeReader.log`): the pixel test's counts, the detector's spikes and the
decision with its reason, one dict per fed frame.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flowocr.read.pixel import ChangeTest, measure

if TYPE_CHECKING:
    import numpy as np

    from flowocr.aux.detector import FrameChange
    from flowocr.cues.model import Cue
    from flowocr.decode.lane import Frame
    from flowocr.ocr.strokes import Strokes
    from flowocr.ocr.types import TextLine
    from flowocr.probe.index import FrameIndex

Lines = tuple["TextLine", ...]
Log = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class ReadTools:
    """What a reader may do, handed to it as callables.

    ``strokes(frame)``: the stroke map of a frame's text area (None for None); ``ocr(image, strokes)``: read a full
    BGR frame's text area (only its stroke bands when ``strokes`` is given), lines in frame pixels; ``fetch(i)``:
    frame ``i`` decoded on its own (None when the source lacks it); ``index``: the frame index (pts and times);
    ``origin``: the text area's top-left corner in frame pixels."""

    strokes: Callable[[Frame | None], Strokes | None]
    ocr: Callable[[np.ndarray, Strokes | None], Lines]
    fetch: Callable[[int], Frame | None]
    index: FrameIndex
    origin: tuple[int, int]


@dataclass(frozen=True)
class Reading:
    """One frame for the cue builder: its lines (read now, or reused from ``ref_index``'s reading), and why.

    ``ref_index`` is the frame whose strokes the pixel test compares with after this reading (the state a
    checkpoint keeps)."""

    index: int
    pts: int
    lines: Lines
    reused: bool
    why: str
    ref_index: int | None


class PixelReader:
    """``--no-aux``: a sampled frame is read unless the pixel test on its own text area says nothing changed since
    the last frame read. Cue times are those of the samples."""

    #: how many fed frames back :meth:`refine` may move a cue's start (none: times stay on the samples)
    event_buffer_length = 0

    def __init__(self, tools: ReadTools, *, log: Log | None = None) -> None:
        self.tools = tools
        self.test = ChangeTest()
        self.log = log
        self.ref: Strokes | None = None
        self.ref_index: int | None = None  # the frame whose strokes are ``ref``
        self.ref_lines: Lines = ()
        self.after = -1  # a resumed run skips the main frames up to its checkpoint

    def resume(self, frame: int, ref_index: int | None) -> None:
        self.after, self.ref_index = frame, ref_index

    def snapshot(self) -> tuple:
        """What decides this reader's later choices (with the frames themselves)."""
        return self.ref_index, self.ref_lines

    def read(self, frame: Frame) -> list[Reading]:
        tools = self.tools
        if frame.index <= self.after:
            return []
        if self.ref is None and self.ref_index is not None:
            self.ref = tools.strokes(tools.fetch(self.ref_index))
        now = tools.strokes(frame)
        evidence = None if self.ref is None else measure(now, self.ref, self.ref_lines, tools.origin)
        if evidence is not None and not self.test.changed(evidence):
            lines, reused, why = self.ref_lines, True, "unchanged"
        else:
            lines, reused, why = tools.ocr(frame.image, now), False, "first" if evidence is None else "changed"
            self.ref, self.ref_index, self.ref_lines = now, frame.index, lines
        if self.log is not None:
            self.log({"index": frame.index, "why": why, "strokes": now.count,
                      "pixel": None if evidence is None else evidence.to_json()})  # fmt: skip
        return [Reading(frame.index, frame.pts, lines, reused, why, self.ref_index)]

    def finish(self) -> list[Reading]:
        return []

    def refine(self, cue: Cue) -> Cue:
        return cue


class ChangeReader:
    """With the change detector's per-frame changes (``changes``: frame index -> :class:`FrameChange`, filled as
    the detector answers; a frame is read only once the detector has answered for it and every frame before).

    - A sampled frame is read only when the pixel test of its text area against the last frame read says the text
      changed (at full size with the last boxes), or when the detector saw a change since the last fed frame that
      the pixel test cannot vouch for (text it barely sees, or an empty area:
      :meth:`~flowocr.read.pixel.ChangeTest.unchanged`); otherwise the last reading is reused.
    - When the text changed twice or more between two samples (a cue shorter than the sampling step), the frame
      after each intermediate change is decoded at full size and read too, so no cue falls between samples.
    - A final cue's start moves to the frame where its text appeared (:func:`~flowocr.read.timing.appeared_at`;
      for a text replacing another in its place, anchored where that one vanished) and its end to where the text
      vanished (:func:`~flowocr.read.timing.vanished_at`): frame-exact times.
    """

    MIN_STATE_FRAMES = 3  # a text state shorter than this between two samples is a transition, not a cue

    def __init__(self, tools: ReadTools, changes: Mapping[int, FrameChange], *, log: Log | None = None) -> None:
        self.tools = tools
        self.changes = changes
        self.log = log
        self.test = ChangeTest()
        self.ref: Strokes | None = None
        self.ref_index: int | None = None  # the frame whose strokes are ``ref``
        self.after = -1  # a resumed run skips the main frames up to its checkpoint
        self.fed: list[int] = []  # indices fed to the cue builder, in order
        self.places: dict[int, tuple] = {}  # fed index -> the boxes of its lines (frame pixels)
        self.last_lines: Lines = ()
        self.extra_frames = 0
        self.change_points = 0

    @property
    def event_buffer_length(self) -> int | None:
        """How many fed frames back :meth:`refine` may move a cue's start: to the fed frame before its first
        reading, however long ago that was (None: unbounded; the cue builder holds a cue open that long)."""
        return None

    def resume(self, frame: int, ref_index: int | None) -> None:
        """Continue after ``frame``: the last fed frame is that one, the reference strokes are those of
        ``ref_index`` (decoded again)."""
        self.after = frame
        self.fed = [frame]
        self.ref_index = ref_index

    def snapshot(self) -> tuple:
        """What decides this reader's later choices (with the frames and the detector's changes after them)."""
        return self.ref_index, self.last_lines

    def _window(self, lo: int, hi: int) -> list[FrameChange]:
        """The detector's changes at frames (lo, hi] (frames the source lacks have none)."""
        changes = self.changes
        return [changes[j] for j in range(lo + 1, hi + 1) if j in changes]

    def read(self, frame: Frame) -> list[Reading]:
        """The readings for a sampled frame the detector has answered for: any extra frames read between the
        previous fed frame and this one, then this one."""
        from flowocr.read.timing import spikes

        if frame.index <= self.after:
            return []
        tools = self.tools
        out: list[Reading] = []
        if self.ref is None and self.ref_index is not None:
            self.ref = tools.strokes(tools.fetch(self.ref_index))
        now = tools.strokes(frame)
        previous = self.fed[-1] if self.fed else None
        peaks: list = []
        if previous is not None:
            peaks = spikes(self._window(previous, frame.index))
            self.change_points += len(peaks)
            # Text states between two samples (a cue shorter than the step): read the frame after each change.
            for a, b in zip(peaks, peaks[1:]):
                if b.index - a.index >= self.MIN_STATE_FRAMES:
                    extra = tools.fetch(a.index)
                    if extra is not None:
                        self.extra_frames += 1
                        self.ref, self.ref_index = tools.strokes(extra), a.index
                        lines = tools.ocr(extra.image, self.ref)
                        out.append(self._fed(a.index, tools.index.pts_of(a.index), lines, False, "between"))
        peak_list = [[c.index, c.appeared, c.vanished] for c in peaks]
        if self.ref is None and now.count == 0:
            # Not one stroke pixel (bright next to dark) in the area: nothing to read, and the pixel test will
            # see the first strokes that appear. No OCR call for a blank opening.
            self.ref, self.ref_index = now, frame.index
            out.append(self._fed(frame.index, frame.pts, (), True, "blank", now=now, peaks=peak_list))
            return out
        evidence = None if self.ref is None else measure(now, self.ref, self.last_lines, tools.origin)
        if evidence is not None and self.test.unchanged(evidence, spiked=bool(peaks)):
            out.append(self._fed(frame.index, frame.pts, self.last_lines, True, "unchanged", now, evidence, peak_list))
            return out
        if evidence is not None and self.test.vanished(evidence):
            self.ref, self.ref_index = now, frame.index  # the text is gone, nothing replaced it: empty, no OCR
            out.append(self._fed(frame.index, frame.pts, (), True, "vanished", now, evidence, peak_list))
            return out
        why = "first" if evidence is None else "changed" if self.test.changed(evidence) else "spike"
        self.ref, self.ref_index = now, frame.index
        out.append(self._fed(frame.index, frame.pts, tools.ocr(frame.image, now), False, why, now, evidence, peak_list))
        return out

    def finish(self) -> list[Reading]:
        return []

    def _fed(self, index: int, pts: int, lines: Lines, reused: bool, why: str, now=None, evidence=None,
             peaks=None) -> Reading:  # fmt: skip
        self.fed.append(index)
        if lines:
            self.places[index] = tuple(line.bounds for line in lines)
        self.last_lines = lines
        if self.log is not None:
            self.log({"index": index, "why": why, "reused": reused, "strokes": None if now is None else now.count,
                      "pixel": None if evidence is None else evidence.to_json(), "peaks": peaks,
                      "texts": [line.text for line in lines]})  # fmt: skip
        return Reading(index, pts, lines, reused, why, self.ref_index)

    def refine(self, cue: Cue) -> Cue:
        """Frame-exact start and end from the detector's changes around the cue's first and last readings."""
        from flowocr.read.timing import appeared_at, vanished_at

        index = self.tools.index
        start_index, end_index = cue.start_index, cue.end_index
        pos = bisect_left(self.fed, start_index)
        if pos > 0:
            before = self.fed[pos - 1]
            found = appeared_at(self._window(before, start_index), replacing=self._shown_in_place(before, cue.box))
            start_index = start_index if found is None else found
        pos = bisect_left(self.fed, end_index)
        if pos > 0:
            # Lasting to the end of the stream, the text may still vanish after the last sample.
            window = self._window(self.fed[pos - 1], min(end_index, len(index) - 1))
            found = vanished_at(window, at_end=end_index == len(index))
            end_index = end_index if found is None else found
        start = index.seconds(start_index)
        end = index.seconds(end_index) if end_index < len(index) else cue.end
        if end <= start:
            return cue
        return replace(cue, start=start, end=end, start_index=start_index, end_index=end_index)

    def _shown_in_place(self, fed_index: int, box) -> bool:
        """Whether the fed frame ``fed_index`` showed a line in the place of ``box`` (:func:`same_place`)."""
        from flowocr.cues.builder import same_place

        return any(same_place(place, box) for place in self.places.get(fed_index, ()))
