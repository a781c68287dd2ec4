"""The OCR engine layer on real frames: RapidOCR reads the fixtures' burned-in subtitles, batches keep their
order, areas map back to frame pixels, engines load once per process, and unusable engines fail clearly."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, SHARED_VIDEOS, needs_shared

from flowocr.errors import EngineUnavailable, FlowOcrError, UsageError
from flowocr.ocr import (
    OcrResult,
    available_engines,
    find_text_band,
    get_engine,
    parse_area,
)
from flowocr.ocr.rapid import REC_WIDTH_STEP, ctc_decode, det_input, reading_order, rec_width

DEMO = FIXTURES / "demo.mp4"
DEMO_W, DEMO_H = 640, 360


def grab(path, seconds: float, width: int, height: int) -> np.ndarray:
    """The frame on screen at ``seconds`` as BGR uint8, decoded by ffmpeg itself."""
    argv = ["ffmpeg", "-v", "error", "-nostdin", "-ss", f"{seconds:.3f}", "-i", str(path), "-frames:v", "1",
            "-f", "rawvideo", "-pix_fmt", "bgr24", "-"]  # fmt: skip
    raw = subprocess.run(argv, capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(height, width, 3).copy()


def srt_lines_at(path, seconds: float) -> list[str]:
    """The lines of the cue on screen at ``seconds`` (start <= t < end), from an SRT file."""
    for block in path.read_text(encoding="utf-8").strip().split("\n\n"):
        rows = block.splitlines()
        times = [int(v) for v in re.findall(r"\d+", rows[1])]
        start = times[0] * 3600 + times[1] * 60 + times[2] + times[3] / 1000
        end = times[4] * 3600 + times[5] * 60 + times[6] + times[7] / 1000
        if start <= seconds < end:
            return rows[2:]
    return []


def squash(text: str) -> str:
    # PP-OCR now and then drops a space between English words ("takesmore"), see flowocr/ocr/rapid.py
    return "".join(text.split())


def read(result: OcrResult) -> list[str]:
    return [squash(line.text) for line in result.lines]


def on_screen(seconds: float) -> list[str]:
    return [squash(text) for text in srt_lines_at(FIXTURES / "demo.srt", seconds)]


@pytest.fixture(scope="module")
def engine():
    return get_engine()


@pytest.fixture(scope="module")
def demo_frames() -> dict[float, np.ndarray]:
    return {t: grab(DEMO, t, DEMO_W, DEMO_H) for t in (0.2, 1.5, 3.4, 7.7)}


def test_importing_the_ocr_package_loads_no_runtime() -> None:
    code = (
        "import sys, flowocr.ocr, flowocr.ocr.rapid, flowocr.ocr.paddle; "
        "print(sorted(m for m in ('onnxruntime', 'rapidocr', 'paddleocr', 'cv2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("seconds", [1.5, 7.7])
def test_reads_the_demo_subtitle_on_screen_exactly(engine, demo_frames, seconds: float) -> None:
    expected = srt_lines_at(FIXTURES / "demo.srt", seconds)
    assert len(expected) == 2  # a Chinese and an English line
    (result,) = engine.recognize([demo_frames[seconds]])
    assert read(result) == [squash(text) for text in expected]
    assert all(0.5 <= line.score <= 1.0 for line in result.lines)
    chinese, english = result.lines
    centre_y = [(line.bounds[1] + line.bounds[3]) / 2 for line in (chinese, english)]
    assert DEMO_H * 0.7 < centre_y[0] < centre_y[1] < DEMO_H  # top to bottom, near the bottom of the frame
    assert 0 <= english.bounds[0] < english.bounds[2] <= DEMO_W and english.bounds[3] <= DEMO_H


def test_a_batch_returns_one_result_per_image_in_order(engine, demo_frames) -> None:
    times = [7.7, 0.2, 1.5]
    batch = engine.run([demo_frames[t] for t in times])
    assert len(batch.results) == 3
    for t, result in zip(times, batch.results):
        assert read(result) == on_screen(t)
        assert result == engine.recognize([demo_frames[t]])[0]  # exactly as read alone: text, score, box
    assert batch.crops >= 4  # boxes detected; a box whose text is empty or unsure yields no line
    assert batch.times.total_s >= batch.times.det_s + batch.times.rec_s > 0


def test_an_image_without_text_gives_an_empty_result(engine, demo_frames) -> None:
    assert srt_lines_at(FIXTURES / "demo.srt", 0.2) == []
    black = np.zeros((DEMO_H, DEMO_W, 3), np.uint8)
    tiny = np.full((2, 3, 3), 200, np.uint8)
    empty = np.zeros((0, 5, 3), np.uint8)
    assert engine.recognize([demo_frames[0.2], black, tiny, empty]) == [OcrResult()] * 4
    assert engine.recognize([]) == []


def test_a_cropped_band_maps_back_into_the_bottom_of_the_frame(engine, demo_frames) -> None:
    band = parse_area("bottom").rect(DEMO_W, DEMO_H)
    assert band.y > DEMO_H // 2
    (in_band,) = engine.recognize([demo_frames[3.4]], area=band)
    (whole,) = engine.recognize([demo_frames[3.4]])
    assert read(in_band) == on_screen(3.4)
    assert len(in_band.lines) == len(whole.lines) == 2
    for line, same in zip(in_band.lines, whole.lines):
        x0, y0, x1, y1 = line.bounds
        assert band.y <= y0 < y1 <= DEMO_H and 0 <= x0 < x1 <= DEMO_W
        # the same glyphs, found in the band, land where they are found in the whole frame
        assert np.allclose(line.bounds, same.bounds, atol=6)


def test_detection_alone_finds_the_boxes_a_reading_recognises_in_frame_pixels(engine, demo_frames) -> None:
    from flowocr.ocr.area import read_frame
    from flowocr.ocr.detect import probe_frame
    from flowocr.ocr.engine import stage_cpu

    band = parse_area("bottom").rect(DEMO_W, DEMO_H)
    frame = demo_frames[3.4]
    lines = read_frame(engine, frame, band, [band])
    det0, rec0 = stage_cpu()
    boxes = probe_frame(engine, frame, band, [band])
    det1, rec1 = stage_cpu()
    assert len(lines) == 2 and boxes is not None and len(boxes) >= 2
    for line in lines:  # every line read has its box among those found, where it was read (frame pixels)
        assert any(np.allclose(line.bounds, box, atol=2) for box in boxes), (line.bounds, boxes)
    assert det1 > det0 and rec1 == rec0  # detection's CPU, no recognition
    assert engine.detect([np.zeros((DEMO_H, DEMO_W, 3), np.uint8)]) == [()]


def test_a_probe_detects_again_with_the_picture_isolated_where_a_reading_would_read_again(demo_frames) -> None:
    from flowocr.ocr import detect
    from flowocr.ocr.strokes import isolate

    class Blind:  # a detector that finds nothing in the plain crop, one box in each isolated piece
        def __init__(self) -> None:
            self.calls: list[int] = []

        def detect(self, images):
            self.calls.append(len(images))
            return [()] if len(self.calls) == 1 else [((10.0, 2.0, 50.0, 12.0),)] * len(images)

    band = parse_area("bottom").rect(DEMO_W, DEMO_H)
    frame = demo_frames[3.4]
    pieces = isolate(frame[band.y : band.y + band.h, band.x : band.x + band.w], frame_height=DEMO_H)
    assert len(pieces) == 1 and pieces[0].whole  # the rows of the subtitle's two lines, one piece
    blind = Blind()
    assert detect.probe_frame(blind, frame, band, [band]) == tuple(
        (10.0 + band.x, 2.0 + band.y + piece.top, 50.0 + band.x, 12.0 + band.y + piece.top) for piece in pieces)
    assert blind.calls == [1, 1]
    detect.PROBE_ISOLATED = False
    try:  # before: such a band could not vouch
        assert detect.probe_frame(Blind(), frame, band, [band]) is None
    finally:
        detect.PROBE_ISOLATED = True


def test_a_reading_of_what_a_probe_just_detected_takes_its_detections(engine, demo_frames) -> None:
    from flowocr.ocr.area import read_frame
    from flowocr.ocr.detect import probe_frame
    from flowocr.ocr.engine import stage_cpu

    band = parse_area("bottom").rect(DEMO_W, DEMO_H)
    frame = demo_frames[1.5]
    det0, _ = stage_cpu()
    plain = read_frame(engine, frame, band, [band])
    det1, _ = stage_cpu()
    probe_frame(engine, frame, band, [band])
    det2, _ = stage_cpu()
    after = read_frame(engine, frame, band, [band])
    det3, _ = stage_cpu()
    assert after == plain  # the same lines, boxes and scores
    assert det3 - det2 < 0.5 * (det1 - det0)  # no second detection of the same image
    again = read_frame(engine, frame, band, [band])  # a probe's detections serve one reading only
    assert again == plain and stage_cpu()[0] - det3 > 0.5 * (det1 - det0)


def test_a_box_that_is_a_known_line_is_that_line_and_only_the_other_boxes_are_recognised(engine) -> None:
    import cv2

    from flowocr.ocr.area import Rect, read_frame
    from flowocr.ocr.types import TextLine

    image = np.zeros((160, 640, 3), np.uint8)
    cv2.putText(image, "FIRST LINE HERE", (20, 50), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 3)
    cv2.putText(image, "SECOND ROW", (20, 130), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 3)
    plain = engine.run([image])
    assert plain.crops == 2 and [squash(ln.text) for ln in plain.results[0].lines] == ["FIRSTLINEHERE", "SECONDROW"]
    first = plain.results[0].lines[0]
    known = TextLine("as read before", 0.97, first.box)  # a text the image does not show: kept, not recognised
    batch = engine.run([image], known=[(known,)])
    assert batch.crops == 1 and batch.results[0].lines == (known, plain.results[0].lines[1])
    elsewhere = TextLine("elsewhere", 0.97, ((300.0, 60.0), (600.0, 60.0), (600.0, 90.0), (300.0, 90.0)))
    assert engine.run([image], known=[(elsewhere,)]).results == plain.results  # no box of its: nothing kept
    # through a reading of bands (frame pixels): the known line is moved into the band and back
    frame = np.zeros((400, 640, 3), np.uint8)
    frame[200:360] = image
    band = Rect(0, 190, 640, 180)
    lines = read_frame(engine, frame, Rect(0, 0, 640, 400), [band])
    moved = TextLine("as read before", 0.97, tuple((x, y + 200.0) for x, y in first.box))
    assert read_frame(engine, frame, Rect(0, 0, 640, 400), [band], known=(moved,)) == (moved, lines[1])
    with pytest.raises(ValueError, match="known"):
        engine.run([image, image], known=[()])


def test_images_must_be_bgr_uint8(engine) -> None:
    with pytest.raises(ValueError, match="BGR uint8"):
        engine.recognize([np.zeros((10, 10), np.uint8)])
    with pytest.raises(ValueError, match="BGR uint8"):
        engine.recognize([np.zeros((10, 10, 3), np.float32)])


def test_one_engine_serves_threads_concurrently(engine, demo_frames) -> None:
    images = [demo_frames[1.5], demo_frames[7.7]]
    expected = engine.recognize(images)
    results: list[list[OcrResult]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(engine.recognize(images))
        except BaseException as exc:  # relayed to the test below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert results == [expected] * 3


def test_engine_is_loaded_once_per_process(engine) -> None:
    assert get_engine() is engine
    assert get_engine("rapidocr", lang="ch") is engine
    assert get_engine(" RapidOCR ") is engine
    # the wheel's one multilingual model reads both: "en" shares the instance
    assert get_engine(lang="en") is engine


def test_rapidocr_is_available_here() -> None:
    assert available_engines()[0] == "rapidocr"


def test_unknown_engine_is_a_usage_error_naming_the_engines() -> None:
    supported = r"Supported engines are rapidocr, tesseract, paddle"
    with pytest.raises(UsageError, match=rf"Unknown OCR engine 'easyocr'\. {supported}"):
        get_engine("easyocr")


def test_unknown_language_is_a_usage_error_naming_the_languages() -> None:
    with pytest.raises(UsageError, match=r"Invalid language 'klingon'\. Supported values are ch, en, ja, .*ko, ru"):
        get_engine(lang="klingon")


@pytest.mark.parametrize("threads", [0, -2, 1.5])
def test_invalid_thread_count_is_a_usage_error(threads) -> None:
    with pytest.raises(UsageError, match="thread count"):
        get_engine(threads=threads)


@pytest.mark.skipif(importlib.util.find_spec("paddleocr") is not None, reason="paddleocr is installed here")
def test_paddle_without_paddleocr_says_how_to_install_it() -> None:
    assert "paddle" not in available_engines()
    with pytest.raises(EngineUnavailable) as info:
        get_engine("paddle")
    assert "pip install 'flowocr[paddle]'" in str(info.value)
    assert isinstance(info.value, FlowOcrError) and info.value.exit_code == 7


@needs_shared
def test_auto_area_finds_the_subtitle_band_not_the_watermark(engine) -> None:
    # rapidvideocr_1: a static watermark at the top left, changing bilingual subtitles at the bottom
    video = SHARED_VIDEOS / "rapidvideocr_1.mp4"
    frames = [grab(video, t, 678, 360) for t in (2, 5, 7, 11)]
    band = find_text_band(engine.recognize(frames), 678, 360)
    assert band.y > 250 and band.y1 == 360
    (result,) = engine.recognize([frames[0]], area=band)
    assert [squash(line.text) for line in result.lines] == [
        "我要去杂货店买点东西要我帮你买点牛奶吗？",
        "I'mgoinggroceryshopping.Youwantsomemilk?",
    ]


# --- the engine's pure steps, without a model --------------------------------------------------------------------

ALPHABET = ("<blank>", "a", "b", " ")  # index 0 is the CTC blank, the space is last (as in PP-OCR's alphabet)


def columns(*rows: tuple[int, float, float]) -> np.ndarray:
    """CTC columns from (best class, its probability, space probability) rows."""
    probs = np.zeros((len(rows), len(ALPHABET)), np.float32)
    for k, (best, p, space) in enumerate(rows):
        probs[k, 3] = space
        rest = 1.0 - p - (space if best != 3 else 0.0)
        probs[k, best] = p
        probs[k, 0 if best != 0 else 1] += max(0.0, rest)
    return probs


def test_ctc_decode_merges_repeats_drops_blanks_and_averages_kept_columns() -> None:
    probs = columns((1, 0.9, 0), (1, 0.8, 0), (0, 0.9, 0), (1, 0.7, 0), (2, 0.6, 0))
    text, score = ctc_decode(probs, ALPHABET, space=3, space_prob=0.15)
    assert text == "aab"
    assert score == pytest.approx((0.9 + 0.7 + 0.6) / 3)
    assert ctc_decode(columns((0, 0.9, 0), (0, 0.8, 0)), ALPHABET, space=3, space_prob=0.15) == ("", 0.0)


def test_ctc_decode_restores_a_space_the_blank_outvoted() -> None:
    gap = columns((1, 0.9, 0), (0, 0.6, 0.3), (2, 0.9, 0))
    assert ctc_decode(gap, ALPHABET, space=3, space_prob=0.15)[0] == "a b"
    assert ctc_decode(gap, ALPHABET, space=3, space_prob=1.0)[0] == "ab"  # recovery off
    faint = columns((1, 0.9, 0), (0, 0.9, 0.05), (2, 0.9, 0))
    assert ctc_decode(faint, ALPHABET, space=3, space_prob=0.15)[0] == "ab"
    adjacent = columns((1, 0.9, 0.4), (2, 0.5, 0.4))  # no blank column between the letters: no gap to fill
    assert ctc_decode(adjacent, ALPHABET, space=3, space_prob=0.15)[0] == "ab"
    spoken = columns((1, 0.9, 0), (3, 0.9, 0), (0, 0.6, 0.3), (2, 0.9, 0))  # a recognised space is not doubled
    assert ctc_decode(spoken, ALPHABET, space=3, space_prob=0.15)[0] == "a b"


def test_a_recovered_space_stands_between_words_only() -> None:
    chars = ("<blank>", "a", "中", " ", "?", "文")

    def gap(first: int, then: int) -> str:
        probs = np.zeros((3, len(chars)), np.float32)
        probs[0, first] = probs[2, then] = 0.9
        probs[1, 0], probs[1, 3] = 0.6, 0.3  # a blank column that holds a clear space probability
        return ctc_decode(probs, chars, space=3, space_prob=0.15)[0]

    assert gap(1, 1) == "a a"
    assert gap(1, 4) == "a?"  # not before a mark
    assert gap(2, 5) == "中文" and gap(1, 2) == "a中"  # not next to a CJK character
    assert gap(4, 1) == "? a"  # after a mark, before a word


def test_recognition_width_depends_on_the_crop_alone() -> None:
    assert rec_width((48, 100, 3), height=48, min_width=320) == 320
    assert rec_width((24, 200, 3), height=48, min_width=320) == 448  # 400 at 48 px high, up to a multiple of 64
    assert rec_width((30, 1000, 3), height=48, min_width=320) % REC_WIDTH_STEP == 0


def test_detector_input_scales_the_long_side_pads_to_32_and_keeps_the_aspect() -> None:
    band = det_input(np.zeros((90, 1120, 3), np.uint8), side=960, max_upscale=2.0)
    assert band.tensor.shape == (1, 3, 96, 960)  # 1120 x 90 -> 960 x 77, padded to 96 (not stretched)
    assert band.scale_x == pytest.approx(960 / 1120) and band.scale_y == pytest.approx(77 / 90)
    small = det_input(np.zeros((270, 480, 3), np.uint8), side=960, max_upscale=1.5)
    assert small.tensor.shape == (1, 3, 416, 736)  # enlarged by at most 1.5x: 720 x 405
    assert small.tensor.dtype == np.float32 and small.tensor[0, :, 410:, :].max() == -1.0  # black padding


def test_reading_order_is_top_to_bottom_then_left_to_right_on_a_line() -> None:
    def box(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
        return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]

    boxes = np.array([box(300, 100, 400, 130), box(10, 300, 90, 330), box(10, 102, 200, 131), box(100, 298, 300, 329)])
    assert reading_order(boxes).tolist() == [2, 0, 1, 3]
    assert reading_order(np.zeros((0, 4, 2))).tolist() == []


def test_our_model_loading_reads_exactly_as_rapidocrs_own_components(engine, demo_frames) -> None:
    """flowocr.ocr.ppocr loads the wheel's models itself (rapidocr's configuration costs a second per process);
    its DB post-process, recogniser input and alphabet must give rapidocr's own results to the last digit."""
    from rapidocr import RapidOCR

    from flowocr.ocr.rapid import RapidOcrEngine, _Detector, _Recognizer

    pipeline = RapidOCR(params={"Det.unclip_ratio": engine.options.det_unclip})
    det, rec = pipeline._load_det_model(), pipeline._load_rec_model()
    theirs = RapidOcrEngine.__new__(RapidOcrEngine)
    theirs.__dict__.update(engine.__dict__)
    theirs._detect = _Detector(det.session, det.postprocess_op, engine.options)
    theirs._recognise = _Recognizer(rec.session, rec.postprocess_op.character, engine.options)
    theirs._recognise._resize_pad = rec.resize_norm_img
    images = [image for image in demo_frames.values()] + [image[250:] for image in demo_frames.values()]
    images.append(grab(FIXTURES / "av1.mkv", 2.0, 640, 360))
    ours = engine.run(images).results
    assert any(result.lines for result in ours)
    assert theirs.run(images).results == ours


