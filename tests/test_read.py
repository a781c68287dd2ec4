"""The reader stage (flowocr/read): text events from the detector's cells, where a text appeared and vanished, and
the reader's read-or-reuse decisions, on synthetic detector and stroke data (no video, no OCR)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from flowocr.aux.detector import APPEARED, CELL, DIFF, STABLE, VANISHED, FrameChange
from flowocr.cues.model import Cue
from flowocr.ocr.strokes import Strokes
from flowocr.ocr.types import SAME_BOX_IOU, TextLine, box_iou
from flowocr.probe.index import FrameIndex
from flowocr.read import events as ev
from flowocr.read.reader import ChangeReader, ReadTools

ROWS, COLS = 12, 20  # a 160 x 96 aux frame of a 640 x 384 area (scale 1/4)
CELLS = ev.CellMap(0, 0, 640, 384, COLS * CELL, ROWS * CELL)
ROW = slice(9, 11)  # the cell rows of line()'s box (300-330 px at 32 px a cell)
EDGES = 20  # stable edge pixels a cell of a line holds while the line is on screen


def change(index: int, diff: np.ndarray, stable: np.ndarray | None = None) -> FrameChange:
    """A detector result whose DIFF plane is ``diff`` and STABLE plane ``stable`` (rows x cols)."""
    planes = np.zeros((5, ROWS, COLS), np.uint8)
    planes[DIFF] = np.clip(diff, 0, 255)
    if stable is not None:
        planes[STABLE] = np.clip(stable, 0, 255)
    return FrameChange(index, 0, 0, 0, planes.tobytes(), ROWS, COLS)


def scene(frames: range, texts=(), *, moving: int = 0, cut: int | None = None, seed: int = 0):
    """The detector's changes of ``frames`` showing ``texts``: (first frame, end frame, rows, cols, fade frames).

    A text's cells hold ``EDGES`` stable edges while it is on screen and still (none on the frame it appears or
    vanishes on, which differs from the frame before), and their grey levels jump on those frames (spread over the
    fade's frames for a fade). A ``moving`` background moves every cell's grey levels by about that much on every
    frame and holds no stable edge (nothing in it stays still); a ``cut`` changes every cell at once on that frame."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in frames:
        diff = np.zeros((ROWS, COLS), int)
        stable = np.zeros((ROWS, COLS), int)
        if moving:
            diff += moving + rng.integers(-moving // 3, moving // 3 + 1, (ROWS, COLS))
        if cut == i:
            diff += 50
            stable[:] = 0
        for first, end, rows, cols, *fade in texts:
            fade = fade[0] if fade else 1
            if first < i < end and (i >= first + fade or not fade):
                stable[rows, cols] += EDGES
            if first <= i < first + fade or end <= i < end + fade:
                diff[rows, cols] += 60 // fade
        out[i] = change(i, diff, stable)
    return out


def over(c: FrameChange, *, stable=0, diff=0) -> FrameChange:
    """``c`` with ``stable`` added to its STABLE plane and ``diff`` to its DIFF plane (a picture behind its text)."""
    planes = c.grid().astype(int)
    planes[STABLE] += stable
    planes[DIFF] += diff
    return FrameChange(c.index, 0, 0, 0, np.clip(planes, 0, 255).astype(np.uint8).tobytes(), ROWS, COLS)


def test_a_line_that_appears_is_an_event_over_a_moving_background():
    found = ev.events(list(scene(range(1, 16), [(9, 99, slice(9, 11), slice(4, 16))], moving=12).values()))
    assert [e.index for e in found] == [9]  # the frame it changed on
    assert found[0].cells[9:11, 4:16].all() and not found[0].cells[:8].any()


def test_short_texts_in_quick_succession_over_a_still_picture_are_each_an_event(monkeypatch):
    # three 6-frame lines 4 frames apart: their steps cover nearly every frame of the window, so a band's typical step
    # is a text's; the picture holds still (its own edges on every frame), so its noise is its frame-to-frame moves
    texts = [(a, a + 6, slice(9, 11), slice(4, 16)) for a in (4, 14, 24)]
    frames = []
    for c in scene(range(1, 34), texts).values():
        planes = c.grid().copy()
        planes[STABLE] += 30  # the still picture's stable edges, in every cell
        frames.append(FrameChange(c.index, 0, 0, 0, planes.tobytes(), ROWS, COLS))
    assert [e.index for e in ev.events(frames)] == [4, 10, 14, 20, 24, 30]
    monkeypatch.setattr(ev, "STILL_NOISE", False)
    monkeypatch.setattr(ev, "CELL_EVENTS", False)
    assert [e.index for e in ev.events(frames)] != [4, 10, 14, 20, 24, 30]  # (the typical step alone hides them)
    monkeypatch.setattr(ev, "CELL_EVENTS", True)
    # a picture held for 4 frames at a time: its edges move in every band on every fourth frame, no text
    monkeypatch.setattr(ev, "STILL_NOISE", True)
    held = []
    for i in range(1, 34):
        planes = np.zeros((5, ROWS, COLS), np.uint8)
        planes[STABLE] = 30 + 15 * ((i // 4) % 2)
        planes[DIFF] = 20 if i % 4 == 0 else 0
        held.append(FrameChange(i, 0, 0, 0, planes.tobytes(), ROWS, COLS))
    assert ev.events(held) == []


def test_a_line_over_a_picture_held_for_two_frames_is_an_event_on_the_envelope(monkeypatch):
    # animation on twos: the picture moves on every other frame, so its edges are stable on the frames between and
    # every band swings by far more than a short line's step; the line's edges are stable on every frame it shows
    def frames(texts, *, held=True):
        out = []
        for c in scene(range(1, 40), texts).values():
            planes = c.grid().copy()
            if c.index % 2:
                planes[STABLE] += 12  # a held frame: the picture's edges still since the frame before, in every cell
            if not (held and c.index % 2):
                planes[DIFF] += 10  # the picture moved
            out.append(FrameChange(c.index, 0, 0, 0, planes.tobytes(), ROWS, COLS))
        return out

    line = [(16, 25, slice(9, 11), slice(8, 12))]  # a short line, 9 frames: 8 cells of 20 stable edges
    monkeypatch.setattr(ev, "CELL_EVENTS", False)  # (its own cells' onsets find its start whatever the picture)
    monkeypatch.setattr(ev, "ENVELOPE", True)
    assert [e.index for e in ev.events(frames(line))] == [16, 25]
    assert ev.events(frames([])) == []  # the picture alone: no event
    # only over a picture that holds still on some frames (ENVELOPE_HELD): one whose grey levels move on every frame
    # is no held picture, however its edges swing
    assert ev.events(frames(line, held=False)) == []
    monkeypatch.setattr(ev, "ENVELOPE_HELD", None)
    assert [e.index for e in ev.events(frames(line, held=False))] == [16, 25]
    monkeypatch.setattr(ev, "ENVELOPE", False)
    assert ev.events(frames(line)) == []  # on the counts themselves the swings hide it
    monkeypatch.setattr(ev, "CELL_EVENTS", True)
    assert [e.index for e in ev.events(frames(line))] == [16, 25]  # its own cells' onset and offset


def test_a_line_whose_band_swings_with_the_picture_is_an_event_of_its_own_cells(monkeypatch):
    monkeypatch.setattr(ev, "CELL_EVENTS", True)  # (off by default)
    # a moving picture whose edges are still on every other frame, in every cell: each band's stable edges swing by
    # far more than a short line's step on every frame; the line's own cells hold theirs on every frame it shows
    def frames(texts, *, swing=12):
        return [over(c, stable=swing * (c.index % 2), diff=10) for c in scene(range(1, 40), texts).values()]

    line = [(18, 99, slice(9, 11), slice(8, 11))]  # three cells a row
    found = ev.events(frames(line))
    assert [e.index for e in found] == [18]
    assert found[0].cells[9:11, 8:11].all() and found[0].cells.sum() == 6 and not found[0].emptied
    # a window given CONTEXT frames on each side decides it as the whole stream does, wherever the window ends
    whole = frames(line)
    for cut in range(12, 28):
        split = [ev.events(whole[a:b], before=whole[max(0, a - ev.CONTEXT) : a], after=whole[b : b + ev.CONTEXT])
                 for a, b in ((0, cut), (cut, len(whole)))]  # fmt: skip
        assert [e.index for part in split for e in part] == [18], cut
    assert ev.events(frames([])) == []  # the picture alone
    assert ev.events(frames([(18, 99, slice(9, 11), slice(8, 10))])) == []  # two cells a row: no onset (CELL_RUN)
    # gone on frame 30: its cells' offset, an event that emptied them
    found = ev.events(frames([(18, 30, slice(9, 11), slice(8, 11))]))
    assert [(e.index, e.emptied) for e in found] == [(18, False), (30, True)]
    monkeypatch.setattr(ev, "CELL_OFFSETS", False)
    assert [e.index for e in ev.events(frames([(18, 30, slice(9, 11), slice(8, 11))]))] == [18]
    monkeypatch.setattr(ev, "CELL_OFFSETS", True)
    # cells that held still edges before the line came (a still picture's there): no text came into empty cells
    still = np.zeros((ROWS, COLS), int)
    still[9:11, 8:11] = 25
    held = [over(c, stable=still) for c in frames(line)]
    assert ev.events(held) == []
    monkeypatch.setattr(ev, "CELL_EMPTY", None)
    assert [e.index for e in ev.events(held)] == [18]
    monkeypatch.setattr(ev, "CELL_EVENTS", False)
    assert ev.events(frames(line)) == []  # the band sums alone do not see it
    assert [e.index for e in ev.events(frames(line, swing=0))] == [18]  # (they do over a picture that holds none)


def test_cells_whose_stable_edges_flicker_step_no_more_than_their_noise(monkeypatch):
    monkeypatch.setattr(ev, "CELL_EVENTS", True)  # (off by default)
    # a textured sign area (cell rows 1-3) whose stable edges flicker by up to 30 on every frame, and a line below
    def frames(texts):
        rng = np.random.default_rng(1)
        out = []
        for c in scene(range(1, 40), texts).values():
            flicker = np.zeros((ROWS, COLS), int)
            flicker[1:4] = 20 + rng.integers(0, 31, (3, COLS))
            out.append(over(c, stable=flicker, diff=10))
        return out

    line = [(18, 30, slice(9, 11), slice(8, 11))]
    monkeypatch.setattr(ev, "CELL_EMPTY", None)  # (the flicker's cells hold edges on every frame: the floor alone)
    monkeypatch.setattr(ev, "CELL_EVENTS", False)
    bands = [e.index for e in ev.events(frames([]))]  # (the flicker's own band steps)
    monkeypatch.setattr(ev, "CELL_EVENTS", True)
    assert [e.index for e in ev.events(frames([]))] == bands
    assert sorted([e.index for e in ev.events(frames(line))]) == sorted([*bands, 18, 30])
    monkeypatch.setattr(ev, "CELL_NOISE", 0.0)  # without the floor the flicker's cells step now and then
    assert len(ev.events(frames([]))) > len(bands)


def test_a_replacement_is_one_event_and_a_vanishing_one_too():
    texts = [(-10, 8, slice(9, 11), slice(4, 16)), (8, 14, slice(9, 11), slice(6, 14))]
    found = ev.events(list(scene(range(1, 21), texts).values()))
    assert [e.index for e in found] == [8, 14]


def test_a_text_gone_and_the_next_shown_two_frames_later_are_two_events(monkeypatch):
    # a long line gone on frame 8, a short one shown on frame 10 (between them the band drops more than it dips)
    texts = [(-10, 8, slice(9, 11), slice(4, 16)), (10, 99, slice(9, 11), slice(8, 12))]
    frames = list(scene(range(1, 21), texts).values())
    assert [e.index for e in ev.events(frames)] == [8, 10]
    assert [e.index for e in ev.events(frames[8:], before=frames[:8])] == [10]  # the window after the sample at 8
    monkeypatch.setattr(ev, "OPPOSITE_STEPS_APART", False)
    assert [e.index for e in ev.events(frames)] == [8]  # the step up was taken for the step down's neighbour


def test_a_shot_cut_is_no_event_but_a_line_changing_with_it_is():
    # A cut changes every cell for one frame and leaves the stable edges where they were: no band steps.
    plain = scene(range(1, 16), cut=7, moving=3)
    assert ev.events(list(plain.values())) == []
    sign = scene(range(1, 16), [(7, 99, slice(2, 4), slice(5, 15))], cut=7, moving=3)
    assert [e.index for e in ev.events(list(sign.values()))] == [7]


def test_background_motion_alone_makes_no_event():
    assert ev.events(list(scene(range(1, 31), moving=40, seed=3).values())) == []


def test_events_of_a_window_need_the_frames_around_it():
    changes = scene(range(1, 30), [(12, 99, slice(9, 11), slice(4, 16))])
    window = [changes[i] for i in range(10, 21)]
    before, after = [changes[i] for i in range(7, 10)], [changes[i] for i in range(21, 24)]
    whole = [e.index for e in ev.events(list(changes.values()))]
    assert [e.index for e in ev.events(window, before=before, after=after)] == whole
    # A step at the window's last frame is found only with the frames after it (a sample's window ends there).
    late = [changes[i] for i in range(5, 13)]
    assert ev.events(late) == [] and ev.events(late, after=[changes[i] for i in range(13, 16)]) != []


def test_a_line_vanishing_while_another_appears_elsewhere_on_the_same_frame_are_two_events():
    texts = [(-10, 8, slice(9, 11), slice(4, 16)), (8, 99, slice(1, 3), slice(6, 14))]  # bottom gone, a sign on top
    found = ev.events(list(scene(range(1, 20), texts).values()))
    assert [e.index for e in found] == [8, 8]
    bottom, top = sorted(found, key=lambda e: -np.flatnonzero(e.cells.any(axis=1))[0])
    assert bottom.cells[9:11, 4:16].all() and not bottom.cells[:8].any() and bottom.emptied
    assert top.cells[1:3, 6:14].all() and not top.cells[8:].any() and not top.emptied


def test_a_replacement_even_by_a_much_shorter_text_is_no_band_emptied_and_a_vanishing_is():
    shorter = [(-10, 8, ROW, slice(4, 16)), (8, 99, ROW, slice(9, 11))]  # "Please take your seats now." -> "Hurry!"
    replaced = ev.events(list(scene(range(1, 20), shorter).values()))
    gone = ev.events(list(scene(range(1, 20), [(-10, 8, ROW, slice(4, 16))]).values()))
    assert [(e.index, e.emptied) for e in replaced] == [(8, False)]  # it kept a sixth of its edges, but dipped
    assert [(e.index, e.emptied) for e in gone] == [(8, True)]


def test_a_text_appears_at_the_last_burst_in_its_cells_and_vanishes_at_the_first():
    region = np.zeros((ROWS, COLS), bool)
    region[9:11, 4:16] = True
    texts = [(0, 3, slice(9, 11), slice(4, 16)), (8, 40, slice(9, 11), slice(6, 14))]
    window = list(scene(range(1, 13), texts, moving=2).values())
    assert ev.appeared_at(window, region) == 8
    assert ev.vanished_at(window, region) == 3
    quiet = list(scene(range(1, 13), moving=2).values())
    assert ev.appeared_at(quiet, region) is None and ev.vanished_at(quiet, region) is None


def test_a_fade_is_placed_where_half_of_its_change_is_done():
    region = np.zeros((ROWS, COLS), bool)
    region[9:11, 4:16] = True
    window = list(scene(range(1, 21), [(6, 99, slice(9, 11), slice(4, 16), 6)]).values())  # 6 equal steps
    assert ev.appeared_at(window, region) == 8


def fade_scene(frames: range, first: int, fade: int, *, up: bool, moving: int = 0, cut: bool = False):
    """A line in ROW, cols 4-16, fading in (``up``) or out over ``fade`` frames from ``first``: its cells' grey levels
    move by the same amount on each of those frames and its stable edges pass between their two levels as it fades,
    half of them moving too much to be still (``cut``: it appears or vanishes at once on ``first``, its grey levels
    and edges move on that frame alone)."""
    rng = np.random.default_rng(1)
    out = {}
    for i in frames:
        diff = np.zeros((ROWS, COLS), int)
        if moving:
            diff += moving + rng.integers(-moving // 3, moving // 3 + 1, (ROWS, COLS))
        share = 1.0 if cut and i >= first else min(1.0, max(0.0, (i - first + 1) / fade))
        alpha = share if up else 1 - share
        fading = (first <= i < first + fade) if not cut else i == first
        stable = np.zeros((ROWS, COLS), int)
        stable[ROW, 4:16] = round(EDGES * alpha * (0.5 if fading else 1))  # the moving half of its edges is no still
        if fading:
            diff[ROW, 4:16] += 60 // (1 if cut else fade)
        out[i] = change(i, diff, stable)
    return list(out.values())


def test_a_fading_text_is_placed_on_its_first_half_opaque_frame_and_a_cut_is_not_moved(monkeypatch):
    region = np.zeros((ROWS, COLS), bool)
    region[ROW, 4:16] = True
    # alpha 1/6 .. 6/6 on frames 6-11: half opaque from 8 (3/6); fading out, 5/6 .. 0, less than half from 9 (2/6):
    # where half the grey-level movement of the fade is done, and where more than half is
    window = fade_scene(range(1, 21), 6, 6, up=True)
    placed = ev.stable_step_at(window, region, up=True)
    assert placed is not None and placed >= 9  # the edges settle at the end of the fade
    assert ev.faded_at(window, region, placed, up=True) == 8
    window = fade_scene(range(1, 21), 6, 6, up=False)
    placed = ev.stable_step_at(window, region, up=False)
    assert placed is not None and placed <= 7
    assert ev.faded_at(window, region, placed, up=False) == 9
    # a line that appears at once is no fade, nor is a fade that the window cuts (its start before the window)
    window = fade_scene(range(1, 21), 6, 1, up=True, cut=True)
    assert ev.faded_at(window, region, ev.stable_step_at(window, region, up=True), up=True) is None
    window = fade_scene(range(8, 21), 6, 6, up=True)
    assert ev.faded_at(window, region, ev.stable_step_at(window, region, up=True), up=True) is None
    # over a picture that moves the cells as much as the fade does, no run of the text's own stands out
    window = fade_scene(range(1, 21), 6, 6, up=True, moving=60)
    assert ev.faded_at(window, region, ev.stable_step_at(window, region, up=True), up=True) is None
    # the picture moved in the text's cells on the frames before it came at once (a run of movement ending in a cut,
    # the edges passing between their levels on its frames): no fade
    cut = fade_scene(range(1, 21), 10, 1, up=True, cut=True)
    window = []
    for c in cut:
        grid = c.grid().copy()
        if 4 <= c.index < 10:
            grid[DIFF][ROW, 4:16] = 15
            grid[STABLE][ROW, 4:16] = EDGES // 2
        window.append(FrameChange(c.index, 0, 0, 0, grid.tobytes(), ROWS, COLS))
    placed = ev.stable_step_at(window, region, up=True)
    assert placed is not None and ev.faded_at(window, region, placed, up=True) is None
    # what the rule stops: without it, the run's half is placed among the picture's frames
    monkeypatch.setattr(ev, "FADE_PEAK", 100.0)
    assert ev.faded_at(window, region, placed, up=True) not in (None, 10)


def test_a_long_fade_over_a_still_picture_is_placed_though_it_fills_most_of_the_frames_seen(monkeypatch):
    region = np.zeros((ROWS, COLS), bool)
    region[ROW, 4:16] = True
    # alpha 1/14 .. 14/14 on frames 5-18 of 1-23: half opaque from 11 (7/14); fading out, less than half from 12
    for up, want in ((True, 11), (False, 12)):
        window = fade_scene(range(1, 24), 5, 14, up=up)
        placed = ev.stable_step_at(window, region, up=up)
        assert placed is not None and ev.faded_at(window, region, placed, up=up) == want
        # the fade's own movement is the median of the frames seen: measured against it alone, no frame moves
        monkeypatch.setattr(ev, "FADE_BASE_AGAIN", None)
        assert ev.faded_at(window, region, placed, up=up) is None
        monkeypatch.undo()
    # over a picture that moves around the run (less than the fade does), no second try: a picture's own run of
    # movement would be taken for a fade
    window = fade_scene(range(1, 24), 5, 14, up=True, moving=2)
    placed = ev.stable_step_at(window, region, up=True)
    assert ev.faded_at(window, region, placed, up=True) is None
    monkeypatch.setattr(ev, "FADE_AGAIN_STILL", False)
    assert ev.faded_at(window, region, placed, up=True) == 11


def test_a_level_change_is_the_best_two_level_fit_with_its_sign():
    series = np.array([3, 5, 4, 2, 40, 38, 45, 41, 39], float)
    assert ev.level_change(series, up=True) == 4
    assert ev.level_change(series, up=False) is None  # no fit steps down
    assert ev.level_change(series[::-1], up=False) == 5
    assert ev.level_change(np.array([7.0]), up=True) is None
    # one odd frame is no level: the change stays where the series settles
    assert ev.level_change(np.array([3, 60, 4, 2, 40, 38, 45, 41, 39], float), up=True) == 4


def test_a_text_is_placed_where_its_own_cells_hold_its_stable_edges():
    region = np.zeros((ROWS, COLS), bool)
    region[9:11, 4:16] = True
    texts = [(0, 3, slice(9, 11), slice(4, 16)), (8, 40, slice(9, 11), slice(6, 14))]
    window = list(scene(range(1, 13), texts, moving=8).values())
    assert ev.stable_step_at(window, region, up=True) == 8  # stable from 9: it changed on 8
    assert ev.stable_step_at(window, region, up=False) == 3  # its last frame is 2
    # the picture in its cells moves most two frames after it came (a camera move): the burst is there, its edges
    # are not
    moved = {i: c for i, c in scene(range(1, 16), [(6, 99, slice(9, 11), slice(4, 16))], moving=8).items()}
    grid = moved[8].grid().copy()
    grid[DIFF][9:11, 4:16] = 200
    moved[8] = FrameChange(8, 0, 0, 0, grid.tobytes(), ROWS, COLS)
    window = list(moved.values())
    assert ev.appeared_at(window, region) == 8
    assert ev.stable_step_at(window, region, up=True) == 6
    assert ev.stable_step_at(list(scene(range(1, 13), moving=8).values()), region, up=True) is None


def test_cells_of_boxes_and_rows_of_cells_map_back_and_forth():
    cells = ev.CellMap(100, 600, 1600, 400, 320, 80)  # scale 1/5: a cell is 40 x 40 frame pixels
    mask = cells.cells([(140.0, 680.0, 300.0, 719.0)])
    assert mask.shape == (10, 40)
    assert np.argwhere(mask).tolist() == [[2, c] for c in range(1, 5)]
    assert cells.rows(mask) == [(680.0, 720.0)]


# --- the reader's decisions ----------------------------------------------------------------------------------


class FakeFrame:
    stream = "main"

    def __init__(self, index: int, strokes: Strokes) -> None:
        self.index, self.pts, self.strokes = index, index, strokes
        self.image = self


def line(text: str, y0: float = 300.0, y1: float = 330.0) -> TextLine:
    return TextLine(text, 0.95, ((200.0, y0), (440.0, y0), (440.0, y1), (200.0, y1)))


def stroke_map(*rows: tuple[int, int, int, int]) -> Strokes:
    """A 384 x 640 stroke map at scale 1 with stroke pixels in the boxes (x0, y0, x1, y1) given (a grid of dots)."""
    mask = np.zeros((384, 640), bool)
    for x0, y0, x1, y1 in rows:
        mask[y0:y1:3, x0:x1:3] = True
    return Strokes(mask, 1.0)


class Harness:
    """A ChangeReader over fake frames: ``texts[i]`` is what OCR of frame i reads; ``maps[i]`` its stroke map."""

    def __init__(self, maps: dict[int, Strokes], texts: dict[int, tuple], changes: dict[int, FrameChange],
                 boxes: dict[int, tuple] | None = None,
                 crops: dict[int, np.ndarray] | None = None) -> None:  # fmt: skip
        """``boxes[i]``: what a probe of frame i finds (None: it cannot vouch); without ``boxes``, no probing.
        ``crops[i]``: the full-size grey levels of any line box of frame i (or, a dict, of the box whose top is each
        key); without ``crops``, no second look."""
        self.maps, self.texts, self.calls, self.fetched, self.boxes, self.probes = maps, texts, [], [], boxes, []
        self.crops, self.looks, self.known, self.whole_probes = crops, [], [], []
        index = FrameIndex(tuple(range(200)), Fraction(1, 25), (0,), 200)
        tools = ReadTools(strokes=lambda f: None if f is None else f.strokes, ocr=self.ocr, fetch=self.fetch,
                          index=index, origin=(0, 0), probe=None if boxes is None else self.probe,
                          crop=None if crops is None else self.crop)  # fmt: skip
        self.reader = ChangeReader(tools, changes, CELLS)

    def probe(self, frame, strokes, rows=(), lines=(), slop=0, whole=False):
        if whole:  # the first frame's: apart, so that the probes the tests count are those of the reads after it
            self.whole_probes.append(frame.index)
        else:
            self.probes.append((frame.index, tuple(rows) + tuple(lines)))
        return self.boxes.get(frame.index)

    def ocr(self, frame, strokes=None, rows=(), lines=(), slop=0, whole=False, known=()):
        """As the engine reads: a line read there whose box is a known line's is that line, unrecognised."""
        self.calls.append((frame.index, tuple(rows) + tuple(lines)))
        self.known.append(tuple(known))
        found = self.texts.get(frame.index, ())
        return tuple(next((k for k in known if box_iou(k.bounds, ln.bounds) >= SAME_BOX_IOU), ln) for ln in found)

    def crop(self, frame, box):
        self.looks.append((frame.index, box))
        crop = self.crops.get(frame.index)
        return crop.get(box[1]) if isinstance(crop, dict) else crop

    def fetch(self, i):
        self.fetched.append(i)
        return FakeFrame(i, self.maps.get(i, stroke_map()))

    def read(self, i: int):
        return self.reader.read(FakeFrame(i, self.maps.get(i, stroke_map())))


def lines_scene(frames: range, *texts) -> dict[int, FrameChange]:
    """A still background showing ``texts`` (first frame, end frame, cell rows) across the middle columns."""
    return scene(frames, [(a, b, rows, slice(5, 15)) for a, b, rows in texts], moving=2)


def test_the_first_frame_is_read_whole_and_an_unchanged_text_is_reused():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    h = Harness(maps, {0: text}, lines_scene(range(1, 16), (-10, 99, ROW)))
    first = h.read(0)
    assert [(r.why, r.reused, r.lines) for r in first] == [("first", False, text)]
    assert h.calls == [(0, ())]
    assert [(r.why, r.reused, r.lines) for r in h.read(12)] == [("unchanged", True, text)]
    assert len(h.calls) == 1


def test_the_first_frame_is_probed_whole_and_recognised_only_where_the_detector_finds_a_box():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330))}
    for boxes, calls, fed in [((), [], ((), True)), ((text[0].bounds,), [(0, ())], (text, False))]:
        h = Harness(maps, {0: text}, lines_scene(range(1, 16), (-10, 99, ROW)), {0: boxes})
        assert [(r.why, r.lines, r.reused) for r in h.read(0)] == [("first", *fed)]
        assert h.whole_probes == [0] and h.probes == [] and h.calls == calls


def test_a_text_event_where_no_line_was_is_read_with_its_rows_though_no_stroke_shows():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    changes = lines_scene(range(1, 16), (-10, 99, ROW), (7, 99, slice(1, 3)))
    h = Harness(maps, {0: text, 12: (*text, line("A sign", 40, 70))}, changes)
    out = h.read(0) + h.read(12)
    assert out[-1].why == "elsewhere" and not out[-1].reused
    rows = h.calls[-1][1]
    assert any(y0 <= 40 and y1 >= 64 for y0, y1 in rows)  # the sign's rows (cells 1-2: 32-96 px) are read
    assert any(y0 <= 300 and y1 >= 330 for y0, y1 in rows)  # and the last lines' rows


def read_by_bands(h: Harness, i: int):
    """Frame ``i`` read as the first frame, then taken as read by its bands (as every later read is)."""
    out = h.read(i)
    h.reader.last_read = "changed"
    return out


def _sign_scene(boxes):
    """A line the pixel test sees unchanged, and a text event in other rows (a sign, or a picture there)."""
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    changes = lines_scene(range(1, 16), (-10, 99, ROW), (7, 99, slice(1, 3)))
    return text, Harness(maps, {0: text, 12: (*text, line("A sign", 40, 70))}, changes, boxes)


def test_an_event_elsewhere_whose_probe_finds_only_the_last_lines_boxes_reuses_their_reading():
    text, h = _sign_scene({12: ((201.0, 299.0, 441.0, 331.0),)})  # the detector finds the line again, nothing else
    read_by_bands(h, 0)
    out = h.read(12)
    assert [(r.why, r.reused, r.lines) for r in out] == [("probed", True, text)]
    assert len(h.calls) == 1 and len(h.probes) == 1  # the first frame's read only
    rows = h.probes[0][1]  # the probe looks where a read would
    assert any(y0 <= 40 and y1 >= 64 for y0, y1 in rows) and any(y0 <= 300 and y1 >= 330 for y0, y1 in rows)


def test_an_event_elsewhere_is_read_when_its_probe_finds_a_new_box_or_cannot_vouch():
    for boxes in [((200.0, 300.0, 440.0, 330.0), (250.0, 40.0, 380.0, 70.0)), None]:
        text, h = _sign_scene({12: boxes})
        read_by_bands(h, 0)
        out = h.read(12)
        assert [(r.why, r.reused) for r in out] == [("elsewhere", False)], boxes
        assert len(h.calls) == 2 and len(h.probes) == 1 and out[0].lines[-1].text == "A sign"


def test_a_read_recognises_only_the_boxes_that_are_not_last_lines_seen_unchanged_and_none_where_it_finds_none():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    changes = lines_scene(range(1, 16), (-10, 99, ROW), (7, 99, slice(1, 3)))  # an event in other rows
    still = {0: line_crop("Hello there", seed=1), 12: line_crop("Hello there", seed=2)}
    sign = (250.0, 40.0, 380.0, 70.0)

    def harness(boxes, crops):
        # read again, the line would come out otherwise: that it keeps its reading shows it was not recognised
        h = Harness(maps, {0: text, 12: (TextLine("Hel1o there", 0.7, text[0].box), line("A sign", 40, 70))},
                    changes, {12: boxes}, crops)  # fmt: skip
        read_by_bands(h, 0)
        return h, h.read(12)

    h, out = harness(((201.0, 299.0, 441.0, 331.0), sign), still)  # the line's box and a new one
    assert [(r.why, r.reused) for r in out] == [("elsewhere", False)]
    assert h.known == [(), text] and [ln.text for ln in out[0].lines] == ["Hello there", "A sign"]
    assert [i for i, _ in h.probes] == [12]  # the probe's boxes serve the read too
    gone = {0: still[0], 12: line_crop("", seed=2)}
    h, out = harness((), gone)  # nothing found, the line gone at full size: empty, without OCR
    assert [(r.why, r.reused, r.lines) for r in out] == [("elsewhere", True, ())] and len(h.calls) == 1
    h, out = harness((), still)  # nothing found, but the line there unchanged at full size: kept (KEEP_UNFOUND)
    assert [(r.why, r.reused, r.lines) for r in out] == [("elsewhere", True, text)] and len(h.calls) == 1
    ChangeReader.KEEP_UNFOUND = False
    try:
        h, out = harness((), still)
        assert [(r.why, r.reused, r.lines) for r in out] == [("elsewhere", True, ())]
    finally:
        ChangeReader.KEEP_UNFOUND = True
    replaced = {0: still[0], 12: line_crop("Hello world", seed=2)}
    h, out = harness(((201.0, 299.0, 441.0, 331.0), sign), replaced)  # the line changed in its box: all read
    assert h.known == [(), ()] and out[0].lines[0].text == "Hel1o there"
    h, out = harness(((201.0, 299.0, 441.0, 331.0), (430.0, 300.0, 520.0, 330.0)), still)  # a box touches it
    assert h.known == [(), ()]
    h, out = harness(((188.0, 299.0, 441.0, 331.0), sign), still)  # its box grew by a glyph (IoU 0.95): all read
    assert h.known == [(), ()] and out[0].lines[0].text == "Hel1o there"
    # a busy band detected twice finds the line again in part: still the line, kept; the part read is dropped
    part = (330.0, 302.0, 441.0, 330.0)
    piece = TextLine("there", 0.9, ((330.0, 302.0), (441.0, 302.0), (441.0, 330.0), (330.0, 330.0)))
    misread = TextLine("Hel1o there", 0.7, text[0].box)
    h = Harness(maps, {0: text, 12: (misread, piece, line("A sign", 40, 70))}, changes,
                {12: ((201.0, 299.0, 441.0, 331.0), part, sign)}, still)  # fmt: skip
    read_by_bands(h, 0)
    out = h.read(12)
    assert h.known == [(), text] and [ln.text for ln in out[0].lines] == ["Hello there", "A sign"]
    ChangeReader.KEEP_PARTS = False
    try:
        h = Harness(maps, {0: text, 12: (TextLine("Hel1o there", 0.7, text[0].box), line("A sign", 40, 70))},
                    changes, {12: ((201.0, 299.0, 441.0, 331.0), part, sign)}, still)  # fmt: skip
        read_by_bands(h, 0)
        h.read(12)
        assert h.known == [(), ()]  # the part touches the line: all read
    finally:
        ChangeReader.KEEP_PARTS = True
    ChangeReader.READ_NEW_ONLY = False
    try:
        h, out = harness(((201.0, 299.0, 441.0, 331.0), sign), still)
        assert h.known == [(), ()] and out[0].lines[0].text == "Hel1o there"
    finally:
        ChangeReader.READ_NEW_ONLY = True


def test_a_last_line_found_only_in_part_keeps_its_reading_where_it_is_seen_unchanged():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    changes = lines_scene(range(1, 16), (-10, 99, ROW), (7, 99, slice(1, 3)))  # an event in other rows
    sign = (250.0, 40.0, 380.0, 70.0)
    cut = TextLine("Hello th", 0.9, ((200.0, 301.0), (340.0, 301.0), (340.0, 330.0), (200.0, 330.0)))
    still = {0: line_crop("Hello there", seed=1), 12: line_crop("Hello there", seed=2)}

    def harness(boxes, crops):
        # read again, the line would come out cut short: that it keeps its reading shows it was not recognised
        h = Harness(maps, {0: text, 12: (cut, line("A sign", 40, 70))}, changes, {12: boxes}, crops)
        read_by_bands(h, 0)
        return h, h.read(12)

    # OCR's detector cut the line short, or in two: the line found in part, unchanged at full size, is kept
    for parts in [((200.0, 301.0, 340.0, 330.0),), ((200.0, 301.0, 300.0, 330.0), (310.0, 301.0, 440.0, 330.0))]:
        h, out = harness((*parts, sign), still)
        assert h.known == [(), text] and sorted(ln.text for ln in out[0].lines) == ["A sign", "Hello there"], parts
        h, out = harness(parts, still)  # and with nothing else found, nothing is recognised
        assert [(r.reused, r.lines) for r in out] == [(True, text)] and len(h.calls) == 1
    replaced = {0: still[0], 12: line_crop("Hello", seed=2)}
    h, out = harness(((200.0, 301.0, 340.0, 330.0), sign), replaced)  # a shorter text in its place: read
    assert h.known == [(), ()] and out[0].lines[0].text == "Hello th"
    h, out = harness(((180.0, 301.0, 340.0, 330.0), sign), still)  # a box reaching past it: read
    assert h.known == [(), ()]
    ChangeReader.KEEP_SHRUNK = False
    try:
        h, out = harness(((200.0, 301.0, 340.0, 330.0), sign), still)
        assert h.known == [(), ()] and out[0].lines[0].text == "Hello th"
    finally:
        ChangeReader.KEEP_SHRUNK = True


def test_a_box_recognised_to_nothing_found_again_unchanged_is_not_recognised_again_and_is_where_it_changed():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330))}
    changes = lines_scene(range(1, 40), (-10, 99, ROW), (7, 99, slice(1, 3)), (19, 99, slice(1, 3)),
                          (31, 99, slice(1, 3)))  # fmt: skip
    texture = (250.0, 40.0, 380.0, 70.0)  # a picture's corner the detector finds, that OCR reads as nothing
    probes = {i: ((201.0, 299.0, 441.0, 331.0), texture) for i in (12, 24)}
    probes[36] = ((201.0, 299.0, 441.0, 331.0), (252.0, 41.0, 381.0, 71.0))  # found again, a pixel off
    line_look = {i: line_crop("Hello there", seed=1) for i in (0, 12, 24, 36)}

    def harness(looks):
        crops = {i: {298: line_look[i], 38: looks[i]} for i in looks}
        h = Harness(maps, {i: text for i in (0, 12, 24, 36)}, changes, probes, crops)
        read_by_bands(h, 0)
        return h, h.read(12) + h.read(24) + h.read(36)

    still = {i: line_crop("/\\/\\ /\\", seed=5, width=134) for i in (0, 12, 24, 36)}
    h, out = harness(still)
    assert [(r.why, r.reused, r.lines) for r in out] == [("elsewhere", False, text), ("elsewhere", True, text),
                                                         ("elsewhere", True, text)]  # fmt: skip
    assert [c[0] for c in h.calls] == [0, 12]  # only the first sight of the texture is recognised
    changed = line_crop("\\/ \\/\\/", seed=6, width=134)
    moving = {**still, 24: changed, 36: changed}  # at 24 the picture there changed: recognised again, then not
    h, out = harness(moving)
    assert [c[0] for c in h.calls] == [0, 12, 24] and [r.reused for r in out] == [False, False, True]
    ChangeReader.KEEP_BLANKS = False
    try:
        h, out = harness(still)
        assert [c[0] for c in h.calls] == [0, 12, 24, 36]
    finally:
        ChangeReader.KEEP_BLANKS = True


