"""The readers: for each sampled frame, read it or reuse what was read, and which frames between samples to read.

A reader is fed the sampled (main) frames in order and returns :class:`Reading` s, the per-frame results the cue
builder takes; at the end :meth:`settle` moves each final cue's start and end to the frames where its text
appeared and vanished (:meth:`refine`), and drops a cue of one letter that did not hold still. It is handed what
it needs as plain callables (:class:`ReadTools`: a frame's stroke map, an OCR call, a decode of one frame) and,
with the change detector, the detector's per-frame changes as a mapping; it never sees the run, the decoder or a
socket (:mod:`flowocr.pipeline` wires it).

Every decision can be logged (:attr:`ChangeReader.log`): the pixel test's counts, the detector's spikes and the
decision with its reason, one dict per fed frame.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from flowocr.cues.builder import CueOptions
from flowocr.ocr.types import SAME_BOX_IOU
from flowocr.read.events import CONTEXT, Blip, Bounds, CellMap, Fade, Short, stack
from flowocr.read.pixel import ChangeTest, LineLook, measure

if TYPE_CHECKING:
    from flowocr.aux.detector import FrameChange
    from flowocr.cues.model import Cue
    from flowocr.decode.lane import Frame
    from flowocr.ocr.strokes import Strokes
    from flowocr.ocr.types import TextLine
    from flowocr.probe.index import FrameIndex

Lines = tuple["TextLine", ...]
_WHOLE = ("first", "hidden")  # the reads of the whole area (its lines' boxes coarser than a read of its bands give)
Log = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class ReadTools:
    """What a reader may do, handed to it as callables.

    ``strokes(frame)``: the stroke map of a frame's text area (None for None).
    ``ocr(image, strokes, rows=(), lines=(), slop=0, whole=False, known=())``: read a full BGR frame's text area,
    lines in frame pixels: with ``strokes``, only its stroke bands, the row spans ``lines`` of lines read before and
    the parts of the cell spans ``rows`` they leave out that are ``slop`` tall (:func:`flowocr.ocr.area.read_bands`);
    the whole area without, or with ``whole`` (and on a large frame its stroke bands too:
    :func:`flowocr.ocr.area.read_whole`). A box the detector finds that is a line of ``known`` is that line, not
    recognised again.
    ``fetch(i)``: frame ``i`` decoded on its own (None when the source lacks it). ``index``: the frame index (pts and
    times). ``origin``: the text area's top-left corner in frame pixels."""

    strokes: Callable[[Frame | None], Strokes | None]
    ocr: Callable[..., Lines]
    fetch: Callable[[int], Frame | None]
    index: FrameIndex
    origin: tuple[int, int]
    #: ``probe(image, strokes, rows=(), lines=(), slop=0, whole=False)``: the text boxes (x0 y0 x1 y1, frame
    #: pixels) OCR's detector finds in the bands ``ocr`` would read with the same arguments, without recognising
    #: them; None where they cannot stand for a reading (:func:`flowocr.ocr.detect.probe_frame`). None: no probing.
    probe: Callable[..., tuple | None] | None = None
    #: ``crop(frame, box)``: the grey levels of a frame's box (x0 y0 x1 y1, frame pixels) at full size, for a line
    #: the stroke map cannot see (:func:`flowocr.read.pixel.line_change`). None: no such second look.
    crop: Callable[[Frame, tuple[int, int, int, int]], np.ndarray | None] | None = None
    #: ``crops(indices, box)``: ``crop`` of one box on several frames, decoded in one pass: frame -> grey levels
    #: (None where missing). None: ``fetch`` and ``crop`` frame by frame.
    crops: Callable[[list[int], tuple[int, int, int, int]], Mapping[int, np.ndarray | None]] | None = None


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

    def forget_before(self, index: int | None) -> None:
        pass

    def refine(self, cue: Cue) -> Cue:
        return cue

    def settle(self, cue: Cue) -> Cue | None:
        """A final cue as written (this reader keeps every cue as the builder closed it)."""
        return cue