def busy_frame(tmp_path, text: str, *, cell: int = 10, rule: int = 110) -> np.ndarray:
    """A 1920x1080 frame of a cellular texture (``cell`` px cells, dark greens) with ``text`` burned in by libass at
    the bottom, 52 px, white with a black outline: the corpus's kind of picture over which PP-OCR's detector, fed
    the band scaled down to its input size, sees no text at all (10 px cells) or parts of it (4 px)."""
    # libass scales an SRT's styles from a 288-line script to the frame: 14 is 52 px at 1080p, 0.6 a 2 px outline
    style = "FontName=Noto Sans CJK SC,FontSize=14,PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,Outline=0.6"
    return texture_frame(tmp_path, text, size=(1920, 1080), cell=cell, rule=rule, style=style,
                         levels="y=val*0.3+20:u=val*0.8+20:v=val*0.8+20")  # fmt: skip


def texture_frame(tmp_path, text: str, *, size: tuple[int, int], cell: int, rule: int, style: str,
                  levels: str) -> np.ndarray:  # fmt: skip
    """A frame of ``size`` of a cellular texture (``cell`` px cells, ``rule``, its grey levels mapped by ``levels``)
    with ``text`` burned in by libass in ``style``."""
    width, height = size
    srt = tmp_path / "line.srt"
    srt.write_text(f"1\n00:00:00,000 --> 00:00:05,000\n{text}\n", encoding="utf-8")
    graph = (f"cellauto=s={width // cell}x{height // cell}:r=1:rule={rule}:ratio=0.5:seed=3,scale={width}:{height}:"
             f"flags=neighbor,format=yuv420p,lutyuv={levels},"
             f"subtitles=filename={srt}:original_size={width}x{height}:force_style='{style}'")  # fmt: skip
    out = tmp_path / "busy.png"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", graph, "-frames:v", "1", "-y", str(out)],
                   check=True)  # fmt: skip
    import cv2

    return cv2.imread(str(out))


