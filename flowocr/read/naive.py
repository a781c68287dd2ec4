"""The naive method: OCR every frame sampled at 3 fps and merge similar consecutive texts (DESIGN §13).

This is the baseline every evaluation table puts beside flowocr: what 3 fps readers of the VideOCR /
videosubfinder kind do. It is deliberately simple; nothing here is tuned, and nothing should be.

The rule (:func:`merge_samples`, pure):

1. **Samples.** The frames of flowocr's own time grid at ``fps`` (:func:`~flowocr.probe.sample_grid`, 3 per
   second by default), decoded by one ffmpeg (:func:`~flowocr.decode.decode_all`), each OCR'd whole (no text
   area, no reuse): one OCR call per sample. A sample's time is its frame's presentation time.
2. **Blocks.** Each sample's lines are grouped into blocks with :func:`~flowocr.cues.builder.text_blocks` (lines
   scoring below 0.5 or without letters are left out there), so a sign at the top and dialogue at the bottom
   are two texts, as any tool would give two subtitle entries.
3. **Continuing.** A block continues a cue open at the previous sample when its box is in the same place as the
   cue's last box (:func:`~flowocr.cues.builder.same_place`) and its text is alike the cue's last reading
   (:func:`~flowocr.cues.text.similarity` >= ``same_text``, 0.8); pairs are taken most similar first, each cue
   and block at most once. Other blocks open cues. A cue that no block of a sample continues ends: a single
   sample without it closes it (no gap is bridged).
4. **Cues.** A cue starts at the time of its first sample and ends at the time of the first sample after its
   last one (the end of the video for a cue on the last sample). Its text is its most frequent reading (the
   highest summed score on a tie, then the earliest); its box the mean box of that reading, its score the mean
   score of its readings. No other filtering: a reading seen once is a cue.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from flowocr.cues.builder import TextBlock, same_place, text_blocks
from flowocr.cues.model import Cue
from flowocr.cues.text import similarity

#: Samples per second of the naive method (DESIGN §13).
NAIVE_FPS = Fraction(3)
#: How alike a reading must be to the previous one to continue its cue (bench.py used difflib's ratio at 0.8).
SAME_TEXT = 0.8


@dataclass(frozen=True)
class Sample:
    """The blocks read on one sampled frame: its index, its time (s from the first frame, exact)."""

    index: int
    time: Fraction
    blocks: tuple[TextBlock, ...]


@dataclass(frozen=True)
class NaiveResult:
    """The naive method's cues (sorted by start, then track), the OCR calls it made (one per sample) and its
    wall time in seconds (decoding and OCR; loading the engine included when this call loaded it)."""

    cues: tuple[Cue, ...]
    ocr_calls: int
    seconds: float


@dataclass
class _Open:
    """A cue being read: its samples so far (mutable state of :func:`merge_samples`, never shared)."""

    track: int
    first: Sample
    box: tuple[float, float, float, float]
    last_text: str
    readings: list[TextBlock] = field(default_factory=list)


def merge_samples(
    samples: Iterable[Sample], *, end_time: Fraction, end_index: int, same_text: float = SAME_TEXT
) -> list[Cue]:
    """The naive rule (module docstring, steps 3 and 4) over samples in time order.

    ``end_time``/``end_index``: the end of the video (when the last frame stops being shown, s from the first
    frame) and the index after the last frame; the end of a cue still open after the last sample.
    A new cue's track is the smallest number no other open cue has (blocks are taken bottom to top).
    """
    if not 0.0 <= same_text <= 1.0:
        raise ValueError(f"same_text must be in [0, 1], got {same_text}")
    cues: list[Cue] = []
    open_cues: list[_Open] = []
    last: Sample | None = None
    for sample in samples:
        if last is not None and (sample.time <= last.time or sample.index <= last.index):
            raise ValueError(f"samples must come in time order: {sample.index} at {sample.time} s after "
                             f"{last.index} at {last.time} s")  # fmt: skip
        pairs = sorted(
            ((similarity(c.last_text, b.text), -k, -n, c, b)
             for k, c in enumerate(open_cues) for n, b in enumerate(sample.blocks)
             if same_place(c.box, b.box)),
            key=lambda p: p[:3], reverse=True,
        )  # fmt: skip
        continued: dict[int, TextBlock] = {}
        taken: set[int] = set()
        for sim, _, _, cue, block in pairs:
            if sim >= same_text and id(cue) not in continued and id(block) not in taken:
                continued[id(cue)] = block
                taken.add(id(block))
        still_open = []
        for cue in open_cues:
            block = continued.get(id(cue))
            if block is None:
                cues.append(_cue(cue, sample.time, sample.index))
                continue
            cue.readings.append(block)
            cue.box, cue.last_text = block.box, block.text
            still_open.append(cue)
        for block in sample.blocks:  # bottom to top
            if id(block) not in taken:
                used = {c.track for c in still_open}
                track = next(n for n in range(len(used) + 1) if n not in used)
                still_open.append(_Open(track, sample, block.box, block.text, [block]))
        open_cues = still_open
        last = sample
    if last is not None and (end_time <= last.time or end_index <= last.index):
        raise ValueError(f"the end ({end_index} at {end_time} s) must come after the last sample {last.index}")
    cues += [_cue(cue, end_time, end_index) for cue in open_cues]
    return sorted(cues, key=lambda c: (c.start, c.track))


def _cue(cue: _Open, end_time: Fraction, end_index: int) -> Cue:
    tally: dict[str, tuple[int, float, int]] = {}  # text -> (count, summed score, -first position)
    for k, block in enumerate(cue.readings):
        count, weight, first = tally.get(block.text, (0, 0.0, -k))
        tally[block.text] = (count + 1, weight + block.score, first)
    text = max(tally, key=lambda t: tally[t])
    boxes = [b.box for b in cue.readings if b.text == text]
    box = tuple(sum(v) / len(boxes) for v in zip(*boxes))
    return Cue(
        start=cue.first.time,
        end=end_time,
        text=text,
        box=box,  # type: ignore[arg-type]
        score=sum(b.score for b in cue.readings) / len(cue.readings),
        track=cue.track,
        start_index=cue.first.index,
        end_index=end_index,
    )


def naive_cues(
    video: str,
    *,
    fps: Fraction = NAIVE_FPS,
    engine=None,
    progress: Callable[[int, int], None] | None = None,
) -> NaiveResult:
    """Read ``video`` the naive way (module docstring). ``engine``: an :class:`~flowocr.ocr.engine.OcrEngine`
    (default: flowocr's default engine, :func:`~flowocr.ocr.engine.get_engine`, loaded once per process).
    ``progress(done, total)`` is called after each sample. Raises what probing and decoding raise
    (:class:`~flowocr.errors.FlowOcrError` subclasses)."""
    from flowocr.decode import decode_all
    from flowocr.ocr.engine import get_engine
    from flowocr.probe import probe, sample_grid, scan_index

    started = time.perf_counter()
    info = probe(video)
    index = scan_index(info)
    grid = sample_grid(index, Fraction(fps))
    if engine is None:
        engine = get_engine()
    samples: list[Sample] = []
    for frame in decode_all(info, index, grid):
        result = engine.recognize([frame.image])[0]
        samples.append(Sample(frame.index, index.seconds(frame.index), text_blocks(result.lines)))
        if progress is not None:
            progress(len(samples), len(grid))
    cues = merge_samples(samples, end_time=index.duration, end_index=len(index))
    return NaiveResult(cues=tuple(cues), ocr_calls=len(samples), seconds=time.perf_counter() - started)