def test_new_strokes_kept_outside_the_last_lines_leave_the_probe_to_vouch_a_change_inside_them_does_not():
    text, box = (line("Hello there"),), ((201.0, 299.0, 441.0, 331.0),)
    changes = lines_scene(range(1, 28), (-10, 99, ROW), (7, 99, slice(1, 3)), (16, 99, slice(1, 3)))
    picture = stroke_map((200, 300, 440, 330), (200, 40, 440, 70))  # a picture's strokes above the line, kept
    h = Harness({0: stroke_map((200, 300, 440, 330)), 12: picture, 24: picture}, {0: text}, changes,
                {12: box, 24: box})  # fmt: skip
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12) + h.read(24)] == ["probed", "probed"] and [c[0] for c in h.calls] == [0]
    replaced = stroke_map((200, 300, 300, 330), (200, 40, 440, 70))  # and the line's strokes changed
    h = Harness({0: stroke_map((200, 300, 440, 330)), 12: picture, 24: replaced}, {0: text}, changes,
                {12: box, 24: box})  # fmt: skip
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12) + h.read(24)] == ["probed", "elsewhere"]
    assert [i for i, _ in h.probes] == [12, 24] and h.known[-1] == ()  # 24's is the read's own: the line is read again


def test_new_strokes_kept_outside_the_last_lines_with_no_text_event_are_probed_and_read_as_an_event_there():
    text, sign = (line("Hello there"),), line("thin light line", 40, 58)
    lit = stroke_map((200, 300, 440, 330), (200, 40, 227, 58))  # 54 new stroke pixels: too few for a burst
    boxes = ((201.0, 299.0, 441.0, 331.0), sign.bounds)
    h = Harness({0: stroke_map((200, 300, 440, 330)), 12: lit, 24: lit}, {0: text, 24: (*text, sign)},
                lines_scene(range(1, 28), (-10, 99, ROW)), {24: boxes})  # fmt: skip
    h.reader.NEWS_PROBE = False
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] == ["unchanged"]  # not kept yet: the last sample was the reference
    out = h.read(24)
    assert [(r.why, r.lines) for r in out] == [("elsewhere", (*text, sign))] and [c[0] for c in h.calls] == [0, 24]