def test_a_line_over_a_busy_texture_is_read_with_its_background_isolated(engine, tmp_path) -> None:
    from flowocr.ocr.area import ISOLATE_CLUTTER, Rect, read_frame
    from flowocr.ocr.strokes import isolate

    text = "我花了整整十年才明白这个道理。"
    frame = busy_frame(tmp_path, text)
    full, band = Rect(0, 0, 1920, 1080), Rect(0, 900, 1920, 160)
    assert [squash(line.text) for line in read_frame(engine, frame, full, [band])] == [text]
    lines = read_frame(engine, frame, full, [full])  # the whole frame, boxes in frame pixels
    assert [squash(line.text) for line in lines] == [text] and lines[0].bounds[1] > 800
    # a band without strokes (the texture alone has none) gets no second read: nothing to isolate; and the band
    # with the line, read as it is, gives nothing (what the second read is for)
    assert isolate(frame[:300], frame_height=1080) == [] and not engine.recognize([frame[900:1060]])[0].lines
    assert read_frame(engine, frame, full, [Rect(0, 0, 1920, 300)]) == ()
    [found] = isolate(frame, frame_height=1080)
    assert 900 < found.top < 1020 and found.image.shape[0] < 160  # only the rows of the line are detected again
    # strokes over most of the frame's height are a picture's texture: no second read of the whole frame
    spread = frame.copy()
    for top in range(0, 900, 40):  # the line's own rows, over and over: strokes on every row
        spread[top : top + 40] = frame[found.top + 5 : found.top + 45]
    assert isolate(spread, frame_height=1080) == []  # one piece, too tall
    assert all(piece.top > 900 for piece in isolate(spread, frame_height=1080, busy=ISOLATE_CLUTTER))
    # a line at the top and one at the bottom span more than that: over a busy picture they are two pieces, each
    # read isolated in a frame read whole (before, neither was: the detector sees no text over the texture)
    two = frame.copy()
    two[40:200] = frame[900:1060]
    assert isolate(two, frame_height=1080) == []
    pieces = isolate(two, frame_height=1080, busy=ISOLATE_CLUTTER)
    assert [piece.top < 200 for piece in pieces] == [True, False] and not any(piece.whole for piece in pieces)
    assert [squash(line.text) for line in read_frame(engine, two, full, [full])] == [text, text]


