"""The review page: one self-contained HTML file per video to check and correct a run in a browser.

:func:`review_html` is pure: the run's cues, a JPEG crop per cue, the video's address and the frame duration in,
the page's text out. The page's script and style (``review.js``, ``review.css``, package data beside this module)
are inlined: it loads nothing from the network. Each cue's times are embedded as the integer milliseconds the
SRT/VTT writers write (their own floor, :func:`flowocr.output.writers._cue_units`), so the page's "Download SRT"
of an unedited run is byte for byte the run's ``.srt``.

:class:`CropKeeper` keeps, while a run reads, a small JPEG of the text read on each OCR'd frame, and cuts a cue's
crop from one of them when the cue is final: no frame is decoded again for the page.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from flowocr.cues.model import Cue
from flowocr.cues.text import similarity
from flowocr.output.writers import _cue_units, _ordered

#: a cue read with a lower score is flagged ``low`` (scores are in [0, 1])
LOW_SCORE = 0.8
#: a cue shown for less than this many seconds is flagged ``short``
SHORT_S = Fraction(1, 2)
#: a cue that begins at most this many frames after the end of a cue of its track with similar text (or ends as
#: close before one) is flagged ``split``: likely one subtitle cut in two
SPLIT_GAP_FRAMES = 2
#: how alike (:func:`flowocr.cues.text.similarity`) two neighbours' texts are at least to count as a split
SPLIT_SIMILARITY = 0.6
#: the flags a cue can carry, in the order the page shows them
FLAGS = ("low", "short", "split", "overlay")

#: crops are scaled down to at most this width (px) before they are kept
CROP_MAX_WIDTH = 480
#: margin (frame px) around the text read on a frame, and around a cue's box
CROP_MARGIN = 6
#: bound on the bytes of JPEG crops kept at once while a run reads; the oldest go first (their cues get none)
CROP_BUDGET_BYTES = 64 * 1024 * 1024
JPEG_QUALITY = 80


def cue_flags(cues: Sequence[Cue], frame_s: Fraction) -> list[tuple[str, ...]]:
    """The flags of each of ``cues`` (same order), among :data:`FLAGS`. ``frame_s``: one frame's duration (s),
    for the gap of a split when a cue's frame indices are unknown."""
    split = [False] * len(cues)
    by_track: dict[int, list[int]] = {}
    for k in sorted(range(len(cues)), key=lambda k: (cues[k].start, cues[k].end)):
        by_track.setdefault(cues[k].track, []).append(k)
    for members in by_track.values():
        for a, b in zip(members, members[1:]):
            if _close(cues[a], cues[b], frame_s) and similarity(cues[a].text, cues[b].text) >= SPLIT_SIMILARITY:
                split[a] = split[b] = True
    flags = []
    for k, cue in enumerate(cues):
        found = {
            "low": cue.score < LOW_SCORE,
            "short": cue.end - cue.start < SHORT_S,
            "split": split[k],
            "overlay": cue.kind == "overlay",
        }
        flags.append(tuple(f for f in FLAGS if found[f]))
    return flags


def _close(a: Cue, b: Cue, frame_s: Fraction) -> bool:
    """Whether ``b`` (starting after ``a``) begins at most :data:`SPLIT_GAP_FRAMES` frames after ``a`` ends."""
    if a.end_index >= 0 and b.start_index >= 0:
        return b.start_index - a.end_index <= SPLIT_GAP_FRAMES
    return b.start - a.end <= SPLIT_GAP_FRAMES * frame_s


def video_src(video: str | os.PathLike[str], page: str | os.PathLike[str]) -> str:
    """The ``<video src>`` of ``video`` for a page written at ``page``: a relative URL when one exists (the page
    and the video can move together), else a ``file://`` URL."""
    target = Path(video).resolve()
    try:
        relative = os.path.relpath(target, Path(page).resolve().parent)
    except ValueError:  # another drive (Windows)
        return target.as_uri()
    return quote(Path(relative).as_posix())


def review_data(cues: Sequence[Cue], *, crops: Mapping[Cue, bytes], frame_s: Fraction,
                keep_overlays: bool = False) -> list[dict]:  # fmt: skip
    """The page's data for each cue in the writers' order: its number, times (writer's ms and exact s), text,
    score, track, flags, crop (a ``data:`` URI, or None) and whether the subtitle files have it (``written``: an
    overlay's cue only with ``keep_overlays``; the page shows it, flagged, and its downloads leave it out)."""
    ordered = _ordered(cues)
    out = []
    for n, (cue, flags) in enumerate(zip(ordered, cue_flags(ordered, frame_s)), 1):
        start_ms, end_ms = _cue_units(cue, 1000)
        image = crops.get(cue)
        out.append({
            "n": n, "start_ms": start_ms, "end_ms": end_ms, "start_s": float(cue.start), "end_s": float(cue.end),
            "text": cue.text, "score": round(cue.score, 3), "track": cue.track, "flags": list(flags),
            "written": keep_overlays or cue.kind != "overlay",
            "img": None if image is None else "data:image/jpeg;base64," + base64.b64encode(image).decode("ascii"),
        })  # fmt: skip
    return out