def test_as_many_new_strokes_as_a_static_text_keeps_are_probed_on_the_first_sample_they_show():
    text, sign = (line("Hello there"),), line("thin light line", 40, 58)
    lit = stroke_map((200, 300, 440, 330), (200, 40, 227, 58))  # 54 new stroke pixels, no text event
    boxes = ((201.0, 299.0, 441.0, 331.0), sign.bounds)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: lit, 24: lit}
    h = Harness(maps, {0: text, 12: (*text, sign)}, lines_scene(range(1, 28), (-10, 99, ROW)), {12: boxes})
    read_by_bands(h, 0)
    assert [(r.why, r.lines) for r in h.read(12)] == [("news", (*text, sign))] and len(h.probes) == 1
    assert [r.why for r in h.read(24)] == ["unchanged"] and [c[0] for c in h.calls] == [0, 12]
    # the probe finds only the last lines' boxes (the new strokes are a picture's): reused, no OCR, and taken as the
    # pixel test's word, as an unchanged sample is (a cue's end may be sought back past it)
    h = Harness(maps, {0: text}, lines_scene(range(1, 28), (-10, 99, ROW)), {12: boxes[:1]})
    read_by_bands(h, 0)
    assert [(r.why, r.lines) for r in h.read(12)] == [("news-probed", text)] and [c[0] for c in h.calls] == [0]
    assert h.reader.assumed == {12}
    # fewer new strokes than that: not looked at
    few = stroke_map((200, 300, 440, 330), (200, 40, 227, 46))  # 18
    h = Harness({**maps, 12: few}, {0: text}, lines_scene(range(1, 28), (-10, 99, ROW)), {12: boxes})
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] == ["unchanged"] and h.probes == []


