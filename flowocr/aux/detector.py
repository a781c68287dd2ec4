"""The change detector: per frame of the aux stream, how much of the text area's strokes appeared and vanished.

It sees every frame, small and greyscale, and compares each frame's stroke map (bright pixels next to dark
ones: subtitle text and its outline, see :mod:`flowocr.ocr.strokes`) with the previous frame's. Its state is the
last ``RECEPTIVE_FIELD`` frame(s), so processing the stream in windows with that much left context gives exactly
the whole-stream result (tested), and a too-short context does not (tested).

At aux scale (0.35) text strokes are 1–2 pixels wide and blurred, so the stroke map uses softer levels than at
full size (bright >= 160 next to <= 110). Measured on the fixtures (640x360 → 224x126, whole frame): a cue
appearing, vanishing or being replaced moves 8–400 stroke pixels between two frames; moving backgrounds move
0–5 on most fixtures but up to 150 on the open-GOP HEVC one (a fast, contrasty background). No fixed threshold
separates those: the reader places text changes with the per-cell planes, relative to each cell's own background
(:mod:`flowocr.read.events`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from flowocr.aux.protocol import PLANES
from flowocr.ocr.strokes import Strokes, edges, moved, strokes

HOLD_MAX = 3  # a held picture repeats for at most this many frames (see _held) ...
RECEPTIVE_FIELD = 2 * HOLD_MAX + 2  # ... and is recognised over two moves, so a frame depends on this many before it
BRIGHT, DARK = 160, 110


#: The detector also counts per cell of this many aux pixels square, so that a change can be placed: a subtitle
#: line changes a few cells in its rows, a moving background changes cells everywhere (:mod:`flowocr.read.events`).
CELL = 8


@dataclass(frozen=True)
class FrameChange:
    """Stroke pixels that appeared and vanished at frame ``index`` since the frame before, and its total.

    ``cells`` holds, per cell of ``CELL`` x ``CELL`` aux pixels (the last row and column of cells may be partial),
    ``PLANES`` ``rows`` x ``cols`` uint8 planes (see :meth:`grid`): the stroke pixels that appeared, vanished and
    are there; the mean absolute difference of the cell's grey levels from the frame before (``DIFF``); and its
    *stable edge* pixels (``STABLE``: local contrast of at least ``flowocr.ocr.strokes.EDGE`` levels, grey level
    within ``STILL`` of the frame before). Empty when the detector sent no cells."""

    index: int
    appeared: int
    vanished: int
    strokes: int
    cells: bytes = b""
    rows: int = 0
    cols: int = 0

    @property
    def score(self) -> int:
        return max(self.appeared, self.vanished)

    def grid(self) -> np.ndarray:
        """The cells as a (PLANES, rows, cols) uint8 array: appeared, vanished, strokes, diff, stable."""
        return np.frombuffer(self.cells, np.uint8).reshape(PLANES, self.rows, self.cols)


#: The cell planes, in order (``PLANES`` of them).
APPEARED, VANISHED, STROKES, DIFF, STABLE = range(PLANES)
#: A stable edge pixel: an edge (:func:`flowocr.ocr.strokes.edges`: the range of its 3 x 3 neighbourhood is at
#: least EDGE grey levels) that moved by at most STILL levels since the frame before. Burned-in
#: text is still while a moving background is not: the stable edges of a band step up when a line appears, step
#: down when it vanishes and dip for a frame when it is replaced (:mod:`flowocr.read.events`). Measured over the
#: aux frames of a random corpus (30 videos): such steps found 98.9 % of cue boundaries, where steps of the
#: stroke pixels found two thirds.
STILL = 6
#: A picture *held* for two to four frames at a time (animation on twos or threes, a 15 fps source in a 60 fps
#: stream): its frames either *repeat* the one before (at most REPEAT_SHARE of the pixels moved by more than STILL)
#: or *move* (at least MOVE_SHARE did). Compared with the frame before alone, every edge of such a picture is
#: stable on its repeats and unstable on its moves, so the stable edges of every band swing by the picture's own
#: edges from frame to frame and no text step stands out (dev corpus seed 11, video 007: 16 400 and 56 000 in
#: turn). A repeat is taken as held only when the moves recur: the last move at most HOLD_MAX frames back and the
#: one before it at most HOLD_MAX + 1 frames before that. A single cut or camera jump, and a line that comes on a
#: still picture after one, are no hold. Measured over the dev corpus' aux frames: repeats move 0.000-0.001 of the
#: pixels, the moves of held pictures 0.2-0.7; a line that comes moves 0.004-0.015, and on a held picture it must
#: not break the hold (the picture's edges would all be stable on that frame).
REPEAT_SHARE = 0.02
MOVE_SHARE = 0.1


def cell_sums(image: np.ndarray) -> np.ndarray:
    """Sums of ``image`` (a mask or levels) per ``CELL`` x ``CELL`` cell (rows x cols, partial cells at the edges),
    as uint32."""
    h, w = image.shape
    rows, cols = -(-h // CELL), -(-w // CELL)
    padded = np.zeros((rows * CELL, cols * CELL), np.uint32)
    padded[:h, :w] = image
    return padded.reshape(rows, CELL, cols, CELL).sum(axis=(1, 3))


def compare(now: Strokes, before: Strokes | None) -> tuple[np.ndarray, np.ndarray]:
    """Masks of stroke pixels appeared and vanished since ``before`` (all appeared when there is none)."""
    if before is None or before.mask.shape != now.mask.shape:
        return now.mask, np.zeros_like(now.mask)
    return moved(now, before)


def detect(frames: Sequence[tuple[int, np.ndarray]]) -> list[FrameChange]:
    """Changes of a run of consecutive frames ``(index, grey image)``; the first is compared with nothing."""
    return ChangeDetector().feed(frames)


class ChangeDetector:
    """:func:`detect` over a stream fed in parts: :meth:`feed` takes the frames that follow the ones fed before and
    returns their changes, as :func:`detect` of the whole stream would (it keeps the last ``RECEPTIVE_FIELD``
    frames and the last stroke map, all a frame's change depends on)."""

    def __init__(self) -> None:
        self.before: Strokes | None = None
        # the frames before (the last is the previous one) and their shares moved, oldest first
        self.history: deque[tuple[np.ndarray, float | None]] = deque(maxlen=RECEPTIVE_FIELD)

    def feed(self, frames: Sequence[tuple[int, np.ndarray]]) -> list[FrameChange]:
        import cv2

        out = []
        before, history = self.before, self.history
        for index, image in frames:
            now = strokes(image, bright=BRIGHT, dark=DARK)
            appeared, vanished = compare(now, before)
            share: float | None = None  # of the pixels moved since the frame before (None: none of this shape)
            previous = history[-1][0] if history else None
            if previous is None or previous.shape != image.shape:
                diff = np.zeros(image.shape, np.uint8)
            else:
                diff = cv2.absdiff(image, previous)
                share = np.count_nonzero(diff > STILL) / diff.size
            h, w = image.shape
            full = cell_sums(np.ones((h, w), np.uint8))  # pixels per cell (the edge cells may be partial)
            edge = edges(image)
            if share is None:
                stable = edge & False
            elif share <= REPEAT_SHARE and (held := _held(history, image.shape)) is not None:
                anchor, move = held  # still since before the move, or changed since (a line came on a repeat)
                kept = (cv2.absdiff(image, anchor) <= STILL) | (cv2.absdiff(image, move) > STILL)
                stable = edge & (diff <= STILL) & kept
            else:
                stable = edge & (diff <= STILL)
            planes = np.stack([np.minimum(cell_sums(appeared), 255), np.minimum(cell_sums(vanished), 255),
                               np.minimum(cell_sums(now.mask), 255), cell_sums(diff) // full,
                               np.minimum(cell_sums(stable), 255)]).astype(np.uint8)
            out.append(FrameChange(index, int(np.count_nonzero(appeared)), int(np.count_nonzero(vanished)), now.count,
                                   planes.tobytes(), planes.shape[1], planes.shape[2]))  # fmt: skip
            before = now
            history.append((image, share))
        self.before = before
        return out


def _held(history: Sequence[tuple[np.ndarray, float | None]], shape: tuple[int, ...]):
    """For a frame that repeats the last of ``history`` (frames and their shares moved, oldest first): the frames
    before and at the last move, ``(anchor, move)``, when the picture is held: this frame and those back to the
    last move repeat (1 to ``HOLD_MAX`` of them), and so do the frames back from the one before that move to the
    move before it; else None."""
    shares = [share if image.shape == shape else None for image, share in history] + [0.0]

    def move_before(end: int) -> int | None:
        """The move before ``end`` when ``end`` and the frames back to it repeat, at most HOLD_MAX of them."""
        for k in range(end, max(end - HOLD_MAX - 1, -1), -1):
            share = shares[k]
            if share is None or (share > REPEAT_SHARE and (share < MOVE_SHARE or k == end)):
                return None
            if share >= MOVE_SHARE:
                return k
        return None

    move = move_before(len(shares) - 1)
    if move is None or move < 1 or move_before(move - 1) is None:
        return None
    return history[move - 1][0], history[move][0]
