"""flowocr: read the text shown in videos, with frame-accurate times.

Importing the package is cheap: nothing heavy (numpy, OpenCV, ONNX Runtime, models) loads until it is used.

    >>> import flowocr
    >>> cues, report = flowocr.ocr_video("talk.mp4", out_dir="out", fps=2)     # doctest: +SKIP
    >>> for cue in flowocr.iter_cues("talk.mp4", formats=("jsonl",)):          # doctest: +SKIP
    ...     print(cue.start, cue.text)

Options are the fields of :class:`flowocr.pipeline.RunOptions` (the same as ``flowocr run``'s options).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator

    from flowocr.cues.model import Cue


def iter_cues(path: str, **options: Any) -> Iterator[Cue]:
    """Yield the cues of one video as soon as each is final (outputs are written as ``flowocr run`` does)."""
    from flowocr.pipeline import RunOptions, VideoRun

    yield from VideoRun(str(path), RunOptions(**_exact(options))).cues()


def ocr_video(path: str, **options: Any) -> tuple[list[Cue], dict[str, Any]]:
    """OCR one video; returns its cues and its run report (see README: run report)."""
    from flowocr.pipeline import RunOptions, VideoRun

    run = VideoRun(str(path), RunOptions(**_exact(options)))
    cues = list(run.cues())
    return cues, run.report


def _exact(options: dict[str, Any]) -> dict[str, Any]:
    """Numbers given as floats for times and rates become exact fractions (0.5 is 1/2, not a float)."""
    from fractions import Fraction

    out = dict(options)
    for key in ("fps", "block_sec", "first_block_sec"):
        if key in out and not isinstance(out[key], Fraction):
            out[key] = Fraction(str(out[key]))
    if "formats" in out and isinstance(out["formats"], str):
        out["formats"] = tuple(f.strip() for f in out["formats"].split(","))
    return out


__all__ = ["__version__", "iter_cues", "ocr_video"]