@pytest.fixture
def no_probe_empty():
    ChangeReader.PROBE_EMPTY = False
    yield
    ChangeReader.PROBE_EMPTY = True


def test_an_empty_screen_the_stroke_map_sees_unchanged_is_probed_whole_and_read_where_a_box_is_found():
    hidden = (line("white on grey, no stroke kept"),)  # no stroke pixel on the map, no text event
    box = (201.0, 299.0, 441.0, 331.0)
    for boxes, why, calls in [({12: (box,)}, "hidden", [0, 12]), ({12: ()}, "unchanged", [0])]:
        h = Harness({0: stroke_map(), 12: stroke_map()}, {12: hidden}, lines_scene(range(1, 16)), boxes)
        read_by_bands(h, 0)
        out = h.read(12)
        assert [r.why for r in out] == [why] and [c[0] for c in h.calls] == calls and h.whole_probes == [0, 12]
        assert out[0].lines == (hidden if why == "hidden" else ())
    # a box recognised to nothing (texture) found again in its place is not read again, unchanged at full size or
    # not (a moving picture's texture); a box elsewhere is
    for seed, found, read in [(1, box, [0, 12]), (2, box, [0, 12]), (2, (201.0, 99.0, 441.0, 131.0), [0, 12, 24])]:
        texture = {12: {297: line_crop("Hello there", seed=1)}, 24: {297: line_crop("Hello there", seed=seed)}}
        h = Harness({0: stroke_map(), 12: stroke_map(), 24: stroke_map()}, {}, lines_scene(range(1, 28)),
                    {12: (box,), 24: (found,)}, texture)  # fmt: skip
        read_by_bands(h, 0)
        whys = [r.why for r in h.read(12) + h.read(24)]
        assert whys == ["hidden", "unchanged" if found == box else "hidden"] and [c[0] for c in h.calls] == read


@pytest.mark.usefixtures("no_probe_empty")
def test_an_empty_screen_is_not_probed_whole_where_that_is_switched_off():
    hidden = (line("white on grey, no stroke kept"),)
    h = Harness({0: stroke_map(), 12: stroke_map()}, {12: hidden}, lines_scene(range(1, 16)), {12: (hidden[0].bounds,)})
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] == ["unchanged"] and h.whole_probes == [0]


def test_an_empty_screen_is_not_probed_whole_again_while_the_picture_holds_still_since_a_probe_found_nothing():
    hidden = (line("white on grey, no stroke kept"),)
    box = (201.0, 299.0, 441.0, 331.0)
    still = {i: change(i, np.zeros((ROWS, COLS))) for i in range(1, 64)}
    came = dict(still)
    moved = np.zeros((ROWS, COLS))
    moved[ROW, 8:11] = 4  # a text's cells moved by 4 levels on the frame it came
    came[40] = change(40, moved)
    maps = {i: stroke_map() for i in (0, 12, 24, 36, 48)}
    for changes, probed in [(still, [0, 12]), (came, [0, 12, 48])]:
        h = Harness(maps, {48: hidden}, changes, {12: (), 24: (), 36: (), 48: (box,)})
        read_by_bands(h, 0)
        out = [r for i in (12, 24, 36, 48) for r in h.read(i)]
        assert h.whole_probes == probed  # a text that came moved the picture: probed again
        assert [r.why for r in out] == ["unchanged"] * 3 + ["hidden" if 48 in probed else "unchanged"]
    # a picture that moves by 2 levels on every frame sums up past EMPTY_MOVED: probed on every sample
    nothing = {i: () for i in (12, 24, 36, 48)}
    h = Harness(maps, {}, lines_scene(range(1, 64)), nothing)
    read_by_bands(h, 0)
    [h.read(i) for i in (12, 24, 36, 48)]
    assert h.whole_probes == [0, 12, 24, 36, 48]
    ChangeReader.EMPTY_MOVED = 0  # (switched off: every such sample probed)
    try:
        h = Harness(maps, {}, still, nothing)
        read_by_bands(h, 0)
        [h.read(i) for i in (12, 24, 36, 48)]
        assert h.whole_probes == [0, 12, 24, 36, 48]
    finally:
        ChangeReader.EMPTY_MOVED = 3


def test_a_few_new_strokes_kept_on_an_empty_screen_with_no_text_event_are_probed_and_read_where_a_box_is_found():
    sign = line("thin outline on grey", 40, 58)
    few = stroke_map((200, 40, 212, 46))  # 8 stroke pixels of a 59 px line whose thin outline barely shows
    for boxes, why, calls in [({24: (sign.bounds,)}, "elsewhere", [0, 24]), ({24: ()}, "probed", [0])]:
        h = Harness({0: stroke_map(), 12: few, 24: few}, {24: (sign,)}, lines_scene(range(1, 28)), boxes)
        read_by_bands(h, 0)
        assert [r.why for r in h.read(12)] == ["unchanged"]  # not kept yet: the last sample was the reference
        assert [r.why for r in h.read(24)] == [why] and [c[0] for c in h.calls] == calls
    h = Harness({0: stroke_map(), 12: stroke_map((200, 40, 206, 46)), 24: stroke_map((200, 40, 206, 46))}, {},
                lines_scene(range(1, 28)), {24: ()})  # 4 kept: a picture's specks, no probe of its bands
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] + [r.why for r in h.read(24)] == ["unchanged", "unchanged"] and not h.probes
    assert h.whole_probes == [0, 12, 24]  # (probed whole as an empty screen over a moving picture is: PROBE_EMPTY)


def test_an_event_elsewhere_is_probed_for_a_line_the_pixel_test_cannot_see_unless_an_event_touched_it():
    faint = (line("light on light"),)
    box = {12: ((200.0, 300.0, 440.0, 330.0),)}
    sign = lines_scene(range(1, 16), (-10, 99, ROW), (7, 99, slice(1, 3)))  # an event elsewhere only
    h = Harness({0: stroke_map(), 12: stroke_map()}, {0: faint, 12: (line("next line"),)}, sign, box)
    read_by_bands(h, 0)
    # no event in the line's cells: vouched for as a sample with no event at all is, and the probe finds its box
    assert [(r.why, r.lines) for r in h.read(12)] == [("probed", faint)] and len(h.probes) == 1
    both = lines_scene(range(1, 16), (-10, 6, ROW), (6, 99, ROW), (7, 99, slice(1, 3)))  # and one on the line
    h = Harness({0: stroke_map(), 12: stroke_map()}, {0: faint, 12: (line("next line"),)}, both, box)
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] == ["elsewhere"]  # a replacement there keeps its box
    assert [i for i, _ in h.probes] == [12] and h.known[-1] == ()  # the read's own probe; the line is read again
    ChangeReader.PROBE_UNSEEN = False
    try:
        h = Harness({0: stroke_map(), 12: stroke_map()}, {0: faint, 12: (line("next line"),)}, sign, box)
        read_by_bands(h, 0)
        assert [r.why for r in h.read(12)] == ["elsewhere"] and h.known[-1] == ()  # not vouched: read again
    finally:
        ChangeReader.PROBE_UNSEEN = True


def test_an_unsure_reading_or_the_first_frames_whole_area_reading_is_read_again_not_probed():
    _, h = _sign_scene({12: ((201.0, 299.0, 441.0, 331.0),)})
    h.read(0)  # the first frame, read over the whole area
    assert [r.why for r in h.read(12)] == ["elsewhere"] and h.known == [(), ()]  # read again, every line
    _, h = _sign_scene({12: ((201.0, 299.0, 441.0, 331.0),)})
    h.texts[0] = (TextLine("Hel1o there", 0.8, line("Hello there").box),)  # read unsure
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] == ["elsewhere"] and h.known[-1] == ()


def test_boxes_are_the_same_boxes_when_each_overlaps_one_of_the_others_by_half():
    from flowocr.read.reader import same_boxes

    known = [(0.0, 0.0, 100.0, 20.0)]
    assert same_boxes([(5.0, 1.0, 104.0, 21.0)], known, 0.5)
    assert not same_boxes([(5.0, 1.0, 104.0, 21.0), (0.0, 50.0, 30.0, 70.0)], known, 0.5)  # a new box
    assert not same_boxes([(0.0, 0.0, 40.0, 20.0)], known, 0.5)  # part of the line: a shorter text
    # the line read without its last two of five characters: not the whole line at the reader's overlap
    assert same_boxes([(0.0, 0.0, 60.0, 20.0)], known, 0.5)
    assert not same_boxes([(0.0, 0.0, 60.0, 20.0)], known, ChangeReader.PROBE_IOU)
    assert not same_boxes([], known, 0.5) and same_boxes([], [], 0.5)


def test_an_event_on_a_line_whose_strokes_do_not_show_is_read_not_vouched_for():
    faint = (line("light on light"),)
    maps = {0: stroke_map(), 12: stroke_map()}  # the text leaves no stroke pixel
    h = Harness(maps, {0: faint, 12: (line("next line"),)}, lines_scene(range(1, 16), (-10, 6, ROW), (6, 99, ROW)))
    h.read(0)
    assert [r.why for r in h.read(12)] == ["unvouched"]


def test_an_event_on_a_line_of_few_stroke_pixels_is_read_though_fewer_than_inside_min_of_them_moved():
    few = stroke_map((200, 300, 212, 309))  # 12 stroke pixels: a thin line over a mid-tone picture
    replaced = stroke_map((200, 300, 212, 306), (200, 306, 206, 309))  # its replacement's strokes: 2 moved
    h = Harness({0: few, 12: replaced}, {0: (line("light on light"),), 12: (line("next line"),)},
                lines_scene(range(1, 16), (-10, 6, ROW), (6, 99, ROW)))  # fmt: skip
    h.read(0)
    assert [r.why for r in h.read(12)] == ["unvouched"] and [c[0] for c in h.calls] == [0, 12]


