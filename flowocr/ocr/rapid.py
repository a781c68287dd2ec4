"""The default OCR engine: PP-OCR detection + direction classification + recognition on ONNX Runtime (RapidOCR).

The models ship inside the ``rapidocr`` wheel, so this engine works offline.

Settings, measured
------------------
RapidOCR's default detector resize (``Det.limit_type=min``, ``limit_side_len=736``) raises the *short* side to
736 px: a 640 x 108 subtitle band is enlarged 6.8x to 4352 x 736 (and a band wider than 8:1 is first
letterboxed to 8:1), which makes bands slower than whole frames and breaks lines apart. We scale the *long*
side to ``det_side`` = 960 px instead (enlarging by at most ``det_max_upscale`` = 2x), so glyphs reach the
detector at a similar size whatever the frame size: subtitles of 640 x 360 video (about 20 px) and of 1080p
(about 50 px) both arrive at 25-30 px. Bands then cost a fraction of full frames, as they should.

Measured with rapidocr 3.10.0 (PP-OCRv6 small det/rec, PP-OCRv4 mobile cls), onnxruntime 1.32 CPU, one
thread, CPU ms per image (minimum of 2 runs), on frames with known text: ``fixtures`` = the midpoint frame of
each of the 29 cues of fixtures/*.srt (38 lines, 640 x 360 and 480 x 270); ``nezha`` = 14 frames of
rapidvideocr_nezha.mp4 (1920 x 800; 12 subtitle lines, transcribed by eye); ``r1`` = 2 frames of the bilingual
rapidvideocr_1.mp4 (678 x 360; 4 lines of rapidvideocr_1.MANUAL.txt). "bottom" is the lower 30 % of the
frame, "band" a 1120 x 90 crop around nezha's subtitles. Lines: read exactly, spaces aside / all lines (the
two lines missing from "fixtures, bottom" are a top-positioned cue, outside the band). Spaces: lines exact
to the space, too.

                             A: rapidocr        B: rapidocr          C: flowocr
                             defaults           limit_type=max,      (these defaults)
                                                limit_side_len=960
    fixtures, full frame     572 ms  38/38      131 ms  37/38        303 ms  38/38   (spaces: A 32, B 31, C 36)
    fixtures, bottom        2002 ms  28/38       77 ms  33/38        136 ms  36/38   (spaces: A 25, B 26, C 34)
    r1, full frame           716 ms   4/4       294 ms   3/4         417 ms   4/4
    r1, bottom              2379 ms   2/4       179 ms   3/4         197 ms   4/4
    nezha, full frame        854 ms  12/12      184 ms  12/12        251 ms  12/12
    nezha, bottom           2717 ms  12/12       86 ms  12/12         82 ms  12/12
    nezha, 1120 x 90 band   1207 ms  12/12      128 ms  12/12         67 ms  12/12

Timings vary by up to 25 % from run to run (a shared 2-core machine). The two English lines C still gets
wrong to the space are on the 480 x 270 fixture ("AV1is", "takesmore"): at 13 px glyphs the recogniser sees
no space at all.

- B never enlarges, so small frames lose lines (the thin "一" of rapidvideocr_1, centred text on a busy
  background in vp9_60.webm); C enlarges up to 2x and finds them, at 1.5-2.5x B's cost on 640 px frames.
- ``det_side`` 736 instead of 960: 30 % faster on 640 px frames but loses "一" again; 1280: 1.5-2x slower, no
  line gained.
- Spaces: PP-OCRv6 drops the narrow space between English words often (A: 6 of 27 English lines). Three fixes
  add up: ``det_unclip`` 2.0 instead of PP-OCR's 1.6 (boxes ~15 % taller, a margin above and below the glyphs:
  31 -> 34 lines right to the space), space recovery in the CTC decoding (``rec_space_prob``, see
  :func:`ctc_decode`: 34 -> 36), and warping small crops straight to the recogniser's height
  (:func:`crop_box`: "Av1" -> "AV1"). None costs measurable time. Unclip 2.2 was no better; a margin added at
  the crop was no better and lets a neighbouring line bleed in; stretching crops sideways was worse.
- Closing marks of CJK lines: a full stop sits low in the left of its own cell, and the detector's box of a line
  sometimes ends before it (seed 2027: 9 of 18 misread lines had lost their last mark, on some frames and bands
  of a cue and not others). ``rec_tail``: a line whose reading ends with a CJK letter is read again, its box grown
  0.5 box heights to the right, and that reading is kept only when it adds one closing mark (:func:`with_tail`);
  growing every box on both sides instead fixed more marks but broke Latin lines ("Sim." read "Sim。"). The same
  for a quote left open and a Latin line without its mark (half-width marks only), each growth of ``TAIL_AGAIN``
  tried in turn where the first added nothing (dev seeds, 798 lines: 714 -> 723 exact, none worse). One or two
  more recognitions per such line, no detection, and only where the strip its box grows into holds a pixel
  half-way from its background to its text's brightest, or the line is small (:func:`tail_inked`: a darker picture
  beside it holds no mark).
  Half-width marks after a CJK letter are made full-width (:func:`full_width_after_cjk`).
- Frame-filling detections (texture read as "0", "瓷") are dropped: see ``_MAX_LINE_SHARE``.
- ``use_cls``: 1-4 ms per image, no line changed on these sets; off by default (video text is upright, and a
  wrong 180 degree flip garbles a line).
- ``rec_batch``: 6 was as fast as or faster than 16 (up to 20 %) on every set. Recognising a whole batch at
  once vs one image per call: 134 vs 125 ms per image (demo.mp4 at 2 fps, bottom band, 24 frames; det 66 ms,
  rec 63 ms): on one CPU thread batching gains nothing measurable; it pays with more threads and on
  accelerators, and the results are identical either way (padding depends on the crop alone).
- Threads: ``threads=None`` lets onnxruntime use every core (``get_engine`` asks for one thread on machines
  with two CPUs or fewer: :func:`flowocr.ocr.engine.default_threads`). Several engines in parallel processes
  should get ``threads`` = cores / processes each. Results do not depend on the thread count.

How a batch is read
-------------------
1. Detection, one image at a time: our pre-process (scale, pad to a multiple of 32, normalise), the ONNX
   session and the DB post-process of :mod:`flowocr.ocr.ppocr` (boxes in image pixels), then reading order.
2. Every text box of every image of the batch is cut out of the *original* image (not the scaled one), warped
   straight to at least the recogniser's 48 px height (:func:`crop_box`).
3. Optional 0/180 degree classification of all crops of the batch at once.
4. Recognition of all crops of the batch together: sorted by aspect ratio, each padded to a width that depends
   on the crop alone (:func:`rec_width`), ``rec_batch`` crops of one width per session call, results back in
   input order. A crop thus reads the same in any batch (see :class:`_Recognizer`).
5. Lines that may have lost a closing mark (ending with a letter or digit, or with a quote left open) are read
   again with their boxes grown to the right (``rec_tail``, then ``TAIL_AGAIN``) where something as bright as
   their text lies there (:func:`tail_inked`), half-width marks after CJK letters made full-width.
6. A squat box is detected again on its own, enlarged: two short lines stacked close together can be one region
   for the detector at ``det_side`` (:data:`SPLIT_STACKED`).
7. Lines with an empty text or a score under ``text_score`` are dropped; an image without lines gets an empty
   result.

Which parts of rapidocr are used
--------------------------------
Its model files only: :mod:`flowocr.ocr.ppocr` loads the detection and recognition models of the wheel
straight into ONNX Runtime (rapidocr's own constructor spends about a second reading its configuration) and
holds the DB post-process and the recogniser's input step, which give results identical to rapidocr's own
(checked on 114 frames and bands of the fixtures and ../shared clips: same boxes, texts and scores). The
optional 0/180 degree classifier (``use_cls``) is rapidocr's ``TextClassifier``, loaded through rapidocr. We do
not call ``RapidOCR.__call__``: it handles one image at a time (no recognition across images), resizes with
``Det.limit_type`` whose meaning changed within 3.x (some releases map ``max`` to 960/1500/2000 by image
size), and sets attributes on itself per call (``update_params``), which is unsafe when threads share one
engine. Our detector pre-process is our own for the same reasons; nothing we call keeps per-call state.

Languages
---------
The wheel ships one multilingual PP-OCRv6 recognition model (Chinese, English, Japanese kana and Latin-script
languages). Every language :mod:`flowocr.ocr.langs` gives to this engine (``ch``, the default, ``en``, ``ja``,
``fr``, ``de``, ...) uses it, so they share one engine instance: "ch" reads English too. The detector alone
(:func:`load_detector`) also finds the lines that :mod:`flowocr.ocr.tesseract` recognises.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from flowocr.ocr.engine import Bounds, OcrBatch, OcrEngine, StageTimes, _count_stage_cpu
from flowocr.ocr.langs import codes_for
from flowocr.ocr.types import OcrResult, TextLine, box_iou, known_boxes, point_bounds

#: Mean and std of the detector's input normalisation (PP-OCR: x / 255, then (x - 0.5) / 0.5).
_DET_MEAN = 0.5
_DET_STD = 0.5
#: Crops at least this much taller than wide hold vertical text: turned 90 degrees before recognition.
_VERTICAL_RATIO = 1.5
#: A detected region at least this share of the image's height, in an image at least ``_TALL_IMAGE`` px tall, is
#: texture, not a line of text (DB answers some gradients and fractals with one frame-filling region, which the
#: recogniser then reads as "0", "一", "瓷", up to score 0.79). Measured on about 320 frames of the fixtures and
#: ../shared videos: all such regions (14 distinct readings) were garbage; the tallest real line was 14 % of its
#: frame (a 1080p timecode). A thin band (below 200 px) is exempt: there a subtitle line may fill the image.
_MAX_LINE_SHARE = 0.9
_TALL_IMAGE = 200
#: Recognition pads each crop to a multiple of this many pixels (at the model's 48 px height).
REC_WIDTH_STEP = 64


@dataclass(frozen=True)
class RapidOptions:
    """How the engine reads. Defaults are the measured best for video frames and text bands (see above).

    ``det_side``: the detector sees the image scaled so that its longer side is this many pixels, ...
    ``det_max_upscale``: ... but never enlarged by more than this factor (small frames, thin bands).
    ``det_unclip``: how far each detected text region is grown before it is cut out (PP-OCR's unclip ratio);
    a little margin above and below the glyphs makes the recogniser keep the spaces between English words.
    ``use_cls``: classify 0/180 degree orientation of each text box before recognition.
    ``text_score``: lines recognised with a lower score (0-1) are dropped.
    ``rec_batch``: at most this many crops (all of one padded width) per recognition session call.
    ``rec_space_prob``: insert a space between two characters where the recogniser gave a space at least this
    probability (:func:`ctc_decode`); 1.0 turns space recovery off.
    ``rec_tail``: a line that may have lost its closing mark (:func:`wants_tail`) is read again with its box grown
    this many box heights to the right (then ``TAIL_AGAIN``), and that reading is kept when it only adds one closing
    mark (:func:`with_tail`); 0 turns it off.
    ``spin``: let ONNX Runtime's worker threads spin between calls (its default); off, they sleep, and leave
    the CPU to the decoding lanes (:func:`_sessions_without_spinning`).
    """

    det_side: int = 960
    det_max_upscale: float = 2.0
    det_unclip: float = 2.0
    use_cls: bool = False
    text_score: float = 0.5
    rec_batch: int = 6
    rec_space_prob: float = 0.04
    rec_tail: float = 0.5
    spin: bool = False

    def __post_init__(self) -> None:
        if self.det_side < 32:
            raise ValueError(f"det_side must be at least 32, got {self.det_side}")
        if self.det_max_upscale < 1.0:
            raise ValueError(f"det_max_upscale must be at least 1, got {self.det_max_upscale}")
        if not 0.0 <= self.text_score <= 1.0:
            raise ValueError(f"text_score must be in [0, 1], got {self.text_score}")
        if not 1.0 <= self.det_unclip <= 4.0:
            raise ValueError(f"det_unclip must be in [1, 4], got {self.det_unclip}")
        if not 0.0 <= self.rec_tail <= 2.0:
            raise ValueError(f"rec_tail must be in [0, 2], got {self.rec_tail}")
        if not 0.0 < self.rec_space_prob <= 1.0:
            raise ValueError(f"rec_space_prob must be in (0, 1], got {self.rec_space_prob}")
        if self.rec_batch < 1:
            raise ValueError(f"rec_batch must be at least 1, got {self.rec_batch}")


@dataclass(frozen=True)
class DetInput:
    """The detector's input tensor (1 x 3 x H x W float32, H and W multiples of 32) for one image, and the
    scales from image pixels to tensor pixels. The image fills the top-left corner; the rest is black."""

    tensor: np.ndarray
    scale_x: float
    scale_y: float


@dataclass(frozen=True)
class Detection:
    """Text boxes of one image: ``boxes`` (n x 4 x 2 float32, image pixels, clockwise from top-left, in
    reading order), their detection scores, and the seconds of each step."""

    boxes: np.ndarray
    scores: tuple[float, ...]
    pre_s: float
    session_s: float
    post_s: float


def det_input(image: np.ndarray, *, side: int, max_upscale: float) -> DetInput:
    """Pre-process for detection: scale so the longer side is ``side`` (enlarging by at most
    ``max_upscale``), pad right and bottom to multiples of 32 (the network's stride) with black, normalise.

    Padding instead of stretching to a multiple of 32 keeps the aspect ratio: a 1120 x 90 band stretched to
    ``x 96`` or ``x 64`` distorts glyphs by up to 30 %."""
    import cv2

    height, width = image.shape[:2]
    scale = min(side / max(height, width), max_upscale)
    scaled_w, scaled_h = max(1, round(width * scale)), max(1, round(height * scale))
    if (scaled_w, scaled_h) != (width, height):
        image = cv2.resize(image, (scaled_w, scaled_h), interpolation=cv2.INTER_LINEAR)
    pad_h, pad_w = max(32, math.ceil(scaled_h / 32) * 32), max(32, math.ceil(scaled_w / 32) * 32)
    tensor = np.full((1, 3, pad_h, pad_w), (0.0 - _DET_MEAN) / _DET_STD, dtype=np.float32)
    tensor[0, :, :scaled_h, :scaled_w] = (image.transpose(2, 0, 1).astype(np.float32) / 255.0 - _DET_MEAN) / _DET_STD
    return DetInput(tensor, scaled_w / width, scaled_h / height)


def reading_order(boxes: np.ndarray) -> np.ndarray:
    """Indices of ``boxes`` (n x 4 x 2) top to bottom, then left to right among boxes on one line (vertical
    centres closer than half the smaller box height)."""
    if len(boxes) == 0:
        return np.zeros(0, dtype=np.int64)
    centre_y = boxes[:, :, 1].mean(axis=1)
    height = boxes[:, :, 1].max(axis=1) - boxes[:, :, 1].min(axis=1)
    by_y = np.argsort(centre_y, kind="stable")
    line_of = np.zeros(len(boxes), dtype=np.int64)
    line = 0
    for prev, cur in zip(by_y, by_y[1:]):
        if centre_y[cur] - centre_y[prev] >= 0.5 * max(1.0, min(height[cur], height[prev])):
            line += 1
        line_of[cur] = line
    return np.lexsort((boxes[:, 0, 0], line_of))


def _box_size(box: np.ndarray) -> tuple[int, int]:
    """The width and height (whole pixels, at least 1) of the quadrilateral ``box`` along its own sides."""
    width = max(1, int(max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3]))))
    height = max(1, int(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2]))))
    return width, height


def crop_box(image: np.ndarray, box: np.ndarray, *, min_height: int = 1) -> np.ndarray:
    """The quadrilateral ``box`` (4 x 2, clockwise from top-left) of ``image``, warped upright and, when it is
    lower than ``min_height``, enlarged to that height in the same (bicubic) warp. Vertical text (a box at least
    1.5 times taller than wide) is turned 90 degrees, at its own size.

    Warping small text straight to the recogniser's height (48 px) instead of letting the recogniser stretch a
    small crop (bilinear) read "AV1" rather than "Av1" on 480 x 270 video, at no measurable cost."""
    import cv2

    box = box.astype(np.float32)
    width, height = _box_size(box)
    vertical = height >= _VERTICAL_RATIO * width
    scale = 1.0 if vertical else max(1.0, min_height / height)
    out_w, out_h = max(1, round(width * scale)), max(1, round(height * scale))
    target = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], dtype=np.float32)
    warp = cv2.getPerspectiveTransform(box, target)
    out = cv2.warpPerspective(image, warp, (out_w, out_h), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    if vertical:
        out = np.ascontiguousarray(np.rot90(out))
    return out


class _Detector:
    """Detection stage: :func:`det_input` -> ONNX session -> DB post-process -> reading order."""

    def __init__(self, session: Any, postprocess: Any, options: RapidOptions) -> None:
        self._session = session
        self._postprocess = postprocess
        self.side = options.det_side
        self._max_upscale = options.det_max_upscale

    def __call__(self, image: np.ndarray, full_size: bool = False, scale: float | None = None) -> Detection:
        """The boxes of ``image``, seen scaled to ``det_side`` (``full_size``: at its own size where larger;
        ``scale``: scaled by this factor instead)."""
        t0 = time.perf_counter()
        height, width = image.shape[:2]
        if height == 0 or width == 0:
            return Detection(np.zeros((0, 4, 2), np.float32), (), 0.0, 0.0, 0.0)
        if scale is not None:
            prepared = det_input(image, side=math.ceil(max(height, width) * scale), max_upscale=scale)
        else:
            side = max(self.side, height, width) if full_size else self.side
            prepared = det_input(image, side=side, max_upscale=self._max_upscale)
        t1 = time.perf_counter()
        pred = self._session(prepared.tensor)
        t2 = time.perf_counter()
        _, _, pad_h, pad_w = prepared.tensor.shape
        # the post-process maps the probability map onto the given size: the padded tensor in image pixels
        boxes, scores = self._postprocess(pred, (pad_h / prepared.scale_y, pad_w / prepared.scale_x))
        boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4, 2)
        boxes[:, :, 0] = boxes[:, :, 0].clip(0, width)
        boxes[:, :, 1] = boxes[:, :, 1].clip(0, height)
        size = boxes.max(axis=1) - boxes.min(axis=1)
        keep = (size[:, 0] > 3) & (size[:, 1] > 3)  # not a box that lay mostly in the padding
        if height >= _TALL_IMAGE:
            keep &= size[:, 1] < _MAX_LINE_SHARE * height
        keep = np.flatnonzero(keep)
        order = keep[reading_order(boxes[keep])]
        t3 = time.perf_counter()
        return Detection(boxes[order], tuple(float(scores[i]) for i in order), t1 - t0, t2 - t1, t3 - t2)


@dataclass(frozen=True)
class Recognition:
    """Texts and scores of a list of crops, in the crops' order, and the seconds of each step."""

    texts: tuple[str, ...]
    scores: tuple[float, ...]
    pre_s: float
    session_s: float
    post_s: float


def ctc_decode(probs: np.ndarray, chars: Sequence[str], *, space: int | None, space_prob: float) -> tuple[str, float]:
    """Greedy CTC decoding of one line (``probs``: T columns x C classes, class 0 the blank): the best class per
    column, repeats merged, blanks dropped; the score is the mean probability of the kept columns (0 when none).

    Space recovery: PP-OCR's recogniser often gives a narrow gap between two words a clear but losing space
    probability (0.2-0.5 against the blank). Where the blank columns between two characters hold a space
    probability of at least ``space_prob``, a space is inserted. Measured on 70 frames of Chinese, English and
    bilingual subtitles, this never put a space inside a word (down to 0.05) and restored 3 of 4 dropped ones.
    Then on the middle frames of 798 plain lines of the dev corpora (seeds 13 and 11): 0.15 -> 0.04, 2 more lines
    exact ("I always knew", "the train is arriving"), none worse; 0.01 put spaces inside words ("dri ve",
    "passengers , the"). A recovered space stands only between words (:func:`_word_gap`): 0.04 also put one before
    a question mark and between two CJK characters in the reader's replays of dev seed 11.
    """
    best = probs.argmax(axis=1)
    keep = best != 0
    keep[1:] &= best[1:] != best[:-1]
    cols = np.flatnonzero(keep)
    if cols.size == 0:
        return "", 0.0
    score = float(probs[cols, best[cols]].mean())
    pieces = [chars[best[cols[0]]]]
    for prev, col in zip(cols, cols[1:]):
        if (
            space is not None
            and col - prev > 1
            and best[prev] != space
            and best[col] != space
            and _word_gap(chars[best[prev]], chars[best[col]])
            and probs[prev + 1 : col, space].max() >= space_prob
        ):
            pieces.append(" ")
        pieces.append(chars[best[col]])
    return "".join(pieces), score


def _word_gap(before: str, after: str) -> bool:
    """Whether a recovered space may stand between ``before`` and ``after``: a gap between words, so not between two
    CJK characters nor before a mark ("lost ?", "四十分钟 中间" at a space probability of 0.04)."""
    return after.isalnum() and not is_cjk(after) and not is_cjk(before)


#: Closing marks of CJK text that the detector leaves out of a line's box when they stand apart from its last glyph
#: (a full stop sits low in the left of its own cell).
CJK_TAIL = frozenset("。！？…」』”）、，")
#: Half-width marks that PP-OCR's recogniser gives for the full-width ones after a CJK glyph ("哪里?" for "哪里？"),
#: and the full-width mark CJK typography writes there.
_FULL_WIDTH = {"?": "？", "!": "！", ",": "，", ":": "：", ";": "；"}


def is_cjk(ch: str) -> bool:
    """A Han, kana or Hangul letter (not punctuation)."""
    code = ord(ch)
    return (0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xAC00 <= code <= 0xD7AF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3134F)  # fmt: skip


def full_width_after_cjk(text: str) -> str:
    """``text`` with each half-width ``? ! , : ;`` that directly follows a CJK letter made full-width, as CJK
    typography writes it (the recogniser confuses the two: the glyphs differ in their spacing only). Corpus truth
    (674 cues of two seeds) never has a half-width mark there; 5 lines of them were read so."""
    if not any(ch in _FULL_WIDTH for ch in text):
        return text
    out = list(text)
    for k in range(1, len(out)):
        if out[k] in _FULL_WIDTH and is_cjk(out[k - 1]):
            out[k] = _FULL_WIDTH[out[k]]
    return "".join(out)


#: Closing marks of Latin text, that a line ending with a Latin letter or digit may have lost the same way.
LATIN_TAIL = frozenset('.?!,:;"\')…')
#: Opening marks and the mark that closes each: a line that opens one more than it closes wants its closing mark.
PAIRS = {"“": "”", "‘": "’", "「": "」", "『": "』", "（": "）", "(": ")", "《": "》"}


def unclosed(text: str) -> str | None:
    """The closing mark ``text`` lacks: of a pair it opens more often than it closes (:data:`PAIRS`), or a straight
    double quote when it holds an odd number of them; None when it lacks none."""
    for opening, closing in PAIRS.items():
        if text.count(opening) > text.count(closing):
            return closing
    return '"' if text.count('"') % 2 else None


def wants_tail(text: str) -> bool:
    """Whether a line read as ``text`` may have lost a closing mark outside its box: it ends with a CJK letter, or
    with a Latin letter or digit, or it opened a quote or bracket it does not close."""
    if not text:
        return False
    last = text[-1]
    return is_cjk(last) or (last.isascii() and last.isalnum()) or unclosed(text) is not None


def with_tail(text: str, grown: str) -> str:
    """The reading of a line: ``grown`` (the reading of its box grown to the right) when it is ``text`` and one
    closing mark that fits it, else ``text``: the mark that closes what it opened (:func:`unclosed`); else after a
    CJK letter one of :data:`CJK_TAIL`, after a Latin letter or digit one of :data:`LATIN_TAIL` (half-width: "Sim"
    is never made "Sim。").

    Measured (dev seed 13, the middle frame of each of 264 plain cues, its band read): boxes grown 0.5 heights
    and kept so, 237 -> 239 lines exact, none worse; growing every box on both sides instead (0.3 heights) fixed 6
    and broke 2 ("Sim." read "Sim。", "O" read "0"). Then closing quotes and Latin marks, with a growth of 0.25
    height tried where 0.5 added nothing (``TAIL_AGAIN``); dev seeds 13 and 11, 798 lines: 714 -> 723 exact,
    none worse ('他在电话里说：“别等我。' four times, "The doctor says you need rest", "Why", '银行' ...)."""
    if not text or len(grown) != len(text) + 1 or not grown.startswith(text):
        return text
    mark, last = grown[-1], text[-1]
    closing = unclosed(text)
    if closing is not None:
        return grown if mark == closing else text
    if is_cjk(last):
        return grown if mark in CJK_TAIL else text
    return grown if last.isascii() and last.isalnum() and mark in LATIN_TAIL else text


def surer(first: tuple[str, float], second: tuple[str, float], *, least: float) -> tuple[str, float]:
    """The better of two readings (text, score) of one box: the one that is the other and a closing mark that fits
    it (:func:`with_tail`), read at least ``least`` sure (a score is a mean over the characters read, and a mark is
    read less sure than the letters before it); else the more confident one (the first when equal)."""
    (a, p), (b, q) = first, second
    if a != b:
        if q >= least and with_tail(a, b) == b:
            return second
        if p >= least and with_tail(b, a) == a:
            return first
    return second if q > p else first


#: Further growths (box heights) of a line's box tried in turn where the first (``rec_tail``) added no mark: the
#: recogniser reads a small outlined full stop at the end of a crop on some widths and not others. A whole height
#: more found one more mark on the dev corpora, and read a bright stroke of the picture beside a line of a real
#: anime clip (rapidvideocr_nezha) as "！": not kept.
TAIL_AGAIN = (0.25,)
#: A box may hold two lines stacked close together that the detector, seeing the image scaled to ``det_side``,
#: took for one region ("好。" over "OK.", 29 px at 536p: one 72 x 91 box read "旺" at 0.25): a squat box is detected
#: again on its own, enlarged, and each line found there is recognised (:meth:`RapidOcrEngine._split_stacked`). Cost:
#: trying every box read to nothing too, whatever its shape, made a run over a Sierpinski pattern at 536p (16 such
#: boxes a frame, most as wide as the frame) take 257 s instead of 18; every squat box at two sizes (200 then 150 px), a
#: life-game video at 480p 98 s instead of 82; two squat boxes an image at one size, 86 s (and the first, 18.5).
SPLIT_STACKED = True
SPLIT_SQUAT = 1.5  # a box narrower than this many times its height is tried ...
SPLIT_MAX_HEIGHT = 240  # pixels: ... up to this tall (two lines of 1080p's largest subtitles)
SPLIT_MARGIN = 0.5  # of the box's height, around it
SPLIT_MIN_LINE = 8  # pixels: a box less than twice as tall holds one line at most
SPLIT_TRIES = 2  # boxes an image
SPLIT_HEIGHT = 200  # pixels: the box is detected again enlarged to about this height ...
SPLIT_MAX_SCALE = 4.0  # ... by at most this factor
SPLIT_SAME_IOU = 0.7  # a box found again that overlaps the box this much is that box: not read again


#: A line is read again with its box grown only where something lies beside it (:func:`tail_inked`): the two reads
#: again were two thirds of the recognition of a run over subtitles without closing marks.
TAIL_INK = True
#: The strip begins this share of the box's height inside the box: the detector's box may cut a mark in two (a
#: full stop after a CJK letter half inside it, dev seed 11), and the recogniser reads it only grown.
TAIL_INSIDE = 0.1
#: A pixel at least this share of the way from a box's background (its 20th percentile of grey) to its text's
#: brightest (99th) is ink: half-way, since a mark's thin strokes are blurred to less than the text's brightest
#: (an outlined full stop at 720p peaked at 0.67 of the way, dev seed 11; 0.7 lost it) ...
TAIL_BRIGHT = 0.5
#: ... where the box has at least this many grey levels between them (pixel.LINE_MIN_SPAN); else it cannot tell.
TAIL_MIN_SPAN = 24
#: A box less tall than this (pixels) is read again wherever it wants a tail: a small mark's one-pixel ring is
#: blurred to a third of the text's brightness, and it may lie inside the box, a third of a height from its edge,
#: where the recogniser reads it only with room beside it (a 17 px '哦。' at 360p, dev seed 13).
TAIL_SMALL = 24


def tail_inked(image: np.ndarray, box: np.ndarray, by: float) -> bool:
    """Whether the strip that growing the line ``box`` (a quadrilateral in ``image``, BGR) ``by`` box heights to the
    right adds, from ``TAIL_INSIDE`` of its height inside it, holds a pixel at least half-way from the box's
    background to its text's brightest (``TAIL_BRIGHT``): a closing mark the detector left out has the line's own
    colour; a strip of background darker than the text holds none, and reading it again finds nothing. True where
    the box is small (``TAIL_SMALL``), has too little contrast to tell (dark text on a light picture,
    ``TAIL_MIN_SPAN``) or ``image`` is not BGR; False where there is no strip (the box reaches the image's right
    edge: the grown box is the box)."""
    import cv2

    if image.ndim != 3 or image.shape[2] != 3:
        return True
    height, width = image.shape[:2]
    grown = grown_right(box, by, width)
    y0, y1 = max(0, math.floor(float(box[:, 1].min()))), min(height, math.ceil(float(box[:, 1].max())))
    x0 = max(0, math.floor(float(box[:, 0].min())))
    right = math.ceil(float(max(box[1, 0], box[2, 0])))
    x1 = min(width, math.ceil(float(max(grown[1, 0], grown[2, 0]))))
    if x1 <= right:
        return False
    if y1 - y0 < TAIL_SMALL:
        return True
    start = right - round(TAIL_INSIDE * (y1 - y0))
    if start - x0 < 3:
        return True
    grey = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    lo, hi = (float(v) for v in np.percentile(grey[:, : right - x0], (20, 99)))
    if hi - lo < TAIL_MIN_SPAN:
        return True
    return bool((grey[:, start - x0 :] >= lo + TAIL_BRIGHT * (hi - lo)).any())


def grown_right(box: np.ndarray, by: float, width: int) -> np.ndarray:
    """The quadrilateral ``box`` (4 x 2, clockwise from top-left) with its right edge moved ``by`` box heights
    further along its top edge, within ``width``."""
    box = box.astype(np.float32).copy()
    along = box[1] - box[0]
    length = float(np.linalg.norm(along))
    if length == 0:
        return box
    height = float(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2])))
    step = along / length * by * height
    room = max(0.0, width - float(max(box[1, 0], box[2, 0])))
    if step[0] > room:
        step = step * (room / step[0])
    box[1] += step
    box[2] += step
    return box


