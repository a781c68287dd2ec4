"""Text events: where and when the text changed, from the change detector's per-cell measures (pure).

The detector (:mod:`flowocr.aux.detector`) reports, for every frame and every cell of ``CELL`` x ``CELL`` aux
pixels, its *stable edge* pixels (contrasty and still since the frame before: ``STABLE``), how much its grey levels
moved (``DIFF``) and the stroke pixels that appeared and vanished.

- :func:`events`: burned-in text is still while it is shown and a moving picture is not, so the stable edges of the
  band of ``BAND_ROWS`` cell rows under a line **step** up when it appears, down when it vanishes, and **dip** for a
  frame when it is replaced. A frame is an event when some band's count steps or dips by ``STEP_MIN`` between the
  medians of the ``STEP_FRAMES`` frames before and after it (medians: one odd frame, a flash, is no level), and by
  ``NOISE_TIMES`` the band's typical step in the window (over a still picture, its typical move from frame to frame:
  ``STILL_NOISE``), the strongest within a few frames (a step the other way is a change of its own: a text gone,
  the next one shown two frames later); it is placed on the frame of that step where the band's grey levels moved
  most (the frame the text changed on: its edges become stable a frame later). Where a band's sum swings with the
  picture, a few cells of one row whose envelopes (least stable edges over three frames) step up or down together
  are an event of their own (``CELL_EVENTS``). A shot cut or a flash changes every row
  for a frame and leaves no step; a moving background holds few stable edges. Measured on the aux frames of a
  random corpus (30 videos, 653 cue boundaries): steps found 98.5 % of the boundaries, where bursts of grey-level
  difference found 94 % with twice as many false events, and stroke pixels two thirds.
  Over footage that holds each picture for two frames (animation on twos) the steps may be taken on the envelope of
  the cells' stable edges instead (``ENVELOPE``, off: better on a dev seed, slightly worse on the report seed).
- :func:`stable_step_at`: where a text that was read appeared or vanished, once an event or a burst (below) says
  it changed in the window: the change of level of the stable edges in its own cells, the best two-level fit of
  their count over the window. A band's strongest step can be a moving picture's, and the frame where its grey
  levels moved most the picture's too; the text's own cells hold its stable edges exactly while it is shown.
- :func:`faded_at`: where a text that faded in or out was half opaque: the frame where half the grey-level movement
  of the fade's run of frames in its own cells is done (its alpha is the share done).
- :func:`appeared_at` / :func:`vanished_at`: where a text that was read appeared or vanished, from the grey-level
  difference in its own cells beyond each cell's background (``excess``: a cell's difference beyond
  ``EXCESS_OVER_MEDIAN`` times its median over the window plus ``EXCESS_FLOOR`` levels): the bursts of
  consecutive frames with excess there, the last one for a start (an old text in the same place may vanish first),
  the first one for an end; inside a burst, the frame where half its mass is reached (a fade-in is half opaque
  there; a plain change is one frame).

- :func:`blips`: a text shown on one or two frames has no level (the medians skip it); its stroke pixels appear
  in a few cell rows on one frame and vanish there again one or two frames later, the cells quiet around it.

A window is the detector's changes of the frames between two fed frames, ``(previous, current]``; its events are
decided with ``CONTEXT`` frames on each side of it and its placements with the window only, so a resumed or split
reading that starts at a fed frame decides exactly as one reading from the start (what :mod:`flowocr.resume` and
:mod:`flowocr.cluster` rely on).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from flowocr.aux.detector import APPEARED, CELL, DIFF, STABLE, VANISHED, FrameChange
from flowocr.aux.protocol import PLANES

EXCESS_OVER_MEDIAN = 2.0
EXCESS_FLOOR = 2  # grey levels (mean over a cell)
STEP_FRAMES = 3  # frames on each side of a frame that its step compares
CONTEXT = 3 * STEP_FRAMES  # frames on each side of a window that its events depend on (steps, their peaks)
STEP_MIN = 40  # stable edge pixels (aux size) a band gains, loses or dips by that make a text event ...
NOISE_TIMES = 3.0  # ... and at least this many times the band's typical step over the window ...
NOISE_PERCENTILE = 50  # ... (this percentile of its steps)
STILL_NOISE = True  # ... a band over a still picture's typical step (see :func:`events`)
STILL_MOVE = 4  # stable edge pixels a band's count may move by from frame to frame and be still
STILL_BANDS = 0.5  # the share of the bands that may move on one frame of a still picture
STEP_CELL = 3  # ... in the cells that gain, lose or dip by at least this many
BAND_ROWS = 3  # cell rows of a band (24 aux pixels)
EMPTIED_SHARE = 0.3  # a band that keeps less than this share of its stable edges was emptied
REGION_MIN = 12  # excess in a text's own cells (summed over a burst) that places its start or end
BURST_SHARE = 0.3  # a burst with less than this share of the window's biggest one in those cells is background
#: A step up and a step down of one band within a few frames are two events (a text gone and the next one shown two
#: frames later), not one change seen from its neighbouring frames.
OPPOSITE_STEPS_APART = True
#: Over a picture held for frames at a time (animation on twos: on ENVELOPE_HELD's shares of the frames seen the
#: picture's cells moved by HELD_STILL grey levels at most on average, on others by HELD_MOVING at least), a band
#: whose steps are at least ENVELOPE_QUIETER times quieter on the envelope of its cells' stable edges (each cell's
#: least over three frames) than on the edges themselves is read on the envelope (see :func:`events`): such a
#: picture swings a band's edges by far more than a short line's step on every other frame, while a burned-in text
#: holds its edges on every frame. Dev seed 17: a 0.5 s line over anime found, a sign's start 79 frames late and
#: another's 13 placed on their frames (exact 0.937 -> 0.940, CER 0.0171 -> 0.0152, within 0/1/2 frames
#: 0.932/0.965/0.976 -> 0.934/0.968/0.979, calls per cue 1.58 -> 1.57); dev seed 13 the same cues. Without the held
#: picture's gate it read fast footage and cuts on the envelope too: one line lost on each dev seed (an event placed
#: two frames early; a window's events changed). Report seed 2027: one video changed, for the worse (anime footage
#: at 29.97 fps: a line read on another frame misread, a start 2 frames early, calls per cue 1.93 -> 2.14; exact
#: 0.950 -> 0.948), so off. Events on the envelope are placed a frame early at times (the picture's own moves are
#: the most on its moving frames): their placement is what to look at next.
ENVELOPE = False
ENVELOPE_QUIETER = 2.0
ENVELOPE_HELD: tuple[float, float] | None = (1 / 3, 1 / 4)  # shares of the frames held (still) and moving, at least
HELD_STILL = 0.5  # a frame whose cells' grey levels moved by at most this much on average is held ...
HELD_MOVING = 1.5  # ... by at least this much, moving

Bounds = tuple[float, float, float, float]


@dataclass(frozen=True)
class CellMap:
    """How the detector's cells lie on the frame: the text area's origin and size (frame pixels) and the aux
    frame's size (aux pixels) that the area was scaled to."""

    x: int
    y: int
    width: int
    height: int
    aux_width: int
    aux_height: int

    @property
    def shape(self) -> tuple[int, int]:
        return -(-self.aux_height // CELL), -(-self.aux_width // CELL)

    def cells(self, boxes: Iterable[Bounds], *, margin: int = 0) -> np.ndarray:
        """The cells (a rows x cols boolean mask) that ``boxes`` (frame pixels, x0 y0 x1 y1) touch, grown by
        ``margin`` cells on every side."""
        rows, cols = self.shape
        mask = np.zeros((rows, cols), bool)
        sx, sy = self.aux_width / self.width, self.aux_height / self.height
        for x0, y0, x1, y1 in boxes:
            c0 = int((x0 - self.x) * sx // CELL) - margin
            c1 = int(np.ceil((x1 - self.x) * sx / CELL)) + margin
            r0 = int((y0 - self.y) * sy // CELL) - margin
            r1 = int(np.ceil((y1 - self.y) * sy / CELL)) + margin
            mask[max(0, r0) : max(0, min(rows, r1)), max(0, c0) : max(0, min(cols, c1))] = True
        return mask


    @property
    def cell_height(self) -> float:
        """A cell's height in frame pixels."""
        return CELL * self.height / self.aux_height

    def rows(self, cells: np.ndarray, *, grow: float = 0.0) -> list[tuple[float, float]]:
        """The row spans (frame pixels, y0 y1) of the cell rows where ``cells`` has any cell, each grown by ``grow``
        cells up and down, merged."""
        h = self.cell_height
        spans: list[list[float]] = []
        for r in np.flatnonzero(cells.any(axis=1)):
            y0 = max(self.y, self.y + (r - grow) * h)
            y1 = min(self.y + self.height, self.y + (r + 1 + grow) * h)
            if spans and y0 <= spans[-1][1]:
                spans[-1][1] = y1
            else:
                spans.append([y0, y1])
        return [(a, b) for a, b in spans]


def stack(window: Sequence[FrameChange]) -> np.ndarray:
    """The window's cells as one (frames, planes, rows, cols) int32 array. Frames whose grid differs from the last
    frame's (the aux size changed) count as empty."""
    if not window:
        return np.zeros((0, PLANES, 0, 0), np.int32)
    last = window[-1]
    empty = np.zeros_like(last.grid())
    planes = [c.grid() if (c.rows, c.cols) == (last.rows, last.cols) else empty for c in window]
    return np.stack(planes).astype(np.int32)


def excess(window: Sequence[FrameChange]) -> np.ndarray:
    """Per frame and cell, the grey-level difference beyond the cell's background: ``(frames, rows, cols)``.

    The background is ``EXCESS_OVER_MEDIAN`` times the cell's median over the window plus ``EXCESS_FLOOR`` levels,
    so a cell that moves on every frame (a moving background) has a high one and a cell that is still but for a
    frame or two (a text change, a short cue's two) has none."""
    diff = stack(window)[:, DIFF]
    if not len(diff):
        return diff
    median = np.median(diff, axis=0)
    return np.maximum(0, diff - EXCESS_OVER_MEDIAN * median - EXCESS_FLOOR)


@dataclass(frozen=True)
class Event:
    """A frame where the text changed: the step of its band's stable edges (aux pixels), where it lies (the cells of
    that band that stepped), and the stroke pixels that appeared and vanished there on that frame (aux size)."""

    index: int
    strength: float
    cells: np.ndarray  # rows x cols boolean
    appeared: int
    vanished: int
    level_before: float = 0.0  # the band's stable edges before and after the change (medians) ...
    level_after: float = 0.0
    dip: float = 0.0  # ... and how far below both it was on the frame of the change

    @property
    def emptied(self) -> bool:
        """The band lost most of its stable edges, kept few, and did not dip on the way: a text vanished and nothing
        replaced it (a text replaced by a shorter one dips: the new edges are not still yet on its first frame)."""
        return self.level_after < EMPTIED_SHARE * self.level_before and self.dip < STEP_MIN


def events(window: Sequence[FrameChange], *, before: Sequence[FrameChange] = (),
           after: Sequence[FrameChange] = ()) -> list[Event]:  # fmt: skip
    """The text events of a window, in frame order (see the module docstring). ``before`` and ``after`` are the
    detector's changes of up to ``CONTEXT`` frames on each side of it: a frame's step compares the frames around
    it, and a step shows on its neighbours too, so the events of a window given its context are those of the whole
    stream (a frame with no frame on one side has no step)."""
    if not window:
        return []
    frames = [*before, *window, *after]
    shape = (window[-1].rows, window[-1].cols)
    grids = np.stack([c.grid() if (c.rows, c.cols) == shape else np.zeros((PLANES, *shape), np.uint8)
                      for c in frames]).astype(np.float32)  # fmt: skip
    stable = grids[:, STABLE]
    n = len(frames)
    if n < 3:
        return []  # no frame with a frame on each side: no step
    grid, signs, levels, rb, ra, cells, floor = _steps(stable)
    if ENVELOPE and _held_picture(grids[:, DIFF]):
        # A picture held for two frames at a time (animation on twos) swings a band's stable edges by far more than a
        # text's step on every other frame; a burned-in text holds its edges on every frame. The least of each cell's
        # stable edges over three frames (its envelope) keeps the text's and drops such a picture's: a band whose
        # steps are at least ENVELOPE_QUIETER times quieter so is read on it.
        env = _envelope(stable)
        e_grid, e_signs, e_levels, e_rb, e_ra, e_cells, e_floor = _steps(env)
        use = floor >= ENVELOPE_QUIETER * e_floor  # per band
        if use.any():
            grid = np.where(use, e_grid, grid)
            signs = np.where(use, e_signs, signs)
            levels = np.where(use, e_levels, levels)
            rb, ra = np.where(use, e_rb, rb), np.where(use, e_ra, ra)
            floor = np.where(use, e_floor, floor)
            rows_env = np.zeros(shape[0], bool)  # the cell rows of the bands read on the envelope
            for j in np.flatnonzero(use):
                rows_env[j : j + BAND_ROWS] = True
            cells = np.where(rows_env[None, :, None], e_cells, cells)
    out: list[Event] = []
    seen: list[tuple[int, np.ndarray]] = []  # every step's frame and cells, the context's too
    r = STEP_FRAMES - 1
    first, last = len(before), len(before) + len(window)
    for k, j in zip(*np.nonzero(grid >= floor)):
        score = grid[k, j]
        # One event per change: a step shows on the frames around it too (a level is a median of STEP_FRAMES
        # frames) and on the bands that overlap its own, so an event is the strongest step within r frames and
        # BAND_ROWS - 1 bands of it (the earliest and topmost of equals). Bands apart are events of their own (a
        # line vanishing at the bottom while a sign appears at the top).
        near = grid[max(0, k - r) : k + 1 + r, max(0, j - BAND_ROWS + 1) : j + BAND_ROWS]
        kk, jj = k - max(0, k - r), j - max(0, j - BAND_ROWS + 1)
        sign = signs[k, j]
        if OPPOSITE_STEPS_APART and sign != 0:
            # a step the other way a frame or two before or after (a text gone, the next one two frames later) is
            # another change, not this one seen from a neighbouring frame
            other = signs[max(0, k - r) : k + 1 + r, max(0, j - BAND_ROWS + 1) : j + BAND_ROWS] == -sign
            near = np.where(other, 0.0, near)
        if not _peak(near, kk, jj, score):
            continue
        rows = _rows_of(cells[k - 1], j, shape[0])
        mask = (cells[k - 1] >= STEP_CELL) & rows[:, None]
        if not mask.any():  # a change spread thin over its band: the band's cells that changed at all
            mask = (cells[k - 1] > 0) & rows[:, None]
        # Placed on the frame of the step's run (the frames around it that step by half as much) where the grey
        # levels of its band moved most: the frame the text changed on (the stable edges only show a frame later).
        along = grid[:, j] >= score / 2
        if OPPOSITE_STEPS_APART and sign != 0:
            along &= signs[:, j] != -sign
        lo, hi = _run_around(along, k)
        moved = (grids[lo : hi + 1, DIFF] * (mask if mask.any() else rows[:, None])).sum(axis=(1, 2))
        at = lo + int(np.argmax(moved))
        seen.append((frames[at].index, mask))
        if not first <= at < last:
            continue  # an event of the context: its own window reports it
        level_before, level_after = rb[k - 1, j], ra[k - 1, j]
        dip = min(level_before, level_after) - levels[at, j]  # on the frame of the change itself
        out.append(Event(frames[at].index, float(score), mask, int(grids[at, APPEARED][mask].sum()),
                         int(grids[at, VANISHED][mask].sum()), float(level_before), float(level_after),
                         float(dip)))  # fmt: skip
    if CELL_EVENTS:
        out += _cell_events(frames, grids, stable, seen, first, last)
    out.sort(key=lambda e: e.index)
    return out


#: A text whose band sums swing with the picture behind it (cut footage, a busy picture) may still hold its own few
#: cells' stable edges on every frame it is shown: each cell's least stable edges over three frames (its envelope)
#: drops a moving picture's edges and keeps the text's. A cell *steps up* at frame k when the median of its envelope
#: over frames k + 1 .. k + 3 exceeds that over k - 3 .. k - 1 by CELL_STEP and by CELL_NOISE times the cell's typical
#: step over the frames seen (a picture held for frames at a time steps its cells' envelopes often); a run of at
#: least CELL_RUN adjacent cells of one row stepping so is a text that appeared there (an *onset*; stepping down, a
#: text that vanished: an *offset*, ``CELL_OFFSETS``), an event where no band event in its cells lies within
#: CELL_APART frames and its cells were nearly empty on one side (their envelopes' sum there under CELL_EMPTY of the
#: other side's: cells that hold edges on both sides show a text already, or a picture's edges)
#: (``CELL_EVENTS``). Cue starts (ends) with an event within 2 frames in their rows, dev seed 17:
#: 0.860 -> 0.923 (0.887 -> 0.942), events away from any boundary 6.2 -> 6.6 per 100 frames; dev 13: 0.843 -> 0.905
#: (0.861 -> 0.911), 5.6 -> 6.4. Without the noise floor two footage videos of dev 17 made 53 events per 100 frames.
#: Read (replay), dev 17: exact 0.942 -> 0.948, CER 0.0150 -> 0.0125, short cues missed 4 -> 1 of 48, boundaries
#: within 0/1/2 frames 0.936/0.969/0.982 -> 0.938/0.972/0.985, OCR calls per cue 1.54 -> 1.58; dev 13: exact 0.961
#: -> 0.958 (a short cue lost: another event moved the middle of a state between samples off it), within
#: 0.941/0.979/0.985 -> 0.938/0.976/0.982, calls 1.41 -> 1.42. Report seed 2027: exact 0.950 the same, CER 0.0174 ->
#: 0.0163, short cues missed 8 -> 7 of 105, within 0 frames 0.940 -> 0.939, calls 1.67 -> 1.69.
#: Off: on a real clip (../shared's moviepy_doc_result.mp4, an animated, zooming title) two reference lines of 0.5 s
#: or more were lost with it on (tests/test_reference.py): garbled readings of the moving title, which the reader's
#: other reads then merged otherwise.
CELL_EVENTS = False
CELL_STEP = 6.0
CELL_NOISE = 3.0
CELL_NOISE_PERCENTILE = 50
CELL_OFFSETS = True
CELL_EMPTY: float | None = EMPTIED_SHARE
CELL_RUN = 3
CELL_ROWS_SHARE = 0.3  # ... on a frame where the cells stepping so lie on at most this share of the cell rows
#: frames from an event in its cells that an onset is that event's (a replacement's one-frame dip holds each cell's
#: envelope down for three frames: it steps up again a few frames after the dip)
CELL_APART = 2 * STEP_FRAMES


def _cell_events(frames: Sequence[FrameChange], grids: np.ndarray, stable: np.ndarray,
                 seen: Sequence[tuple[int, np.ndarray]], first: int, last: int) -> list[Event]:  # fmt: skip
    """The onsets and offsets (``CELL_EVENTS``) of ``frames`` (window ``first`` to ``last``, context around) that no
    event of ``seen`` (frames and cells, the context's too) covers, as events of their cells (an offset's cells
    emptied). A step at frame k needs frames k - 4 to k + 4, and one is placed within STEP_FRAMES of the strongest
    within STEP_FRAMES - 1 frames: the ``CONTEXT`` frames around a window decide its steps as those of the whole
    stream."""
    n = len(stable)
    if n < 9 or stable.shape[2] < CELL_RUN:
        return []
    runs = _run_medians(_envelope(stable))  # runs[i]: the median of the envelope over frames i .. i + 2
    rise = np.zeros_like(stable)
    rise[3 : n - 3] = runs[4 : n - 2] - runs[0 : n - 6]  # frame k: frames k + 1 .. k + 3 against k - 3 .. k - 1
    out: list[Event] = []
    for up in (rise, -rise) if CELL_OFFSETS else (rise,):
        out += _cell_steps(frames, grids, runs, up, seen, first, last)
    return out


def _cell_steps(frames: Sequence[FrameChange], grids: np.ndarray, runs: np.ndarray, up: np.ndarray,
                seen: Sequence[tuple[int, np.ndarray]], first: int, last: int) -> list[Event]:  # fmt: skip
    """:func:`_cell_events` of one direction: ``up`` is each cell's step (up, or down negated) per frame."""
    n = len(up)
    step = up >= np.maximum(CELL_STEP, CELL_NOISE * np.percentile(np.abs(up[3 : n - 3]), CELL_NOISE_PERCENTILE, axis=0))
    cols = step.shape[2]
    # the cells of runs of at least CELL_RUN adjacent stepping cells in a row
    whole = np.ones(step.shape[:2] + (cols - CELL_RUN + 1,), bool)
    for s in range(CELL_RUN):
        whole &= step[:, :, s : cols - CELL_RUN + 1 + s]
    member = np.zeros_like(step)
    for s in range(CELL_RUN):
        member[:, :, s : cols - CELL_RUN + 1 + s] |= whole
    # a picture that changed its still edges everywhere at once (a cut to a still shot) is no text
    member[member.any(axis=2).sum(axis=1) > CELL_ROWS_SHARE * step.shape[1]] = False
    score = (up * member).sum(axis=2)  # frames x rows
    out: list[Event] = []
    r = STEP_FRAMES - 1
    for k, j in zip(*np.nonzero(score)):
        value = score[k, j]
        near = score[max(0, k - r) : k + 1 + r, max(0, j - BAND_ROWS + 1) : j + BAND_ROWS]
        kk, jj = k - max(0, k - r), j - max(0, j - BAND_ROWS + 1)
        if not _peak(near, kk, jj, value):
            continue
        rows = np.zeros(step.shape[1], bool)
        rows[max(0, j - BAND_ROWS + 1) : j + BAND_ROWS] = True
        mask = member[k] & rows[:, None]
        # placed where its cells' grey levels moved most over the frames around it that step by half as much
        lo, hi = _run_around((up * mask).sum(axis=(1, 2)) >= value / 2, k)
        moved = (grids[lo : hi + 1, DIFF] * mask).sum(axis=(1, 2))
        at = lo + int(np.argmax(moved))
        if not first <= at < last:
            continue
        index = frames[at].index
        if any(abs(other - index) <= CELL_APART and (cells & mask).any() for other, cells in seen):
            continue
        before, after = float((runs[k - 3] * mask).sum()), float((runs[k + 1] * mask).sum())
        if CELL_EMPTY is not None and min(before, after) >= CELL_EMPTY * max(before, after):
            continue  # its cells held edges on both sides: a text there already (or still), not one that came or went
        out.append(Event(index, float(value), mask, int(grids[at, APPEARED][mask].sum()),
                         int(grids[at, VANISHED][mask].sum()), before, after, 0.0))  # fmt: skip
    return out


def _envelope(stable: np.ndarray) -> np.ndarray:
    """Each cell's least stable edges over the frame before, its own and the frame after (the first and last frames:
    over the two there are), per frame of ``stable`` (frames x rows x cols, at least two frames)."""
    env = np.minimum(np.minimum(stable[:-2], stable[1:-1]), stable[2:])
    return np.concatenate([np.minimum(stable[:1], stable[1:2]), env, np.minimum(stable[-2:-1], stable[-1:])])


def _peak(near: np.ndarray, kk: int, jj: int, score: float) -> bool:
    """Whether ``score``, at row ``kk`` (frame) and column ``jj`` (band or cell row) of the scores ``near`` it, is the
    strongest there: earlier frames win ties, later ones don't; so do the rows above."""
    if (near[:kk] >= score).any() or (near[kk + 1 :] > score).any():
        return False
    return not ((near[kk, :jj] >= score).any() or (near[kk, jj + 1 :] > score).any())


def _run_around(along: np.ndarray, k: int) -> tuple[int, int]:
    """The first and last frames of the run of frames where ``along`` holds around frame ``k``, at most
    ``STEP_FRAMES`` from it on each side."""
    lo = hi = k
    while lo - 1 >= max(0, k - STEP_FRAMES) and along[lo - 1]:
        lo -= 1
    while hi + 1 < min(len(along), k + 1 + STEP_FRAMES) and along[hi + 1]:
        hi += 1
    return lo, hi


def _held_picture(diff: np.ndarray) -> bool:
    """Whether the frames whose cells' grey-level movement is ``diff`` (frames x rows x cols) show a picture held for
    frames at a time (``ENVELOPE_HELD``): on a share of them no cell moved (``HELD_STILL`` on average), on a share
    the picture moved (``HELD_MOVING``)."""
    if ENVELOPE_HELD is None:
        return True
    moved = diff.mean(axis=(1, 2))
    held, moving = ENVELOPE_HELD
    return bool((moved <= HELD_STILL).mean() >= held and (moved >= HELD_MOVING).mean() >= moving)


def _steps(stable: np.ndarray) -> tuple:
    """:func:`events`' steps of a series of cells' stable edges (frames x rows x cols, at least three frames): per frame
    and band the score of a step or dip, its sign, the band's level, its levels before and after (row k - 1: frame
    k), per cell the step or dip, and per band the floor a text event's score reaches."""
    n = len(stable)
    # Frames 1 to n - 2, each against the frames around it. Medians: a frame that differs from its neighbours alone
    # (a dip, a flash) is no level on either side.
    runs = _run_medians(stable)  # runs[i]: the median of frames i to i + STEP_FRAMES - 1
    inner = range(1, n - 1)
    b = np.stack([runs[k - STEP_FRAMES] if k >= STEP_FRAMES else np.median(stable[:k], axis=0) for k in inner])
    a = np.stack([runs[k + 1] if k + STEP_FRAMES < n else np.median(stable[k + 1 :], axis=0) for k in inner])
    c = stable[1 : n - 1]
    levels = _bands_of(stable.sum(axis=2))  # per frame and band
    rb, ra = (_bands_of(x.sum(axis=2)) for x in (b, a))  # per band, before and after (row k - 1: frame k)
    rc = levels[1 : n - 1]
    cells = np.maximum(np.abs(a - b), np.minimum(a, b) - c)  # per cell (row k - 1: frame k)
    grid = np.zeros((n, rb.shape[1]))  # a step's score per frame and band: a step up or down, or a dip
    grid[1 : n - 1] = np.maximum(np.abs(ra - rb), np.minimum(ra, rb) - rc)
    signs = np.zeros_like(grid)  # +1 a step up, -1 a step down, 0 a dip, per band
    signs[1 : n - 1] = np.where(np.abs(ra - rb) >= np.minimum(ra, rb) - rc, np.sign(ra - rb), 0)
    # A band over a moving picture steps a little on most frames: a text event must stand out of that, NOISE_TIMES
    # its typical step (the median over the frames here), as well as be STEP_MIN.
    typical = np.percentile(grid[1 : n - 1], NOISE_PERCENTILE, axis=0)
    if STILL_NOISE:
        # ... but where the picture holds still (on no frame did the stable edges of STILL_BANDS of the bands move
        # by more than STILL_MOVE: a text changes a few bands, a moving or held-and-moved picture most), a band's
        # noise is its typical move from one frame to the next, over the frames a step spans, however many frames
        # the steps of texts shown in quick succession cover (four changes in a window: half of its frames). Dev seed
        # 17 (three videos changed, each better): exact 0.926 -> 0.937, CER 0.0215 -> 0.0171, missed cues of 0.5 s
        # or more 1 -> 0 of 299, short ones 7 -> 4 of 48, OCR calls per cue the same; dev seed 13 the same cues. A
        # lower percentile instead (25: dev 17 phantoms 6 -> 8, split pieces 6 -> 9, calls 1.57 -> 1.62; the 35th
        # lost long cues on dev 13 before) counts a moving picture's steps as texts'.
        moves = np.abs(np.diff(levels, axis=0))
        if (np.count_nonzero(moves > STILL_MOVE, axis=1) <= STILL_BANDS * levels.shape[1]).all():
            typical = np.minimum(typical, (STEP_FRAMES + 1) * np.percentile(moves, NOISE_PERCENTILE, axis=0))
    floor = np.maximum(STEP_MIN, NOISE_TIMES * typical)
    return grid, signs, levels, rb, ra, cells, floor


def _rows_of(cell: np.ndarray, best: int, height: int) -> np.ndarray:
    """The cell rows of the band starting at row ``best``, grown over the rows next to it that stepped too (a
    block of lines can be taller than a band)."""
    top, bottom = best, min(height, best + BAND_ROWS)
    per_row = (cell * (cell >= STEP_CELL)).sum(axis=1)
    while top > 0 and per_row[top - 1] >= STEP_MIN / BAND_ROWS:
        top -= 1
    while bottom < height and per_row[bottom] >= STEP_MIN / BAND_ROWS:
        bottom += 1
    rows = np.zeros(height, bool)
    rows[top:bottom] = True
    return rows


def _bands_of(rows: np.ndarray) -> np.ndarray:
    """Per frame (a row of ``rows``: frames x cell rows), the sums of ``BAND_ROWS`` consecutive cell rows (all of
    them when there are fewer)."""
    if rows.shape[1] < BAND_ROWS:
        return rows.sum(axis=1, keepdims=True)
    return sliding_window_view(rows.astype(np.float64), BAND_ROWS, axis=1).sum(axis=2)


def _run_medians(stable: np.ndarray) -> np.ndarray:
    """The median of each run of ``STEP_FRAMES`` consecutive frames of ``stable`` (frames x rows x cols): element
    ``i`` is that of frames i to i + STEP_FRAMES - 1 (none when there are fewer frames). For three frames, the
    middle value by comparisons (what ``np.median`` picks, without sorting)."""
    if len(stable) < STEP_FRAMES:
        return stable[:0]
    if STEP_FRAMES == 3:
        x, y, z = stable[:-2], stable[1:-1], stable[2:]
        return np.maximum(np.minimum(x, y), np.minimum(np.maximum(x, y), z))
    return np.median(sliding_window_view(stable, STEP_FRAMES, axis=0), axis=-1)


def _bursts(values: np.ndarray) -> list[tuple[int, int, float]]:
    """Runs of consecutive frames with excess (a one-frame gap joins two), as (first, last, mass)."""
    out: list[list] = []
    for k, v in enumerate(values):
        if v <= 0:
            continue
        if out and k - out[-1][1] <= 2:
            out[-1][1] = k
            out[-1][2] += float(v)
        else:
            out.append([k, k, float(v)])
    return [(a, b, m) for a, b, m in out]


def _placed(window: Sequence[FrameChange], region: np.ndarray, *, last: bool) -> int | None:
    if not window:
        return None
    values = (excess(window) * region).sum(axis=(1, 2))
    bursts = [b for b in _bursts(values) if b[2] >= REGION_MIN]
    if not bursts:
        return None
    biggest = max(m for _, _, m in bursts)
    first, end, mass = [b for b in bursts if b[2] >= BURST_SHARE * biggest][-1 if last else 0]
    total = 0.0
    for k in range(first, end + 1):
        total += float(values[k])
        if 2 * total >= mass:
            return window[k].index
    return window[end].index


def stable_counts(window: Sequence[FrameChange], region: np.ndarray) -> np.ndarray:
    """The stable edge pixels in the cells ``region`` (a bool cell mask) on each frame of the window (:func:`stack`:
    0 on a frame whose cells have another shape)."""
    return (stack(window)[:, STABLE] * region).sum(axis=(1, 2)).astype(np.float64)


def level_change(counts: np.ndarray, *, up: bool) -> int | None:
    """Where a series changes level: the first position of the second of the two levels that fit it best (least
    squares), the second higher (``up``) or lower; None for fewer than two values or no such fit."""
    n = len(counts)
    if n < 2:
        return None
    c = np.arange(1, n)
    head = np.cumsum(counts)[:-1]
    tail = counts.sum() - head
    step = tail / (n - c) - head / c
    # least squares over two levels = sum of squares - head^2 / c - tail^2 / (n - c): maximise the explained part
    fit = np.where(step > 0 if up else step < 0, head**2 / c + tail**2 / (n - c), -np.inf)
    best = int(np.argmax(fit))
    return None if not np.isfinite(fit[best]) else int(c[best])


def stable_step_at(window: Sequence[FrameChange], region: np.ndarray, *, up: bool) -> int | None:
    """The frame where a text whose cells are ``region`` appeared (``up``) or vanished in the window, from the level
    change of the stable edges in its own cells (:func:`level_change`): burned-in text holds still while it is
    shown, so its cells hold its stable edges from the frame after it appeared (it changed on that frame) to its
    last frame; a moving picture around it holds few. A start is the frame before the higher level, an end the
    first frame of the lower one. None without such a change."""
    at = level_change(stable_counts(window, region), up=up)
    if at is None:
        return None
    return window[max(0, at - 1) if up else at].index


#: A text whose strokes all appear (vanish) on one frame: in its own cells, that frame's appeared (vanished) stroke
#: pixels are at least SPIKE_MIN and SPIKE_TIMES times those of any other frame of the window.
SPIKE_MIN = 8
SPIKE_TIMES = 4.0


def strokes_spike_at(window: Sequence[FrameChange], region: np.ndarray, *, up: bool) -> int | None:
    """The frame on which the stroke pixels of a text whose cells are ``region`` all appeared (``up``: its first
    frame) or vanished (its first frame gone) at once, when one frame of the window stands out so
    (``SPIKE_MIN``, ``SPIKE_TIMES``); None otherwise. Over a moving picture the stable edges are noisy while a
    text's strokes still come on one frame."""
    if not window or not region.any():
        return None
    counts = (stack(window)[:, APPEARED if up else VANISHED] * region).sum(axis=(1, 2)).astype(np.int64)
    k = int(np.argmax(counts))
    rest = np.delete(counts, k)
    if counts[k] < SPIKE_MIN or (rest.size and counts[k] < SPIKE_TIMES * rest.max()):
        return None
    return window[k].index


#: A *fade* (a text's alpha ramped over several frames, ``\fad`` in ASS): its cells' grey levels move on each frame
#: of a run of at least FADE_FRAMES, each by more than twice their FADE_BASE percentile over the frames seen plus
#: FADE_FLOOR levels a cell; its stable edges pass between their two levels on at least FADE_RAMP of those frames (a
#: cut moves them at once); and no frame of the run moves them by more than FADE_PEAK times the run's median (a cut
#: at the end of the picture's own movement in those cells: dev seed 13, a line over a fast picture placed 4 frames
#: early). The stable edges alone do not place a fade: a fading text's edges are not still, so they settle at the
#: end of a fade-in and go at the start of a fade-out, where the truth counts its first (last) half-opaque frame.
#: Measured on dev seeds 13 and 11 (within 0/1/2 frames, 13: 0.824/0.904/0.927 -> 0.859/0.935/0.942, 11:
#: 0.850/0.909/0.938 -> 0.861/0.917/0.942). A floor of 1 level a cell cut the run of a two-line text whose top line
#: is small (the run's own frames below it); the half-way crossing of the stable edges instead of the grey levels'
#: half mass, or the mean of both, was no better (13: 0.925 and 0.938 within one frame; 11: 0.913 and 0.923); the
#: 25th percentile for the base (a long fade fills much of the frames seen) gained 0.003 on seed 13 and lost 0.007
#: on the report seed 2027 (cues without a fade taken for fades).
FADE_FRAMES = 3
FADE_BASE = 50
FADE_FLOOR = 0.5
FADE_RAMP = 2
FADE_BETWEEN = 0.15  # a count between two levels lies this share of their distance from either
FADE_PEAK = 2.5


def faded_at(window: Sequence[FrameChange], region: np.ndarray, at: int, *, up: bool,
             before: Sequence[FrameChange] = (), after: Sequence[FrameChange] = ()) -> int | None:  # fmt: skip
    """:func:`fade_ramp`'s frame: where a text that faded in or out was half opaque (None where it did not)."""
    ramp = fade_ramp(window, region, at, up=up, before=before, after=after)
    return None if ramp is None else ramp.frame


@dataclass(frozen=True)
class Fade:
    """A fade found by :func:`fade_ramp`: the frame where the text was half opaque, and the first and last frames
    of its run of moving grey levels."""

    frame: int
    first: int
    last: int


def fade_ramp(window: Sequence[FrameChange], region: np.ndarray, at: int, *, up: bool,
              before: Sequence[FrameChange] = (), after: Sequence[FrameChange] = ()) -> Fade | None:  # fmt: skip
    """Where a text whose cells are ``region``, placed at frame ``at`` of the window by its stable edges, reached half
    its opacity (``up``: its first frame at least half opaque; else the first frame less than half opaque), when it
    faded there; None when it did not, or when the fade reaches past the frames seen (only part of it is seen).

    A fade often straddles the fed frame that bounds the window (a sample shows the text half faded), so the frames
    of ``before`` and ``after`` (the detector's changes just outside the window, as :func:`events` is given them)
    count too, and the frame found may lie among them. A linear fade moves the text's grey levels by the same amount
    on each frame of the fade, so the share of their movement done by a frame is its alpha there: the frame where
    half the run's movement is done (with the run's first and last frames)."""
    frames = [*before, *window, *after]
    indices = [c.index for c in frames]
    if not region.any() or at not in indices:
        return None
    grids = stack(frames)
    diff = (grids[:, DIFF] * region).sum(axis=(1, 2)).astype(np.float64)
    stable = (grids[:, STABLE] * region).sum(axis=(1, 2)).astype(np.float64)
    cells = int(region.sum())
    k = indices.index(at)
    found = _fade_run(diff, stable, k, indices, up=up, cells=cells, base=float(np.percentile(diff, FADE_BASE)))
    if found is None and FADE_BASE_AGAIN is not None:
        found = _fade_run(diff, stable, k, indices, up=up, cells=cells,
                          base=float(np.percentile(diff, FADE_BASE_AGAIN)), still=FADE_AGAIN_STILL)  # fmt: skip
    return found


#: A fade that fills more than half of the frames seen (a long fade, a short window) makes its own movement the
#: median: measured against it no frame moves, and the text is placed by its stable edges, which settle at the end of
#: a fade-in (a 500 ms fade-in over a still picture placed 4 frames early, dev seed 11). Where the first try finds no
#: run, it is sought again over this percentile of the frames' movement, ...
FADE_BASE_AGAIN: float | None = 25
#: ... and kept only where the picture around the run is still (its frames' median under FADE_FLOOR a cell): over
#: footage the second try took the picture's own runs for fades (dev seed 11: an end 7 frames late, a short cue
#: without a fade; an end 3 late). Dev seeds, within 0/1/2 frames: 13 0.924/0.956/0.965 -> 0.924/0.957/0.966, 11
#: 0.918/0.946/0.966 -> 0.919/0.947/0.968, nothing else changed; without the stillness 13 gained 0.003 more within
#: one frame and 11 lost 0.001.
FADE_AGAIN_STILL = True


def _fade_run(diff: np.ndarray, stable: np.ndarray, k: int, indices: Sequence[int], *, up: bool, cells: int,
              base: float, still: bool = False) -> Fade | None:  # fmt: skip
    """:func:`fade_ramp` over the movement (``diff``) and stable edges (``stable``) of a text's ``cells`` cells on the
    frames seen (``indices``), placed on the ``k``-th by its edges: its run of frames that move more than
    ``EXCESS_OVER_MEDIAN`` times ``base`` plus the floor, its checks, and the frame where half its movement is done
    (``still``: only where the frames around the run move less than the floor)."""
    moving = diff > EXCESS_OVER_MEDIAN * base + FADE_FLOOR * cells
    # the run of moving frames at the placement (a start is placed on the frame before the higher level, an end on
    # the first frame of the lower one: the run may begin just after or end just before it)
    hits = [j for j in (k, k + 1, k - 1) if 0 <= j < len(indices) and moving[j]]
    if not hits:
        return None
    lo = hi = hits[0]
    while lo > 0 and moving[lo - 1]:
        lo -= 1
    while hi + 1 < len(indices) and moving[hi + 1]:
        hi += 1
    if hi - lo + 1 < FADE_FRAMES or lo == 0 or hi == len(indices) - 1:
        return None
    if still and float(np.median(np.concatenate([diff[:lo], diff[hi + 1 :]]))) > FADE_FLOOR * cells:
        return None
    level_before, level_after = float(np.median(stable[:lo])), float(np.median(stable[hi + 1 :]))
    if (level_after - level_before if up else level_before - level_after) < STEP_MIN:
        return None
    low, high = min(level_before, level_after), max(level_before, level_after)
    margin = FADE_BETWEEN * (high - low)
    ramp = stable[lo : hi + 1]
    if int(((ramp > low + margin) & (ramp < high - margin)).sum()) < FADE_RAMP:
        return None
    mass = np.maximum(0.0, diff[lo : hi + 1] - base)
    if mass.max() > FADE_PEAK * np.median(mass):
        return None  # a cut inside a run of the picture's own movement
    done = np.cumsum(mass)
    # a start is the first frame at least half opaque, an end the first one less than half opaque
    half = indices[lo + int(np.searchsorted(done, done[-1] / 2, side="left" if up else "right"))]
    return Fade(half, indices[lo], indices[hi])


def appeared_at(window: Sequence[FrameChange], region: np.ndarray) -> int | None:
    """The frame where a text whose cells are ``region`` appeared: the middle of the last burst of excess there
    (see the module docstring); None without ``REGION_MIN`` of it."""
    return _placed(window, region, last=True)


def vanished_at(window: Sequence[FrameChange], region: np.ndarray) -> int | None:
    """The frame where a text whose cells are ``region`` vanished: the middle of the first burst of excess there;
    None without ``REGION_MIN`` of it."""
    return _placed(window, region, last=False)


BLIP_MAX_FRAMES = 2  # a text shown for at most this many frames is a blip (no level: the events' medians skip it)
BLIP_MIN = 8  # stroke pixels (aux size) that appear in a blip's cells ...
BLIP_VANISH = (0.6, 1.6)  # ... and vanish there again within BLIP_MAX_FRAMES frames, as a share of those
BLIP_QUIET = 0.3  # strokes appearing or vanishing in those cells on the frames around it, at most this share
BLIP_ROWS_SHARE = 0.3  # the cell rows of a blip span at most this share of the area (a flash changes them all)


@dataclass(frozen=True)
class Blip:
    """A text shown for one or two frames: its first frame, the first frame without it, and its cells."""

    index: int
    end: int
    cells: np.ndarray  # rows x cols boolean


def blips(window: Sequence[FrameChange], *, before: Sequence[FrameChange] = (),
          after: Sequence[FrameChange] = ()) -> list[Blip]:  # fmt: skip
    """Texts shown on at most ``BLIP_MAX_FRAMES`` frames of the window: stroke pixels (``BLIP_MIN`` or more) appear
    in some cells on one frame and about as many vanish there again within ``BLIP_MAX_FRAMES`` frames, while those
    cells gain and lose few strokes on the frame before and the frame after (a moving picture's strokes come and go
    on every frame), within a few rows (``BLIP_ROWS_SHARE``: a flash or a cut changes the whole picture). Such a
    text has no level for :func:`events` (a median of three frames skips it). ``before`` and ``after``: the
    detector's changes just before the window (its last frame is the one before a blip on the window's first frame,
    which must be quiet) and just after it (where a blip near its end vanishes)."""
    if not window:
        return []
    head = list(before[-1:])
    frames = [*head, *window, *after]
    grids = stack(frames)
    shape = grids.shape[2:]
    appeared, vanished = grids[:, APPEARED], grids[:, VANISHED]
    out: list[Blip] = []
    last = 0
    for k in range(1, len(head) + len(window)):
        cells = appeared[k] > 0
        total = int(appeared[k].sum())
        if total < BLIP_MIN:
            continue
        rows = np.flatnonzero(cells.any(axis=1))
        if rows[-1] - rows[0] + 1 > BLIP_ROWS_SHARE * shape[0]:
            continue
        area = _grown(cells)
        gone = [int(vanished[k + d][area].sum()) for d in range(1, BLIP_MAX_FRAMES + 1) if k + d < len(frames)]
        lasting = next((d for d, v in enumerate(gone, 1) if BLIP_VANISH[0] * total <= v <= BLIP_VANISH[1] * total),
                       None)  # fmt: skip
        if lasting is None or k + lasting + 1 >= len(frames):
            continue
        around = (appeared[k - 1][area].sum() + vanished[k - 1][area].sum()
                  + appeared[k + lasting + 1][area].sum() + vanished[k + lasting + 1][area].sum())  # fmt: skip
        if lasting == 2:
            around += appeared[k + 1][area].sum() + vanished[k + 1][area].sum()
        if around > BLIP_QUIET * total:
            continue
        if out and k - last <= BLIP_MAX_FRAMES:
            continue
        out.append(Blip(frames[k].index, frames[k + lasting].index, area))
        last = k
    return out


def _grown(cells: np.ndarray) -> np.ndarray:
    """``cells`` and their neighbours (a glyph's strokes vanish a cell off where they appeared)."""
    out = cells.copy()
    out[1:] |= cells[:-1]
    out[:-1] |= cells[1:]
    out[:, 1:] |= out[:, :-1].copy()
    out[:, :-1] |= out[:, 1:].copy()
    return out


#: A *short state*: a text shown for fewer frames than :func:`events` can give a level (a median of ``STEP_FRAMES``
#: frames skips it) that replaces a text or is replaced in the same place, so it is no blip (strokes come and go
#: there on both of its frames). Its cells' grey levels move on its first frame and again on the first frame after
#: it, at most SHORT_MAX_FRAMES later, each by SHORT_MIN levels beyond the cells' background (:func:`excess`) in
#: the cells both share, and hold still between the two and on the frames just before and after (SHORT_QUIET of the
#: weaker change at most: a fade or a moving picture moves them on every frame), within a few rows
#: (BLIP_ROWS_SHARE: a flash over the whole picture and its end are no text). Dev seed 13: missed 23 -> 15; states up to
#: 6 frames long instead of 4, or SHORT_QUIET 0.5, found none more (0.5 placed boundaries worse: within one frame
#: 0.943 -> 0.939) and cost more probes; two short states a window instead of one (``ChangeReader.MAX_SHORTS``) too.
#: Not kept either, no cue more on seeds 13 and 11 and boundaries worse: a 2-frame state whose inside frame moves too
#: (an encoder's smear; within one frame 0.943 -> 0.941), reading a sample that lies inside a short state.
SHORT_MAX_FRAMES = 4
SHORT_MIN = REGION_MIN
SHORT_QUIET = 0.25


@dataclass(frozen=True)
class Short:
    """A text state of one to ``SHORT_MAX_FRAMES`` frames: its first frame, the first frame after it, its cells."""

    index: int
    end: int
    cells: np.ndarray  # rows x cols boolean


def short_states(window: Sequence[FrameChange], *, before: Sequence[FrameChange] = (),
                 after: Sequence[FrameChange] = ()) -> list[Short]:  # fmt: skip
    """The short states (see :data:`SHORT_MAX_FRAMES`) that begin in the window, in frame order, none overlapping.
    ``before`` and ``after``: the detector's changes around the window (each cell's background is its median over
    all of them; the state may end after the window)."""
    if not window:
        return []
    frames = [*before, *window, *after]
    moved = excess(frames)
    if not moved.size:
        return []
    height = moved.shape[1]
    first, last = len(before), len(before) + len(window)
    out: list[Short] = []
    for a in range(max(1, first), last):
        if out and frames[a].index < out[-1].end:
            continue
        changed = moved[a] > 0
        if moved[a][changed].sum() < SHORT_MIN:
            continue
        for b in range(a + 1, min(a + SHORT_MAX_FRAMES + 1, len(frames) - 1)):
            shared = changed & (moved[b] > 0)
            weaker = min(moved[a][shared].sum(), moved[b][shared].sum())
            if weaker < SHORT_MIN:
                continue
            rows = np.flatnonzero(shared.any(axis=1))
            if rows[-1] - rows[0] + 1 > BLIP_ROWS_SHARE * height:
                continue
            around = moved[a - 1][shared].sum() + moved[b + 1][shared].sum() + moved[a + 1 : b][:, shared].sum()
            if around > SHORT_QUIET * weaker:
                continue
            out.append(Short(frames[a].index, frames[b].index, shared))
            break
    return out