def line_crop(text: str, *, seed: int, level: int = 160, width: int = 244, height: int = 34) -> np.ndarray:
    """The full-size grey levels of a line box: thin unoutlined text at ``level`` (a 360p serif line peaks near
    160, under the stroke maps' BRIGHT) over a dark textured picture that differs with ``seed`` (it moves)."""
    import cv2

    rng = np.random.default_rng(seed)
    grey = (30 + rng.integers(0, 25, (height, width))).astype(np.uint8)
    cv2.putText(grey, text, (4, height - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.7, level, 1, cv2.LINE_AA)
    return grey


def test_a_line_the_stroke_map_cannot_see_is_looked_at_again_in_its_full_size_box_with_its_own_levels():
    from flowocr.ocr.strokes import strokes
    from flowocr.read.pixel import ChangeTest, line_change

    test, ref = ChangeTest(), line_crop("light on dark", seed=1)
    assert strokes(ref).count == 0  # the fixed levels see nothing of it
    look = line_change(ref, line_crop("light on dark", seed=2))  # the same text, the picture moved
    assert look.strokes >= test.SEES_MIN and test.line_same(look) and test.line_kept(look)
    look = line_change(ref, line_crop("next line here", seed=2))  # replaced in its box
    assert not test.line_same(look) and not test.line_kept(look)
    look = line_change(ref, line_crop("", seed=2))  # gone
    assert not test.line_same(look) and not test.line_kept(look)
    flat = np.full((34, 244), 120, np.uint8)
    assert line_change(flat, flat) == (0, 0, 0) and not test.line_same(line_change(flat, flat))  # nothing to see
    assert line_change(ref, ref[:, :100]) == (0, 0, 0)


def specked(text: str, spots: int, *, level: int = 200) -> np.ndarray:
    """The full-size grey levels of a line box: a line with a dark outline over a dark picture, with ``spots``
    bright specks of the picture in the box (a picture moving behind it brings them)."""
    import cv2

    grey = np.full((40, 260), 25, np.uint8)
    rng = np.random.default_rng(spots)
    for x, y in zip(rng.integers(2, 256, spots), rng.integers(2, 36, spots)):
        cv2.circle(grey, (int(x), int(y)), 1, 230, -1)  # a light speck of the picture, with the dark around it
    cv2.putText(grey, text, (6, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.8, level, 2, cv2.LINE_AA)
    return grey


def test_a_line_is_kept_where_its_own_strokes_stayed_though_a_moving_picture_brought_strokes_beside_them():
    from flowocr.read.pixel import ChangeTest, line_change

    test = ChangeTest()
    ref = specked("Are you sure?", 0)
    moving = line_change(ref, specked("Are you sure?", 40))  # the same text, the picture's specks came beside it
    assert moving.strokes >= test.SEES_MIN and moving.vanished < 0.05 * moving.strokes
    assert moving.appeared >= test.inside_fraction * moving.strokes  # a fifth of the strokes moved, counted so
    assert not test.line_same(moving) and test.line_kept(moving)  # it did not hold still, but its text is there
    assert not test.line_kept(line_change(ref, specked("Be careful now", 40)))  # replaced
    shares = line_change(ref, specked("Are you there", 40))  # replaced by a line that begins as it did
    assert shares.vanished < test.inside_fraction * shares.strokes and not test.line_kept(shares)
    assert not test.line_kept(line_change(ref, specked("", 40)))  # gone
    # read faint in a fade-in (under the picture's brightest), now plain: the text's strokes all came since
    faint = line_change(specked("Are you sure?", 40, level=70), specked("Are you sure?", 40))
    assert faint.strokes >= test.SEES_MIN and faint.vanished < 0.05 * faint.strokes
    assert faint.appeared >= faint.strokes and not test.line_kept(faint)


def test_a_last_line_read_surely_keeps_its_reading_where_a_moving_picture_only_brought_strokes_beside_it():
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    changes = lines_scene(range(1, 16), (-10, 99, ROW), (7, 99, slice(1, 3)))  # an event in other rows
    moving = {0: specked("Hello there", 0), 12: specked("Hello there", 40)}
    box = line("Hello there").box
    for score in (0.99, ChangeReader.KEPT_SCORE - 0.02):
        first = TextLine("Hello there", score, box)
        # read again, the line would come out misread: that it keeps its reading shows it was not recognised
        h = Harness(maps, {0: (first,), 12: (TextLine("Hel1o there", 0.99, box), line("A sign", 40, 70))},
                    changes, {12: ((201.0, 299.0, 441.0, 331.0), (250.0, 40.0, 380.0, 70.0))}, moving)  # fmt: skip
        read_by_bands(h, 0)
        out = h.read(12)
        kept = score >= ChangeReader.KEPT_SCORE  # a reading less sure is read again: a chance to right it
        assert h.known == [(), (first,) if kept else ()]
        assert [ln.text for ln in out[0].lines] == ["Hello there" if kept else "Hel1o there", "A sign"]


def test_a_faint_line_some_35_grey_levels_over_its_background_is_looked_at_too():
    import cv2

    from flowocr.read.pixel import ChangeTest, line_change

    def faint(text: str, seed: int) -> np.ndarray:  # light grey text over a mid-grey picture that moves a little
        grey = (168 + np.random.default_rng(seed).integers(0, 5, (34, 244))).astype(np.uint8)
        cv2.putText(grey, text, (4, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7, 205, 2, cv2.LINE_AA)
        return grey

    test = ChangeTest()
    look = line_change(faint("NEWS 7", 1), faint("NEWS 7", 2))
    assert look.strokes >= test.SEES_MIN and test.line_same(look)
    assert not test.line_same(line_change(faint("NEWS 7", 1), faint("", 2)))


def test_an_event_on_a_line_the_stroke_map_cannot_see_is_vouched_for_by_a_second_look_at_full_size():
    faint = (line("light on dark"),)
    maps = {0: stroke_map(), 12: stroke_map()}  # the text leaves no stroke pixel on the map
    scene_ = lines_scene(range(1, 16), (-10, 6, ROW), (6, 99, ROW))  # an event on its cells
    same = {0: line_crop("light on dark", seed=1), 12: line_crop("light on dark", seed=2)}
    h = Harness(maps, {0: faint, 12: (line("next line"),)}, scene_, crops=same)
    h.read(0)
    assert [(r.why, r.lines) for r in h.read(12)] == [("unchanged", faint)] and len(h.calls) == 1
    assert [index for index, _ in h.looks] == [0, 12] and h.looks[0][1] == (198, 298, 442, 332)  # box + 2 px
    replaced = {0: same[0], 12: line_crop("next line here", seed=2)}
    h = Harness(maps, {0: faint, 12: (line("next line"),)}, scene_, crops=replaced)
    h.read(0)
    assert [r.why for r in h.read(12)] == ["unvouched"] and len(h.calls) == 2
    ChangeReader.LOOK_AGAIN = False
    try:
        h = Harness(maps, {0: faint, 12: (line("next line"),)}, scene_, crops=same)
        h.read(0)
        assert [r.why for r in h.read(12)] == ["unvouched"] and 12 not in [i for i, _ in h.looks]
    finally:
        ChangeReader.LOOK_AGAIN = True


def test_a_line_the_stroke_map_cannot_see_is_looked_at_at_full_size_on_every_sample_though_no_event_came():
    faint = (line("light on dark"),)
    maps = {0: stroke_map(), 12: stroke_map()}  # the text leaves no stroke pixel on the map
    still = lines_scene(range(1, 16), (-10, 99, ROW))  # and no text event
    ref = line_crop("light on dark", seed=1)
    for now, why in [(line_crop("light on dark", seed=2), "unchanged"), (line_crop("next line here", seed=2), "unseen"),
                     (line_crop("", seed=2), "unseen")]:  # fmt: skip
        h = Harness(maps, {0: faint, 12: (line("next line here"),)}, still, crops={0: ref, 12: now})
        read_by_bands(h, 0)
        assert [r.why for r in h.read(12)] == [why] and len(h.calls) == (1 if why == "unchanged" else 2)
    flat = np.full((34, 244), 120, np.uint8)  # too faint at full size too: no read on its word
    h = Harness(maps, {0: faint}, still, crops={0: flat, 12: flat})
    read_by_bands(h, 0)
    assert [r.why for r in h.read(12)] == ["unchanged"] and len(h.looks) == 2
    ChangeReader.LOOK_UNSEEN = False
    try:
        h = Harness(maps, {0: faint}, still, crops={0: ref, 12: line_crop("next line here", seed=2)})
        read_by_bands(h, 0)
        assert [r.why for r in h.read(12)] == ["unchanged"] and h.looks == []
    finally:
        ChangeReader.LOOK_UNSEEN = True


def test_a_change_the_map_sees_in_a_lines_box_is_looked_at_again_and_is_none_when_its_full_size_strokes_stayed():
    text = (line("light on dark"),)
    # the map's strokes in the box moved (42 %: a moving picture behind small text, on the reduced map)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((300, 300, 440, 330))}
    steady = lines_scene(range(1, 16), (-10, 99, ROW))
    ref = line_crop("light on dark", seed=1)
    kept, replaced = line_crop("light on dark", seed=2), line_crop("next line here", seed=2)
    for now, why in [(kept, "unchanged"), (replaced, "changed")]:
        h = Harness(maps, {0: text, 12: (line("next line here"),)}, steady, crops={0: ref, 12: now})
        h.read(0)
        assert [r.why for r in h.read(12)] == [why] and [i for i, _ in h.looks][:2] == [0, 12]
    ChangeReader.LOOK_AGAIN = False
    try:
        h = Harness(maps, {0: text, 12: (line("next line here"),)}, steady, crops={0: ref, 12: ref})
        h.read(0)
        assert [r.why for r in h.read(12)] == ["changed"]
    finally:
        ChangeReader.LOOK_AGAIN = True


def test_a_line_of_few_stroke_pixels_changed_when_a_share_of_them_moved_though_no_event_came():
    few = stroke_map((200, 300, 212, 309))  # 12 stroke pixels: small text over footage makes no text event
    steady = lines_scene(range(1, 16), (-10, 99, ROW))
    for after, why in [(stroke_map((200, 300, 209, 306)), "changed"),  # 6 moved: a share of SMALL_SHARE
                       (stroke_map((200, 300, 212, 306), (200, 306, 206, 309)), "unchanged")]:  # 2: noise
        h = Harness({0: few, 12: after}, {0: (line("light on light"),), 12: (line("next line"),)}, steady)
        h.read(0)
        assert [r.why for r in h.read(12)] == [why]


def test_an_event_on_a_line_the_pixel_test_sees_unchanged_is_vouched_for():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 440, 330))}
    h = Harness(maps, {0: text}, lines_scene(range(1, 16), (-10, 6, ROW), (6, 99, ROW)))
    h.read(0)
    assert [r.why for r in h.read(12)] == ["unchanged"]


def test_no_event_and_no_stroke_change_is_no_read_even_for_a_line_the_pixel_test_cannot_see():
    faint = (line("light on light"),)
    h = Harness({0: stroke_map(), 12: stroke_map()}, {0: faint}, lines_scene(range(1, 16), (-10, 99, ROW)))
    h.read(0)
    assert [(r.why, r.lines) for r in h.read(12)] == [("unchanged", faint)] and len(h.calls) == 1


def test_a_text_gone_is_empty_without_ocr_but_a_replacement_whose_strokes_do_not_show_is_read():
    text = (line("Hello there"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map()}  # the strokes are gone at 12 either way
    gone = Harness(maps, {0: text}, lines_scene(range(1, 16), (-10, 6, ROW)))
    gone.read(0)
    assert [(r.why, r.lines, r.reused) for r in gone.read(12)] == [("vanished", (), True)] and len(gone.calls) == 1
    faint = (line("light on light"),)
    replaced = Harness(maps, {0: text, 12: faint}, lines_scene(range(1, 16), (-10, 6, ROW), (6, 99, ROW)))
    replaced.read(0)
    assert [(r.why, r.lines) for r in replaced.read(12)] == [("changed", faint)] and len(replaced.calls) == 2


def test_where_a_text_vanishes_a_probe_that_finds_a_box_on_its_rows_has_the_frame_read():
    """PROBE_VANISHED: a text whose strokes do not show (light on a light picture) that replaced the last lines is a
    box a probe finds on their rows: the frame is read (``refilled``); no box there, or only the box of a line that
    stayed, is an empty screen without OCR."""
    text, faint = (line("Hello there"),), (line("What?"),)
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map()}
    gone = lines_scene(range(1, 16), (-10, 6, ROW))

    def harness(found):
        h = Harness(maps, {0: text, 12: faint}, gone, boxes={0: ((200.0, 300.0, 440.0, 330.0),), 12: found})
        h.read(0)
        return h, h.read(12)

    h, out = harness(((300.0, 301.0, 340.0, 329.0),))
    assert [(r.why, r.lines, r.reused) for r in out] == [("refilled", faint, False)] and len(h.calls) == 2
    for found in [(), ((200.0, 300.0, 440.0, 330.0),), ((300.0, 100.0, 340.0, 130.0),), None]:
        h, out = harness(found)  # no box; the old line's own; one on other rows; a probe that cannot tell
        assert [(r.why, r.lines) for r in out] == [("vanished", ())] and len(h.calls) == 1
    ChangeReader.PROBE_VANISHED = False
    try:
        h, out = harness(((300.0, 301.0, 340.0, 329.0),))
        assert [r.why for r in out] == ["vanished"] and len(h.calls) == 1
    finally:
        ChangeReader.PROBE_VANISHED = True


def test_where_a_text_vanishes_the_lines_that_stayed_are_kept_without_ocr():
    dialogue, sign = line("Hello there"), line("A sign", 40, 70)
    gone = lines_scene(range(1, 16), (-10, 6, ROW), (-10, 99, slice(1, 3)))  # the dialogue's band emptied at 6
    # a sign the map sees (100 stroke pixels, under a sixth of the area's) stays while the dialogue (800) goes
    maps = {0: stroke_map((200, 300, 440, 330), (200, 40, 230, 70)), 12: stroke_map((200, 40, 230, 70))}
    h = Harness(maps, {0: (dialogue, sign)}, gone)
    h.read(0)
    assert [(r.why, r.lines, r.reused) for r in h.read(12)] == [("vanished", (sign,), True)] and len(h.calls) == 1
    # a sign the map cannot see: kept when a second look at full size sees it unchanged, not when it is gone too
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map()}
    empty = line_crop("", seed=2)
    ref = {298: line_crop("Hello there", seed=1), 38: line_crop("A sign", seed=1)}  # by the top of each box
    for now, kept in [(line_crop("A sign", seed=2), (sign,)), (empty, ())]:
        h = Harness(maps, {0: (dialogue, sign)}, gone, crops={0: ref, 12: {298: empty, 38: now}})
        h.read(0)
        assert [(r.why, r.lines) for r in h.read(12)] == [("vanished", kept)] and len(h.calls) == 1
    ChangeReader.PARTLY_VANISHED = False
    try:
        kept = {298: empty, 38: line_crop("A sign", seed=2)}
        h = Harness(maps, {0: (dialogue, sign)}, gone, crops={0: ref, 12: kept})
        h.read(0)
        assert [(r.why, r.lines) for r in h.read(12)] == [("vanished", ())]
    finally:
        ChangeReader.PARTLY_VANISHED = True


def test_two_events_between_samples_read_the_text_state_between_them():
    maps = {0: stroke_map(), 12: stroke_map()}
    short = (line("Short one"),)
    texts = {0: (), 6: short, 12: (line("Next"),)}
    h = Harness(maps, texts, lines_scene(range(1, 16), (4, 9, ROW), (9, 99, ROW)))
    h.read(0)
    out = h.read(12)
    assert [r.why for r in out] == ["between", "unvouched"]  # the next line is where the short one was
    assert h.fetched == [6] and out[0].index == 6 and out[0].lines == short  # the middle of frames 4-8


def test_a_short_line_over_a_swinging_picture_between_samples_is_read_on_its_own_cells_events(monkeypatch):
    # a 10-frame line between the samples at 12 and 36, over a picture whose edges are still on every other frame in
    # every cell (each band swings by far more than the line's step): its cells' onset and offset bound a state
    # (then the sample at 36 is read: an event touched the line read there, whose strokes never showed)
    def changes():
        shown = scene(range(1, 50), [(20, 30, ROW, slice(8, 11))])
        return {i: over(c, stable=12 * (i % 2), diff=10) for i, c in shown.items()}

    short = (line("Yes."),)
    for cells, why, fetched in [(True, ["between", "unvouched"], [25]), (False, ["unchanged"], [])]:
        monkeypatch.setattr(ev, "CELL_EVENTS", cells)
        h = Harness({}, {25: short}, changes())
        h.read(0)
        h.read(12)
        out = h.read(36)
        assert [r.why for r in out] == why and h.fetched == fetched
        assert not cells or out[0].lines == short