def rec_width(crop_shape: tuple[int, ...], *, height: int, min_width: int) -> int:
    """The padded width of a crop at the recogniser's input ``height``: its own width at that height, rounded
    up to a multiple of ``REC_WIDTH_STEP``, and at least ``min_width``. It depends on the crop alone."""
    crop_h, crop_w = crop_shape[:2]
    width = math.ceil(height * crop_w / max(1, crop_h))
    return max(min_width, math.ceil(width / REC_WIDTH_STEP) * REC_WIDTH_STEP)


class _Recognizer:
    """Recognition stage over all crops of a batch: pre-process (resize to the model's height, pad to
    :func:`rec_width`) -> ONNX session, ``rec_batch`` crops of one width per call -> :func:`ctc_decode`.

    Crops are sorted by padded width (their aspect ratio), so crops of one call need no extra padding, and the
    results are put back in input order. Because the padding of a crop depends on the crop alone, a crop reads
    the same whatever else is in the batch: results do not change with batch size or window boundaries.
    (RapidOCR's own ``TextRecognizer.__call__`` pads a call to its widest crop, and PP-OCRv6's recogniser
    mixes context along the whole padded line, so its results depend on the neighbours.)
    """

    def __init__(self, session: Any, alphabet: Sequence[str], options: RapidOptions) -> None:
        from flowocr.ocr.ppocr import REC_SHAPE, rec_input

        self._session = session
        self._resize_pad = rec_input  # (crop, max_wh_ratio) -> 3 x H x W, pure
        _, self.input_height, self._min_width = REC_SHAPE
        self._chars = tuple(alphabet)  # class index -> text; 0 is the CTC blank
        self._space = self._chars.index(" ") if " " in self._chars else None
        self._space_prob = options.rec_space_prob
        self._batch = options.rec_batch

    def __call__(self, crops: Sequence[np.ndarray]) -> Recognition:
        widths = [rec_width(crop.shape, height=self.input_height, min_width=self._min_width) for crop in crops]
        order = sorted(range(len(crops)), key=lambda i: widths[i])
        calls: list[list[int]] = []
        for index in order:
            if calls and widths[calls[-1][0]] == widths[index] and len(calls[-1]) < self._batch:
                calls[-1].append(index)
            else:
                calls.append([index])
        texts = [""] * len(crops)
        scores = [0.0] * len(crops)
        pre_s = session_s = post_s = 0.0
        for call in calls:
            t0 = time.perf_counter()
            # +0.5: resize_norm_img truncates height * ratio to an int; this makes it exactly the padded width
            ratio = (widths[call[0]] + 0.5) / self.input_height
            tensor = np.stack([self._resize_pad(crops[i], ratio) for i in call]).astype(np.float32)
            t1 = time.perf_counter()
            preds = self._session(tensor)
            t2 = time.perf_counter()
            for index, probs in zip(call, preds):
                texts[index], scores[index] = ctc_decode(
                    probs, self._chars, space=self._space, space_prob=self._space_prob
                )
            t3 = time.perf_counter()
            pre_s, session_s, post_s = pre_s + t1 - t0, session_s + t2 - t1, post_s + t3 - t2
        return Recognition(tuple(texts), tuple(scores), pre_s, session_s, post_s)