class ChangeReader:
    """With the change detector's per-frame, per-cell changes (``changes``: frame index -> :class:`FrameChange`,
    filled as the detector answers; a frame is read only once the detector has answered for it and every frame
    before). ``cells`` says where the detector's cells lie on the frame.

    - A sampled frame is read only when the pixel test of its text area against the last frame read says the text
      changed (at full size with the last boxes: inside them, or a burst of new strokes outside them that stayed),
      or when the detector saw a text event since the last fed frame (:mod:`flowocr.read.events`) outside the last
      lines, or on a line the pixel test cannot see (too few strokes:
      :meth:`~flowocr.read.pixel.ChangeTest.sees_line`); otherwise the last reading is reused.
    - A text event outside the last lines that the pixel test does not confirm is probed first: when OCR's
      detector alone finds just the last lines' boxes there, nothing new came, and their reading is reused.
    - When the text changed twice or more between two samples (a cue shorter than the sampling step), the middle
      frame of the first such state is decoded at full size and read too, so no cue falls between samples (not
      when the pixel test vouches that it still shows the last reading, as it would for a sample).
    - A text shown on one or two frames (no level for the text events) is read on its frame; so is one shown for
      up to four frames in the place of another (a short state).
    - A final cue's start and end move to the text events in its own cells around its first and last readings
      (:meth:`refine`): frame-exact times; where none is there, to where its box changes at full size.
    - A read recognises only what is new: OCR's detector first, and the boxes of the last lines, seen unchanged,
      keep their reading (:meth:`_read_new`).
    """

    MIN_STATE_FRAMES = 3  # a text state shorter than this between two samples is a transition, not a cue
    # Text states read between two samples, at most. 3 read a state over fast backgrounds wherever a background
    # event and a text event fell in one window: on the dev corpus (seed 11) 1 gave 2.97 OCR calls per cue instead
    # of 3.32, phantoms 14 instead of 18, no cue more missed (two short cues between two samples are rare).
    MAX_BETWEEN = 1
    # Where no event in a window brought something, a band emptied (it kept few of its stable edges: a line gone,
    # perhaps a short one left in its place) and followed by another event in its rows at least MIN_STATE_FRAMES
    # later is a state between them too; read where a probe finds a box there, and fed only where something was
    # read. The events found over still pictures (``events.STILL_NOISE``) had hidden such a state from the look
    # halfway (``MIDDLE_STATE`` looks after the window's last event). Dev seeds 13 and 17: the same cues, OCR calls
    # per cue +0.01 each.
    EMPTIED_BETWEEN = True
    # Starts and ends placed on the level change of the stable edges in the cue's own cells (refine). Dev corpora,
    # boundaries within 0/1/2 frames: seed 13 0.801/0.864/0.908 -> 0.819/0.895/0.920, seed 11 0.829/0.892/0.935 ->
    # 0.851/0.908/0.938; nothing else changed. Not kept: a fade's half-way point (the half mass of the grey-level
    # burst up to that change), seed 13 0.807/0.887/0.912.
    PLACE_ON_STABLE = True
    # A fading text's start and end on its first and last half-opaque frames (events.faded_at), where the stable
    # edges put them at the end of a fade-in and the start of a fade-out. A fade often straddles a fed frame (a
    # sample shows the text half faded): its run is sought in the CONTEXT frames around the window too. Dev seed 13,
    # within 0/1/2 frames: 0.824/0.904/0.927 -> 0.859/0.935/0.942 (a first version within the window alone:
    # 0.834/0.909/0.927); seed 11: 0.850/0.909/0.938 -> 0.861/0.917/0.942; nothing else changed.
    PLACE_FADES = True
    # A start (end) on the frame where the text's stroke pixels all appeared (vanished) at once in its own cells, when
    # one frame stands out so (events.strokes_spike_at), before the stable edges' level change: over a moving picture
    # (footage behind a thin outline) the stable edges of the text's cells settle frames after it came. Boundaries
    # within 0/1/2 frames, dev seed 13: 0.890/0.947/0.957 -> 0.924/0.955/0.963; 11: 0.883/0.935/0.959 ->
    # 0.913/0.939/0.959 (two starts a frame later, six boundaries better); report seed 2027: 0.859/0.914/0.932 ->
    # 0.914/0.935/0.951; nothing else changed. SPIKE_MIN 30 gained a third as much on seed 13, 15 about half.
    PLACE_ON_SPIKE = True
    # Where nothing in a cue's cells says it came between the fed frame before its first reading and that reading
    # (went between its last reading and the next fed frame), and that fed frame reused a reading on the pixel test's
    # word alone (``unchanged``: a thin or light line over a picture can come or go unseen), it is sought back to the
    # last fed frame whose reading was looked at (:meth:`_verified`). Dev seed 13: two starts 19-20 frames late placed
    # on their frame (within 1 frame 0.935 -> 0.938), nothing else changed; seeking back whenever the frame before
    # was assumed, not only when nothing came after it, placed three starts of replacements 27-32 frames early (a
    # level change of the stable edges found in the noise of the text before); seed 11 and 2027 unchanged.
    PAST_ASSUMED = True
    # A cue whose box, looked at full size, shows its text already on the fed frames before its first reading that
    # reused a reading (a pixel test or a probe that did not see it come: a small line over a moving picture, a line
    # the detector missed over a busy one) came between the last of them that does not show it and the first that
    # does: its start is sought there (:meth:`_shown_before`), not after that first one (where a picture's change in
    # its cells, a shot cut, was taken for its coming: dev 17, a 2-letter line 14 frames late). Not over a fed frame
    # whose lines lie in its cells, and not where the look sees it on all of them (a bright still picture fills the
    # box with strokes: starts 9-13 frames early on dev 17 without that). Dev seeds, within 0/1/2 frames: 17
    # 0.929/0.962/0.973 -> 0.932/0.965/0.976, 13 0.942/0.977/0.985 -> 0.944/0.980/0.988, nothing else changed; frames
    # decoded to place boundaries per cue 3.65 -> 4.58 and 4.06 -> 5.18.
    PAST_SHOWN = True
    SHOWN_BACK = 4  # fed frames at most
    # Where nothing in a cue's cells places its start (end) between the fed frames around its first (last) reading,
    # its box is looked at full size on frames between them, halving the gap: the first frame on which fewer than
    # BISECT_MOVED of the stroke pixels of the frame it was read on moved (the start), or at least so many (the end).
    # The gap opens at the last fed frame looked at (PAST_ASSUMED's _verified): a reading the pixel test alone
    # vouched for may have missed the change. Small or thin text over moving pictures makes no text event and no
    # burst (dev seed 11: a replacement placed 20 frames late at 50 fps). Dev seeds, within 0/1/2 frames: 13
    # 0.927/0.958/0.966 -> 0.932/0.963/0.972, 11 0.912/0.941/0.961 -> 0.918/0.947/0.968; 0.27 frames decoded per cue
    # on seed 13; nothing else changed (from the fed frame just before: one fade-out end 2 frames early on 13, within
    # one frame 0.961). The pixel test's own standard for a line the same (a fifth moved) placed fade-outs early:
    # 13 0.930/0.961/0.970, 11 0.916/0.946/0.968.
    LOOK_BISECT = True
    # A start or end that a burst of grey-level change or a level step of the cue's cells placed is checked by looks
    # at full size, as LOOK_BISECT seeks one (the text on its frame and not on the one before, for a start), and
    # sought by halving where the looks disagree (:meth:`_checked`). Dev seeds, boundaries within 0/1/2 frames: 13
    # 0.930/0.961/0.971 -> 0.955/0.981/0.986, 11 0.916/0.946/0.966 -> 0.946/0.965/0.984, nothing else changed;
    # frames decoded to place a boundary by looks per cue 0.27 -> 3.76 and 0.14 -> 3.25 (in one pass per check, and
    # one per boundary moved). Checks by placement on both seeds: moved 43 of 421 level steps, 19 of 104 bursts,
    # 6 of 746 spikes (all stroke pixels at once: not checked) and 32 of 39 fades, but a fade's half opacity is not
    # what a look sees: checking them too moved exact fades 2 frames (13: within 0 frames 0.930 -> 0.918). Checked
    # at the aux stream's scale instead of at full size: 13 within 1 frame 0.961 -> 0.954, not kept.
    # Each check decodes from the keyframe before it (a 1080p run took 1.6-1.9 times as long): off unless asked
    # for (``flowocr run --exact-boundaries``).
    VERIFY_PLACED = False
    # Without it, a boundary placed in doubt is checked so: one placed by its event or burst alone (no spike, no
    # level step), or by a level step more than DOUBT_FRAMES from the event or burst that said the text changed (two
    # signals that disagree; a level step that agrees with its event is kept unchecked). Seen at 540p50 over moving
    # footage: a replacement's burst on its frame, a level step of the picture 12 frames before it. Checks by
    # placement (dev seed 13, all checked): level steps agreeing 196 (8 moved, most by a frame), in doubt 26 (8
    # moved, up to 12 frames), bursts 59 (9 moved, up to 9 frames). Dev seeds, within 0/1/2 frames: 13
    # 0.924/0.957/0.966 -> 0.940/0.976/0.980 (all checked: 0.950/0.976/0.980), 11 0.919/0.947/0.968 ->
    # 0.935/0.960/0.978; frames decoded to place a boundary by looks per cue 0.28 -> 1.91 and 0.14 -> 1.69 (all
    # checked: 4.38 on 13); nothing else changed. Level steps in doubt alone: 13 0.965, 11 0.954 within one frame.
    VERIFY_DOUBT = True
    DOUBT_FRAMES = 1
    VERIFY_HOW = ("burst", "level")
    BISECT_MOVED = 0.5
    # A fade the detector's changes found (PLACE_FADES) is placed again by looks at full size (:meth:`_fade_looked`):
    # the text's box on every frame from the fed frame before it to the one after it (and its run, where that reaches
    # past them) and FADE_PAD frames on each side, decoded in one pass. The contrast of its glyphs against their edges
    # (:func:`~flowocr.read.pixel.text_contrast`, masks from where it shows at full opacity) grows with its opacity
    # whatever the picture behind does; the first frame FADE_HALF of the way from where it is hidden to where it shows
    # is its start (the first less, its end). Kept where the contrast there is under FADE_CONTRAST levels, or more than
    # FADE_WRONG of the frames disagree with the frame found. The fed frames bound the frames looked at, not the run
    # alone: the detector's run misses the faint ends of a fade over a moving picture (a 500 ms fade at 30 fps found as
    # 3 frames). Faded boundaries the run placed, within 0/1/2 frames: dev seed 13 0.83/1.00/1.00 -> 0.77/0.97/1.00
    # (30), 11 0.47/0.58/0.79 -> 0.47/1.00/1.00 (19), 17 0.55/0.86/0.95 -> 0.71/0.90/0.95 (22). FADE_HALF 0.5: 13
    # 0.60/1.00/1.00, 11 0.47/0.95/0.95 (the contrast of a fading outlined line falls a little faster than its
    # opacity); the run and three frames on each side only: worse on 13 (the ends looked at inside the fade).
    LOOK_FADES = True
    FADE_PAD = 3
    FADE_HALF = 0.45
    FADE_CONTRAST = 12.0
    FADE_WRONG = 0.2
    # A boundary checked by looks (VERIFY_DOUBT) whose box shows the text part of the way on the frame it was placed
    # on or the one before (:meth:`_midway`) is placed so too, over the fed frames around it, where the looks see a
    # fade there (at least FADE_RAMP frames PART_WAY between hidden and shown: a cut has none or one); else as
    # before, by the stroke pixels that moved. Both (with LOOK_FADES), all boundaries within 0/1/2 frames: dev seed 13
    # 0.941/0.976/0.980 -> 0.941/0.976/0.983, 11 0.931/0.953/0.971 -> 0.934/0.967/0.976, 17 0.907/0.946/0.958 ->
    # 0.914/0.948/0.959, nothing else changed; frames looked at per cue 1.93 -> 4.14, 1.69 -> 3.75, 1.76 -> 3.78.
    # Every check by the contrast, not only where it sees the text part of the way: cuts placed worse (13
    # 0.931/0.966/0.976 without FADE_RAMP; with it 0.942/0.976/0.983 but 11 0.932/0.964/0.973, boundaries of texts
    # without a fade 0.98/0.99/0.99 -> 0.97/0.98/0.98), and twice the frames looked at.
    HALF_CHECKS = True
    FADE_RAMP = 2
    PART_WAY = (0.15, 0.85)
    # The level change of a cue's stable edges is fitted with the CONTEXT frames after the window for a start (before
    # it for an end), and kept only inside the window: a cue first read on the frame it came on (a replacement read
    # on the sample that shows it) has no frame of its own level in the window, and its best up-fit was a stray step
    # of the line before (dev seed 11: 'I can't hear what you're saying.' 7 frames early). Dev seeds, within 0/1/2
    # frames: 13 0.863/0.938/0.946 -> 0.882/0.941/0.949, 11 0.861/0.917/0.942 -> 0.871/0.924/0.953; report seed
    # 2027 0.838/0.905/0.917 -> 0.845/0.906/0.923; nothing else changed.
    LEVEL_CONTEXT = True
    # A text event outside the last lines that the pixel test does not confirm (the last lines all seen, none
    # changed) is first probed: OCR's detector alone on the bands a read would take; when it finds exactly the
    # boxes of the last lines, nothing new came and their reading is reused (``probed``). Dev corpus (seed 13): of
    # 656 such reads, 375 read the texts of the reading before; with probes, OCR calls per cue 3.20 -> 2.39 and
    # 1.25 probes per cue, nothing worse. Probing a text state between two samples too, tried alone then (2.01 calls
    # per cue, but boundaries within one frame 0.897 -> 0.892), is on since with two conditions (PROBE_BETWEEN).
    # A burst of new strokes outside the last lines' boxes (kept since the last sample) does not keep the probe from
    # vouching, only a change inside them does: new text there is a box the probe finds. Before 2026-12-04 any
    # change the pixel test saw refused it; dev seed 13: calls per cue 2.14 -> 2.12, probes 1.61 -> 1.64, nothing
    # else different; seed 2027: calls 2.10 -> 2.04, probes 1.54 -> 1.62, one split piece less.
    PROBE = True
    # A text state between two samples whose event lies outside the last lines is probed too before it is read
    # (fed as the last reading when the probe vouches). Dev corpus (seed 13, 30 videos), with SEES_MIN 16 and
    # PROBE_IOU 0.7 (below): OCR calls per cue 2.42 -> 2.14 (168 of 258 such reads had read the texts of the
    # reading before), 1.30 -> 1.61 probes per cue; exact 0.890 -> 0.893, missed 25 -> 24, no more phantoms,
    # boundaries within one frame 0.899 -> 0.898. Alone (SEES_MIN 8, PROBE_IOU 0.5) it missed a replacement (a line
    # of 11 stroke pixels moved 5, which the pixel test took as unchanged) and kept a misreading ('“快跑' for
    # '“快跑！”': the truncated line's box overlapped the whole line's by 0.6) that a background-triggered read
    # had corrected. Not kept: probing such a state on an empty screen too (no last lines; the probe then vouches
    # when it finds no box): calls per cue 2.14 -> 2.09, probes 1.61 -> 1.80, no CPU saved.
    PROBE_BETWEEN = True
    # New strokes outside the last lines' boxes, kept since the last sample (``ChangeTest.kept``) but too few for a
    # burst and with no text event there (a thin light 51 px line over footage made neither), are taken as an event
    # elsewhere: probed, then read. Dev seed 13: that line's start 55 -> 19 frames late, calls per cue 2.12 ->
    # 2.11, probes 1.64 -> 1.66, nothing else different; seed 2027: calls 2.04 -> 2.03, probes 1.62 -> 1.66.
    KEPT_NEWS = True
    # A sample that would reuse the last reading, where new strokes appeared outside the last lines' boxes since
    # the reference as many as a new static text keeps (``ChangeTest.unheralded``) though no text event came and none
    # were there at the last sample (the reference's own sample), is probed, then read where OCR's detector finds
    # a box that is not the last lines' (``news``): a text that came between two samples over busy footage, whose
    # step the events' noise floor drowned (a 37 px white line over a moving forest made no event; 14 such texts
    # on the dev seeds were taken as the reading before). Dev seeds: 11 exact 0.894 -> 0.901, CER 0.0166 ->
    # 0.0154, missed >= 0.5 s 5 -> 4, 3 frames-0.5 s 9 -> 7, within 0/1/2 frames 0.913/0.939/0.959 ->
    # 0.914/0.942/0.962; 13 within 0/1/2 0.924/0.955/0.963 -> 0.925/0.958/0.966; OCR calls per cue +0.02 each,
    # probes +0.04/+0.12. At 60 new strokes (``outside_new``) half of that; at 15 the same as at 30.
    NEWS_PROBE = True
    # A sample that the news probe vouched for (``news-probed``) keeps the standing it had without it: its reading
    # is the pixel test's word (assumed), so a cue's end is still sought back past it. The probe found one box of
    # the picture where a line had been on the frame it vanished (seed 2027, video 014: its end 0 -> 5 frames late
    # with NEWS_PROBE); dev seeds: no change.
    NEWS_ASSUMED = True
    # A last line the stroke map cannot see is looked at again at full size on every sample (not only where a text
    # event touched it, as ``unvouched`` does): where its own strokes there changed, the sample is read
    # (``unseen``). White CJK text with a 0.5 px outline over slow gradients (35 px at 720p) made no text event and
    # no stroke the map keeps: its replacements went unseen, ends 43-116 frames late and three lines lost on one
    # video. Dev seeds: 11 exact 0.901 -> 0.906, CER 0.0154 -> 0.0144, 3 frames-0.5 s missed 7 -> 6 (the line
    # found starts 20 frames late: within 1 frame 0.942 -> 0.941); 13 within 0 frames 0.925 -> 0.927; OCR calls
    # per cue +0.01 each. A box too faint to see at full size either is left as it was.
    LOOK_UNSEEN = True
    # Texts shown on one or two frames (no level for the events) outside the last lines are read on their frame.
    BLIPS = True
    MAX_BLIPS = 1  # a window
    # Texts shown on one to four frames that replace a text or are replaced in the same place
    # (events.short_states) are read on their frame, and start and end on the frames of their two changes.
    SHORTS = True
    MAX_SHORTS = 1  # a window
    # ... and so are states of one or two frames between a band that emptied and an event in its rows that brought
    # something (a short line replacing a long one keeps too few still edges on its first frame to be more than
    # the long one gone; a moving picture leaves grey levels changing all over, too busy for short_states). Dev
    # seed 17: a 2-frame "Não!" over a panned picture found (exact 0.937 -> 0.940, CER 0.0171 -> 0.0163), OCR calls
    # per cue the same (most such pairs are a gap between two lines: the probe finds no box); dev 13 the same cues.
    # Off: on seed 2027 it found nothing and read the faint end of a fade-out as a 2-frame phantom (a garbled reading
    # 0.59 alike the line, under the builder's 0.6 bar; a short state's reading alike the last line's by that bar
    # taken for no new text changed nothing on the three seeds).
    BRIEF_STATES = False
    PROBE_MIN_SCORE = 0.9  # ... and the last lines are all read at least this sure
    # A box found and a last line's box are the same box from this overlap (intersection / union). 0.5 took a line
    # read without its last two of five characters for the whole line (0.6); dev corpus (seed 13), with
    # PROBE_BETWEEN and SEES_MIN 16: 0.5 exact 0.887, 0.7 0.893 (OCR calls per cue 2.11 -> 2.14), 0.8 0.893 (2.18).
    PROBE_IOU = SAME_BOX_IOU  # 0.7: the overlap at which an engine takes a box for a known line, too
    # ... and a last line keeps its reading on a read (READ_NEW_ONLY) only where the box found does not reach past
    # its box by more than this share of its height on any side: a box that grew holds glyphs the reading has not.
    KEEP_GROWN = 0.25
    # The probe may vouch for a last line the pixel test cannot see (fewer than SEES_MIN stroke pixels) when no text
    # event since the last fed frame touched its cells (an event there refuses it: ``unvouched``), the standard a
    # sample with no event at all is reused by; a between state's refusal counts every event of its window, not only
    # those before its middle (a same-length replacement of such a line had its event just after it). Before
    # 2026-12-04 such a line refused the probe (``unseen``). Dev seed 13: OCR calls per cue 2.11 -> 2.01, probes
    # 1.66 -> 1.81, nothing else different; seed 2027: calls 2.03 -> 1.88, probes 1.66 -> 1.86, nothing else.
    PROBE_UNSEEN = True
    # A last line the stroke map cannot see, where a text event touched its cells, or that the map sees change in
    # its box, is looked at again in its box's full-size grey levels, with levels of its own
    # (:func:`~flowocr.read.pixel.line_change`); when its strokes there did not move, it counts as seen and
    # unchanged. Small, thin or unoutlined lines (a 12 px line at 360p over footage) made most reads over moving
    # pictures: each event near them was ``unvouched``, and a picture moving behind them moved the map's strokes in
    # their boxes. Of the reads it took away on dev seed 13, the unseen lines' read the texts of the reading before
    # 46 times in 52, the changed lines' 25 in 28 (the rest read the same pixels differently, or found a new line
    # elsewhere, which the probe still finds). OCR calls per cue: dev seeds 13 2.12 -> 1.89, 11 2.39 -> 2.01; report
    # seed 2027 1.87 -> 1.77; the fixtures 2.10 -> 1.86. Nothing else changed but one cue on seed 13, now read once
    # only, on a frame that lost its closing quote ('“快跑！'), and the CER of seed 11 (0.0209 -> 0.0202).
    LOOK_AGAIN = True
    # Where the text as a whole vanished (``vanished``), the last lines that stayed are kept: a line seen unchanged
    # on the stroke map, or at full size (LOOK_AGAIN). A sign with few strokes (yellow serif text with no outline, a
    # boxed sign) next to a dialogue line of many was dropped with it, read again on the next read and split.
    PARTLY_VANISHED = True
    # Where the pixel test sees the text vanish, a probe of the bands a read would take looks for a box on the last
    # lines' rows that is none of theirs (:meth:`_refilled`); where it finds one, the frame is read (``refilled``): a
    # text the stroke map cannot see replaced them (dev seed 11: '何？', white with a thin outline over a light
    # gradient at 1080p, 2.2 s on screen, replaced '二階の奥です。' and was missed: the samples over it saw 2 stroke
    # pixels and "vanished", then "unchanged"). Dev seed 11: missed cues of 0.5 s or more 1 -> 0 of 305, exact 0.922
    # -> 0.925, CER 0.0102 -> 0.0099, but a 400 ms fade-in read on its faint first frames, its start then placed on
    # the vanishing of the line before (29 frames early), and one start 3 frames early (within 1 frame 0.955 ->
    # 0.953); detection probes per cue +0.22, OCR calls the same. Dev seed 13: the same but probes +0.19 per cue.
    PROBE_VANISHED = True
    # A cue of one letter is kept only where the letter holds still at full size (:meth:`settle`): OCR reads a
    # picture's object as one CJK letter at scores over LONE_CJK_MIN_SCORE (a red basket '油', a lift's cage '由',
    # a yellow star '妖'), and the objects move or are too faint to tell; a subtitle's lone letter ('嗯') stays.
    # Dev seeds: 13 phantoms 8 -> 4 (exact 0.929 -> 0.932), 11 10 -> 7 (the first letter of a line otherwise missed,
    # 'す', held still and stays; a still picture's '心' too), nothing else changed; report seed 2027 (60 videos)
    # 17 -> 6, nothing else changed. A lone letter shown on one frame, or moving (a scrolling sign), is lost.
    LONE_STILL = True
    # A read of a sample or of a state between samples is a probe first (OCR's detector alone, on the bands the read
    # takes; the read then takes its boxes): a box that is a last line's, where the second look at full size sees
    # that line unchanged, keeps the line's reading, and only the other boxes are recognised; where no other box is
    # found, nothing is recognised (no OCR call: the reading is the lines kept, or empty). Dev seeds, OCR calls per
    # cue: 13 1.94 -> 1.56 (probes 2.52 -> 3.68; of the 134 reads gone, 81 had found no box), 11 2.05 -> 1.61,
    # nothing else changed; report seed 2027: 2.21 -> 1.75, one misreading kept (split off: split pieces 4 -> 5).
    # Keeping lines the stroke map saw unchanged too (not only at full size) kept '走吧。' over its replacement
    # '当然。' (dev seed 11).
    READ_NEW_ONLY = True
    # ... and a box the read of the reference frame recognised to nothing (texture), found again by a read's probe
    # (PROBE_IOU, grown by no more than KEEP_GROWN) and unchanged at full size (the look a last line gets), is not
    # recognised again. Dev seeds, quality identical: OCR calls per cue 13 1.56 -> 1.50, 11 1.61 -> 1.60; report seed
    # 2027 1.75 -> 1.74. Without the full-size look 1.47 on seed 13: not kept, since a fade's faint first box,
    # recognised to nothing, would stay nothing once the text is plain.
    KEEP_BLANKS = True
    # ... and a box left by the probe that lies on a kept line's box, reaching past it by no more than KEEP_GROWN, is
    # that line found again, not a new box touching it: a busy band is detected twice (as it is and with its picture
    # blacked out, as a read does it), and each detection finds the line, whole or in part.
    KEEP_PARTS = True
    # ... and a last line where the probe finds only boxes lying on its box (none the same box: OCR's detector cut
    # the line short, or in two, over a busy picture), seen unchanged at full size, keeps its reading; before, each
    # such read recognised the part found ('Mein Bruder wohnt in Mü' for 'Mein Bruder wohnt in München.'), and
    # reused on the samples after it, the part split the cue.
    KEEP_SHRUNK = True
    # ... and one where the probe finds no box at all, seen unchanged at full size, too: OCR's detector misses a line
    # over a busy picture on some frames, and the line lost for two samples split its cue.
    KEEP_UNFOUND = True
    # A sample of an empty screen (no last lines) that the pixel test calls unchanged is probed whole: where OCR's
    # detector finds a box, it is read whole (``hidden``): white text with a 1 px outline over a mid-grey picture
    # keeps no stroke pixel on the reduced stroke map, and makes no text event (dev seed 17: a 1.9 s line at 480p
    # missed). A box where the last read recognised nothing (``blanks``) is no news, whether or not it held still at
    # full size (texture over a moving picture found again: dev seed 17, OCR calls per cue 1.58 -> 1.57, the rest the
    # same). Dev seed 17, with KEEP_SHRUNK and KEEP_UNFOUND: exact 0.912 -> 0.926, CER 0.0279 -> 0.0215, missed
    # >= 0.5 s 4 -> 1 of 299, short 9 -> 7 of 48, within 0/1/2 frames 0.923/0.957/0.968 -> 0.927/0.960/0.971, OCR
    # calls per cue 1.51 -> 1.57.
    PROBE_EMPTY = True
    # ... but not again while the picture holds still (a probe of a whole frame is a detection of all of it, 0.24 CPU
    # s on an 800p frame): no cell of the aux stream moved by EMPTY_MOVED grey levels (its mean difference from frame
    # to frame, summed over the frames since the last whole probe of an empty screen that found nothing new), as a
    # text that came would have. Same readings on dev seed 17; a real run of an 800p video with many empty samples
    # took 1.61 times the CPU without (farm-bench, 3 pairs), 1.03 with. 0: probe every such sample.
    EMPTY_MOVED = 3
    # The first frame (read whole) is probed whole first; where the detector finds no box, nothing is recognised and
    # it is fed empty (reused). Dev seeds, quality identical: 19 of seed 13's 30 first frames showed no text; calls
    # per cue 13 1.50 -> 1.45, 11 1.60 -> 1.55 (probes +0.08 each).
    PROBE_FIRST = True
    # A read that replaced a text by another (not alike: ``ALIKE``, the cue builder's same_text) looks halfway
    # between the last fed frame and it (on the frame after the window's last event, where one came): where neither
    # text is seen there unchanged at full size and a probe there finds neither's boxes, a third text was on screen
    # that no event showed (a window whose noise floor drowned every step; the next text came without an event):
    # that frame is read, and fed before the sample where it shows a text neither before nor after it (a read of
    # the text after, on a texture box the look could not see, had made a phantom of a single reading: report seed
    # 2027). Dev seeds: 13 missed 3 frames-0.5 s 2/59 -> 1/59 ('给我一杯水。', 10 frames), exact 0.932 -> 0.935,
    # CER 0.0298 -> 0.0234, calls per cue +0.01; 11 identical but probes per cue +0.02.
    MIDDLE_STATE = True
    # ... and so does a read of a state between samples, halfway between the last fed frame and it (with the events
    # before the state's own): a 0.28 s line at 360p whose start's step stood under a noise floor raised by a shot cut
    # into fast footage, the state after it read between samples. Dev seeds: 13 missed 3 frames-0.5 s 1/59 -> 0/59,
    # CER 0.0152 -> 0.0142, calls per cue +0.01; 11 identical but one video's calls; seed 2027 the same.
    MIDDLE_BETWEEN = True
    ALIKE = CueOptions.same_text  # 0.6: the builder's own bar for two readings of one text
    # A last line looked at again keeps its reading where its strokes stayed while others came beside them (a picture
    # moving behind it: ``ChangeTest.line_kept``), not only where it held still, when it was read at least this
    # sure: each read again is a chance to right a misreading ('Şaka yapiyorsun!' at 0.947 was kept for its whole
    # cue, dev seed 11; 53 of the 63 lines so kept on the dev seeds were read at 0.97 or more). Dev seeds, OCR calls
    # per cue: 13 1.45 -> 1.42, 11 1.50 -> 1.46 (one boundary more on its frame), nothing else changed; without the
    # bar 1.45 on seed 11, and that line lost. Counting only what vanished, a fifth of the strokes (1.39 and 1.40
    # per cue, two lines lost on seed 11), left no margin: at 0.29 a 360p replacement on dev seed 13 was missed, and
    # a thin line replaced by one that begins as it did loses 14-18 % of them (ChangeTest.KEPT_VANISHED).
    KEPT_SCORE = 0.97

    def __init__(
        self, tools: ReadTools, changes: Mapping[int, FrameChange], cells: CellMap, *, log: Log | None = None,
        forget: Callable[[int], None] | None = None,
    ) -> None:  # fmt: skip
        self.tools = tools
        self.changes = changes
        self.cells = cells
        self.log = log
        self.forget = forget
        self.test = ChangeTest()
        self.ref: Strokes | None = None
        self.ref_index: int | None = None  # the frame whose strokes are ``ref``
        self.ref_frame: Frame | None = None  # ... and that frame (fetched again on resume)
        self.after = -1  # a resumed run skips the main frames up to its checkpoint
        self.fed: list[int] = []  # indices fed to the cue builder, in order
        #: fed frames whose (non-empty) reading was reused on the pixel test's word alone (``unchanged``): a text may
        #: have come or gone there unseen (:meth:`_verified`)
        self.assumed: set[int] = set()
        #: fed frames whose reading was reused (no OCR), and the boxes of its lines
        self.reused: dict[int, tuple[Bounds, ...]] = {}
        #: fed frames read as a short state (:func:`~flowocr.read.events.short_states`), and that state
        self.shorts: dict[int, Short] = {}
        self.last_lines: Lines = ()
        self.previous_map: Strokes | None = None  # the stroke map of the last sample fed
        self.extra_frames = 0
        self.change_points = 0
        self.unsteady = 0  # cues of one letter dropped: it did not hold still (:meth:`settle`)
        self.sought = 0  # frames decoded at full size to place a boundary by looks (:meth:`_sought`, :meth:`_checked`)
        self._how: str | None = None  # how :meth:`_placed` placed the last boundary
        self._doubt = False  # whether its level step lay off the event or burst that said it changed (DOUBT_FRAMES)
        self._fade: Fade | None = None  # the fade that placed it (PLACE_FADES)
        #: what the probe of the frame being read found, for the log: -1 not probed, None it cannot vouch, a word
        #: why it was not tried (:meth:`_probe_vouches`), else how many boxes
        self.probe_found: int | str | None = -1
        #: the boxes the read of the reference frame (by index) recognised to nothing: texture (KEEP_BLANKS)
        self.blanks: tuple[int | None, tuple] = (None, ())
        #: since the last whole probe of an empty screen that found nothing new (PROBE_EMPTY): the fed frame it was
        #: made on or last passed (None: none holds) and each cell's grey-level moves since (EMPTY_MOVED)
        self._empty_probed: tuple[int, np.ndarray | None] | None = None
        #: what a read's own probe left to recognise (READ_NEW_ONLY), for the log: boxes found, lines kept, and why
        #: none were, or None where the read was not probed
        self.keep: dict | None = None
        #: the boxes the probes of the frame being read found, by frame, rows and line spans
        self._probes: dict[tuple, tuple | None] = {}
        self.last_read: str | None = None  # why the last frame read was read
        #: the lines looked at again at full size for the frame being read, for the log: [strokes, appeared, vanished]
        self.looked: list[list[int]] = []
        #: what each second look of the frame being read found, by reference frame, frame and box (the decision, the
        #: probe's refusals and a state between samples ask about the same line)
        self._looks: dict[tuple[int, int, tuple[int, int, int, int]], LineLook | None] = {}

    @property
    def event_buffer_length(self) -> int | None:
        """How many fed frames back :meth:`refine` may move a cue's start: to the fed frame before its first
        reading, or the last one before it that was looked at (:meth:`_verified`), and ``CONTEXT`` frames before
        that for a fade, however long ago that was (None: unbounded; the cue builder holds a cue open that long)."""
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

    def forget_before(self, index: int | None) -> None:
        """No cue that starts before frame ``index`` will be refined any more (None: no cue is open): the
        detector's changes up to the fed frame before it can go."""
        if self.forget is None or not self.fed:
            return
        pos = bisect_left(self.fed, self.fed[-1] if index is None else index)
        back = min(self._verified(pos), pos - self.SHOWN_BACK) if self.PAST_SHOWN else self._verified(pos)
        keep = self.fed[max(0, back - 1)]
        del self.fed[: max(0, back - 1)]
        self.assumed = {i for i in self.assumed if i >= keep}
        self.reused = {i: boxes for i, boxes in self.reused.items() if i >= keep}
        self.shorts = {i: s for i, s in self.shorts.items() if i >= keep}
        self.forget(keep + 1 - CONTEXT)  # a window's events look at the frames just before it too

    def _window(self, lo: int, hi: int) -> list[FrameChange]:
        """The detector's changes at frames (lo, hi] (frames the source lacks have none)."""
        changes = self.changes
        return [changes[j] for j in range(lo + 1, hi + 1) if j in changes]

    def read(self, frame: Frame) -> list[Reading]:
        """The readings for a sampled frame the detector has answered for: any extra frames read between the
        previous fed frame and this one, then this one.

        The rules, in order (the reason is logged as ``why``):

        - ``first``: the first frame is read whole (nothing is known yet of where text may be), and on a frame over
          twice the detector's side by its stroke bands too (``whole``: :func:`flowocr.ocr.area.read_whole`);
        - ``between``: an event that brought something (:meth:`_states_between`) and the next one in its rows at least
          ``MIN_STATE_FRAMES`` later, both since the last fed frame, mean a text state between the samples: its
          middle frame is decoded and read (the rows of every event since the last fed frame that brought
          something, and the last lines' rows), unless the event lies in the last lines' cells and the pixel test
          sees those lines there, unchanged (:meth:`_same_between`); where no event brought something, a band
          emptied and the next event in its rows so (``EMPTIED_BETWEEN``: fed only where something was read);
        - ``between-probed``: such a state whose event lies outside the last lines, where no last line changed (as
          for ``probed``) and OCR's detector alone finds exactly their boxes (:meth:`_probe_vouches`): fed as the
          last reading, without OCR (so a cue's start or end is not sought before that frame);
        - ``blip``, ``blip-end``: a text shown on one or two frames since the last fed frame, outside the last lines
          (:func:`~flowocr.read.events.blips`), where OCR's detector alone finds a box: its frame is read, and the
          first frame without it gets that reading without the blip's new lines (:meth:`_read_blip`);
        - ``short``: a text shown for one to four frames that replaced a text or was replaced in the same place (two
          changes of its cells' grey levels, still between them: :func:`~flowocr.read.events.short_states`; no level
          for the events, no blip) is read on its middle frame when OCR's detector alone finds a box in its cells
          that is not just the last lines' unchanged, and fed when it shows a text the last reading lacks; its start
          and end are the frames of its two changes (:meth:`refine`). Dev seeds: 13 missed 23 -> 15 (exact 0.896 ->
          0.920), 11 22 -> 19, OCR calls per cue +0.05 each, about 0.3 probes per cue more;
        - ``after-short``: the sample after a short state read is read (the state is gone; the pixel test compares
          with it and may not see a thin line go);
        - ``elsewhere``: a text event outside the last reading's boxes: something appeared there that the pixel
          test cannot vouch for (its strokes may not show at all); or new strokes kept there since the last sample,
          too few for a burst, with no event (``KEPT_NEWS``);
        - ``news``: no event, no change the pixel test sees, but as many new strokes outside the last lines' boxes
          as a new static text keeps (``NEWS_PROBE``): probed as ``elsewhere`` is, read unless the probe vouches;
        - ``unseen``: no event, but a last line the stroke map cannot see changed in its box at full size
          (``LOOK_UNSEEN``: :meth:`_line_gone`);
        - ``news-probed``: such strokes, where the probe vouches as for ``probed``: reused, its reading assumed as
          an ``unchanged`` one is (``NEWS_ASSUMED``);
        - ``probed``: such an event, but no last line changed (the pixel test sees none change; no
          event touched one whose strokes it cannot see), and OCR's detector alone finds exactly the last lines' boxes
          in the bands a read would take (:meth:`_probe_vouches`): reused;
        - ``vanished``: the boxes lost their strokes, no new strokes came in them, and every text event since was a
          band emptied (:attr:`~flowocr.read.events.Event.emptied`; a replacement whose strokes do not show keeps
          stable edges): empty, without OCR, but for the last lines seen there unchanged (``PARTLY_VANISHED``);
        - ``refilled``: so, but a probe finds a box on the last lines' rows that is none of theirs
          (``PROBE_VANISHED``): read;
        - ``changed``: the pixel test sees the text of the last reading change in its boxes, or new strokes outside
          them that stayed since the last sample (a fade);
        - ``unvouched``: a text event in the boxes while the pixel test cannot see the text there (too few
          strokes: thin outlines, light text on a light picture);
        - ``unchanged``: the last reading is reused;
        - ``middle``: a read that replaced a text by another where nothing was read between the samples looks
          halfway for a third text no event showed, and reads it there (``MIDDLE_STATE``, :meth:`_middle_state`);
        - ``hidden``: an empty screen called ``unchanged``, probed whole, where OCR's detector finds a box
          (``PROBE_EMPTY``: :meth:`_hidden_text`; not again while the picture holds still): read whole.

        A line the reduced stroke map sees change, or cannot see where a text event touched it, is looked at again
        in its box at full size with levels of its own (``LOOK_AGAIN``, :meth:`_line_same`): when its strokes there
        stayed, it counts as seen and unchanged (for ``changed``, ``unvouched``, the probe's refusals and a state
        between samples alike).

        Every read of a sample or of a state between samples (not the first frame's, a blip's or a short state's)
        is a probe first (``READ_NEW_ONLY``, :meth:`_read_new`): the last lines whose boxes it finds, seen unchanged
        at full size, keep their reading, and OCR recognises only the other boxes; where there are none (the text
        vanished, or only a picture moved), nothing is recognised and the reading is fed as reused. A last line the
        probe finds only in part, or not at all, keeps its reading too where it is seen unchanged at full size
        (``KEEP_SHRUNK``, ``KEEP_UNFOUND``: OCR's detector cuts a line short or misses it over a busy picture).
        """
        if frame.index <= self.after:
            return []
        self.probe_found, self.keep = -1, None
        self.looked, self._looks, self._probes = [], {}, {}
        tools = self.tools
        out: list[Reading] = []
        if self.ref is None and self.ref_index is not None:
            self.ref_frame = tools.fetch(self.ref_index)
            self.ref = tools.strokes(self.ref_frame)
        now = tools.strokes(frame)
        previous = self.fed[-1] if self.fed else None
        if previous is None:
            self._refer(now, frame)
            self.previous_map = now
            if self.PROBE_FIRST and tools.probe is not None and tools.probe(frame.image, now, whole=True) == ():
                out.append(self._fed(frame.index, frame.pts, (), True, "first", now))  # no box: nothing to recognise
                return out
            out.append(self._fed(frame.index, frame.pts, tools.ocr(frame.image, now, whole=True), False, "first", now))
            return out
        found = self._events(previous, frame.index)
        self.change_points += len(found)
        extras: list[tuple[int, object]] = list(self._states_between(found))
        if self.BLIPS:
            extras += [(b.index, b) for b in self._blips(previous, frame.index)][: self.MAX_BLIPS]
        if self.SHORTS:
            states = self._shorts(previous, frame.index)
            if self.BRIEF_STATES:
                states += [s for s in self._brief(found) if all(s.end <= t.index or t.end <= s.index for t in states)]
            shorts = [(_middle(s), s) for s in sorted(states, key=lambda s: s.index) if _middle(s) < frame.index]
            # not where a state between samples is read (a blip there is tried first, and refuses the last lines'
            # cells, where a short state often lies)
            between = [m for m, a in extras if not isinstance(a, Blip)]
            shorts = [(m, s) for m, s in shorts if all(abs(m - e) > self.MIN_STATE_FRAMES for e in between)]
            extras += shorts[: self.MAX_SHORTS]
        for mid, a in sorted(extras, key=lambda x: x[0]):
            if self.fed and mid <= self.fed[-1]:
                continue  # inside a blip just read
            extra = tools.fetch(mid)
            if extra is None:
                continue
            strokes = tools.strokes(extra)
            spans = [(line.bounds[1], line.bounds[3]) for line in self.last_lines]
            if isinstance(a, Blip):
                out += self._read_blip(a, extra, strokes, spans, before=frame.index)
                continue
            if isinstance(a, Short):
                out += self._read_short(a, mid, extra, strokes, spans)
                continue
            # the pixel test of the state against the last reading, once for both checks below
            known = bool(self.last_lines) and self.ref is not None
            evidence = measure(strokes, self.ref, self.last_lines, tools.origin) if known else None
            if evidence is not None and self._same_between(evidence, a, extra):
                continue
            # the rows of what the events brought (a state after a band emptied: what that band kept)
            brought = np.logical_or.reduce([e.cells for e in found if not e.emptied] or [a.cells])
            rows = self.cells.rows(brought, grow=1)
            if self.PROBE_BETWEEN and evidence is not None:
                if self._probe_vouches(extra, strokes, evidence, self._unvouched(evidence, found, extra), rows, spans):
                    # still the last reading there: fed as such, so a cue's start or end is not sought before it
                    out.append(self._fed(mid, tools.index.pts_of(mid), self.last_lines, True, "between-probed"))
                    continue
            self.extra_frames += 1
            earlier = [e for e in found if e.index < a.index]  # the events before the state's own
            before = self.ref, self.ref_index, self.ref_frame, self.blanks
            lines, read, middle = self._read_looking_halfway(
                extra, strokes, evidence, rows, spans, earlier, look=self.MIDDLE_BETWEEN and all(r.reused for r in out))
            if a.emptied and not lines and not middle:  # nothing was left where the band emptied: no state of its own
                self.ref, self.ref_index, self.ref_frame, self.blanks = before
                continue
            out += middle
            out.append(self._fed(mid, tools.index.pts_of(mid), lines, not read, "between"))
        peaks = [[e.index, round(e.strength), e.appeared, e.vanished, round(e.level_before), round(e.level_after)]
                 for e in found]  # fmt: skip
        previous_map = self.previous_map if previous != self.ref_index else None
        evidence = measure(now, self.ref, self.last_lines, tools.origin, previous_map)
        self.previous_map = now
        inside = self._line_cells()
        elsewhere = [e for e in found if (e.cells & ~inside).any()]
        test = self.test
        # An event in the cells of a line the pixel test cannot see (too few strokes) is not vouched for.
        unvouched = self._unvouched(evidence, found, frame)
        ended = self.shorts.get(self.fed[-1]) if self.fed[-1] > previous else None  # read just now
        if ended is not None and ended.end <= frame.index:
            why = "after-short"  # the short state is gone: what came after it is not the pixel test's to vouch for
        elif elsewhere or (self.KEPT_NEWS and test.kept(evidence, least=test.kept_probe)):
            why = "elsewhere"
        elif test.vanished(evidence, news=False) and all(e.emptied for e in found):
            why = "vanished"
        elif self._changed(evidence, frame):
            why = "changed"
        elif unvouched:
            why = "unvouched"
        elif self.NEWS_PROBE and test.unheralded(evidence):
            why = "news"
        elif self.LOOK_UNSEEN and any(not test.sees_line(evidence, k) and self._line_gone(line, frame)
                                      for k, line in enumerate(self.last_lines)):  # fmt: skip
            why = "unseen"
        else:
            why = "unchanged"
        # Read where strokes are, where the detector saw text change, and where the last lines were (a line whose
        # strokes do not show would be lost from a reading that skips its rows). Cell rows are coarse: grown by a
        # cell (a line's edge in the next one), and a part of them left out of the stroke bands counts if a cell
        # tall (less is the slop around a line whose strokes show).
        changed_cells = [e.cells for e in found] + ([ended.cells] if ended is not None else [])
        rows = self.cells.rows(np.logical_or.reduce(changed_cells), grow=1) if changed_cells else []
        spans = [(line.bounds[1], line.bounds[3]) for line in self.last_lines]
        if why in ("elsewhere", "news") and self._probe_vouches(frame, now, evidence, unvouched, rows, spans):
            why = "news-probed" if why == "news" and self.NEWS_ASSUMED else "probed"
        if why == "unchanged" and not self.last_lines and self.PROBE_EMPTY and tools.probe is not None:
            hidden = self._hidden_text(frame, now, previous)
            if hidden is not None:
                out.append(self._fed(frame.index, frame.pts, hidden, False, "hidden", now, evidence, peaks))
                return out
        if why in ("unchanged", "probed", "news-probed"):
            out.append(self._fed(frame.index, frame.pts, self.last_lines, True, why, now, evidence, peaks))
            return out
        if why == "vanished" and self.PROBE_VANISHED and self._refilled(frame, now, rows, spans):
            why = "refilled"
        if why == "vanished":  # the text is gone, nothing replaced it: empty (but for lines that stayed), no OCR
            stayed = self._stayed(evidence, frame) if self.PARTLY_VANISHED else ()
            self._refer(now, frame)
            out.append(self._fed(frame.index, frame.pts, stayed, True, why, now, evidence, peaks))
            return out
        lines, read, middle = self._read_looking_halfway(
            frame, now, evidence, rows, spans, found, look=self.MIDDLE_STATE and all(r.reused for r in out))
        out += middle
        out.append(self._fed(frame.index, frame.pts, lines, not read, why, now, evidence, peaks))
        return out

    def _read_looking_halfway(self, frame: Frame, strokes: Strokes | None, evidence, rows, spans, found: list, *,
                              look: bool) -> tuple[Lines, bool, list[Reading]]:  # fmt: skip
        """:meth:`_read_new` of ``frame``, and where ``look`` and it recognised something, the text state halfway
        between the last fed frame and it that none of the events ``found`` showed (:meth:`_middle_state`, against
        the reading and reference from before this read), to be fed before it."""
        before, ref_frame, ref_index = self.last_lines, self.ref_frame, self.ref_index
        lines, read = self._read_new(frame, strokes, evidence, rows, spans)
        if not (look and read):
            return lines, read, []
        return lines, read, self._middle_state(frame, found, before, lines, ref_frame, ref_index, rows, spans)

    def _middle_state(self, frame: Frame, found: list, before: Lines, lines: Lines, ref: Frame | None,
                      ref_index: int | None, rows, spans) -> list[Reading]:  # fmt: skip
        """A text state between the last fed frame and ``frame`` that no event showed (``MIDDLE_STATE``): where the
        read of ``frame`` replaced a text (``before``, read on ``ref``) by another (``lines``), the frame halfway is
        looked at; where neither the lines that went (against ``ref``) nor those that came (against ``frame``) are
        seen there unchanged at full size, and a probe there finds neither's boxes, it is read (fed before
        ``frame``, with the reference the pixel test had before it)."""
        from flowocr.cues.text import similarity, text_key
        from flowocr.ocr.types import box_intersection

        tools = self.tools
        keys_before, keys_now = {text_key(x.text) for x in before}, {text_key(x.text) for x in lines}
        went = [line for line in before if text_key(line.text) not in keys_now]
        came = [line for line in lines if text_key(line.text) not in keys_before]
        lo = self.fed[-1]
        since = [e.index for e in found if lo < e.index < frame.index - 1]
        mid = since[-1] + 1 if since else (lo + frame.index) // 2
        if not went or not came or ref is None or tools.crop is None or min(mid - lo, frame.index - mid) < 1:
            return []
        if similarity("\n".join(x.text for x in went), "\n".join(x.text for x in came)) >= self.ALIKE:
            return []  # no text replaced by another (a misreading read again right is no new text)
        extra = tools.fetch(mid)
        if extra is None:
            return []
        for old, on in [(line, ref) for line in went] + [(line, frame) for line in came]:
            look = self._compare(on, extra, old.bounds)
            if look is None or look.strokes < self.test.SEES_MIN or self.test.line_same(look):
                return []  # the text before, or the one after, shows there (or the look cannot tell)
        strokes = tools.strokes(extra)
        slop = self.cells.cell_height
        boxes = None if tools.probe is None else self._probe(extra, strokes, rows, spans)
        if boxes is not None:
            there = [b for b in boxes if any(box_intersection(b, x.bounds) > 0 for x in went + came)]
            if (not there or same_boxes(there, [x.bounds for x in came], self.PROBE_IOU)
                    or same_boxes(there, [x.bounds for x in went], self.PROBE_IOU)):  # fmt: skip
                return []  # nothing there, or the boxes of the text before or after
        self.extra_frames += 1
        seen = tools.ocr(extra.image, strokes, rows=rows, lines=spans, slop=slop)
        if not {text_key(x.text) for x in seen} - keys_before - keys_now:
            return []  # the text before or after after all: no third one (not fed: its cue is the samples')
        return [replace(self._fed(mid, tools.index.pts_of(mid), seen, False, "middle"), ref_index=ref_index)]

    def _read_new(self, frame: Frame, strokes: Strokes | None, evidence, rows, spans) -> tuple[Lines, bool]:
        """Read ``frame`` (its stroke map ``strokes``, compared with the reference in ``evidence``) in the bands of
        ``rows`` and the last lines' ``spans``, and make it the reference: the reading, and whether OCR recognised
        anything. With ``READ_NEW_ONLY``, a probe first: the last lines whose box it finds and that are seen unchanged
        (:meth:`_kept_lines`) keep their reading, and boxes recognised to nothing on the reference frame found there
        again unchanged (``KEEP_BLANKS``) stay nothing; only the other boxes are recognised, and none when there are
        none."""
        tools, slop = self.tools, self.cells.cell_height
        kept: Lines = ()
        blanks: list = []
        boxes = None
        if self.READ_NEW_ONLY and tools.probe is not None:
            boxes = self._probe(frame, strokes, rows, spans)
            if boxes is not None:
                kept, rest = self._kept_lines(boxes, evidence, frame)
                blanks = self._blanks_found(rest, frame)
                rest = [b for b in rest if b not in blanks]
                if not rest:
                    self._refer(strokes, frame)
                    self.blanks = (frame.index, tuple(blanks))
                    return kept, False
        self._refer(strokes, frame)
        lines = tools.ocr(frame.image, strokes, rows=rows, lines=spans, slop=slop, known=kept)
        if kept and self.KEEP_PARTS:  # the engine gives a known line for its own box; a part of it read is dropped
            from flowocr.ocr.types import box_iou

            lines = tuple(line for line in lines if not self._on_kept(line.bounds, kept) or any(
                line.text == k.text and box_iou(line.bounds, k.bounds) >= self.PROBE_IOU for k in kept))  # fmt: skip
            # a line kept where the probe found it only in part or not at all (KEEP_SHRUNK, KEEP_UNFOUND) is no box the
            # engine knows as that line: added
            lines += tuple(k for k in kept if k not in lines)
        if boxes is not None:  # the probe's boxes that no line read came from, the blanks found again among them
            new = _read_to_nothing(boxes, lines)
            self.blanks = (frame.index, tuple(blanks) + tuple(b for b in new if b not in blanks))
        return lines, True

    def _blanks_found(self, rest: list, frame: Frame, *, looked: bool = True) -> list:
        """The boxes of ``rest`` that are boxes the read of the reference frame recognised to nothing (``blanks``),
        found again (``PROBE_IOU``, grown by no more than ``KEEP_GROWN``) and, where ``looked``, seen unchanged at
        full size."""
        from flowocr.ocr.types import box_iou, outgrows

        ref, known = self.blanks
        if not self.KEEP_BLANKS or ref != self.ref_index or not known:
            return []
        out = []
        for box in rest:
            blank = next((k for k in known if box_iou(box, k) >= self.PROBE_IOU), None)
            if blank is None or outgrows(box, blank, self.KEEP_GROWN):
                continue
            if not looked:
                out.append(box)
                continue
            look = None if self.ref_frame is None or self.tools.crop is None else self._compare(self.ref_frame, frame,
                                                                                                   blank)  # fmt: skip
            if look is not None and self.test.line_kept(look):  # no reading to right: no KEPT_SCORE bar
                out.append(box)
        return out

    def _probe(self, frame: Frame, strokes: Strokes | None, rows, spans) -> tuple | None:
        """The boxes OCR's detector alone finds in the bands a read of ``frame`` with these arguments takes (probed
        once per fed frame and arguments)."""
        key = (frame.index, tuple(rows), tuple(spans))
        if key not in self._probes:
            self._probes[key] = self.tools.probe(frame.image, strokes, rows=rows, lines=spans,
                                                 slop=self.cells.cell_height)  # fmt: skip
        return self._probes[key]

    def _kept_lines(self, boxes, evidence, frame: Frame) -> tuple[Lines, list]:
        """The last lines that keep their reading on ``frame``, and the probe's ``boxes`` left to recognise: a last
        line read sure enough (``PROBE_MIN_SCORE``) on a frame read by its bands, whose box one of ``boxes`` is
        (``PROBE_IOU``), seen unchanged at full size (:meth:`_line_same`); none where a last line found there is
        not so, or a box left touches a last line's box, or a last line without its box is touched by one (a line
        read in two pieces, 'も' and 'う遅いよ。', found as one box that is mostly the second's): the lines of a text
        change together, and a line replaced by one of its length can look the same (dev seed 11: '走吧。' replaced
        by '当然。' under a changed English line, 32 of 176 stroke pixels moved at full size)."""
        refused, kept, rest = self._matched(boxes, evidence, frame)
        self.keep = {"boxes": len(boxes), "kept": 0 if refused else len(kept), "refused": refused}  # for the log
        if refused is not None:
            return (), list(boxes)
        return tuple(kept), rest

    def _matched(self, boxes, evidence, frame: Frame) -> tuple[str | None, list, list]:
        """:meth:`_kept_lines`' matching of the last lines to ``boxes``: why no line keeps its reading (None where
        they may), the last lines kept and the boxes left."""
        from flowocr.ocr.types import box_intersection, box_iou, outgrows

        rest, kept = list(boxes), []
        if self.last_read in _WHOLE or evidence is None or not evidence.comparable:
            return ("first" if self.last_read in _WHOLE else "incomparable"), kept, rest
        for line in self.last_lines:
            match = next((b for b in rest if box_iou(b, line.bounds) >= self.PROBE_IOU), None)
            if match is None:
                parts = [b for b in boxes if box_intersection(b, line.bounds) > 0]
                if not self._found_in_part(line, parts, frame):
                    if parts:
                        return "resized", kept, rest  # a box of another size where it was: replaced, or grown over it
                    continue  # gone
                rest = [b for b in rest if b not in parts]
                kept.append(line)
                continue
            if line.score < self.PROBE_MIN_SCORE:
                return "unsure", kept, rest
            if outgrows(match, line.bounds, self.KEEP_GROWN):
                return "grown", kept, rest
            if not self._line_same(line, frame):
                return "changed", kept, rest  # a line changed: the lines of one text change together, all are read
            rest.remove(match)
            kept.append(line)
        if self.KEEP_PARTS:  # the kept lines found again in a band detected twice
            rest = [b for b in rest if not self._on_kept(b, kept)]
        if any(box_intersection(b, line.bounds) > 0 for b in rest for line in self.last_lines):
            return "touched", kept, rest
        return None, kept, rest

    def _found_in_part(self, line: TextLine, parts: list, frame: Frame) -> bool:
        """Whether ``line``, whose box the probe did not find again, is still there: the boxes ``parts`` that touch
        its box (none the same box) each lie on it, reaching past it by no more than ``KEEP_GROWN`` of its height
        (``KEEP_SHRUNK``; none at all: ``KEEP_UNFOUND``), it was read sure enough (``PROBE_MIN_SCORE``) and it is
        seen unchanged at full size (:meth:`_line_same`)."""
        from flowocr.ocr.types import outgrows

        if not (self.KEEP_SHRUNK if parts else self.KEEP_UNFOUND) or line.score < self.PROBE_MIN_SCORE:
            return False
        return all(not outgrows(b, line.bounds, self.KEEP_GROWN) for b in parts) and self._line_same(line, frame)

    def _on_kept(self, box, kept: Lines) -> bool:
        """Whether ``box`` lies on the box of a line of ``kept``, reaching past it by no more than ``KEEP_GROWN`` of
        its height: that line found again, whole or in part (``KEEP_PARTS``)."""
        from flowocr.ocr.types import box_intersection, outgrows

        return any(box_intersection(box, line.bounds) > 0 and not outgrows(box, line.bounds, self.KEEP_GROWN)
                   for line in kept)  # fmt: skip

    def _unvouched(self, evidence, found: list, frame: Frame) -> bool:
        """Whether a text event of ``found`` lies in the cells of a last line the pixel test cannot see on the stroke
        map, and that it cannot vouch for at full size either (``LOOK_AGAIN``: :meth:`_line_same`) on ``frame``."""
        test = self.test
        for k, line in enumerate(self.last_lines):
            if test.sees_line(evidence, k):
                continue
            cells = self.cells.cells([line.bounds])
            if any((e.cells & cells).any() for e in found) and not self._line_same(line, frame):
                return True
        return False

    def _stayed(self, evidence, frame: Frame) -> Lines:
        """The last lines still there, unchanged, on ``frame`` where the text as a whole vanished
        (``PARTLY_VANISHED``): seen unchanged on the stroke map, or at full size (:meth:`_line_same`)."""
        test = self.test
        return tuple(line for k, line in enumerate(self.last_lines)
                     if test.line_stays(evidence, k) or self._line_same(line, frame))  # fmt: skip

    def _line_same(self, line: TextLine, frame: Frame) -> bool:
        """Whether ``line``, read on the reference frame, is still there unchanged on ``frame``, by the pixel test
        of its box's full-size grey levels (:func:`~flowocr.read.pixel.line_change`): it held still, or, read surely
        enough (``KEPT_SCORE``), its strokes stayed while others came beside them (``ChangeTest.line_kept``)."""
        look = self._look(line, frame)
        return look is not None and self._shows(line, look)

    def _shows(self, line: TextLine, look: LineLook) -> bool:
        """Whether ``look`` (at ``line``'s box) says the line still shows its text (:meth:`_line_same`)."""
        test = self.test
        return test.line_same(look) or (line.score >= self.KEPT_SCORE and test.line_kept(look))

    def _line_gone(self, line: TextLine, frame: Frame) -> bool:
        """Whether ``line``, read on the reference frame, is seen at full size there and changed on ``frame``
        (:meth:`_line_same`'s look; a box too faint to see at full size either is not)."""
        look = self._look(line, frame)
        return look is not None and look.strokes >= self.test.SEES_MIN and not self._shows(line, look)

    def _look(self, line: TextLine, frame: Frame) -> LineLook | None:
        """The second look at ``line``'s box on ``frame`` against the reference frame (:meth:`_compare`); None
        without one (``LOOK_AGAIN`` off, no crops, no reference frame)."""
        if not self.LOOK_AGAIN or self.tools.crop is None or self.ref_frame is None:
            return None
        return self._compare(self.ref_frame, frame, line.bounds)

    def _compare(self, ref: Frame, frame: Frame, bounds) -> LineLook | None:
        """A box (``bounds``, grown by :func:`_look_box`) at full size on ``ref`` and on ``frame``: the stroke pixels
        of ``ref``'s and how many appeared and vanished on ``frame`` (:func:`~flowocr.read.pixel.line_change`); None
        where either crop is missing. Each pair of frames and box is looked at once per fed frame."""
        from flowocr.read.pixel import line_change

        box = _look_box(bounds)
        key = (ref.index, frame.index, box)
        if key not in self._looks:
            a, b = self.tools.crop(ref, box), self.tools.crop(frame, box)
            self._looks[key] = None if a is None or b is None else line_change(a, b)
            if self._looks[key] is not None:
                self.looked.append(list(self._looks[key]))
        return self._looks[key]

    def _hidden_text(self, frame: Frame, now: Strokes | None, previous: int) -> Lines | None:
        """On an empty screen the pixel test calls unchanged, a text its stroke map cannot see (``PROBE_EMPTY``): the
        whole area probed, and read whole where OCR's detector finds a box that is not one the last read recognised
        to nothing (``KEEP_BLANKS``, by place alone); the reading, or None where nothing was found. Not probed again
        while the picture held still since the last such probe on the empty screen fed last (``previous``) or
        before it (:meth:`_still_since_probe`)."""
        tools = self.tools
        if self._still_since_probe(previous, frame.index):
            self.probe_found = "still"
            return None
        self.probe_found = -1
        boxes = tools.probe(frame.image, now, whole=True)
        if boxes is None:
            return None  # an engine that cannot detect alone: no such look
        self.probe_found = len(boxes)
        boxes = [b for b in boxes if b not in self._blanks_found(list(boxes), frame, looked=False)]
        if not boxes:
            self._empty_probed = (frame.index, None)
            return None
        self._refer(now, frame)
        lines = tools.ocr(frame.image, now, whole=True)
        self.blanks = (frame.index, tuple(_read_to_nothing(boxes, lines)))  # not read again while they hold still
        return lines

    def _still_since_probe(self, previous: int, index: int) -> bool:
        """Whether the empty screen fed last (``previous``) was probed whole, or passed as still since such a probe,
        and no cell's grey levels moved by ``EMPTY_MOVED`` (summed over the frames since) up to frame ``index``
        (the picture held still: a text that came would have moved some); where so, ``index`` passes too."""
        from flowocr.aux.detector import DIFF

        probed = self._empty_probed
        if not self.EMPTY_MOVED or probed is None or probed[0] != previous:
            return False
        window = self._window(previous, index)
        if len(window) != index - previous:
            return False  # frames without the detector's word: not known to be still
        moved = stack(window)[:, DIFF].sum(axis=0)
        if probed[1] is not None:
            if probed[1].shape != moved.shape:
                return False
            moved = moved + probed[1]
        if moved.size == 0 or moved.max() >= self.EMPTY_MOVED:
            return False
        self._empty_probed = (index, moved)
        return True

    def _refer(self, strokes: Strokes | None, frame: Frame) -> None:
        """The pixel test compares with ``frame`` (its stroke map ``strokes``) from now on."""
        self.ref, self.ref_index, self.ref_frame = strokes, frame.index, frame

    def _probe_vouches(self, frame: Frame, now: Strokes, evidence, unvouched: bool, rows, spans) -> bool:
        """Whether a text event outside the last lines brought nothing new, by the pixel test and a probe: none of
        the last lines changed in its box (no event touched one the test cannot see, ``unvouched``, and
        ``PROBE_UNSEEN``), each was read sure enough (``PROBE_MIN_SCORE``) on a frame
        read by its bands (not the first frame's whole area), and OCR's detector finds in the bands a read would take
        exactly the last lines' boxes, each once (:func:`same_boxes`). A replacement in a line's own box is the pixel
        test's to see; new text elsewhere, even text whose strokes do not show, is a box the detector finds."""
        tools, test = self.tools, self.test
        if not self.PROBE or tools.probe is None or evidence is None:
            return False
        refused = (
            "unvouched" if unvouched
            else "first" if self.last_read in _WHOLE  # a reading of the whole area, coarser than of its bands
            else "unsure" if any(line.score < self.PROBE_MIN_SCORE for line in self.last_lines)  # read it again
            else "unseen" if not self.PROBE_UNSEEN and not all(test.sees_line(evidence, k)
                                                                for k in range(len(self.last_lines)))
            else "changed" if self._changed_inside(evidence, frame)  # a burst outside the boxes is the probe's
            else None
        )  # fmt: skip
        if refused is not None:
            self.probe_found = refused  # logged with the decision
            return False
        boxes = self._probe(frame, now, rows, spans)
        same = boxes is not None and same_boxes(boxes, [line.bounds for line in self.last_lines], self.PROBE_IOU)
        self.probe_found = None if boxes is None else len(boxes)  # logged with the decision
        return same

    def _refilled(self, frame: Frame, now: Strokes, rows, spans) -> bool:
        """Whether a probe finds a box on the rows of the last lines, which the pixel test saw vanish
        (``PROBE_VANISHED``): a text the stroke map cannot see (light on a light picture) replaced them."""
        from flowocr.ocr.types import box_iou

        if self.tools.probe is None:
            return False
        boxes = self._probe(frame, now, rows, spans)
        self.probe_found = None if boxes is None else len(boxes)  # logged with the decision
        if boxes is None:
            return False
        lines = [line.bounds for line in self.last_lines]
        new = [b for b in boxes if not any(box_iou(b, line) >= self.PROBE_IOU for line in lines)]  # not one that stayed
        return any(min(b[3], y1) - max(b[1], y0) > 0.5 * (b[3] - b[1]) for b in new for y0, y1 in spans)

    def _line_cells(self) -> np.ndarray:
        """The cells of the last lines, with a cell's worth of margin: cells are coarse, and a line's change spills
        a little out of its box."""
        return self.cells.cells((line.bounds for line in self.last_lines), margin=1)

    def _same_between(self, evidence, a, frame: Frame) -> bool:
        """Whether a text state between two samples, which began with event ``a``, still shows the last reading,
        by the rule a sample follows: ``a`` lies in the last lines' cells, the pixel test (``evidence``, of the state
        against the last reading) sees every line and no change."""
        if (a.cells & ~self._line_cells()).any():
            return False
        test = self.test
        if not all(test.sees_line(evidence, k) for k in range(len(self.last_lines))):
            return False
        return not self._changed(evidence, frame)

    def _changed(self, evidence, frame: Frame) -> bool:
        """The pixel test's ``changed`` (news outside the boxes only where kept: no event counts), with the second
        look inside the boxes (:meth:`_changed_inside`)."""
        news = self.test.news(evidence, events_outside=False)
        return self._changed_inside(evidence, frame) or self.test.burst(evidence, news=news)

    def _changed_inside(self, evidence, frame: Frame) -> bool:
        """Whether the pixel test sees the last lines change in their boxes (:meth:`ChangeTest.changed_inside`), and
        a second look at each of them at full size (``LOOK_AGAIN``: :meth:`_line_same`) on ``frame`` does not see all
        of them unchanged: a moving picture moves stroke pixels of the reduced map in a line's box, its own strokes
        at full size stay."""
        if not self.test.changed_inside(evidence):
            return False
        if not evidence.comparable or not self.last_lines:
            return True
        return not all(self._line_same(line, frame) for line in self.last_lines)

    def _read_blip(self, blip: Blip, extra: Frame, strokes: Strokes, spans, *, before: int) -> list[Reading]:
        """The readings of a text shown on one or two frames apart from the last lines: its frame read in its rows
        (and the last lines'), then, on the first frame without it, that reading without the blip's new lines (the
        blip left the picture as it was). None when the blip lies in the last lines' cells, or the reading found no
        new line in its cells (a picture's strokes that came and went), or OCR's detector alone found no box
        there."""
        if (blip.cells & self._line_cells()).any():
            return []
        tools = self.tools
        rows, slop = self.cells.rows(blip.cells, grow=1), self.cells.cell_height
        if tools.probe is not None:  # OCR's detector alone first: most blips are a picture's
            boxes = tools.probe(extra.image, strokes, rows=rows, lines=spans, slop=slop)
            if boxes is not None and not self._touch(boxes, blip.cells):
                return []
        lines = tools.ocr(extra.image, strokes, rows=rows, lines=spans, slop=slop)
        known = {ln.text for ln in self.last_lines}
        new = [ln.text not in known and (self.cells.cells([ln.bounds]) & blip.cells).any() for ln in lines]
        if not any(new):
            return []
        self.extra_frames += 1
        ref, ref_index, ref_frame = self.ref, self.ref_index, self.ref_frame
        self._refer(strokes, extra)
        out = [self._fed(blip.index, tools.index.pts_of(blip.index), lines, False, "blip")]
        if blip.end < before:  # the picture as it was before the blip: its reference, the reading without it
            self.ref, self.ref_index, self.ref_frame = ref, ref_index, ref_frame
            rest = tuple(ln for ln, is_new in zip(lines, new) if not is_new)
            out.append(self._fed(blip.end, tools.index.pts_of(blip.end), rest, True, "blip-end"))
        return out

    def _read_short(self, short: Short, mid: int, extra: Frame, strokes: Strokes, spans) -> list[Reading]:
        """The reading of a short state, read on frame ``mid`` in its rows (and the last lines'); none when it found
        no text that the last reading lacks (a picture's change, or the last text still there)."""
        tools = self.tools
        rows, slop = self.cells.rows(short.cells, grow=1), self.cells.cell_height
        if tools.probe is not None:  # OCR's detector alone first: most short states are a picture's
            boxes = tools.probe(extra.image, strokes, rows=rows, lines=spans, slop=slop)
            if boxes is not None and not self._touch(boxes, short.cells):
                return []
            if boxes is not None and self.last_lines and self.ref is not None:
                # the last lines' boxes, and the pixel test sees no change inside them: the last text still there
                evidence = measure(strokes, self.ref, self.last_lines, tools.origin)
                last = [line.bounds for line in self.last_lines]
                if same_boxes(boxes, last, self.PROBE_IOU) and not self.test.changed_inside(evidence):
                    return []
        lines = tools.ocr(extra.image, strokes, rows=rows, lines=spans, slop=slop)
        known = {ln.text for ln in self.last_lines}
        if all(ln.text in known for ln in lines):
            return []
        self.extra_frames += 1
        self._refer(strokes, extra)
        self.shorts[mid] = short
        return [self._fed(mid, tools.index.pts_of(mid), lines, False, "short")]

    def _touch(self, boxes, cells: np.ndarray) -> bool:
        """Whether any of ``boxes`` (x0 y0 x1 y1, frame pixels; a probe's) lies in ``cells``."""
        return any((self.cells.cells([box]) & cells).any() for box in boxes)

    def _shorts(self, lo: int, hi: int) -> list[Short]:
        """Short text states that begin in frames (lo, hi] (:func:`~flowocr.read.events.short_states`)."""
        from flowocr.read.events import short_states

        return short_states(self._window(lo, hi), **self._context(lo, hi))

    def _brief(self, found: list) -> list[Short]:
        """Short states that the events ``found`` bound (``BRIEF_STATES``): a band emptied, and fewer than
        ``MIN_STATE_FRAMES`` frames later an event in its rows brought something, read as a short state is (its
        cells those of the two events)."""
        out: list[Short] = []
        for k, a in enumerate(found):
            if not a.emptied:
                continue
            b = _next_in_rows(found, k)
            if b is not None and not b.emptied and 0 < b.index - a.index < self.MIN_STATE_FRAMES:
                out.append(Short(a.index, b.index, a.cells | b.cells))
        return out

    def _blips(self, lo: int, hi: int) -> list:
        """Texts shown on one or two frames of (lo, hi] (:func:`~flowocr.read.events.blips`)."""
        from flowocr.read.events import blips

        return blips(self._window(lo, hi), **self._context(lo, hi))

    def _states_between(self, found: list) -> list[tuple[int, object]]:
        """The text states inside a window worth reading: after each event that brought something (not a band
        emptied), up to the next event in its rows, if at least ``MIN_STATE_FRAMES`` long; each read at its middle
        (an event may be placed a frame early or late, a fade takes frames), at most ``MAX_BETWEEN`` a window.
        Where there is none, the states after a band emptied, alike (``EMPTIED_BETWEEN``)."""
        out = self._states_after(found, emptied=False)
        if not out and self.EMPTIED_BETWEEN:
            out = self._states_after(found, emptied=True)
        return sorted(out, key=lambda x: x[0])[: self.MAX_BETWEEN]

    def _states_after(self, found: list, *, emptied: bool) -> list[tuple[int, object]]:
        """:meth:`_states_between` after the events ``found`` that emptied their band, or after the others."""
        out: list[tuple[int, object]] = []
        for k, a in enumerate(found):
            if a.emptied != emptied:
                continue
            b = _next_in_rows(found, k)
            if b is None or b.index - a.index < self.MIN_STATE_FRAMES:
                continue
            mid = (a.index + b.index) // 2
            if any(abs(mid - m) <= self.MIN_STATE_FRAMES for m, _ in out):
                continue
            out.append((mid, a))
        return out

    def finish(self) -> list[Reading]:
        return []

    def _fed(self, index: int, pts: int, lines: Lines, reused: bool, why: str, now=None, evidence=None,
             peaks=None) -> Reading:  # fmt: skip
        self.fed.append(index)
        if why in ("unchanged", "news-probed") and lines:
            self.assumed.add(index)
        if reused:
            self.reused[index] = tuple(line.bounds for line in lines)
        self.last_lines = lines
        if not reused:
            self.last_read = why
        if self.log is not None:
            self.log({"index": index, "why": why, "reused": reused, "strokes": None if now is None else now.count,
                      "pixel": None if evidence is None else evidence.to_json(), "events": peaks,
                      "probe": self.probe_found, "looked": self.looked, "keep": self.keep,
                      "texts": [line.text for line in lines]})  # fmt: skip
        self.keep = None
        return Reading(index, pts, lines, reused, why, self.ref_index)

    def refine(self, cue: Cue) -> Cue:
        """Frame-exact start and end from the detector's changes in the cue's cells around its first and last
        readings: the strongest text event there before its first reading that brought something (after its last
        reading, the strongest that emptied its band or replaced it, for its end); without one, the burst of
        grey-level change in its cells
        (:func:`~flowocr.read.events.appeared_at`, :func:`~flowocr.read.events.vanished_at`). Once one of them says
        the text changed there, the frame is where the stable edges of the cue's own cells change level
        (:func:`~flowocr.read.events.stable_step_at`), or where it was half opaque when it faded there
        (:func:`~flowocr.read.events.fade_ramp`, then by looks at full size: :meth:`_fade_looked`); one placed in
        doubt is checked by looks (:meth:`_checked`). Where nothing says it changed between the fed frames around its
        first (last) reading, and the one before was a reading the pixel test alone vouched for, it is sought back to
        the last fed frame looked at (:meth:`_verified`); where nothing says so at all, by looks at its box at full
        size on the frames between (:meth:`_sought`). A cue first (last) read on a short state starts (ends) on
        that state's own change (:attr:`shorts`)."""
        index = self.tools.index
        region = self.cells.cells([cue.box])
        start_index, end_index = cue.start_index, cue.end_index
        pos = bisect_left(self.fed, start_index)
        short = self.shorts.get(start_index)
        if short is not None:
            start_index = short.index
        elif pos > 0 and (shown := self._shown_before(pos, cue)) < pos:
            # it shows already on the fed frames before its first reading: it came between the last that does not
            # show it and the first that does
            lo, hi = self.fed[shown - 1], self.fed[shown]
            found = self._appeared(lo, hi, region)
            if found is not None:
                start_index = self._checked(lo, hi, found, cue.box, up=True)
            else:
                start_index = self._sought(lo, hi, cue.box, up=True) or hi
        elif pos > 0:
            for back in dict.fromkeys((pos, self._verified(pos))):
                found = self._appeared(self.fed[back - 1], start_index, region)
                if found is not None:
                    start_index = self._checked(self.fed[back - 1], start_index, found, cue.box, up=True)
                    break
            else:  # nothing there: looks, from the last fed frame before it that was looked at
                lo = self.fed[self._verified(pos) - 1]
                start_index = self._sought(lo, start_index, cue.box, up=True) or start_index
        pos = bisect_left(self.fed, end_index)
        short = self.shorts.get(self.fed[pos - 1]) if pos > 0 else None
        if short is not None:
            end_index = short.end
        elif pos > 0:
            # Lasting to the end of the stream, the text may still vanish after the last sample.
            hi = min(end_index, len(index) - 1)
            for back in dict.fromkeys((pos, self._verified(pos, after=cue.start_index))):
                found = self._vanished(self.fed[back - 1], hi, region, last=end_index == len(index))
                if found is not None:
                    # (lasting to the end of the stream, ``end_index`` is no frame: its look cannot tell, kept)
                    end_index = self._checked(self.fed[back - 1], end_index, found, cue.box, up=False)
                    break
            else:
                if end_index < len(index):  # nothing there: looks, from the last fed frame of it that was looked at
                    lo = self.fed[self._verified(pos, after=cue.start_index) - 1]
                    end_index = self._sought(lo, end_index, cue.box, up=False) or end_index
        start = index.seconds(start_index)
        end = index.seconds(end_index) if end_index < len(index) else cue.end
        if end <= start:
            return cue
        return replace(cue, start=start, end=end, start_index=start_index, end_index=end_index)

    def settle(self, cue: Cue) -> Cue | None:
        """A final cue, refined (:meth:`refine`), or None where it is one letter that did not hold still
        (``LONE_STILL``, :meth:`_holds_still`)."""
        refined = self.refine(cue)
        if self.LONE_STILL and len(cue.text.strip()) == 1 and not self._holds_still(cue, refined):
            self.unsteady += 1
            if self.log is not None:
                self.log({"index": refined.start_index, "end": refined.end_index, "dropped": "unsteady",
                          "text": cue.text})  # fmt: skip
            return None
        return refined

    def _holds_still(self, cue: Cue, refined: Cue) -> bool:
        """Whether the one letter of ``cue`` (as the builder closed it: from its first reading to the first fed frame
        without it), seen at full size on the frame it was read, shows unchanged on another frame of it: the last
        fed frame that carried it, else the middle of the frames after its reading (before it: ``refined`` is where
        it shows), by the standard of a line the stroke map sees (:meth:`ChangeTest.line_same`). A picture's object
        read as a letter moves, or is too faint to tell; a subtitle's letter stays. One shown on a single frame
        cannot hold still."""
        tools = self.tools
        if tools.crop is None:
            return True
        read = cue.start_index
        pos = bisect_left(self.fed, cue.end_index)
        last = self.fed[pos - 1] if pos > 0 else read
        if last > read:
            other = last
        elif refined.end_index - 1 > read:
            other = (read + refined.end_index) // 2
        elif refined.start_index < read:
            other = (refined.start_index + read) // 2
        else:
            return False
        a, b = tools.fetch(read), tools.fetch(other)
        look = None if a is None or b is None else self._compare(a, b, cue.box)
        return look is not None and self.test.line_same(look)

    def _sought(self, lo: int, hi: int, box, *, up: bool) -> int | None:
        """Where nothing in the cells of a text with ``box`` says it came (``up``: it shows on fed frame ``hi``, not on
        fed frame ``lo``) or went (it shows on ``lo``, not on ``hi``): the first frame of (lo, hi] on which, at full
        size, its box shows it as the frame it was read on does (``up``), or no longer does, found by halving
        (``LOOK_BISECT``; :meth:`_compare`); None where the look cannot tell the two fed frames apart."""
        tools = self.tools
        if not self.LOOK_BISECT or tools.crop is None or hi - lo < 2:
            return None
        read, other = (tools.fetch(hi), tools.fetch(lo)) if up else (tools.fetch(lo), tools.fetch(hi))
        self.sought += 2
        if read is None or other is None:
            return None

        def shows(frame) -> bool | None:
            look = None if frame is None else self._compare(read, frame, box)
            return None if look is None else self._held(look) is True  # a box it cannot see does not show it

        if shows(read) is not True or shows(other) is not False:
            return None

        def shows_at(m: int) -> bool | None:
            self.sought += 1
            return shows(tools.fetch(m))

        return _halve(lo, hi, shows_at, up=up)

    def _checked(self, lo: int, hi: int, at: int, box, *, up: bool) -> int:
        """A start (``up``) or end placed at ``at`` by the detector's changes between fed frames ``lo`` and ``hi``,
        checked by looks at full size (``VERIFY_PLACED``) where a burst or a level step placed it
        (``VERIFY_HOW``), else (``VERIFY_DOUBT``) where its event or burst alone placed it or a level step off
        it (``DOUBT_FRAMES``): the text's box on ``at`` and the frame before, against the frame it was read on (``hi``
        for a start, ``lo`` for an end), must show the text on ``at`` and not before (a start), or before and not on
        ``at`` (an end), as :meth:`_sought` sees it; where they do not, it is found by halving over the frames
        between, decoded in one pass (:meth:`_greys`). Kept where the looks cannot tell."""

        if self._how == "fade" and self.LOOK_FADES and self._fade is not None and self.tools.crop is not None:
            return self._fade_looked(self._fade, lo, hi, box, up=up)
        doubt = self._how == "burst" or self._how == "level" and self._doubt
        wanted = self.VERIFY_PLACED and self._how in self.VERIFY_HOW or self.VERIFY_DOUBT and doubt
        if not wanted or self.tools.crop is None:
            return at
        if not lo < at <= hi:
            return at
        look = _look_box(box)
        read, other = (hi, lo) if up else (lo, hi)
        greys = self._greys([read, other, at - 1, at], look)
        if self.HALF_CHECKS and self._midway(greys, read, other, (at - 1, at)):
            half = self._half_looked(lo, hi, box, up=up, ramp=self.FADE_RAMP)
            if half is not None:
                return half

        def shows(k: int) -> bool | None:
            return self._shows_in(greys, read, k)

        if shows(read) is not True or shows(other) is not False:
            return at  # the looks cannot tell the text from its absence here
        on, before = shows(at), shows(at - 1)
        if None in (on, before) or (on, before) == ((True, False) if up else (False, True)):
            return at  # the looks agree, or cannot tell
        greys.update(self._greys([k for k in range(lo + 1, hi) if k not in greys], look))
        found = _halve(lo, hi, shows, up=up)
        return at if found is None else found

    def _midway(self, greys: dict, read: int, other: int, frames) -> bool:
        """Whether the box of a text read on frame ``read`` and absent from frame ``other`` (their grey levels in
        ``greys``) shows it part of the way on one of ``frames``: its glyphs' contrast against their edges
        (:func:`~flowocr.read.pixel.text_contrast`) ``PART_WAY`` from ``other``'s to ``read``'s (a fade, or a frame
        blended by the codec)."""
        from flowocr.read.pixel import text_contrast, text_masks

        a, b = greys.get(read), greys.get(other)
        if a is None or b is None or a.shape != b.shape:
            return False
        masks = text_masks(a)
        if masks is None:
            return False
        shown, gone = text_contrast(a, masks), text_contrast(b, masks)
        if shown - gone < self.FADE_CONTRAST:
            return False
        seen = [g for g in (greys.get(k) for k in frames) if g is not None and g.shape == a.shape]
        return any(self._part_way(text_contrast(g, masks), gone, shown) for g in seen)

    def _part_way(self, contrast: float, gone: float, shown: float) -> bool:
        """Whether a text's contrast lies ``PART_WAY`` from ``gone`` (hidden) to ``shown``."""
        low, high = self.PART_WAY
        return low < (contrast - gone) / (shown - gone) < high

    def _fade_looked(self, fade: Fade, lo: int, hi: int, box, *, up: bool) -> int:
        """The frame where a text with ``box`` that faded in (``up``) or out over the run of ``fade``, between fed
        frames ``lo`` and ``hi``, was ``FADE_HALF`` opaque, by looks at full size (``LOOK_FADES``,
        :meth:`_half_looked` over the fed frames and the run); ``fade.frame`` where the looks cannot tell."""
        found = self._half_looked(min(lo, fade.first), max(hi, fade.last), box, up=up)
        return fade.frame if found is None else found

    def _half_looked(self, lo: int, hi: int, box, *, up: bool, ramp: int = 0) -> int | None:
        """The first frame on which a text with ``box`` shows at least ``FADE_HALF`` opaque (``up``: it shows after
        frame ``hi`` and not before ``lo``), or less (it shows before ``lo`` and not after ``hi``): its box on the
        frames from ``lo`` to ``hi`` and ``FADE_PAD`` on each side, decoded in one pass; where it shows are the last
        three of them (the first three for an end), where it is hidden the first three (the last three);
        :func:`~flowocr.read.pixel.half_opaque` of their :func:`~flowocr.read.pixel.text_contrast`. None where the
        looks cannot tell (too little contrast, ``FADE_CONTRAST``; more than ``FADE_WRONG`` of the frames disagree),
        or see fewer than ``ramp`` frames ``PART_WAY`` (no fade)."""
        from flowocr.read.pixel import half_opaque, text_contrast, text_masks

        pad = self.FADE_PAD
        greys = self._greys(range(lo - pad, hi + pad + 1), _look_box(box))
        frames = [(k, g) for k, g in sorted(greys.items()) if g is not None]
        if len(frames) < 6 or len({g.shape for _, g in frames}) > 1:
            return None
        shows, hidden = (frames[-3:], frames[:3]) if up else (frames[:3], frames[-3:])
        masks = text_masks(np.median(np.stack([g for _, g in shows]), axis=0))
        if masks is None:
            return None
        contrasts = [(k, text_contrast(g, masks)) for k, g in frames]
        level = dict(contrasts)
        shown = float(np.median([level[k] for k, _ in shows]))
        gone = float(np.median([level[k] for k, _ in hidden]))
        if shown - gone < self.FADE_CONTRAST:
            return None
        if ramp and sum(self._part_way(c, gone, shown) for _, c in contrasts) < ramp:
            return None
        found = half_opaque(contrasts, up=up, half=self.FADE_HALF, shown=shown, hidden=gone)
        if found is None or found[1] > self.FADE_WRONG * len(frames):
            return None
        return found[0]

    def _shown_before(self, pos: int, cue: Cue) -> int:
        """``pos`` (the position in ``fed`` of a cue's first reading) moved back over the fed frames before it that
        reused a reading (no OCR) with no line in the cue's cells, and on which a look at the cue's box at full size
        shows its text (``PAST_SHOWN``: the pixel test or a probe did not see it come), at most ``SHOWN_BACK`` of
        them, up to one on which the look sees it absent; ``pos`` where it meets none such (the look cannot tell
        the text from its place there: a bright still picture's strokes fill its box). Where a line of a reading lies
        in the cue's cells, its look would see that line's place, not the text: no further."""
        if not self.PAST_SHOWN or self.tools.crop is None:
            return pos
        region, look = self.cells.cells([cue.box]), _look_box(cue.box)
        greys: dict = {}
        back = pos
        while back > 1 and pos - back <= self.SHOWN_BACK:
            other = self.fed[back - 1]
            boxes = self.reused.get(other)
            if boxes is None or (boxes and (self.cells.cells(boxes) & region).any()):
                return pos
            greys.update(self._greys([k for k in (cue.start_index, other) if k not in greys], look))
            shows = self._shows_in(greys, cue.start_index, other)
            if shows is False:
                return back
            if shows is None or back == pos - self.SHOWN_BACK:
                return pos
            back -= 1
        return pos

    def _shows_in(self, greys: dict, read: int, other: int) -> bool | None:
        """Whether the grey levels of a text's box on frame ``other`` show it as those on frame ``read``, where it was
        read, do (``greys``: :meth:`_greys`); None where either is missing or the look cannot tell (:meth:`_held`)."""
        from flowocr.read.pixel import line_change

        a, b = greys.get(read), greys.get(other)
        return None if a is None or b is None else self._held(line_change(a, b))

    def _held(self, look: LineLook) -> bool | None:
        """Whether a look at a box (:meth:`_sought`, :meth:`_checked`) shows the text it was read with: under
        ``BISECT_MOVED`` of its stroke pixels moved; None where the box holds too few to see (``SEES_MIN``)."""
        return None if look.strokes < self.test.SEES_MIN else look.moved < self.BISECT_MOVED * look.strokes

    def _greys(self, indices, box) -> dict:
        """The grey levels of ``box`` (x0 y0 x1 y1, frame pixels) on the frames ``indices``, decoded in one pass
        where the tools can (``crops``), else one by one; frame -> levels (None where missing)."""
        tools = self.tools
        wanted = sorted({k for k in indices if k >= 0})
        self.sought += len(wanted)
        if tools.crops is not None:
            return dict(tools.crops(wanted, box))
        out = {}
        for k in wanted:
            frame = tools.fetch(k)
            out[k] = None if frame is None else tools.crop(frame, box)
        return out

    def _appeared(self, lo: int, hi: int, region: np.ndarray) -> int | None:
        """Where a text whose cells are ``region``, first read on frame ``hi``, appeared after fed frame ``lo``
        (:meth:`refine`); None when nothing there says it did."""
        from flowocr.read.events import appeared_at

        mine = [e for e in self._events(lo, hi) if (e.cells & region).any() and not e.emptied]
        strongest = max(mine, key=lambda e: e.strength, default=None)
        found = strongest.index if strongest else appeared_at(self._window(lo, hi), region)
        return self._placed(found, lo, hi, region, up=True)

    def _vanished(self, lo: int, hi: int, region: np.ndarray, *, last: bool) -> int | None:
        """Where a text whose cells are ``region``, last read on fed frame ``lo``, vanished by frame ``hi``
        (:meth:`refine`; ``last``: it lasted to the end of the stream); None when nothing there says it did."""
        from flowocr.read.events import STEP_MIN, vanished_at

        # Its end is a band emptied or a replacement (a dip); a step up there is the next text, after a gap.
        mine = [e for e in self._events(lo, hi) if (e.cells & region).any() and (e.emptied or e.dip >= STEP_MIN)]
        if mine:
            found = max(mine, key=lambda e: e.strength).index
        elif last:
            found = None  # no later sample says it ended: only a text event there counts
        else:
            found = vanished_at(self._window(lo, hi), region)
        return self._placed(found, lo, hi, region, up=False)

    def _placed(self, found: int | None, lo: int, hi: int, region: np.ndarray, *, up: bool) -> int | None:
        """Once ``found`` (an event or a burst in frames (lo, hi]) says a text whose cells are ``region`` appeared
        (``up``) or vanished there: the frame where its stroke pixels all appeared or vanished at once
        (``PLACE_ON_SPIKE``), else where its cells' stable edges change level; or where it was half opaque when it
        faded there."""
        from flowocr.read.events import fade_ramp, stable_step_at, strokes_spike_at

        self._how, self._doubt, self._fade = None, False, None
        if found is None or not self.PLACE_ON_STABLE:
            return found
        window, context = self._window(lo, hi), self._context(lo, hi)
        spike = strokes_spike_at(window, region, up=up) if self.PLACE_ON_SPIKE else None
        if spike is not None:
            level = spike
        elif self.LEVEL_CONTEXT:
            seen = [*window, *context["after"]] if up else [*context["before"], *window]
            level = stable_step_at(seen, region, up=up)
            if level is not None and not lo < level <= hi:
                level = None
        else:
            level = stable_step_at(window, region, up=up)
        # how it was placed, for :meth:`_checked`: all stroke pixels at once, a level step, else the event or burst
        self._how = "spike" if spike is not None else "level" if level is not None else "burst"
        self._doubt = level is not None and abs(level - found) > self.DOUBT_FRAMES
        found = found if level is None else level
        if self.PLACE_FADES:
            fade = fade_ramp(window, region, found, up=up, **context)
            if fade is not None:
                found, self._how, self._fade = fade.frame, "fade", fade
        return found

    def _verified(self, pos: int, *, after: int = -1) -> int:
        """``pos``, a position in ``fed``, moved back over the fed frames before it whose reading was assumed
        (:attr:`assumed`; not past frame ``after``): a cue's start or end is sought after the last fed frame whose
        reading was looked at (OCR, a probe, an emptied screen), not one the pixel test alone vouched for."""
        if not self.PAST_ASSUMED:
            return pos
        while pos > 1 and self.fed[pos - 1] in self.assumed and self.fed[pos - 1] > after:
            pos -= 1
        return pos

    def _context(self, lo: int, hi: int) -> dict:
        """The detector's changes of ``CONTEXT`` frames on each side of frames (lo, hi], as ``before`` and
        ``after``."""
        return {"before": self._window(lo - CONTEXT, lo), "after": self._window(hi, hi + CONTEXT)}

    def _events(self, lo: int, hi: int) -> list:
        """The text events of frames (lo, hi], decided with their context (as :meth:`read` decides them)."""
        from flowocr.read.events import events

        return events(self._window(lo, hi), **self._context(lo, hi))


