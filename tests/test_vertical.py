"""Vertical Japanese / Chinese text: a tall, narrow line is read top to bottom, and the columns of a vertical cue
right to left, each its own line: by the engine on a rendered frame, by the cue builder, and by `flowocr run
--lang ja` on a generated video."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flowocr.cues import text_blocks
from flowocr.ocr.engine import get_engine
from flowocr.ocr.types import TextLine
from flowocr.output.writers import read_srt

CJK_FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # fonts-noto-cjk (install_system_deps.sh)
needs_font = pytest.mark.skipif(not CJK_FONT.is_file(), reason=f"{CJK_FONT} (fonts-noto-cjk) is not installed")
COLUMNS = ("縦書きの字幕です", "二行目も読みます")  # read first: the right column


def column(text: str, x: float, y0: float = 60, height: float = 34) -> TextLine:
    y1 = y0 + height * len(text)
    return TextLine(text, 0.95, ((x, y0), (x + 40, y0), (x + 40, y1), (x, y1)))


def vertical_text(width: int, height: int, columns=COLUMNS, size: int = 30):
    """An RGBA picture of ``columns`` written vertically (white, 2 px black outline), the first one rightmost."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(CJK_FONT), size)
    for k, text in enumerate(columns):
        x, y = width - 80 - k * (size + 20), 60
        for ch in text:
            draw.text((x + (size - draw.textlength(ch, font=face)) / 2, y), ch, font=face, fill=(255, 255, 255, 255),
                      stroke_width=2, stroke_fill=(0, 0, 0, 255))  # fmt: skip
            y += size + 4
    return image


def test_the_columns_of_a_vertical_cue_are_lines_read_right_to_left() -> None:
    blocks = text_blocks([column(COLUMNS[1], 700), column(COLUMNS[0], 760)])
    assert [b.text for b in blocks] == ["\n".join(COLUMNS)]
    # horizontal pieces of one row are still joined left to right
    wide = [TextLine("字幕", 0.95, ((100, 300), (200, 300), (200, 330), (100, 330))),
            TextLine("です", 0.95, ((210, 300), (310, 300), (310, 330), (210, 330)))]  # fmt: skip
    assert [b.text for b in text_blocks(wide)] == ["字幕です"]


@needs_font
def test_a_vertical_line_is_read_top_to_bottom_not_one_character_per_line() -> None:
    rng = np.random.default_rng(3)
    picture = vertical_text(854, 480, columns=COLUMNS[:1])
    from PIL import Image

    background = Image.fromarray((rng.random((480, 854, 3)) * 255).astype(np.uint8)).convert("RGBA")
    frame = np.ascontiguousarray(np.asarray(Image.alpha_composite(background, picture).convert("RGB"))[:, :, ::-1])
    result = get_engine("auto", lang="ja").recognize([frame])[0]
    assert [line.text for line in result.lines] == [COLUMNS[0]]
    x0, y0, x1, y1 = result.lines[0].bounds
    assert y1 - y0 > 5 * (x1 - x0)  # one tall box, not a box per character


@needs_font
def test_run_lang_ja_writes_a_two_column_vertical_cue_as_two_lines(tmp_path) -> None:
    vertical_text(854, 480).save(tmp_path / "text.png")
    video = tmp_path / "vertical.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "mandelbrot=s=854x480:r=25,trim=duration=3.5",
                    "-i", str(tmp_path / "text.png"), "-filter_complex",
                    "[0][1]overlay=enable='between(t,1,2.5)',format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast",
                    str(video)], check=True)  # fmt: skip
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "flowocr", "run", str(video), "--lang", "ja", "-o", str(out),
                           "--formats", "srt", "-q"], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    cues = read_srt(out / "vertical.srt")
    assert [cue.text for cue in cues] == ["\n".join(COLUMNS)]
    assert abs(float(cues[0].start) - 1.0) <= 0.08 and abs(float(cues[0].end) - 2.52) <= 0.08