class RapidOcrEngine(OcrEngine):
    """PP-OCR on ONNX Runtime via rapidocr. Safe to share between threads: calls keep no state on ``self``."""

    NAME = "rapidocr"
    LANGS = dict.fromkeys(codes_for("rapidocr"), "ch")  # one multilingual model reads them all (module docstring)
    REQUIRES = ("rapidocr", "onnxruntime")
    INSTALL_HINT = "Install flowocr with its default dependencies: pip install flowocr (rapidocr, onnxruntime)."
    ONNX_RUNTIME = True
    KNOWN_SKIPS = True
    SHOWN_TOO = True

    def __init__(
        self, *, lang: str = "ch", threads: int | None = None, options: RapidOptions | None = None, device: str = "cpu"
    ) -> None:  # fmt: skip
        """``device``: ``auto``, ``cpu`` or ``cuda`` (:mod:`flowocr.ocr.device`); :attr:`device` is where the models
        were loaded."""
        super().__init__(lang=lang, threads=threads)
        self.options = options or RapidOptions()
        from flowocr.ocr.device import on_device, resolve_device
        from flowocr.ocr.ppocr import DbPostProcess, load_models

        models, self.device = on_device(
            lambda where: load_models(threads=threads, spin=self.options.spin, device=where), resolve_device(device)
        )
        self._detect = _Detector(models["det"], DbPostProcess(unclip_ratio=self.options.det_unclip), self.options)
        self.detect_side = self.options.det_side
        self.alphabet: tuple[str, ...] = tuple(models["alphabet"])
        cuda = self.device == "cuda"
        self._classify = _classifier(threads, self.options, cuda=cuda) if self.options.use_cls else None
        self._recognise = _Recognizer(models["rec"], models["alphabet"], self.options)

    def _detect_only(self, images: Sequence[np.ndarray], full_size: bool = False) -> list[tuple[Bounds, ...]]:
        start, cpu = time.perf_counter(), time.thread_time()
        memo = _recent_detections()
        out = []
        for image in images:
            found = self._detect(image, full_size)
            memo[_image_key(image, full_size)] = found
            while len(memo) > _MEMO_SIZE:  # the oldest go (a probe's two calls are kept for the reading after it)
                del memo[next(iter(memo))]
            out.append(tuple(point_bounds(b) for b in found.boxes))
        took = time.perf_counter() - start
        _count_stage_cpu(StageTimes(took, None, None, took, det_cpu_s=time.thread_time() - cpu))
        return out

    def _run(self, images: Sequence[np.ndarray], known: Sequence[Sequence[TextLine]] | None = None, *,
             shown: Sequence[np.ndarray] | None = None, full_size: bool = False) -> OcrBatch:  # fmt: skip
        start, cpu = time.perf_counter(), time.thread_time()
        memo = _recent_detections()
        # A reading of the images a probe just detected (the reader reads when its probe found new text) takes
        # the probe's detections: the same image gives the same boxes.
        found_all = [(memo.pop(_image_key(image, full_size), None) if memo else None) or self._detect(image, full_size)
                     for image in images]  # fmt: skip
        # the boxes of known lines are those lines; the others are recognised
        kept = [known_boxes([point_bounds(box) for box in found.boxes], lines)
                for found, lines in zip(found_all, known or [()] * len(images))]  # fmt: skip
        detections = [found if not keep else _without(found, keep) for found, keep in zip(found_all, kept)]
        flat = [(n, box) for n, found in enumerate(detections) for box in found.boxes]
        height = self._recognise.input_height
        crops = [crop_box(images[n], box, min_height=height) for n, box in flat]
        if shown is not None:  # each box in the images as they show too: the surer reading is kept (surer)
            crops += [crop_box(shown[n], box, min_height=height) for n, box in flat]
        det_s, det_cpu_s = time.perf_counter() - start, time.thread_time() - cpu

        cls_s = 0.0
        if crops and self._classify is not None:
            t0 = time.perf_counter()
            crops = list(self._classify(crops).img_list)
            cls_s = time.perf_counter() - t0

        rec_s = rec_cpu_s = 0.0
        parts: dict[int, list[TextLine]] = {}
        texts: list[str] = []
        scores: list[float] = []
        if crops:
            t0, cpu = time.perf_counter(), time.thread_time()
            texts, scores = self._read_crops(crops)
            sources = [images[n] for n, _ in flat]
            if shown is not None:
                least = self.options.text_score
                for k, (n, _) in enumerate(flat):
                    mine, theirs = (texts[k], scores[k]), (texts[k + len(flat)], scores[k + len(flat)])
                    if surer(mine, theirs, least=least) is theirs:
                        (texts[k], scores[k]), sources[k] = theirs, shown[n]
                texts, scores = texts[: len(flat)], scores[: len(flat)]
            if self.options.rec_tail > 0 and self._classify is None:
                self._read_tails(flat, sources, texts, scores)
            if SPLIT_STACKED and self._classify is None:
                known_bounds = [[line.bounds for line in keep.values()] for keep in kept]
                parts = self._split_stacked(flat, sources, texts, scores, known_bounds)
            rec_s, rec_cpu_s = time.perf_counter() - t0, time.thread_time() - cpu

        results = []
        read = iter(enumerate(zip(texts, scores)))
        for found, keep in zip(found_all, kept):
            lines = []
            for k, box in enumerate(found.boxes):
                if k in keep:
                    lines.append(keep[k])
                    continue
                j, (text, score) = next(read)
                if j in parts:
                    lines += parts[j]
                elif (line := self._line(text, score, box)) is not None:
                    lines.append(line)
            results.append(OcrResult(tuple(lines)))
        times = StageTimes(det_s=det_s, cls_s=cls_s, rec_s=rec_s, total_s=time.perf_counter() - start,
                           det_cpu_s=det_cpu_s, rec_cpu_s=rec_cpu_s)  # fmt: skip
        return OcrBatch(tuple(results), times, crops=len(crops))

    def _read_tails(self, flat: Sequence[tuple[int, np.ndarray]], sources: Sequence[np.ndarray], texts: list[str],
                    scores: Sequence[float]) -> None:  # fmt: skip
        """Read again, with their boxes grown to the right (``rec_tail``, then each of ``TAIL_AGAIN`` for the lines
        still without), the lines that may have lost a closing mark (:func:`wants_tail`), that were read surely
        enough to keep, and beside which the strip the box grows into holds ink (:func:`tail_inked`); put the grown
        reading in ``texts`` where :func:`with_tail` keeps it. ``flat``: each box read, with the number of its
        image; ``sources``: the image each was read in."""
        pending = []
        for k, (n, box) in enumerate(flat):
            width, height = _box_size(box)
            horizontal = height < _VERTICAL_RATIO * width  # as crop_box decides: a vertical line is not grown
            if horizontal and scores[k] >= self.options.text_score and wants_tail(texts[k]):
                if not TAIL_INK or tail_inked(sources[k], box, max(self.options.rec_tail, *TAIL_AGAIN)):
                    pending.append((k, n, box))
        done = []
        for by in (self.options.rec_tail, *TAIL_AGAIN):
            if not pending:
                break
            boxes = [grown_right(box, by, sources[k].shape[1]) for k, _, box in pending]
            again = self._read_crops([crop_box(sources[k], box, min_height=self._recognise.input_height)
                                      for (k, _, _), box in zip(pending, boxes)])  # fmt: skip
            left = []
            for (k, n, box), grown, text, score in zip(pending, boxes, *again):
                kept = with_tail(texts[k], text) if score >= self.options.text_score else ""
                if kept and kept != texts[k]:
                    texts[k] = kept
                    done.append((k, grown))
                else:
                    left.append((k, n, box))
            pending = left
        for k, box in done:
            # the mark may also have been found as a box of its own (read "o", a closing quote "99"): it is this
            # line's now. Only a box in the strip the line grew into: a short line above or below the line, whose
            # box the grown one overlaps ("好。" over "OK"), is a line of its own.
            _, y0, x1, y1 = point_bounds(box)
            strip = (float(flat[k][1][:, 0].max()), y0, x1, y1)
            for j, (n, other) in enumerate(flat):
                if j != k and n == flat[k][0] and len(texts[j]) <= 2 and _centre_in(other, strip):
                    texts[j] = ""

    def _split_stacked(self, flat: Sequence[tuple[int, np.ndarray]], sources: Sequence[np.ndarray],
                      texts: Sequence[str], scores: Sequence[float],
                      known: Sequence[Sequence[Bounds]]) -> dict[int, list[TextLine]]:  # fmt: skip
        """The lines of the boxes that hold several lines the detector took for one (``SPLIT_STACKED``), by the
        number of the box in ``flat`` (``sources``: the image each box was read in; ``known``: the boxes of each
        image's known lines).

        The boxes tried are squat (narrower than ``SPLIT_SQUAT`` times their height: a short line, or two short
        lines stacked), from ``2 * SPLIT_MIN_LINE`` to ``SPLIT_MAX_HEIGHT`` pixels tall, at most ``SPLIT_TRIES`` an
        image, the least surely read first. Each is detected again on its own, with a margin of ``SPLIT_MARGIN`` of
        its height around it, enlarged to about ``SPLIT_HEIGHT`` pixels tall; where two boxes or more other than
        itself (``SPLIT_SAME_IOU``) and other than the image's other lines are found with their centres in it, each
        is recognised (and its closing mark sought as a line's is), and where two or more are read surely enough,
        they are the box's lines."""
        least = self.options.text_score
        tried: dict[int, list[int]] = {}
        for k, (n, box) in enumerate(flat):
            x0, y0, x1, y1 = point_bounds(box)
            if 2 * SPLIT_MIN_LINE <= y1 - y0 <= SPLIT_MAX_HEIGHT and x1 - x0 < SPLIT_SQUAT * (y1 - y0):
                tried.setdefault(n, []).append(k)
        out: dict[int, list[TextLine]] = {}
        for n, boxes in tried.items():
            for k in sorted(boxes, key=lambda j: scores[j] if texts[j] else 0.0)[:SPLIT_TRIES]:
                lines = self._split_box(flat[k][1], sources[k], others=[
                    *known[n], *(point_bounds(b) for j, (m, b) in enumerate(flat)
                                 if j != k and m == n and texts[j] and scores[j] >= least)])  # fmt: skip
                if len(lines) >= 2:
                    out[k] = lines
        return out

    def _split_box(self, box: np.ndarray, image: np.ndarray, *, others: Sequence[Bounds]) -> list[TextLine]:
        """The lines found in ``box`` of ``image`` detected again on its own (see :meth:`_split_stacked`), read
        surely enough; none where fewer than two boxes are found in it."""
        own = x0, y0, x1, y1 = point_bounds(box)
        margin = SPLIT_MARGIN * (y1 - y0)
        left, top = int(max(0, x0 - margin)), int(max(0, y0 - margin))
        right = int(min(image.shape[1], math.ceil(x1 + margin)))
        bottom = int(min(image.shape[0], math.ceil(y1 + margin)))
        found = self._detect(np.ascontiguousarray(image[top:bottom, left:right]),
                             scale=min(SPLIT_MAX_SCALE, max(1.0, SPLIT_HEIGHT / (y1 - y0))))  # fmt: skip
        inside = [b for b in (b + np.array((left, top), np.float32) for b in found.boxes)
                  if _centre_in(b, own) and box_iou(point_bounds(b), own) < SPLIT_SAME_IOU
                  and not any(_centre_in(b, other) for other in others)]  # fmt: skip
        if len(inside) < 2:
            return []  # the same box again, or nothing: it reads as it did
        texts, scores = self._read_crops([crop_box(image, b, min_height=self._recognise.input_height) for b in inside])
        if self.options.rec_tail > 0:
            self._read_tails([(0, b) for b in inside], [image] * len(inside), texts, scores)
        lines = (self._line(text, score, b) for b, text, score in zip(inside, texts, scores))
        return [line for line in lines if line is not None]

    def _read_crops(self, crops: Sequence[np.ndarray]) -> tuple[list[str], list[float]]:
        """The recogniser's texts (stripped, half-width marks after CJK letters made full-width) and scores for
        ``crops``."""
        recognised = self._recognise(crops)
        return [full_width_after_cjk(t.strip()) for t in recognised.texts], list(recognised.scores)

    def _line(self, text: str, score: float, box: np.ndarray) -> TextLine | None:
        """The line read as ``text`` at ``score`` in ``box`` (4 points), kept when not empty and read at least
        ``text_score`` surely (the score cut to [0, 1])."""
        score = min(1.0, max(0.0, float(score)))
        if not text or score < self.options.text_score:
            return None
        return TextLine(text, score, tuple((float(x), float(y)) for x, y in box))  # type: ignore[arg-type]