def test_an_isolated_piece_is_read_again_where_nothing_was_found_in_it_or_whole_over_a_busy_picture() -> None:
    from flowocr.ocr.area import ISOLATE_CLUTTER, isolate_again
    from flowocr.ocr.strokes import Isolated

    def piece(top: int, *, whole: bool, clutter: float) -> Isolated:
        return Isolated(np.zeros((40, 100, 3), np.uint8), top, clutter, whole)

    busy, calm = ISOLATE_CLUTTER + 0.05, ISOLATE_CLUTTER - 0.05
    line = (10.0, 110.0, 90.0, 130.0)  # a box found in rows 110-130 of the band
    assert isolate_again(piece(100, whole=True, clutter=calm), [])
    assert not isolate_again(piece(100, whole=True, clutter=calm), [line])
    assert isolate_again(piece(100, whole=True, clutter=busy), [line])  # a busy picture: parts of lines found
    # a run of the rows of a busy picture: read again where nothing was found in its rows only
    assert not isolate_again(piece(100, whole=False, clutter=busy), [line])
    assert isolate_again(piece(0, whole=False, clutter=busy), [line])


def test_a_band_read_over_a_busy_texture_is_read_isolated_too_and_keeps_the_more_confident_reading(engine, tmp_path):
    from flowocr.ocr.area import ISOLATE_CLUTTER, Rect, read_frame
    from flowocr.ocr.strokes import isolate

    lines = ["不到十分钟", "more than ten minutes"]
    frame = busy_frame(tmp_path, "\n".join(lines), cell=4, rule=30)
    band = Rect(0, 850, 1920, 210)
    # read as it is, the band gives both lines, one of them misread (the texture's cells cut into the "m")
    plain = [squash(line.text) for line in engine.recognize([frame[850:1060]])[0].lines]
    assert len(plain) == 2 and plain != [squash(t) for t in lines]
    assert isolate(frame[850:1060], frame_height=1080)[0].clutter >= ISOLATE_CLUTTER
    assert [squash(line.text) for line in read_frame(engine, frame, Rect(0, 0, 1920, 1080), [band])] == \
        [squash(t) for t in lines]  # fmt: skip
    # a clean picture is no busy one: its band is read once
    demo = grab(FIXTURES / "demo.mp4", 1.5, 640, 360)
    assert all(found.clutter < ISOLATE_CLUTTER for found in isolate(demo[270:], frame_height=360))