def test_a_tiny_text_left_where_a_line_vanished_is_a_state_between_samples_when_another_event_follows_it():
    # a line gone at 4 leaving a one-cell text (its band emptied: it kept few of its stable edges), the next line at 9
    changes = scene(range(1, 16), [(-10, 4, ROW, slice(2, 18)), (4, 9, slice(9, 10), slice(9, 10)),
                                   (9, 99, ROW, slice(4, 16))], moving=2)  # fmt: skip
    assert [(e.index, e.emptied) for e in ev.events([changes[i] for i in range(1, 16)])] == [(4, True), (9, False)]
    tiny = (line("え？"),)
    texts = {0: (line("Gone soon"),), 6: tiny, 12: (line("Next"),)}
    for on, fetched in [(True, [6]), (False, [])]:
        h = Harness({0: stroke_map(), 12: stroke_map()}, texts, changes)
        h.reader.EMPTIED_BETWEEN = on
        h.read(0)
        out = h.read(12)
        assert h.fetched == fetched and [r.lines for r in out][-1] == texts[12]
        assert [(r.why, r.index, r.lines) for r in out][:-1] == ([("between", 6, tiny)] if on else [])


def test_a_text_of_two_frames_between_a_band_emptied_and_the_next_line_is_read_as_a_short_state():
    # a line gone at 4 leaving a one-cell text for two frames (its band emptied), the next line from 6, over a picture
    # whose grey levels jump in cells all over it on every frame (a pan): too busy for a short state by them
    changes = scene(range(1, 16), [(-10, 4, ROW, slice(2, 18)), (4, 6, slice(9, 10), slice(9, 10)),
                                   (6, 99, ROW, slice(4, 16))], moving=2)  # fmt: skip
    rng = np.random.default_rng(3)
    for i, c in changes.items():
        planes = c.grid().copy()
        planes[DIFF] += ((rng.random((ROWS, COLS)) < 0.3) * 80).astype(planes.dtype)
        changes[i] = FrameChange(i, 0, 0, 0, planes.tobytes(), ROWS, COLS)
    window = [changes[i] for i in range(1, 13)]
    assert [(e.index, e.emptied) for e in ev.events(window)] == [(4, True), (6, False)]
    assert ev.short_states(window) == []
    tiny, after = (line("え？"),), (line("Next"),)
    texts = {0: (line("Gone soon"),), 4: tiny, 12: after}
    for on in (True, False):
        h = Harness({0: stroke_map(), 12: stroke_map()}, texts, changes)
        h.reader.BRIEF_STATES = on
        h.read(0)
        out = h.read(12)
        assert [r.lines for r in out][-1] == after
        if not on:
            assert h.fetched == [] and len(out) == 1
            continue
        assert h.fetched == [4] and [(r.why, r.index, r.lines) for r in out][0] == ("short", 4, tiny)
        cue = Cue(Fraction(4, 25), Fraction(12, 25), "え？", line("え？").bounds, 0.95, 0, 4, 12)
        assert (h.reader.refine(cue).start_index, h.reader.refine(cue).end_index) == (4, 6)  # its two changes
    # the state shows nothing the last reading lacks (a gap between two lines): nothing is fed for it
    h = Harness({0: stroke_map(), 12: stroke_map()}, {0: (line("Gone soon"),), 12: after}, changes)
    h.reader.BRIEF_STATES = True
    h.read(0)
    assert [r.why for r in h.read(12)][:1] != ["short"] and h.fetched == [4]


def test_a_state_between_samples_whose_line_the_pixel_test_sees_unchanged_is_not_read():
    text = (line("Hello there"),)
    same = stroke_map((200, 300, 440, 330))
    changes = lines_scene(range(1, 16), (-10, 4, ROW), (4, 9, ROW), (9, 99, ROW))  # events on the line at 4 and 9
    h = Harness({0: same, 6: same, 12: same}, {0: text}, changes)
    h.read(0)
    out = h.read(12)
    assert h.fetched == [6] and [c[0] for c in h.calls] == [0]  # the middle of 4-8 decoded, its strokes alike
    assert [(r.why, r.lines) for r in out] == [("unchanged", text)]
    moved = Harness({0: same, 6: stroke_map((200, 300, 300, 330)), 12: same}, {0: text}, changes)
    moved.read(0)
    assert [r.why for r in moved.read(12)][0] == "between" and [c[0] for c in moved.calls] == [0, 6, 12]


def _between_sign_scene(boxes):
    """A line the pixel test sees unchanged, and a text state between two samples in other rows (frames 4-8, then
    another from 9 on: a sign, or a picture there)."""
    text = (line("Hello there"),)
    same = stroke_map((200, 300, 440, 330))
    changes = lines_scene(range(1, 16), (-10, 99, ROW), (4, 9, slice(1, 3)), (9, 99, slice(1, 3)))
    return text, Harness({0: same, 6: same, 12: same}, {0: text, 6: (*text, line("A sign", 40, 70)), 12: text},
                         changes, boxes)  # fmt: skip


def test_a_state_between_samples_elsewhere_whose_probe_finds_only_the_last_lines_is_fed_as_their_reading():
    text, h = _between_sign_scene({6: ((201.0, 299.0, 441.0, 331.0),), 12: ((201.0, 299.0, 441.0, 331.0),)})
    read_by_bands(h, 0)
    out = h.read(12)
    assert [(r.why, r.index, r.reused, r.lines) for r in out][0] == ("between-probed", 6, True, text)
    assert [c[0] for c in h.calls] == [0] and [i for i, _ in h.probes][0] == 6  # probed, not read
    rows = h.probes[0][1]  # the probe looks where the read would: the state's rows and the last lines'
    assert any(y0 <= 40 and y1 >= 64 for y0, y1 in rows) and any(y0 <= 300 and y1 >= 330 for y0, y1 in rows)


def test_a_state_between_samples_elsewhere_is_read_when_its_probe_finds_a_new_box_or_a_truncated_one():
    sign = (250.0, 40.0, 380.0, 70.0)
    for boxes in [((200.0, 300.0, 440.0, 330.0), sign), ((200.0, 300.0, 344.0, 330.0),), None]:
        text, h = _between_sign_scene({6: boxes})
        read_by_bands(h, 0)
        out = h.read(12)
        assert (out[0].why, out[0].index, out[0].reused) == ("between", 6, False), boxes
        assert [c[0] for c in h.calls][:2] == [0, 6] and out[0].lines[-1].text == "A sign"


def test_of_two_text_states_between_two_samples_the_first_is_read():
    maps = {0: stroke_map(), 18: stroke_map()}
    texts = {0: (), 6: (line("One"),), 12: (line("Two"),), 18: (line("Three"),)}
    h = Harness(maps, texts, lines_scene(range(1, 22), (3, 9, ROW), (9, 15, ROW), (15, 99, ROW)))
    h.read(0)
    out = h.read(18)
    assert h.fetched == [6]  # not 12 too: one state a window (ChangeReader.MAX_BETWEEN)
    assert [(r.why, r.index) for r in out][0] == ("between", 6) and [c[0] for c in h.calls] == [0, 6, 18]


def test_events_closer_than_a_text_state_are_no_state_between_but_a_short_one_read_where_it_shows_a_text():
    maps = {0: stroke_map(), 12: stroke_map()}
    changes = lines_scene(range(1, 16), (4, 6, ROW), (6, 99, ROW))  # a text on frames 4-5, another from 6
    wait, after = (line("Wait"),), (line("Next"),)
    # without probes a short state is read on its first frame (it lasts two), and what followed it is read
    h = Harness(maps, {4: wait, 12: after}, changes)
    h.read(0)
    assert [(r.index, r.why, r.lines) for r in h.read(12)] == [(4, "short", wait), (12, "after-short", after)]
    assert h.fetched == [4] and [i for i, _ in h.calls] == [0, 4, 12]
    cue = Cue(Fraction(4, 25), Fraction(12, 25), "Wait", line("Wait").bounds, 0.95, 0, 4, 12)
    assert (h.reader.refine(cue).start_index, h.reader.refine(cue).end_index) == (4, 6)  # its own two changes
    # OCR's detector alone finds no box there first: the change was a picture's, nothing is read
    h = Harness(maps, {4: wait, 12: after}, changes, boxes={4: ()})
    h.read(0)
    assert [r.why for r in h.read(12)] == ["elsewhere"] and [i for i, _ in h.calls] == [0, 12]
    assert [i for i, _ in h.probes] == [4, 12] and h.fetched == [4]  # 12's is the read's own
    # the state read shows nothing the last reading lacks: nothing is fed for it
    h = Harness(maps, {12: after}, changes)
    h.read(0)
    assert [r.why for r in h.read(12)] == ["elsewhere"] and [i for i, _ in h.calls] == [0, 4, 12]
    # strokes that come on its frame and go on the next look like a blip too: the blip, in the last lines' cells, is
    # refused, and the short state is read all the same
    blipped = dict(changes)
    for i, plane in ((4, APPEARED), (5, VANISHED)):
        planes = changes[i].grid().copy()
        planes[plane][ROW, 5:15] = 4
        blipped[i] = FrameChange(i, 0, 0, 0, planes.tobytes(), ROWS, COLS)
    assert [b.index for b in ev.blips([blipped[i] for i in range(1, 13)])] == [4]
    h = Harness(maps, {0: (line("Before"),), 4: wait, 12: after}, blipped)
    h.read(0)
    assert [(r.index, r.why) for r in h.read(12)] == [(4, "short"), (12, "after-short")]
    # turned off, the two changes are one transition
    h = Harness(maps, {4: wait, 12: after}, changes)
    h.reader.SHORTS = False
    h.read(0)
    assert [r.why for r in h.read(12)] == ["elsewhere"] and h.fetched == []


def test_a_cue_is_refined_to_the_frames_where_its_text_appeared_and_vanished():
    text = (line("Hello there"),)
    m = stroke_map((200, 300, 440, 330))
    maps = {0: stroke_map(), 12: m, 24: m, 36: stroke_map()}
    h = Harness(maps, {12: text, 36: ()}, lines_scene(range(1, 40), (7, 30, ROW)))
    for i in (0, 12, 24, 36):
        h.read(i)
    cue = Cue(Fraction(12, 25), Fraction(36, 25), "Hello there", (200.0, 300.0, 440.0, 330.0), 0.95, 0, 12, 36)
    refined = h.reader.refine(cue)
    assert (refined.start_index, refined.end_index) == (7, 30)
    assert refined.start == Fraction(7, 25) and refined.end == Fraction(30, 25)


def letter_crop(*, seed: int, dx: int = 0) -> np.ndarray:
    """The full-size grey levels of a one-letter box: a white outlined "A" (shifted ``dx`` px: a picture's object
    that moves) over a dark textured picture that differs with ``seed``."""
    import cv2

    grey = (30 + np.random.default_rng(seed).integers(0, 25, (34, 34))).astype(np.uint8)
    cv2.putText(grey, "A", (6 + dx, 26), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 10, 4, cv2.LINE_AA)
    cv2.putText(grey, "A", (6 + dx, 26), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 235, 2, cv2.LINE_AA)
    return grey


def _lone_letter(crops: dict[int, np.ndarray], fed=(0, 12, 24, 36), text: str = "A", end: int = 36):
    """What :meth:`ChangeReader.settle` makes of a cue of ``text`` read on frame 12 (fed ``fed``; gone from
    ``end``), its box's full-size grey levels ``crops`` by frame; and the frames it looked at."""
    box = (300.0, 300.0, 330.0, 330.0)
    letter = (TextLine(text, 0.95, ((300.0, 300.0), (330.0, 300.0), (330.0, 330.0), (300.0, 330.0))),)
    m = stroke_map((300, 300, 330, 330))
    maps = {i: (m if 12 <= i < end else stroke_map()) for i in fed}
    h = Harness(maps, {12: letter}, lines_scene(range(1, 40), (7, 30, slice(9, 11))), crops=crops)
    for i in fed:
        h.read(i)
    cue = Cue(Fraction(12, 25), Fraction(end, 25), text, box, 0.95, 0, 12, end)
    return h.reader.settle(cue), [i for i, _ in h.looks]


def test_a_lone_letter_becomes_a_cue_only_where_it_holds_still_at_full_size():
    still = {12: letter_crop(seed=1), 24: letter_crop(seed=2)}  # the picture behind it moves, the letter stays
    kept, looked = _lone_letter(still)
    assert kept is not None and kept.text == "A" and looked == [12, 24]  # its reading and the last fed frame with it
    moving = {12: letter_crop(seed=1), 24: letter_crop(seed=2, dx=5)}  # a picture's object read as a letter
    assert _lone_letter(moving)[0] is None
    faint = {12: np.full((34, 34), 120, np.uint8), 24: np.full((34, 34), 120, np.uint8)}  # nothing to see
    assert _lone_letter(faint)[0] is None
    # fed on one frame only: looked at in the middle of the frames it shows after its reading (7-30, refined)
    kept, looked = _lone_letter({12: letter_crop(seed=1), 21: letter_crop(seed=3)}, fed=(0, 12, 36))
    assert kept is not None and looked == [12, 21]
    # a cue of more than one letter is not looked at; nor any with the rule off
    kept, looked = _lone_letter(moving, text="AB")
    assert kept is not None and looked == []
    ChangeReader.LONE_STILL = False
    try:
        assert _lone_letter(moving)[0] is not None
    finally:
        ChangeReader.LONE_STILL = True


def test_a_lone_letter_shown_on_one_frame_cannot_hold_still():
    h = Harness({0: stroke_map(), 12: stroke_map(), 24: stroke_map()}, {}, lines_scene(range(1, 30)),
                crops={12: letter_crop(seed=1)})  # fmt: skip
    h.reader.LOOK_BISECT = False  # its start sought by looks (refine) aside: no look says whether it holds still
    for i in (0, 12, 24):
        h.read(i)
    cue = Cue(Fraction(12, 25), Fraction(13, 25), "A", (300.0, 300.0, 330.0, 330.0), 0.95, 0, 12, 13)
    assert h.reader.settle(cue) is None and h.reader.unsteady == 1 and h.looks == []


