"""Right-to-left text (Hebrew, Arabic) is kept in logical order from OCR to every output: the builder joins the
pieces of an RTL row right to left, the writers and the SRT parser pass the text through untouched, and Tesseract
gives it in logical order."""

from __future__ import annotations

import json
import re
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from flowocr.cues import Cue, FrameText, text_blocks
from flowocr.cues.builder import right_to_left
from flowocr.ocr.types import TextLine
from flowocr.output.writers import ass_text, jsonl_text, parse_srt, srt_text, txt_text, vtt_text

HEBREW = "שלום עולם"
ARABIC = "مرحبا بالعالم"
MIXED = "הסרט Star Wars יצא ב-1977"  # an LTR run and digits inside an RTL line
TWO_LINES = "שלום\nHello, world"


def piece(text: str, x0: float, x1: float, y: float = 300.0) -> TextLine:
    return TextLine(text, 0.9, ((x0, y), (x1, y), (x1, y + 30), (x0, y + 30)))


def cues_of(*texts: str) -> list[Cue]:
    return [Cue(start=Fraction(k), end=Fraction(k) + Fraction(1, 2), text=text, box=(100.0, 300.0, 540.0, 330.0),
                score=0.9, track=0, start_index=k * 25, end_index=k * 25 + 12) for k, text in enumerate(texts)]


def test_right_to_left_is_decided_by_the_strong_characters() -> None:
    assert right_to_left(HEBREW) and right_to_left(ARABIC) and right_to_left(MIXED)
    assert not right_to_left("Hello") and not right_to_left("1977") and not right_to_left("Hello שלום world")


def test_the_pieces_of_an_rtl_row_are_joined_right_to_left() -> None:
    # the detector cut "שלום עולם" in two boxes: "שלום" (read first) on the right, "עולם" on the left
    blocks = text_blocks([piece("עולם", 100, 240), piece("שלום", 260, 400)])
    assert [b.text for b in blocks] == [HEBREW]
    blocks = text_blocks([piece("بالعالم", 100, 240), piece("مرحبا", 260, 400)])
    assert [b.text for b in blocks] == [ARABIC]


def test_an_ltr_piece_in_an_rtl_row_keeps_its_place_and_ltr_rows_stay_left_to_right() -> None:
    blocks = text_blocks([piece("יצא ב-1977", 40, 200), piece("Star Wars", 210, 380), piece("הסרט", 390, 520)])
    assert [b.text for b in blocks] == [MIXED]
    assert [b.text for b in text_blocks([piece("Hello,", 100, 240), piece("world", 260, 400)])] == ["Hello, world"]


@pytest.mark.parametrize("text", [HEBREW, ARABIC, MIXED, TWO_LINES])
def test_srt_vtt_ass_txt_and_jsonl_keep_rtl_text_in_logical_order(text) -> None:
    cues = cues_of(text, "ok")
    assert [entry.text for entry in parse_srt(srt_text(cues))] == [text, "ok"]
    vtt_bodies = [block.split("\n", 1)[1] for block in vtt_text(cues).split("\n\n")[1:] if block.strip()]
    assert [body.strip() for body in vtt_bodies] == [text, "ok"]
    dialogue = [line.split(",", 9)[9] for line in ass_text(cues, 640, 360).splitlines() if line.startswith("Dialogue:")]
    assert [re.sub(r"^\{[^}]*\}", "", d).replace("\\N", "\n") for d in dialogue] == [text, "ok"]
    assert txt_text(cues).split("\n\n")[0].strip() == text
    frame = FrameText(index=0, pts=0, time=Fraction(0), lines=tuple(piece(t, 100, 400) for t in text.split("\n")))
    assert json.loads(jsonl_text([frame]))["texts"] == text.split("\n")
    # no character is reordered, mirrored or wrapped in direction marks
    assert "\u200f" not in srt_text(cues) and "\u202b" not in ass_text(cues, 640, 360)


def _hebrew_font() -> Path | None:
    try:
        found = subprocess.run(["fc-match", "-f", "%{file}", ":lang=he"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = Path(found.stdout.strip())
    return path if found.returncode == 0 and path.is_file() else None


def test_tesseract_reads_hebrew_in_logical_order() -> None:
    pytest.importorskip("tesserocr", reason="tesserocr is not installed (flowocr[tesseract])")
    import flowocr.ocr.tesseract as tess
    from flowocr.ocr.engine import get_engine

    if tess.find_tessdata("heb") is None:
        pytest.skip("tesseract-ocr-heb is not installed")
    font = _hebrew_font()
    if font is None:
        pytest.skip("no font with Hebrew letters (fc-match :lang=he)")
    from test_langs import cer, outlined_line

    engine = get_engine("auto", lang="he")
    text = "שלום 2026 עולם"
    result = engine.recognize([outlined_line(text, background="grey", font=font)])[0]
    assert len(result.lines) == 1
    read = result.lines[0].text
    assert read.startswith("של") and read.index("2026") < read.index("עו")  # first word first: logical order
    assert cer(read, text) <= 0.15