def light_busy_frame(tmp_path, text: str) -> np.ndarray:
    """A 640x360 frame of a cellular texture in light grey and dark green (8 px cells) with ``text`` burned in by
    libass at the bottom: 23 px Noto Serif CJK, white without an outline, with a shadow (as dev seed 13's 360p AV1
    video shows it, where 12 of its 16 lines were lost)."""
    style = "FontName=Noto Serif CJK JP,FontSize=18,PrimaryColour=&H00FFFFFF,BackColour=&H80000000,Outline=0,Shadow=1.6"
    return texture_frame(tmp_path, text, size=(640, 360), cell=8, rule=110, style=style,
                         levels="y=val*0.5+30:u=val*0.9+10:v=val*0.9+10")  # fmt: skip


def test_a_line_found_with_its_picture_isolated_is_read_as_it_shows_too(engine, tmp_path, monkeypatch) -> None:
    import flowocr.ocr.area as area
    from flowocr.ocr.area import Rect, read_frame

    text = "彼は何も言わなかった。"
    frame = light_busy_frame(tmp_path, text)
    full, band = Rect(0, 0, 640, 360), Rect(0, 280, 640, 80)
    assert not engine.recognize([frame[280:360]])[0].lines  # the detector sees no line over the texture
    assert [line.text for line in read_frame(engine, frame, full, [band])] == [text]
    # read in the isolated image alone (the glyphs' bright pixels, white on black), the line is misread: the
    # recogniser was trained on text as it shows
    monkeypatch.setattr(area, "ISOLATED_AS_SHOWN", False)
    assert [line.text for line in read_frame(engine, frame, full, [band])] != [text]


def test_a_line_isolated_shows_its_bright_pixels_only_so_the_detector_finds_it_over_a_light_texture(
        engine, tmp_path, monkeypatch) -> None:  # fmt: skip
    import flowocr.ocr.strokes as strokes
    from flowocr.ocr.area import Rect, read_frame

    frame = light_busy_frame(tmp_path, "知らない。")
    full, band = Rect(0, 0, 640, 360), Rect(0, 280, 640, 80)
    [piece] = strokes.isolate(frame[280:360], frame_height=360)
    assert set(np.unique(piece.image)) == {0, 255}  # white glyphs on black: the light cells beside them are gone
    assert [line.text for line in read_frame(engine, frame, full, [band])][0].startswith("知らない")
    # kept as they show near the strokes, the cells' bits beside the glyphs hide the line from the detector
    monkeypatch.setattr(strokes, "ISOLATE_BINARY", False)
    assert read_frame(engine, frame, full, [band]) == ()