def test_a_cue_is_refined_to_its_stable_edges_where_the_picture_moves_most_after_it_came():
    changes = lines_scene(range(1, 40), (7, 30, ROW))
    for i in (9, 32):  # the picture under the line moves most two frames after each change
        grid = changes[i].grid().copy()
        grid[DIFF][ROW, 5:15] = 200
        changes[i] = FrameChange(i, 0, 0, 0, grid.tobytes(), ROWS, COLS)
    assert _refined_hello(changes, PLACE_ON_STABLE=True) == (7, 30)
    assert _refined_hello(changes, PLACE_ON_STABLE=False) != (7, 30)  # the grey levels alone take the picture's move


def _refined_hello(changes: dict[int, FrameChange], **flags: bool) -> tuple[int, int]:
    """The start and end frames of "Hello there", read on samples 12 and 24 over ``changes`` (gone at 36), refined
    by a reader with the class flags given."""
    text, m = (line("Hello there"),), stroke_map((200, 300, 440, 330))
    h = Harness({0: stroke_map(), 12: m, 24: m, 36: stroke_map()}, {12: text, 36: ()}, changes)
    for name, value in flags.items():
        setattr(h.reader, name, value)
    for i in (0, 12, 24, 36):
        h.read(i)
    cue = Cue(Fraction(12, 25), Fraction(36, 25), "Hello there", (200.0, 300.0, 440.0, 330.0), 0.95, 0, 12, 36)
    refined = h.reader.refine(cue)
    return refined.start_index, refined.end_index


def test_a_cue_that_nothing_in_its_cells_places_is_placed_by_halving_with_looks_at_full_size():
    # a thin line the detector does not see come or go (no change in its cells), on frames 7 to 29
    shown = line_crop("Hello there", seed=1)
    crops = {i: shown if 7 <= i < 30 else line_crop("", seed=1) for i in range(40)}
    text, m = (line("Hello there"),), stroke_map((200, 300, 440, 330))
    cue = Cue(Fraction(12, 25), Fraction(36, 25), "Hello there", (200.0, 300.0, 440.0, 330.0), 0.95, 0, 12, 36)
    for bisect, placed in [(True, (7, 30)), (False, (12, 36))]:
        h = Harness({0: stroke_map(), 12: m, 24: m, 36: stroke_map()}, {12: text, 36: ()}, lines_scene(range(1, 40)),
                    crops=crops)  # fmt: skip
        h.reader.LOOK_BISECT = bisect
        for i in (0, 12, 24, 36):
            h.read(i)
        refined = h.reader.refine(cue)
        assert (refined.start_index, refined.end_index) == placed
    # where the look cannot tell the fed frames around it apart (the line shows on the frame before), none
    crops = {i: shown for i in range(40)}
    h = Harness({0: m, 12: m, 24: m, 36: stroke_map()}, {0: (), 12: text, 36: ()}, lines_scene(range(1, 40)),
                crops=crops)  # fmt: skip
    for i in (0, 12, 24, 36):
        h.read(i)
    assert h.reader.refine(cue).start_index == 12


def _with_strokes(change: FrameChange, plane: int, pixels: int) -> FrameChange:
    """``change`` with ``pixels`` stroke pixels appeared (vanished) in each cell of line()'s band."""
    grid = change.grid().copy()
    grid[plane][ROW, 5:15] = pixels
    return FrameChange(change.index, 0, 0, 0, grid.tobytes(), ROWS, COLS)


def test_a_text_whose_strokes_all_come_on_one_frame_starts_there_though_its_stable_edges_settle_later():
    changes = lines_scene(range(1, 40), (7, 30, ROW))
    for i in (8, 9, 10):  # a picture moving under the new line: its edges are not still at first
        grid = changes[i].grid().copy()
        grid[STABLE][ROW, 5:15] = 0
        changes[i] = FrameChange(i, 0, 0, 0, grid.tobytes(), ROWS, COLS)
    changes[7] = _with_strokes(changes[7], APPEARED, 3)  # 60 stroke pixels appear on frame 7 ...
    changes[30] = _with_strokes(changes[30], VANISHED, 3)  # ... and vanish on frame 30
    assert _refined_hello(changes, PLACE_ON_SPIKE=True) == (7, 30)
    assert _refined_hello(changes, PLACE_ON_SPIKE=False)[0] == 10  # the stable edges' level alone: where they settled


def test_a_stroke_spike_is_one_frame_standing_out_in_the_texts_cells():
    region = CELLS.cells([line("x").bounds])
    quiet = [strokes_change(i) for i in range(1, 13)]
    spiked = [_with_strokes(c, APPEARED, 3) if c.index == 5 else c for c in quiet]
    assert ev.strokes_spike_at(spiked, region, up=True) == 5
    assert ev.strokes_spike_at(spiked, region, up=False) is None  # nothing vanished
    faint = [_with_strokes(c, APPEARED, 1) if c.index in (5, 6) else c for c in quiet]  # 20 and 20: no one frame
    assert ev.strokes_spike_at(faint, region, up=True) is None
    few = [strokes_change(5, appeared=[(slice(9, 10), slice(5, 8), 2)]) if c.index == 5 else c for c in quiet]
    assert ev.strokes_spike_at(few, region, up=True) is None  # 6 stroke pixels: under SPIKE_MIN


def test_a_cue_is_sought_back_past_fed_frames_the_pixel_test_alone_vouched_for_when_nothing_came_after_them():
    # fed frames 0, 12, 24, 36, 48, 60: the line came on 15 and went on 40; 24 and 48 reused a reading (a sign
    # elsewhere) on the pixel test's word alone, so the line was first read on 36 and last on 48
    cue = Cue(Fraction(36, 25), Fraction(60, 25), "Hello there", (200.0, 300.0, 440.0, 330.0), 0.95, 0, 36, 60)
    changes = lines_scene(range(1, 70), (15, 40, ROW))
    placed = {}
    for assumed in ((), (24, 48)):
        h = Harness({}, {}, changes)
        h.reader.fed, h.reader.assumed = [0, 12, 24, 36, 48, 60], set(assumed)
        refined = h.reader.refine(cue)
        placed[assumed] = (refined.start_index, refined.end_index)
    assert placed[(24, 48)] == (15, 40)
    assert placed[()] == (36, 60)  # nothing changed in its cells between the fed frames around its readings
    # a change there is where it came: no further back (a text before it in the same cells came earlier)
    changes = lines_scene(range(1, 70), (15, 30, ROW), (31, 52, ROW))
    h = Harness({}, {}, changes)
    h.reader.fed, h.reader.assumed = [0, 12, 24, 36, 48, 60], {24, 48}
    assert h.reader.refine(cue).start_index == 31


def test_a_cue_whose_box_shows_its_text_on_the_reused_fed_frames_before_its_first_reading_came_before_them():
    # fed frames 0, 12, 24, 36, 48, 60; the line came on 15 and went on 52, and the picture changed its cells on 33
    # (a dip of its stable edges); 12 and 24 reused a reading (a probe or the pixel test did not see the line come),
    # so it was first read on 36 and the change on 33 is the first in its cells before that reading
    cue = Cue(Fraction(36, 25), Fraction(60, 25), "Hello there", (200.0, 300.0, 440.0, 330.0), 0.95, 0, 36, 60)
    changes = lines_scene(range(1, 70), (15, 33, ROW), (33, 52, ROW))
    crops = {i: line_crop("Hello there" if 15 <= i < 52 else "", seed=i) for i in range(70)}
    placed = {}
    for on, reused in [(True, {12, 24}), (False, {12, 24}), (True, set())]:
        h = Harness({}, {}, changes, crops=crops)
        h.reader.fed, h.reader.reused = [0, 12, 24, 36, 48, 60], {i: () for i in reused}
        h.reader.PAST_SHOWN = on
        refined = h.reader.refine(cue)
        placed[on, len(reused)] = (refined.start_index, refined.end_index)
    # a look at its box shows it on 24, not on 12: it came between them
    assert placed == {(True, 2): (15, 52), (False, 2): (33, 52), (True, 0): (33, 52)}
    # where the look sees it on every reused fed frame before, it cannot tell the text from its place: not moved
    h = Harness({}, {}, changes, crops={i: line_crop("Hello there", seed=i) for i in range(70)})
    h.reader.fed, h.reader.reused = [0, 12, 24, 36, 48, 60], {12: (), 24: ()}
    assert h.reader.refine(cue).start_index == 33