def _centre_in(box: np.ndarray, bounds: Bounds) -> bool:
    """Whether the centre of ``box`` (4 points) lies in ``bounds``."""
    cx, cy = box.mean(axis=0)
    return bounds[0] <= cx <= bounds[2] and bounds[1] <= cy <= bounds[3]


def _without(found: Detection, boxes) -> Detection:
    """``found`` without the boxes of index in ``boxes``."""
    left = [k for k in range(len(found.boxes)) if k not in boxes]
    return replace(found, boxes=found.boxes[left], scores=tuple(found.scores[k] for k in left))


_memo = threading.local()
#: detections remembered for the reading after a probe, at most (a probe detects its bands, then some of them again
#: with the picture isolated: both are the reading's)
_MEMO_SIZE = 32


def _recent_detections() -> dict:
    """This thread's detections of its recent :meth:`RapidOcrEngine.detect` calls, by image, each taken by one
    reading of that image at most (the calling thread's own: an engine shared between threads keeps no state between
    their calls)."""
    if not hasattr(_memo, "found"):
        _memo.found = {}
    return _memo.found


def _image_key(image: np.ndarray, full_size: bool) -> tuple:
    return image.shape, hashlib.sha1(np.ascontiguousarray(image).data).digest(), full_size


def load_detector(*, threads: int | None, options: RapidOptions | None = None, device: str = "cpu") -> _Detector:
    """PP-OCR's detector alone, as this engine uses it (``options``: its ``det_*`` settings and ``spin``), on
    ``device`` (``cpu`` or ``cuda``): for an engine that recognises the lines with another model
    (:mod:`flowocr.ocr.tesseract`). Safe to share between threads."""
    from flowocr.ocr.ppocr import DET_MODEL, DbPostProcess, Session, model_path

    options = options or RapidOptions()
    session = Session(model_path(DET_MODEL), threads=threads, spin=options.spin, device=device)
    return _Detector(session, DbPostProcess(unclip_ratio=options.det_unclip), options)