def test_boxes_are_read_in_the_images_as_shown_too_and_keep_the_more_confident_reading(engine, demo_frames):
    clean = demo_frames[1.5][250:]  # the demo's subtitle band
    want = read(engine.recognize([clean])[0])
    assert want
    cut = clean.copy()
    cut[:, ::3] = 0  # every third column blacked out: the boxes are still found, the text is not read right
    assert read(engine.recognize([cut])[0]) != want
    assert read(engine.recognize([cut], shown=[clean])[0]) == want
    assert read(engine.recognize([clean], shown=[np.zeros_like(clean)])[0]) == want  # the better reading stays
    with pytest.raises(ValueError, match="as shown must match"):
        engine.recognize([clean], shown=[clean[1:]])


def test_stroke_maps_keep_a_third_of_a_wide_area_so_a_1080p_line_keeps_its_strokes(tmp_path) -> None:
    from flowocr.ocr.strokes import map_size, map_width, strokes

    assert [map_width(w) for w in (200, 640, 960, 1280, 1920, 3840)] == [200, 320, 320, 427, 640, 1280]
    assert map_size(1920, 1080) == (640, 360, 1 / 3)
    frame = busy_frame(tmp_path, "Zhang Wei and I were classmates.")
    # the texture alone has no stroke pixels; the 52 px line has hundreds at a third of its size
    assert strokes(frame[:800]).count == 0 and strokes(frame).count >= 150


def test_half_width_marks_after_cjk_letters_become_full_width() -> None:
    from flowocr.ocr.rapid import full_width_after_cjk

    assert full_width_after_cjk("你确定吗?") == "你确定吗？"
    assert full_width_after_cjk("好,走吧!") == "好，走吧！"
    assert full_width_after_cjk("本当?") == "本当？"  # kana too
    assert full_width_after_cjk("Really? OK!") == "Really? OK!"  # after a Latin letter: kept
    assert full_width_after_cjk("李明? Li Ming?") == "李明？ Li Ming?"
    assert full_width_after_cjk("3:15") == "3:15"


def test_a_grown_reading_is_kept_only_when_it_adds_one_closing_mark() -> None:
    from flowocr.ocr.rapid import grown_right, wants_tail, with_tail

    assert wants_tail("别忘了带护照") and not wants_tail("别忘了带护照。")
    assert wants_tail("Sim") and wants_tail("Platform 3") and not wants_tail("Sim.") and not wants_tail("")
    assert wants_tail("他说：“别等我。") and not wants_tail("他说：“别等我。”")  # a quote left open
    assert wants_tail('He said: "Wait.') and not wants_tail('He said: "Wait."')
    assert with_tail("他说：“别等我。", "他说：“别等我。”") == "他说：“别等我。”"
    assert with_tail("他说：“别等我。", "他说：“别等我。。") == "他说：“别等我。"  # only its closing mark
    assert with_tail("Why", "Why?") == "Why?" and with_tail("Sim", "Sim。") == "Sim"  # Latin: half-width marks
    assert with_tail("Sim", "Simo") == "Sim"
    assert with_tail("别忘了带护照", "别忘了带护照。") == "别忘了带护照。"
    assert with_tail("我们赢了", "我们赢了！") == "我们赢了！"
    assert with_tail("别忘了带护照", "别忘了带护照。1") == "别忘了带护照"  # more than a mark
    assert with_tail("别忘了带护照", "别忘了带护照了") == "别忘了带护照"  # not a mark
    assert with_tail("别忘了带护照", "别忘了带护") == "别忘了带护照"  # the grown crop read worse
    assert with_tail("", "。") == ""  # nothing read: no mark alone
    box = np.array([[100, 10], [200, 10], [200, 40], [100, 40]], np.float32)
    assert grown_right(box, 0.5, 1000).tolist() == [[100, 10], [215, 10], [215, 40], [100, 40]]
    assert grown_right(box, 0.5, 205)[:, 0].max() == 205  # within the image


def test_of_two_readings_of_a_box_the_one_with_its_closing_mark_or_the_more_confident_is_kept() -> None:
    from flowocr.ocr.rapid import surer

    plain, marked = ("我们再试一次", 0.9998), ("我们再试一次。", 0.9576)  # a mark is read less sure than the letters
    assert surer(plain, marked, least=0.5) is marked and surer(marked, plain, least=0.5) is marked
    assert surer(plain, ("我们再试一次。", 0.4), least=0.5) is plain  # not sure enough to keep at all
    shown = ("プレゼントは何がいい？", 0.88)
    assert surer(("フレセントは何がいい", 0.87), shown, least=0.5) is shown
    assert surer(("Imore than ten minutes", 0.935), ("more than ten minutes", 0.999), least=0.5)[1] == 0.999
    assert surer(("", 0.0), ("。", 0.6), least=0.5)[0] == "。"  # an empty reading has no mark to add
    same = ("Hello", 0.9)
    assert surer(same, ("Hello", 0.9), least=0.5) is same  # the first when equal


CJK_FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # fonts-noto-cjk (install_system_deps.sh)


@pytest.mark.skipif(not CJK_FONT.is_file(), reason=f"{CJK_FONT} (fonts-noto-cjk) is not installed")
def test_a_full_stop_standing_apart_from_the_line_is_read_with_it() -> None:
    """The detector's box of a CJK line can end before a full stop that stands a little apart (seed 2027: nine
    lines read without their last mark); the line is read again with its box grown to the right."""
    from PIL import Image, ImageDraw, ImageFont

    from flowocr.ocr.rapid import RapidOcrEngine, RapidOptions

    face = ImageFont.truetype(str(CJK_FONT), 26)

    def line(text: str, gap: float) -> np.ndarray:
        image = Image.new("RGB", (480, 60), (40, 60, 90))
        draw = ImageDraw.Draw(image)
        style = {"font": face, "fill": (255, 255, 255), "stroke_width": 2, "stroke_fill": (0, 0, 0)}
        draw.text((120, 14), text, **style)
        draw.text((120 + draw.textlength(text, font=face) + gap * 26, 14), "。", **style)
        return np.asarray(image)[:, :, ::-1].copy()

    def texts(engine, image) -> list[str]:
        return [ln.text for ln in engine.recognize([image])[0].lines]

    plain = RapidOcrEngine(options=RapidOptions(rec_tail=0))
    engine = get_engine()
    apart = line("别忘了带护照", 0.3)
    assert texts(plain, apart) == ["别忘了带护照"]  # what the box alone reads
    assert texts(engine, apart) == ["别忘了带护照。"]
    alone = line("我饿死了", 0.4)  # the stop found as a box of its own, read "o"
    assert texts(plain, alone) == ["我饿死了", "o"]
    assert texts(engine, alone) == ["我饿死了。"]
    close = line("天快黑了", 0.0)
    assert texts(plain, close) == texts(engine, close) == ["天快黑了。"]