def _asset(name: str) -> str:
    return resources.files("flowocr.output").joinpath(name).read_text(encoding="utf-8")


def _script_json(data: object) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` at all, so no ``</script>`` or ``<!--`` can end it early."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


def review_html(
    cues: Sequence[Cue], *, title: str, video: str, frame_s: Fraction, crops: Mapping[Cue, bytes] | None = None,
    stem: str | None = None, first_frame_s: Fraction = Fraction(0), duration_s: Fraction | None = None,
    keep_overlays: bool = False,
) -> str:  # fmt: skip
    """The review page of one run. ``video``: the ``<video src>`` (see :func:`video_src`); ``frame_s``: one frame's
    duration in seconds (the step of the time buttons); ``crops``: JPEG bytes per cue (a cue without one shows a
    placeholder); ``stem``: the downloads' file name without suffix (default ``title``).

    Cue times count from the first frame; ``first_frame_s`` is that frame's own timestamp (s) and ``duration_s``
    the video's length from it. Some players' clocks count from the stream's zero, not from the first frame
    (Chromium's for a Matroska file that starts at 7.5 s): the page seeks to ``first_frame_s`` + the cue's start
    when the player's duration says its clock counts that way."""
    if frame_s <= 0:
        raise ValueError(f"a frame lasts a positive time, got {frame_s} s")
    data = {
        "title": title, "stem": stem or title, "video": video, "frame_s": float(frame_s),
        "first_frame_s": float(first_frame_s), "duration_s": None if duration_s is None else float(duration_s),
        "flags": list(FLAGS),
        "cues": review_data(cues, crops=crops or {}, frame_s=frame_s, keep_overlays=keep_overlays),
    }  # fmt: skip
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)} · flowocr review</title>\n<link rel=\"icon\" href=\"data:,\">\n"
        f"<style>\n{_asset('review.css')}</style>\n</head>\n<body>\n"
        f"<script type=\"application/json\" id=\"flowocr-data\">{_script_json(data)}</script>\n"
        f"<script>\n{_asset('review.js')}</script>\n</body>\n</html>\n"
    )


def run_review_html(cues: Sequence[Cue], *, video: str, page: str | os.PathLike[str], index,
                    crops: Mapping[Cue, bytes] | None = None, keep_overlays: bool = False) -> str:  # fmt: skip
    """:func:`review_html` of a run of ``video`` whose page is written at ``page``; ``index``: the video's
    :class:`~flowocr.probe.index.FrameIndex` (its mean frame duration, first frame time and length)."""
    return review_html(cues, title=Path(video).name, stem=Path(video).stem, video=video_src(video, page),
                       frame_s=index.duration / len(index), first_frame_s=index.pts[0] * index.time_base,
                       duration_s=index.duration, crops=crops, keep_overlays=keep_overlays)  # fmt: skip


@dataclass(frozen=True)
class IndexEntry:
    """One video of a batch's ``index.html``: its name, its review page (a relative URL, None when it has none)
    and its cue count (None when unknown)."""

    video: str
    page: str | None
    cues: int | None
    status: str = "complete"


def index_html(entries: Sequence[IndexEntry], *, title: str = "flowocr review") -> str:
    """A batch's ``index.html``: one row per video, linking its review page."""
    rows = []
    for e in entries:
        name = html.escape(e.video)
        link = f"<a href=\"{html.escape(e.page)}\">{name}</a>" if e.page else name
        count = "" if e.cues is None else str(e.cues)
        rows.append(f"<tr><td>{link}</td><td class=\"n\">{count}</td><td>{html.escape(e.status)}</td></tr>")
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<link rel=\"icon\" href=\"data:,\">\n"
        "<style>body{font:15px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{padding:.3em 1em;border-bottom:1px solid #ddd;text-align:left}.n{text-align:right}</style>\n"
        f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n<table>\n"
        "<tr><th>video</th><th class=\"n\">cues</th><th>run</th></tr>\n" + "\n".join(rows) + "\n</table>\n"
        "</body>\n</html>\n"
    )


@dataclass(frozen=True)
class _Crop:
    jpeg: bytes
    x: int  # the crop's top-left corner in frame pixels
    y: int
    scale: float  # crop pixels per frame pixel


class CropKeeper:
    """JPEG crops of the text read on OCR'd frames, kept while the cues they show may still become final.

    :meth:`offer` takes the image each OCR call read and the lines it found (in call order); :meth:`settle` gives
    the next offered crop to the frame index of the reading that call made (readers make one reading per OCR call,
    in order). :meth:`crop` cuts a final cue's image from a kept frame inside it; :meth:`forget_before` drops those
    of frames no cue to come can hold. At most one crop per frame and :data:`CROP_BUDGET_BYTES` in all are kept
    (over it the oldest are dropped, counted in :attr:`dropped`)."""

    def __init__(self, *, budget_bytes: int = CROP_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._pending: list[_Crop | None] = []
        self._kept: OrderedDict[int, _Crop] = OrderedDict()
        self._bytes = 0
        self.dropped = 0

    def offer(self, image, lines) -> None:
        """The BGR frame ``image`` an OCR call read, and the lines (frame pixels) it found."""
        self._pending.append(_text_crop(image, lines))

    def settle(self, index: int) -> None:
        """The oldest offered crop is that of frame ``index`` (read, not reused)."""
        if not self._pending:
            return
        crop = self._pending.pop(0)
        if crop is None or index in self._kept:
            return
        self._kept[index] = crop
        self._bytes += len(crop.jpeg)
        while self._bytes > self.budget_bytes and self._kept:
            _, old = self._kept.popitem(last=False)
            self._bytes -= len(old.jpeg)
            self.dropped += 1

    def discard_pending(self) -> None:
        """Offers no reading claimed (none expected; kept from pairing a later reading with a wrong frame)."""
        self._pending.clear()

    def forget_before(self, index: int) -> None:
        """Drop the crops of frames before ``index``."""
        for old in [i for i in self._kept if i < index]:
            self._bytes -= len(self._kept.pop(old).jpeg)

    def crop(self, cue: Cue) -> bytes | None:
        """A JPEG of ``cue``'s box on the middle kept frame inside ``[start_index, end_index)`` that covers it;
        None when there is none."""
        inside = [i for i in self._kept if cue.start_index <= i < cue.end_index]
        for i in sorted(inside, key=lambda i: abs(i - (inside[0] + inside[-1]) / 2)):
            image = _cut(self._kept[i], cue.box)
            if image is not None:
                return image
        return None


def _encode(image) -> bytes:
    import cv2

    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise ValueError(f"JPEG encoding failed for an image of shape {image.shape}")
    return data.tobytes()


def _text_crop(image, lines) -> _Crop | None:
    """The part of ``image`` holding ``lines`` (with a margin), at most :data:`CROP_MAX_WIDTH` wide."""
    import cv2

    if not lines or image is None:
        return None
    height, width = image.shape[:2]
    bounds = [line.bounds for line in lines]
    x0 = max(0, int(min(b[0] for b in bounds)) - CROP_MARGIN)
    y0 = max(0, int(min(b[1] for b in bounds)) - CROP_MARGIN)
    x1 = min(width, int(max(b[2] for b in bounds)) + 1 + CROP_MARGIN)
    y1 = min(height, int(max(b[3] for b in bounds)) + 1 + CROP_MARGIN)
    if x1 <= x0 or y1 <= y0:
        return None
    part = image[y0:y1, x0:x1]
    scale = min(1.0, CROP_MAX_WIDTH / (x1 - x0))
    if scale < 1.0:
        size = (max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale)))
        part = cv2.resize(part, size, interpolation=cv2.INTER_AREA)
    return _Crop(_encode(part), x0, y0, scale)


def _cut(crop: _Crop, box: tuple[float, float, float, float]) -> bytes | None:
    """``box`` (frame pixels, with a margin) out of a kept crop; None when they do not overlap."""
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(crop.jpeg, np.uint8), cv2.IMREAD_COLOR)
    height, width = image.shape[:2]
    x0 = max(0, int((box[0] - CROP_MARGIN - crop.x) * crop.scale))
    y0 = max(0, int((box[1] - CROP_MARGIN - crop.y) * crop.scale))
    x1 = min(width, int((box[2] + CROP_MARGIN - crop.x) * crop.scale) + 1)
    y1 = min(height, int((box[3] + CROP_MARGIN - crop.y) * crop.scale) + 1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    return _encode(image[y0:y1, x0:x1])


__all__ = [
    "CROP_BUDGET_BYTES",
    "FLAGS",
    "LOW_SCORE",
    "SHORT_S",
    "SPLIT_GAP_FRAMES",
    "SPLIT_SIMILARITY",
    "CropKeeper",
    "IndexEntry",
    "cue_flags",
    "index_html",
    "review_data",
    "review_html",
    "run_review_html",
    "video_src",
]