def _classifier(threads: int | None, options: RapidOptions, *, cuda: bool = False) -> Any:
    """rapidocr's 0/180 degree classifier (``use_cls``; off by default), loaded through rapidocr itself: its
    configuration costs about a second, paid only when classification is asked for. ``cuda``: on the CUDA
    provider where rapidocr finds it (else rapidocr itself falls back to the CPU)."""
    from rapidocr import RapidOCR

    params: dict[str, Any] = {"EngineConfig.onnxruntime.use_cuda": True} if cuda else {}
    if threads is not None:
        params["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
        params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
    with contextlib.ExitStack() as stack:
        if not options.spin:
            stack.enter_context(_sessions_without_spinning())
        pipeline = RapidOCR(params=params)
        # RapidOCR() resets its logger to INFO; model loading would print a line per model
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        loaded = getattr(pipeline, "text_cls", None)  # built in the constructor by earlier 3.x releases,
        return loaded if loaded is not None else pipeline._load_cls_model()  # on first use by 3.10


@contextlib.contextmanager
def _sessions_without_spinning() -> Iterator[None]:
    """ONNX Runtime sessions created meanwhile by rapidocr have worker threads that sleep between calls instead
    of spinning: decoding lanes share the CPU with OCR, and a spinning thread takes a core from them (measured
    on the 60 s 1080p benchmark, 2 cores: 17 instead of 20 CPU s). rapidocr builds its session options in
    ``OrtInferSession._init_sess_opts``; the entry is added there, so each model loads once."""
    from rapidocr.inference_engine.onnxruntime import main as ort_main

    owner = ort_main.OrtInferSession
    original = owner.__dict__["_init_sess_opts"]

    def init(cfg: Any) -> Any:
        options = original.__func__(cfg)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    owner._init_sess_opts = staticmethod(init)
    try:
        yield
    finally:
        owner._init_sess_opts = original