def test_a_line_is_read_again_grown_only_where_something_as_bright_as_its_text_lies_beside_it(engine) -> None:
    """Reading a line again with its box grown (for a closing mark the detector left out) cost two recognitions
    per line that ends in a letter; where the strip beside the box holds nothing as bright as the text, they find
    nothing and are not made."""
    from PIL import Image, ImageDraw, ImageFont

    from flowocr.ocr import rapid

    face = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 28)

    def line(text: str, mark: str = "", background=(40, 60, 90)) -> np.ndarray:
        image = Image.new("RGB", (480, 60), background)
        draw = ImageDraw.Draw(image)
        style = {"font": face, "fill": (255, 255, 255), "stroke_width": 2, "stroke_fill": (0, 0, 0)}
        draw.text((60, 12), text, **style)
        draw.text((60 + draw.textlength(text, font=face) + 3, 12), mark, **style)
        return np.asarray(image)[:, :, ::-1].copy()

    bare, marked = line("Platform 3"), line("Platform 3", "!")
    (found,) = engine.detect([bare])  # the detector's box of the bare line
    assert len(found) == 1
    x0, y0, x1, y1 = found[0]
    box = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
    assert not rapid.tail_inked(bare, box, 0.5)  # only the dark picture beside it
    assert rapid.tail_inked(marked, box, 0.5)  # the mark, standing a little apart
    flat = line("Platform 3", background=(250, 250, 250))  # white on white: the box cannot tell, read again
    assert rapid.tail_inked(flat, box, 0.5)
    edge = np.ascontiguousarray(bare[:, : int(box[1, 0])])  # the box reaches the image's edge: nothing to grow
    assert not rapid.tail_inked(edge, box, 0.5)
    small, half = np.ascontiguousarray(bare[::2, ::2]), box / 2  # a small line: a mark's thin strokes blur away
    assert half[2, 1] - half[0, 1] < rapid.TAIL_SMALL and rapid.tail_inked(small, half, 0.5)
    assert box[2, 1] - box[0, 1] >= rapid.TAIL_SMALL  # (the line above is not small)

    calls = []
    recognise = engine._recognise

    class Counted:
        input_height = recognise.input_height

        def __call__(self, crops):
            calls.append(len(crops))
            return recognise(crops)

    engine._recognise = Counted()
    try:
        assert [ln.text for ln in engine.recognize([bare])[0].lines] == ["Platform 3"]
        assert len(calls) == 1  # no read again: nothing beside it
        calls.clear()
        old, rapid.TAIL_INK = rapid.TAIL_INK, False
        try:
            assert [ln.text for ln in engine.recognize([bare])[0].lines] == ["Platform 3"]
        finally:
            rapid.TAIL_INK = old
        assert len(calls) == 3  # read again twice (grown 0.5 and 0.25 heights), for nothing
    finally:
        engine._recognise = recognise


def test_a_large_first_frame_is_read_whole_and_by_its_stroke_bands_so_a_small_corner_logo_is_not_lost(engine):
    from PIL import Image, ImageDraw, ImageFont

    from flowocr.ocr.area import Rect, read_frame, read_whole
    from flowocr.ocr.strokes import strokes

    def frame(width: int, height: int) -> np.ndarray:  # a 27 px serif logo top right over a flat picture
        image = Image.new("RGB", (width, height), (133, 150, 89))
        serif = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf", 27)
        ImageDraw.Draw(image).text((width - 134, 80), "HD", font=serif, fill=(235, 235, 235), stroke_width=1,
                                   stroke_fill=(0, 0, 0))  # fmt: skip
        return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])

    big = frame(2560, 1440)
    area = Rect(0, 0, 2560, 1440)
    # the whole 1440p frame reaches the detector at 960 px: the logo shrinks to 10 px and is not found
    assert read_frame(engine, big, area, [area]) == ()
    lines = read_whole(engine, big, area, strokes(big), 1440)
    assert [line.text for line in lines] == ["HD"] and lines[0].bounds[0] > 2400  # in frame pixels
    # a frame the detector sees at half its size or more is read whole only (no extra work)
    small = frame(1280, 720)
    area = Rect(0, 0, 1280, 720)
    assert read_whole(engine, small, area, strokes(small), 720) == read_frame(engine, small, area, [area])


def fractal_frame(tmp_path, text: str) -> np.ndarray:
    """A 1920x800 frame of a moving Sierpinski pattern of fine white lines (drawn at 640 px and scaled up, as the
    corpus draws it) with ``text`` burned in by libass at the bottom, 29 px bold serif with a thin outline, over
    the pattern's edge: scaled to the detector's 960 px, the line blends into the pattern."""
    srt = tmp_path / "line.srt"
    srt.write_text(f"1\n00:00:00,000 --> 00:01:00,000\n{text}\n", encoding="utf-8")
    style = ("FontName=Noto Serif CJK SC,FontSize=16,Bold=1,PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,"
             "Outline=0.7,Shadow=0.4")
    graph = ("sierpinski=s=640x266:r=60:seed=1:jump=50:type=triangle,scale=1920:800:flags=bicubic,"
             "eq=saturation=0.6:brightness=-0.1,format=yuv420p,"
             f"subtitles=filename={srt}:original_size=1920x800:force_style='{style}',select=eq(n\\,100)")
    out = tmp_path / "fractal.png"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", graph, "-frames:v", "1", "-y", str(out)],
                   check=True)  # fmt: skip
    import cv2

    return cv2.imread(str(out))