def box_grey(frame: Frame | None, box: tuple[int, int, int, int]) -> np.ndarray | None:
    """The grey levels of ``frame``'s box (x0 y0 x1 y1, frame pixels, cut to the frame) at full size
    (:attr:`ReadTools.crop`); None for a missing frame or an empty box."""
    if frame is None:
        return None
    width, height = frame.size
    x0, y0 = max(0, box[0]), max(0, box[1])
    x1, y1 = min(box[2], width), min(box[3], height)
    if x1 <= x0 or y1 <= y0:
        return None
    return frame.grey((x0, y0, x1 - x0, y1 - y0))


def same_boxes(found, known, min_iou: float) -> bool:
    """Whether the boxes ``found`` (x0 y0 x1 y1) are the boxes ``known``: each known box overlaps one found box,
    and each found box one known box, by at least ``min_iou`` (intersection over union)."""
    from flowocr.ocr.types import box_iou

    return all(any(box_iou(k, f) >= min_iou for f in found) for k in known) and all(
        any(box_iou(f, k) >= min_iou for k in known) for f in found
    )


def _read_to_nothing(boxes, lines: Lines) -> list:
    """The boxes a probe found that no line read came from (recognised to nothing: texture)."""
    from flowocr.ocr.types import box_intersection

    return [b for b in boxes if not any(box_intersection(b, ln.bounds) > 0 for ln in lines)]