def test_a_replacement_first_read_on_its_own_frame_is_placed_with_the_frames_after_it():
    # 'Hello' until 20, then 'World' in the same cells, read on 20 itself (fed frames 0, 12, 20, 32): the window
    # (12, 20] holds the old line's edges and the dip of the change alone, where a stray frame of fewer edges (13)
    # makes the best up-fit; the frames after it hold the new line's level
    cue = Cue(Fraction(20, 25), Fraction(32, 25), "World", (200.0, 300.0, 440.0, 330.0), 0.95, 0, 20, 32)
    changes = lines_scene(range(1, 60), (0, 20, ROW), (20, 60, ROW))
    for i, edges in [(13, EDGES // 2)] + [(i, 2 * EDGES) for i in range(21, 60)]:  # the new line is denser
        grid = changes[i].grid().copy()
        grid[STABLE][ROW, 5:15] = edges
        changes[i] = FrameChange(i, 0, 0, 0, grid.tobytes(), ROWS, COLS)
    placed = {}
    for on in (True, False):
        h = Harness({}, {}, changes)
        h.reader.fed = [0, 12, 20, 32]
        h.reader.LEVEL_CONTEXT = on
        placed[on] = h.reader.refine(cue).start_index
    assert placed == {True: 20, False: 13}


def strokes_change(index: int, appeared=None, vanished=None, moving: int = 2) -> FrameChange:
    """A detector result of a still picture (grey levels moving by ``moving``) where stroke pixels appeared
    and vanished in the cells given (``[(rows, cols, pixels)]``)."""
    planes = np.zeros((5, ROWS, COLS), np.uint8)
    planes[DIFF] = moving
    for plane, cells in ((APPEARED, appeared or ()), (VANISHED, vanished or ())):
        for rows, cols, pixels in cells:
            planes[plane][rows, cols] = pixels
    return FrameChange(index, 0, 0, 0, planes.tobytes(), ROWS, COLS)


def blip_scene(frames: range, shown: dict[int, int], cells=(slice(1, 3), slice(5, 15)), pixels: int = 4):
    """``shown``: first frame -> frames on screen of a text whose strokes appear in ``cells`` and vanish again."""
    out = {i: strokes_change(i) for i in frames}
    for first, length in shown.items():
        out[first] = strokes_change(first, appeared=[(*cells, pixels)])
        out[first + length] = strokes_change(first + length, vanished=[(*cells, pixels)])
    return out


def test_a_text_shown_on_one_or_two_frames_is_a_blip_a_moving_picture_or_a_flash_is_not():
    window = [c for _, c in sorted(blip_scene(range(1, 20), {5: 1, 12: 2}).items())]
    assert [(b.index, b.end) for b in ev.blips(window)] == [(5, 6), (12, 14)]
    assert ev.blips(window)[0].cells[1:3, 5:15].all() and not ev.blips(window)[0].cells[6:].any()
    assert ev.events(window) == []  # no level for the events: a median of three frames skips it
    # strokes that come and go on every frame (a moving picture's) are no blip ...
    busy = [strokes_change(i, appeared=[(slice(1, 3), slice(5, 15), 4)], vanished=[(slice(1, 3), slice(5, 15), 4)])
            for i in range(1, 20)]  # fmt: skip
    assert ev.blips(busy) == []
    # ... nor is a flash over the whole picture, nor a text that stays
    flash = [c for _, c in sorted(blip_scene(range(1, 20), {5: 1}, cells=(slice(0, 12), slice(0, 20))).items())]
    assert ev.blips(flash) == []
    stays = [strokes_change(i, appeared=[(slice(1, 3), slice(5, 15), 4)]) if i == 5 else strokes_change(i)
             for i in range(1, 20)]  # fmt: skip
    assert ev.blips(stays) == []
    # a blip near the window's end is found with the frames after it
    tail = blip_scene(range(1, 20), {11: 2})
    assert ev.blips([tail[i] for i in range(1, 13)]) == []
    assert [b.index for b in ev.blips([tail[i] for i in range(1, 13)], after=[tail[i] for i in range(13, 20)])] == [11]
    # a blip on the window's first frame is found with the frame before it (the fed frame), which is quiet
    head = blip_scene(range(1, 20), {7: 1})
    assert ev.blips([head[i] for i in range(7, 19)]) == []
    assert [b.index for b in ev.blips([head[i] for i in range(7, 19)], before=[head[i] for i in range(1, 7)])] == [7]
    busy_before = [strokes_change(6, appeared=[(slice(1, 3), slice(5, 15), 4)])]
    assert ev.blips([head[i] for i in range(7, 19)], before=busy_before) == []


def test_a_text_shown_for_one_to_four_frames_in_the_place_of_others_is_a_short_state():
    def states(texts, **kw):
        frames = list(scene(range(1, 30), texts, **kw).values())
        return [(s.index, s.end) for s in ev.short_states(frames[5:20], before=frames[:5], after=frames[20:])]

    row = (slice(9, 11), slice(5, 15))
    for length in (1, 2, 4):  # replaced in place, over a moving picture too
        assert states([(-10, 10, *row), (10, 10 + length, *row), (10 + length, 99, *row)], moving=4) == [
            (10, 10 + length)]  # fmt: skip
    assert states([(10, 12, *row)]) == [(10, 12)]  # on an empty screen
    assert states([(-10, 10, *row), (10, 15, *row), (15, 99, *row)]) == []  # five frames: a state with a level
    assert states([(-10, 10, *row), (10, 99, *row)]) == []  # a plain replacement
    assert states([(10, 12, *row, 3)]) == []  # a fade moves its cells on every frame
    assert states([], cut=10) == states([], cut=10, moving=3) == []  # a shot cut: the whole picture
    full = (slice(0, 12), slice(0, 20))
    assert states([(10, 11, *full)]) == []  # a flash: a frame of the whole picture
    # a state that begins before the window is its window's, not this one's
    assert states([(-10, 4, *row), (4, 6, *row), (6, 99, *row)]) == []
    assert states([(-10, 18, *row), (18, 21, *row), (21, 99, *row)]) == [(18, 21)]  # it may end after the window


def test_a_text_shown_on_one_frame_between_samples_is_read_on_its_frame_and_ends_on_the_next():
    flash = (line("Now!", 40, 70),)
    h = Harness({0: stroke_map(), 12: stroke_map()}, {0: (), 5: flash}, blip_scene(range(1, 16), {5: 1}),
                boxes={5: ((250.0, 40.0, 380.0, 70.0),)})  # fmt: skip
    h.read(0)
    out = h.read(12)
    assert [(r.index, r.why, r.reused, r.lines) for r in out] == [
        (5, "blip", False, flash), (6, "blip-end", True, ()), (12, "unchanged", True, ())]
    assert h.fetched == [5] and [i for i, _ in h.calls] == [0, 5] and [i for i, _ in h.probes] == [5]
    # a blip where OCR's detector finds no box (a picture's strokes) is not read
    h = Harness({0: stroke_map(), 12: stroke_map()}, {0: (), 5: flash}, blip_scene(range(1, 16), {5: 1}),
                boxes={5: ()})  # fmt: skip
    h.read(0)
    assert [r.why for r in h.read(12)] == ["unchanged"] and [i for i, _ in h.calls] == [0]


def test_a_text_replaced_where_no_event_came_is_looked_at_halfway_and_read_there_when_neither_text_shows():
    hello, bye, lost = line("Hello there"), line("Goodbye"), line("Where am I")
    maps = {0: stroke_map((200, 300, 440, 330)), 12: stroke_map((200, 300, 300, 330))}
    box = (200.0, 300.0, 440.0, 330.0)
    crops = {0: line_crop("Hello there", seed=1), 6: line_crop("Where am I", seed=2), 12: line_crop("Goodbye", seed=3)}

    def harness(middle=crops[6], probe=((250.0, 300.0, 400.0, 330.0),), changes=None, on=True, seen=(lost,),
                after=crops[12]):  # fmt: skip
        h = Harness(maps, {0: (hello,), 5: seen, 6: seen, 12: (bye,)},
                    changes or lines_scene(range(1, 16), (-10, 99, ROW)),  # the detector saw nothing change
                    {6: probe, 5: probe, 12: (box,)}, {**crops, 6: middle, 5: middle, 12: after})  # fmt: skip
        h.reader.MIDDLE_STATE = on
        read_by_bands(h, 0)
        return h, h.read(12)

    h, out = harness()
    assert [(r.index, r.why, r.reused, r.lines) for r in out] == [(6, "middle", False, (lost,)),
                                                                 (12, "changed", False, (bye,))]  # fmt: skip
    assert out[0].ref_index == 0 and out[1].ref_index == 12  # a resume after 6 compares 12 with 0, and reads it
    assert h.fetched == [6] and [c[0] for c in h.calls] == [0, 12, 6]
    for middle, probe in [(line_crop("Goodbye", seed=4), None), (line_crop("Hello there", seed=5), None),
                          (crops[6], (box,))]:  # fmt: skip
        h, out = harness(middle, probe)  # the text after, or the one before, shows halfway; or the probe finds it
        assert [r.why for r in out] == ["changed"] and [c[0] for c in h.calls] == [0, 12] and h.fetched == [6]
    h, out = harness(changes=lines_scene(range(1, 16), (-10, 4, ROW), (4, 99, ROW)))  # an event on frame 4
    assert h.fetched == [5] and [(r.index, r.why) for r in out] == [(5, "middle"), (12, "changed")]
    h, out = harness(after=np.full((34, 244), 90, np.uint8))  # the text after too faint to look at: no telling
    assert [r.why for r in out] == ["changed"] and [c[0] for c in h.calls] == [0, 12] and h.fetched == [6]
    h, out = harness(seen=(bye,))  # read there, it shows the text after all: nothing fed for it
    assert [c[0] for c in h.calls] == [0, 12, 6] and [r.why for r in out] == ["changed"]
    h, out = harness(on=False)
    assert [r.why for r in out] == ["changed"] and h.fetched == [] and [c[0] for c in h.calls] == [0, 12]


def test_a_boundary_a_level_step_or_a_burst_placed_is_checked_by_looks_and_sought_where_they_disagree():
    """``--exact-boundaries`` (VERIFY_PLACED): a start placed on a frame where the text's box does not show it yet
    is sought by halving (in one pass over the frames between); one the looks confirm, or one placed on the frame
    all stroke pixels appeared (a spike), is kept as placed."""
    text, blank = line_crop("Hello there", seed=1), line_crop("", seed=1)
    crops = {i: (text if i >= 7 else blank) for i in range(13)}  # the text shows from frame 7
    box = (200.0, 300.0, 440.0, 330.0)

    def checked(at: int, how: str, *, on: bool = True, up: bool = True) -> tuple[int, list]:
        h = Harness({}, {}, {}, crops=crops)
        h.reader.VERIFY_PLACED, h.reader._how, h.reader.HALF_CHECKS = on, how, False
        return h.reader._checked(0, 12, at, box, up=up), h.fetched

    assert checked(10, "level")[0] == 7 and checked(4, "burst")[0] == 7  # late and early: sought
    placed, fetched = checked(7, "level")
    assert placed == 7 and sorted(fetched) == [0, 6, 7, 12]  # confirmed by four looks, no halving
    assert checked(10, "spike") == (10, []) and checked(10, "level", on=False) == (10, [])
    # an end: the text shows on the fed frame before (0 here: it vanishes from frame 7 on)
    crops.update({i: (blank if i >= 7 else text) for i in range(13)})
    assert checked(9, "level", up=False)[0] == 7 and checked(7, "burst", up=False)[0] == 7


def test_a_boundary_placed_in_doubt_is_checked_by_looks_by_default():
    """Without ``--exact-boundaries`` (VERIFY_DOUBT): a start placed by a burst alone, or by a level step more than
    DOUBT_FRAMES from the event or burst that said the text came, is checked by looks and sought where they
    disagree; a level step that agrees with its event, and a spike, are kept without a look."""
    text, blank = line_crop("Hello there", seed=1), line_crop("", seed=1)
    crops = {i: (text if i >= 7 else blank) for i in range(13)}  # the text shows from frame 7
    box = (200.0, 300.0, 440.0, 330.0)

    def checked(at: int, how: str, doubt: bool = False, *, on: bool = True) -> tuple[int, list]:
        h = Harness({}, {}, {}, crops=crops)
        assert not h.reader.VERIFY_PLACED
        h.reader.VERIFY_DOUBT, h.reader._how, h.reader._doubt, h.reader.HALF_CHECKS = on, how, doubt, False
        return h.reader._checked(0, 12, at, box, up=True), h.fetched

    assert checked(10, "burst")[0] == 7 and checked(4, "level", True)[0] == 7  # in doubt: sought
    assert checked(10, "level") == (10, []) and checked(10, "spike", True) == (10, [])  # agreed, or a spike
    assert checked(10, "burst", on=False) == (10, []) and checked(4, "level", True, on=False) == (4, [])


def test_a_text_replaced_where_no_event_came_before_a_state_between_samples_is_looked_at_halfway_to_it():
    # "Hello there" is replaced on frame 4 by "Where am I" with no event (the detector sees one text until 9); an
    # event on 9 brings "Goodbye", which the next one (on 14) replaces: the state 9-13 is read on 11, and halfway
    # between the last fed frame and it (5) a third text shows that neither the text before nor after does
    hello, bye, lost, last = line("Hello there"), line("Goodbye"), line("Where am I"), line("The end")
    box = (200.0, 300.0, 440.0, 330.0)
    crops = {0: line_crop("Hello there", seed=1), 5: line_crop("Where am I", seed=2),
             11: line_crop("Goodbye", seed=3), 18: line_crop("The end", seed=4)}  # fmt: skip
    maps = {0: stroke_map((200, 300, 440, 330)), 18: stroke_map((200, 300, 400, 330))}

    def harness(on: bool):
        h = Harness(maps, {0: (hello,), 5: (lost,), 11: (bye,), 18: (last,)},
                    lines_scene(range(1, 22), (-10, 9, ROW), (9, 14, ROW), (14, 99, ROW)),
                    {5: ((250.0, 300.0, 400.0, 330.0),), 11: (box,), 18: (box,)}, crops)  # fmt: skip
        h.reader.MIDDLE_BETWEEN = on
        read_by_bands(h, 0)
        return h, h.read(18)

    h, out = harness(True)
    assert [(r.index, r.why, r.lines) for r in out][:2] == [(5, "middle", (lost,)), (11, "between", (bye,))]
    assert out[0].ref_index == 0 and h.fetched[:2] == [11, 5]
    h, out = harness(False)
    assert [(r.index, r.why) for r in out][0] == (11, "between") and 5 not in h.fetched


def faded_crop(opacity: float, *, seed: int, width: int = 244, height: int = 34) -> np.ndarray:
    """A line box where a white text with a black outline shows at ``opacity`` over a bright, busy picture that
    differs with ``seed`` (it moves), blended as libass blends a fading event."""
    import cv2

    rng = np.random.default_rng(seed)
    x = np.arange(width)[None, :] + 9 * seed
    picture = 150 + 60 * np.sin(x / 5.0) + rng.integers(-20, 20, (height, width))
    glyph = np.zeros((height, width), np.uint8)
    cv2.putText(glyph, "Fading in", (6, height - 9), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 255, 2, cv2.LINE_AA)
    outline = cv2.dilate(glyph, np.ones((5, 5), np.uint8))
    text = np.where(glyph > 127, 235.0, 20.0)
    cover = opacity * (outline > 127)
    return np.clip(cover * text + (1 - cover) * picture, 0, 255).astype(np.uint8)


def test_a_fade_is_placed_where_its_glyphs_stand_out_half_as_much_as_where_it_shows():
    """The text's contrast against its own edges grows with its opacity over a moving picture: the frame found is
    the first at least half opaque (fading in), the first less than half (fading out)."""
    from flowocr.read.pixel import half_opaque, text_contrast, text_masks

    opacity = {k: min(1.0, max(0.0, (k - 9) / 10)) for k in range(30)}  # 0 up to 9, then 0.1 a frame: 14 is half
    crops = {k: faded_crop(a, seed=k) for k, a in opacity.items()}
    masks = text_masks(crops[25])
    assert masks is not None and text_masks(np.full((34, 244), 90, np.uint8)) is None  # a flat box: none
    contrasts = [(k, text_contrast(crops[k], masks)) for k in sorted(crops)]
    shown, hidden = contrasts[-1][1], contrasts[0][1]
    assert shown - hidden > 100
    assert half_opaque(contrasts, up=True, half=0.45, shown=shown, hidden=hidden) == (14, 0)
    down = [(k, c) for k, (_, c) in zip(range(30), reversed(contrasts))]  # the same fade out: 16 is the first under
    assert half_opaque(down, up=False, half=0.45, shown=shown, hidden=hidden) == (16, 0)
    assert half_opaque(contrasts[:5], up=True, half=0.45, shown=shown, hidden=hidden) is None  # never half


def test_a_fade_the_detector_placed_is_placed_again_by_looks_over_the_frames_around_it():
    """LOOK_FADES: a start a fade's run of grey-level change placed (a frame early: the picture moved too) is placed
    again on the first frame its box shows the text at least half opaque, over the fed frames around it and its run;
    kept where the looks cannot tell (too little contrast), or with the switch off."""
    from flowocr.read.events import Fade

    opacity = {k: min(1.0, max(0.0, (k - 9) / 10)) for k in range(40)}
    crops = {k: faded_crop(a, seed=k) for k, a in opacity.items()}
    box = (200.0, 300.0, 440.0, 330.0)

    def placed(at: int, *, on: bool = True, up: bool = True, faint: bool = False):
        h = Harness({}, {}, {}, crops={k: (np.full_like(c, 120) if faint else c) for k, c in crops.items()})
        h.reader.LOOK_FADES, h.reader._how, h.reader._fade = on, "fade", Fade(at, at - 3, at + 3)
        return h.reader._checked(6, 24, at, box, up=up), sorted(set(h.fetched))

    found, fetched = placed(12)
    assert found == 14 and fetched == list(range(3, 28))  # the fed frames 6 and 24 and three frames beyond
    assert placed(12, on=False) == (12, []) and placed(12, faint=True)[0] == 12
    crops.update({k: faded_crop(1 - a, seed=k) for k, a in opacity.items()})  # fading out: 15 is the first under half
    assert placed(17, up=False)[0] == 15


def test_a_boundary_checked_by_looks_is_placed_half_opaque_where_the_looks_see_a_fade():
    """HALF_CHECKS: a start a burst placed (checked by looks, VERIFY_DOUBT) on a frame where the text's box shows it
    part of the way, fading in over several frames, is placed on its first frame at least half opaque, not where its
    stroke pixels show; one placed after the fade, and a cut (no frame part of the way), are left to the stroke
    pixels' looks."""
    opacity = {k: min(1.0, max(0.0, (k - 9) / 10)) for k in range(40)}
    fade = {k: faded_crop(a, seed=k) for k, a in opacity.items()}
    cut = {k: faded_crop(float(k >= 14), seed=k) for k in range(40)}
    box = (200.0, 300.0, 440.0, 330.0)

    def checked(crops, at: int, *, on: bool = True) -> int:
        h = Harness({}, {}, {}, crops=crops)
        h.reader.HALF_CHECKS, h.reader._how = on, "burst"
        return h.reader._checked(6, 24, at, box, up=True)

    assert checked(fade, 12) == 14 and checked(fade, 17) == 14  # placed inside the fade: half opaque
    assert checked(fade, 17, on=False) == checked(fade, 21) == 16  # the stroke pixels' looks (after it: no part way)
    assert checked(cut, 20) == 14 and checked(cut, 20, on=False) == 14