def test_a_line_over_a_fine_fractal_is_found_at_the_frames_own_size(engine, tmp_path, monkeypatch) -> None:
    import flowocr.ocr.area as area
    from flowocr.ocr.area import Rect, read_frame, wants_full_size
    from flowocr.ocr.detect import probe_frame

    text = "残念だったね。"
    frame = fractal_frame(tmp_path, text)
    full = Rect(0, 0, 1920, 800)
    assert engine.detect_side == 960
    assert not engine.recognize([frame])[0].lines  # scaled to 960 px, the detector sees no line
    assert [line.text for line in engine.recognize([frame], full_size=True)[0].lines] == [text]
    lines = read_frame(engine, frame, full, [full])
    assert [line.text for line in lines] == [text] and lines[0].bounds[1] > 650
    boxes = probe_frame(engine, frame, full, [full])
    assert boxes and all(box[1] > 650 for box in boxes)  # a probe finds what the reading reads
    # only a crop the detector scales down, and one that holds strokes, is detected again
    assert wants_full_size(engine, frame) and not wants_full_size(engine, frame[:, :960])
    assert not wants_full_size(engine, np.zeros((800, 1920, 3), np.uint8))
    monkeypatch.setattr(area, "FULL_SIZE_AGAIN", False)
    assert read_frame(engine, frame, full, [full]) == () and probe_frame(engine, frame, full, [full]) == ()


def test_full_size_detection_is_refused_by_an_engine_that_cannot() -> None:
    from flowocr.ocr.engine import OcrBatch, OcrEngine, StageTimes
    from flowocr.ocr.types import OcrResult

    class Fixed(OcrEngine):
        NAME, LANGS, REQUIRES, INSTALL_HINT = "fixed", {"ch": "ch"}, (), ""

        def _run(self, images, known=None):
            return OcrBatch(tuple(OcrResult(()) for _ in images), StageTimes(0, None, None, 0))

    image = np.zeros((32, 64, 3), np.uint8)
    assert Fixed().recognize([image]) == [OcrResult(())]
    with pytest.raises(ValueError, match="its own size only"):
        Fixed().recognize([image], full_size=True)
    with pytest.raises(ValueError, match="its own size only"):
        Fixed().detect([image], full_size=True)


def stacked_frame(tmp_path, text: str, *, size: int, outline: float, shadow: float) -> np.ndarray:
    """A 1280x536 frame of a plain light grey with ``text`` (two short lines) burned in by libass at the bottom, bold
    Noto Sans CJK JP of ``size`` (script units of 288 lines: 15 is 28 px), white with a black outline and shadow,
    as the corpus's bilingual cues ("好。" over "OK.")."""
    srt = tmp_path / "lines.srt"
    srt.write_text(f"1\n00:00:00,000 --> 00:00:05,000\n{text}\n", encoding="utf-8")
    style = (f"FontName=Noto Sans CJK JP,FontSize={size},Bold=1,PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,"
             f"Outline={outline},Shadow={shadow}")
    graph = (f"color=c=0xb0b8c8:s=1280x536,format=yuv420p,"
             f"subtitles=filename={srt}:original_size=1280x536:force_style='{style}'")  # fmt: skip
    out = tmp_path / "stacked.png"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", graph, "-frames:v", "1", "-y", str(out)],
                   check=True)  # fmt: skip
    import cv2

    return cv2.imread(str(out))


def test_two_short_lines_the_detector_takes_for_one_box_are_read_apart(engine, tmp_path, monkeypatch) -> None:
    import flowocr.ocr.rapid as rapid

    frame = stacked_frame(tmp_path, "好。\\NOK.", size=15, outline=1.5, shadow=1.6)
    boxes = engine.detect([frame])[0]
    assert len(boxes) == 1  # one squat box over both lines ...
    monkeypatch.setattr(rapid, "SPLIT_STACKED", False)
    assert read(engine.recognize([frame])[0]) != ["好。", "OK."]  # ... which reads as neither
    monkeypatch.setattr(rapid, "SPLIT_STACKED", True)
    lines = engine.recognize([frame])[0].lines
    assert [line.text for line in lines] == ["好。", "OK."]
    assert lines[0].bounds[3] <= lines[1].bounds[1] + 8 and all(boxes[0][1] - 1 <= line.bounds[1] for line in lines)
    # one read to nothing too
    frame = stacked_frame(tmp_path, "不！\\NNo!", size=15, outline=1.5, shadow=2.5)
    monkeypatch.setattr(rapid, "SPLIT_STACKED", False)
    assert read(engine.recognize([frame])[0]) == []
    monkeypatch.setattr(rapid, "SPLIT_STACKED", True)
    assert read(engine.recognize([frame])[0]) == ["不！", "No!"]


def test_a_short_line_over_a_line_that_grew_its_closing_mark_is_kept(engine, tmp_path, monkeypatch) -> None:
    import flowocr.ocr.rapid as rapid

    # "OK" read without its full stop is read again grown to the right; that grown box overlaps the line above,
    # whose box is a line of its own, not the mark (without the split of SPLIT_STACKED, which would find it again)
    monkeypatch.setattr(rapid, "SPLIT_STACKED", False)
    frame = stacked_frame(tmp_path, "好。\\NOK.", size=16, outline=1, shadow=1.6)
    assert len(engine.detect([frame])[0]) == 2
    assert read(engine.recognize([frame])[0]) == ["好。", "OK."]