def _look_box(bounds) -> tuple[int, int, int, int]:
    """The box (x0 y0 x1 y1, frame pixels) a second look at full size takes for a line's bounds: 2 px wider on each
    side (a line's box is tight: its outline may lie outside)."""
    x0, y0, x1, y1 = (int(v) for v in bounds)
    return max(0, x0 - 2), max(0, y0 - 2), x1 + 2, y1 + 2


def _halve(lo: int, hi: int, shows: Callable[[int], bool | None], *, up: bool) -> int | None:
    """The first frame of (lo, hi] on which a text shows (``up``: it shows on ``hi``, not on ``lo``), or no longer
    shows (it shows on ``lo``, not on ``hi``), by ``shows(frame)``, found by halving; None where a look there
    cannot tell."""
    a, b = lo, hi  # the text is on b and not on a (up), on a and not on b (not up)
    while b - a > 1:
        m = (a + b) // 2
        seen = shows(m)
        if seen is None:
            return None
        if seen == up:
            b = m
        else:
            a = m
    return b


def _next_in_rows(found: list, k: int):
    """The first event of ``found`` after its ``k``-th that lies in any of that one's cell rows, or None."""
    rows = found[k].cells.any(axis=1)
    return next((e for e in found[k + 1 :] if (e.cells.any(axis=1) & rows).any()), None)


def _middle(state: Short) -> int:
    """The frame a short state is read on: its middle (its first frame when it lasts one or two)."""
    return (state.index + state.end - 1) // 2
