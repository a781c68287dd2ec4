"""The text area: parsing ``--area``, rectangles in pixels, crop / map back, and the ``auto`` band rule."""

from __future__ import annotations

import numpy as np
import pytest

from flowocr.errors import UsageError
from flowocr.ocr.area import (
    BOTTOM_FRACTION,
    TOP_FRACTION,
    AreaSpec,
    Rect,
    crop,
    find_text_band,
    parse_area,
    to_frame,
)
from flowocr.ocr.types import OcrResult, TextLine, plausible

W, H = 1920, 1080


def line(text: str, y0: float, y1: float, x0: float = 600, x1: float = 1320, score: float = 0.95) -> TextLine:
    return TextLine(text, score, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


# --- parse_area --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["full", "bottom", "top", "auto", " Bottom ", "FULL"])
def test_named_areas_parse_case_and_space_insensitive(name: str) -> None:
    assert parse_area(name).kind == name.strip().lower()


def test_fractions_are_decimal_numbers_in_unit_range() -> None:
    spec = parse_area("0,0.75,1,0.25")
    assert spec.kind == "fraction"
    assert spec.values == (0.0, 0.75, 1.0, 0.25)


def test_integers_are_pixels() -> None:
    spec = parse_area("0, 600, 1920, 200")
    assert spec.kind == "pixel"
    assert spec.values == (0.0, 600.0, 1920.0, 200.0)


def test_all_ones_without_decimal_point_are_pixels() -> None:
    assert parse_area("0,0,1,1").kind == "pixel"
    assert parse_area("0,0,1.0,1").kind == "fraction"


@pytest.mark.parametrize(
    "text",
    ["", "middle", "0,0,1", "0,0,1,1,1", "a,b,c,d", "0;0;1;1", "0,0.5,1.5,0.5", "0,0,0,0.5", "0,0,100,0",
     "-10,0,100,100", "0,0,nan,1", "0,0,inf,1", "bottom:0.2"],
)  # fmt: skip
def test_invalid_areas_raise_usage_error_naming_the_allowed_forms(text: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_area(text)
    message = str(info.value)
    assert repr(text) in message
    assert "full, bottom" in message and "X,Y,W,H" in message
    assert info.value.exit_code == 2


def test_area_spec_rejects_values_on_named_kinds() -> None:
    with pytest.raises(ValueError):
        AreaSpec("bottom", (0, 0, 1, 1))
    with pytest.raises(ValueError):
        AreaSpec("pixel")


# --- AreaSpec.rect -----------------------------------------------------------------------------------------------


def test_full_and_auto_are_the_whole_frame() -> None:
    assert parse_area("full").rect(W, H) == Rect(0, 0, W, H)
    assert parse_area("auto").rect(W, H) == Rect(0, 0, W, H)
    assert parse_area("auto").is_auto


def test_bottom_is_the_lower_band_full_width() -> None:
    rect = parse_area("bottom").rect(W, H)
    assert rect == Rect(0, H - round(BOTTOM_FRACTION * H), W, round(BOTTOM_FRACTION * H))
    assert rect.y1 == H


def test_top_is_the_upper_band_full_width() -> None:
    assert parse_area("top").rect(640, 360) == Rect(0, 0, 640, round(TOP_FRACTION * 360))


def test_fractions_scale_with_the_frame() -> None:
    spec = parse_area("0.1,0.75,0.8,0.25")
    assert spec.rect(W, H) == Rect(192, 810, 1536, 270)
    assert spec.rect(640, 360) == Rect(64, 270, 512, 90)


def test_pixel_rect_sticking_out_is_clipped_to_the_frame() -> None:
    assert parse_area("1800,1000,400,400").rect(W, H) == Rect(1800, 1000, 120, 80)


def test_fraction_rect_sticking_out_is_clipped_to_the_frame() -> None:
    assert parse_area("0.5,0.9,0.8,0.5").rect(100, 100) == Rect(50, 90, 50, 10)


def test_rect_is_never_empty_on_tiny_frames() -> None:
    for text in ("bottom", "top", "0,0.99,0.001,0.001"):
        rect = parse_area(text).rect(3, 2)
        assert rect.w >= 1 and rect.h >= 1 and rect.x1 <= 3 and rect.y1 <= 2


def test_pixel_rect_wholly_outside_the_frame_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="outside the 640x360 frame"):
        parse_area("0,600,640,100").rect(640, 360)


def test_rect_validates_itself() -> None:
    with pytest.raises(ValueError):
        Rect(0, 0, 0, 10)
    with pytest.raises(ValueError):
        Rect(-1, 0, 10, 10)


# --- crop / to_frame ---------------------------------------------------------------------------------------------


def test_crop_is_a_view_of_the_rect() -> None:
    image = np.arange(10 * 8 * 3, dtype=np.uint8).reshape(10, 8, 3)
    part = crop(image, Rect(2, 6, 5, 4))
    assert part.shape == (4, 5, 3)
    assert np.shares_memory(part, image)
    assert (part == image[6:10, 2:7]).all()


def test_crop_refuses_a_rect_larger_than_the_image() -> None:
    with pytest.raises(ValueError):
        crop(np.zeros((10, 8, 3), np.uint8), Rect(0, 0, 9, 10))


def test_to_frame_moves_boxes_by_the_rect_origin_and_keeps_text_and_score() -> None:
    found = line("hello", 5, 25, 10, 110, score=0.8)
    (moved,) = to_frame([found], Rect(100, 800, 1000, 200))
    assert moved.text == "hello" and moved.score == 0.8
    assert moved.bounds == (110, 805, 210, 825)


# --- find_text_band ----------------------------------------------------------------------------------------------

SUBTITLES = ["We read subtitles", "from video frames", "every frame has a time", "decoding runs in blocks"]


def test_changing_lines_recurring_at_the_bottom_give_a_bottom_band() -> None:
    results = [OcrResult((line(text, 950, 1000),)) for text in SUBTITLES]
    band = find_text_band(results, W, H)
    assert (band.x, band.w) == (0, W)
    assert band.y <= 950 and band.y1 >= 1000  # holds the lines
    assert band.y >= 900 and band.y1 <= 1050  # padded by about half a line height (50 px), no more
    assert band.y1 - band.y == pytest.approx(100, abs=4)


def test_a_one_off_top_line_does_not_win() -> None:
    results = [OcrResult((line(text, 950, 1000),)) for text in SUBTITLES]
    results[1] = OcrResult((line("BREAKING NEWS in big letters", 60, 160, score=1.0), *results[1].lines))
    band = find_text_band(results, W, H)
    assert band.y >= 900 and band.y1 <= 1050


def test_a_static_watermark_in_every_frame_loses_to_changing_subtitles() -> None:
    watermark = line("channel logo", 40, 80, 20, 300, score=0.99)
    results = [OcrResult((watermark, line(text, 950, 1000, score=0.9))) for text in SUBTITLES]
    results.append(OcrResult((watermark,)))
    results.append(OcrResult((watermark,)))
    band = find_text_band(results, W, H)
    assert band.y >= 900


def test_a_bilingual_two_line_subtitle_is_one_band() -> None:
    chinese = ["我们从视频里读取字幕", "每一帧都有准确的时间", "解码被分成多个并行的块", "结果保存为字幕文件"]
    results = [OcrResult((line(zh, 880, 930), line(en, 935, 985))) for zh, en in zip(chinese, SUBTITLES)]
    band = find_text_band(results, W, H)
    assert band.y <= 880 and band.y1 >= 985
    assert band.y >= 830 and band.y1 <= 1040


def test_an_occasional_second_line_above_stays_in_the_band() -> None:
    texts = [f"subtitle number {i}" for i in range(10)]
    results = [OcrResult((line(text, 950, 1000),)) for text in texts]
    results[3] = OcrResult((line("a second line above", 895, 945), *results[3].lines))
    results[7] = OcrResult((line("another second line", 895, 945), *results[7].lines))
    band = find_text_band(results, W, H)
    assert band.y <= 895 and band.y1 >= 1000


def test_the_same_subtitle_read_slightly_differently_counts_once() -> None:
    # OCR noise must not turn a static logo into "changing text": near-identical readings are one text
    logo = ["微信公众号：一分钟系列", "微信公众号:一分钟系列", "微信公众号：一分钟糸列", "微信公众号：一分钟系列"]
    results = [OcrResult((line(text, 40, 80),)) for text in logo]
    results[0] = OcrResult((*results[0].lines, line("we are going shopping", 950, 1000)))
    results[2] = OcrResult((*results[2].lines, line("do you want some milk", 950, 1000)))
    band = find_text_band(results, W, H)
    assert band.y >= 900


def test_nothing_recurring_gives_the_full_frame() -> None:
    assert find_text_band([], W, H) == Rect(0, 0, W, H)
    assert find_text_band([OcrResult(), OcrResult()], W, H) == Rect(0, 0, W, H)
    one_off = [OcrResult((line("only once", 500, 540),)), OcrResult(), OcrResult((line("elsewhere", 100, 140),))]
    assert find_text_band(one_off, W, H) == Rect(0, 0, W, H)


def test_band_is_clamped_to_the_frame() -> None:
    results = [OcrResult((line(text, 1040, 1080),)) for text in SUBTITLES]
    band = find_text_band(results, W, H)
    assert band.y1 == H and band.y >= 1000


def test_on_a_tie_the_lower_band_wins() -> None:
    results = [OcrResult((line(a, 100, 140), line(b, 900, 940))) for a, b in zip(SUBTITLES, reversed(SUBTITLES))]
    assert find_text_band(results, W, H).y > 800


def test_a_lone_character_is_a_line_only_when_read_surely_enough():
    def lone(text: str, score: float) -> bool:
        return plausible(TextLine(text, score, ((0, 0), (10, 0), (10, 10), (0, 10))))

    assert lone("嗯", 0.8) and lone("好", 0.72)  # a lone ideograph is a subtitle's line like any other ...
    assert not lone("油", 0.56) and not lone("上", 0.57)  # ... unless read as unsurely as texture is
    assert not lone("0", 0.85) and lone("0", 0.95)  # a lone digit, letter or sign needs more
    assert lone("Hi", 0.55) and not lone(" ", 0.99)
