"""Cue stage: per-frame OCR results become cues (text, start, end, box, score), and cues are scored against
ground truth. Pure: no I/O here."""

from flowocr.cues.builder import CueBuilder, CueOptions, TextBlock, build_cues, text_blocks
from flowocr.cues.model import Cue, FrameText
from flowocr.cues.score import CueMatch, Score, frame_at_or_after, score_cues

__all__ = [
    "Cue",
    "CueBuilder",
    "CueMatch",
    "CueOptions",
    "FrameText",
    "Score",
    "TextBlock",
    "build_cues",
    "frame_at_or_after",
    "score_cues",
    "text_blocks",
]
