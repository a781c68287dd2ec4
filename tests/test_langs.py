"""Languages: the table of what --lang offers, checked against the shipped model's alphabet; --engine auto; the
Tesseract engine on rendered lines and on a short video; the errors for a language nothing reads or whose data is
missing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, subtitled_video

import flowocr.ocr.tesseract as tess
from flowocr.cli import main as cli_main
from flowocr.errors import EngineUnavailable, UsageError
from flowocr.ocr.engine import check_engine, get_engine, resolve_engine, unavailable
from flowocr.ocr.langs import LANGUAGES, codes_for, language
from flowocr.output.writers import read_srt

CJK_FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # fonts-noto-cjk: Hangul, Cyrillic too
HAS_TESSEROCR = importlib.util.find_spec("tesserocr") is not None
needs_tesserocr = pytest.mark.skipif(not HAS_TESSEROCR, reason="tesserocr is not installed (flowocr[tesseract])")


def needs_tessdata(code: str):
    name = LANGUAGES[code].tessdata
    return pytest.mark.skipif(tess.find_tessdata(name) is None, reason=f"{LANGUAGES[code].package} is not installed")


def cer(text: str, truth: str) -> float:
    """Levenshtein distance / length of the truth."""
    row = list(range(len(truth) + 1))
    for i, a in enumerate(text, 1):
        prev, row[0] = row[0], i
        for j, b in enumerate(truth, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (a != b))
    return row[-1] / max(1, len(truth))


@pytest.fixture(scope="module")
def rapid():
    return get_engine("rapidocr")


def test_every_letter_of_every_language_offered_on_pp_ocr_is_in_the_models_alphabet(rapid) -> None:
    alphabet = set(rapid.alphabet)
    assert len(alphabet) > 18000  # the loaded model's own character list, not a copy
    missing = {code: [ch for ch in LANGUAGES[code].needed_letters() if ch not in alphabet]
               for code in codes_for("rapidocr")}  # fmt: skip
    assert {code: letters for code, letters in missing.items() if letters} == {}
    assert "Ç" in LANGUAGES["fr"].needed_letters() and "Ő" in LANGUAGES["hu"].needed_letters()  # capitals too


def test_greek_and_vietnamese_lack_letters_in_the_alphabet_so_tesseract_reads_them(rapid) -> None:
    alphabet = set(rapid.alphabet)
    assert "ς" not in alphabet and "ά" not in alphabet  # Greek: final sigma, tonos
    assert sum(ch not in alphabet for ch in "ảạằẳẵắặầẩẫấậẻẽẹềểễếệỉịỏọổỗốộờởỡớợủụừửữứựỳỷỹỵ") > 40
    assert not any("\uac00" <= ch <= "\ud7a3" or "\u0400" <= ch <= "\u04ff" for ch in alphabet)  # no Hangul, Cyrillic
    assert LANGUAGES["el"].engine == LANGUAGES["vi"].engine == "tesseract"


def test_every_tesseract_language_names_its_debian_data_package() -> None:
    for code in codes_for("tesseract"):
        assert LANGUAGES[code].package == f"tesseract-ocr-{LANGUAGES[code].tessdata}"
    assert {"ko", "ru", "uk", "el", "ar", "he", "th", "vi", "hi"} <= set(codes_for("tesseract"))
    assert LANGUAGES["ar"].rtl and LANGUAGES["he"].rtl and not LANGUAGES["ru"].rtl


def test_auto_picks_the_engine_from_the_language() -> None:
    assert resolve_engine("auto", "ch") == resolve_engine("auto", "ja") == resolve_engine("auto", "FR ") == "rapidocr"
    assert resolve_engine("auto", "ko") == resolve_engine("auto", "ru") == "tesseract"
    assert resolve_engine("rapidocr", "de") == "rapidocr"


def test_an_engine_that_does_not_read_the_language_is_a_usage_error_naming_the_one_that_does() -> None:
    with pytest.raises(UsageError, match=r"ko \(Korean\) is not read by OCR engine rapidocr; it is read by tesseract"):
        resolve_engine("rapidocr", "ko")
    with pytest.raises(UsageError, match=r"fr \(French\) is not read by OCR engine tesseract; it is read by rapidocr"):
        resolve_engine("tesseract", "fr")


def test_a_language_nothing_reads_is_a_usage_error_listing_every_language() -> None:
    with pytest.raises(UsageError) as info:
        language("xx")
    assert info.value.exit_code == 2
    assert "ch, en, ja, fr" in str(info.value) and "ko, ru" in str(info.value)


def test_japanese_needs_nothing_beyond_the_default_install() -> None:
    assert resolve_engine("auto", "ja") == "rapidocr" and unavailable("auto", lang="ja") is None
    check_engine("auto", lang="ja")


def test_cli_exits_2_for_a_language_nothing_reads_and_for_the_wrong_engine(tmp_path) -> None:
    video = Path(__file__).resolve().parent.parent / "fixtures" / "demo.mp4"
    done = run_cli("run", str(video), "--lang", "xx", "-o", str(tmp_path))
    assert done.returncode == 2 and "Supported values are ch, en, ja" in done.stderr
    assert not any(tmp_path.iterdir())
    done = run_cli("run", str(video), "--lang", "ko", "--engine", "rapidocr", "-o", str(tmp_path))
    assert done.returncode == 2 and "it is read by tesseract" in done.stderr


def test_missing_tesseract_data_exits_7_naming_the_package(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(tess, "TESSDATA_DIRS", ())
    monkeypatch.delenv("TESSDATA_PREFIX", raising=False)
    with pytest.raises(EngineUnavailable, match=r"apt-get install tesseract-ocr-kor") as info:
        check_engine("auto", lang="ko")
    assert info.value.exit_code == 7
    video = Path(__file__).resolve().parent.parent / "fixtures" / "demo.mp4"
    with pytest.raises(SystemExit) as exited:
        cli_main(["run", str(video), "--lang", "ko", "-o", str(tmp_path / "out")])
    assert exited.value.code == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "apt-get install tesseract-ocr-kor" in err[0]


def test_missing_tesserocr_exits_7_naming_the_extra(monkeypatch) -> None:
    monkeypatch.setattr(tess.TesseractEngine, "REQUIRES", ("tesserocr_is_not_here",))
    with pytest.raises(EngineUnavailable, match=r"pip install 'flowocr\[tesseract\]'") as info:
        check_engine("auto", lang="ru")
    assert info.value.exit_code == 7


def test_langs_lists_every_language_with_its_engine_and_whether_it_is_installed() -> None:
    done = run_cli("langs")
    assert done.returncode == 0
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert set(rows) == set(LANGUAGES)
    assert "rapidocr" in rows["ja"] and rows["ja"].endswith("yes")
    ko_here = HAS_TESSEROCR and tess.find_tessdata("kor") is not None
    assert "tesseract" in rows["ko"] and rows["ko"].endswith("yes") == ko_here
    records = {r["code"]: r for r in run_cli("langs", "--json").json_lines()}
    assert records["ko"]["installed"] == ko_here and records["ko"]["package"] == "tesseract-ocr-kor"


def test_tessdata_prefix_is_searched_first(tmp_path, monkeypatch) -> None:
    (tmp_path / "tessdata").mkdir()
    (tmp_path / "tessdata" / "kor.traineddata").write_bytes(b"")
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))
    assert tess.find_tessdata("kor") == tmp_path / "tessdata"


#: One line per Tesseract language the tests read (their data: scripts/install_system_deps.sh).
LINES = {"ru": "Мы читаем субтитры из видео", "ko": "우리는 영상에서 자막을 읽습니다"}


def outlined_line(text: str, *, size: int = 32, background: str = "noise", font: Path = CJK_FONT) -> np.ndarray:
    """A 640 x 360 BGR frame: ``text`` in white with a 2 px black outline, low in the frame, over random noise or a
    light grey (a picture brighter than the outline, darker than the text)."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(7)
    if background == "noise":
        pixels = (rng.random((360, 640, 3)) * 255).astype(np.uint8)
    else:
        pixels = np.full((360, 640, 3), 190, np.uint8)
    image = Image.fromarray(pixels)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(font), size)
    width = draw.textlength(text, font=face)
    draw.text(((640 - width) / 2, 280), text, font=face, fill=(255, 255, 255), stroke_width=2, stroke_fill=(0, 0, 0))
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])


def test_a_line_is_prepared_as_dark_text_on_white_whatever_the_picture_behind() -> None:
    for background in ("noise", "grey"):
        frame = outlined_line("ИСТОРИЯ", background=background)
        crop = frame[270:330, 200:440]
        page = tess.prepare_line(crop)
        assert page.dtype == np.uint8 and set(np.unique(page)) <= {0, 255}
        m = tess.TesseractOptions().margin
        assert (page[:m] == 255).all() and (page[:, :m] == 255).all()  # the white margin
        dark = page < 128
        assert 0.02 < dark.mean() < 0.4  # glyphs, not the picture (noise would blacken half) nor an empty page
        rows = np.flatnonzero(dark.sum(axis=1) >= 0.1 * dark.sum(axis=1).max())
        assert abs((rows[-1] - rows[0] + 1) - tess.TesseractOptions().text_height) <= 8  # scaled to the text height


@needs_tesserocr
@pytest.mark.parametrize(("code", "text"), LINES.items(), ids=list(LINES))
def test_tesseract_reads_an_outlined_line_over_a_picture(code, text) -> None:
    if tess.find_tessdata(LANGUAGES[code].tessdata) is None:
        pytest.skip(f"{LANGUAGES[code].package} is not installed")
    engine = get_engine("auto", lang=code)
    assert engine.NAME == "tesseract"
    errors = []
    for background in ("noise", "grey"):
        result = engine.recognize([outlined_line(text, background=background)])[0]
        assert len(result.lines) == 1
        line = result.lines[0]
        assert 0.5 <= line.score <= 1.0 and line.bounds[1] > 250  # the box is the PP-OCR detector's, in frame pixels
        errors.append(cer(line.text, text))
    assert max(errors) <= 0.15, errors  # two misread letters of 16 at most


@needs_tesserocr
@needs_tessdata("ru")
def test_tesseract_reads_the_boxes_in_the_images_as_shown_too() -> None:
    engine = get_engine("auto", lang="ru")
    frame = outlined_line("ИСТОРИЯ", background="grey")
    want = engine.recognize([frame])[0].lines[0].text
    cut = frame.copy()
    cut[:, ::2] = 190  # every second column gone: the box is still found, the text is not read right
    assert [line.text for line in engine.recognize([cut])[0].lines] != [want]
    assert [line.text for line in engine.recognize([cut], shown=[frame])[0].lines] == [want]


@needs_tesserocr
@needs_tessdata("ru")
def test_run_lang_ru_writes_the_russian_subtitles_of_a_short_video(tmp_path) -> None:
    cues = [("00:00:00,500", "00:00:02,000", "Мы читаем субтитры"), ("00:00:02,500", "00:00:04,000", "Привет, мир")]
    video = subtitled_video(tmp_path, "russian", cues)
    out = tmp_path / "out"
    done = run_cli("run", str(video), "--lang", "ru", "-o", str(out), "--formats", "srt,json", "-q")
    assert done.returncode == 0, done.stderr
    read = read_srt(out / "russian.srt")
    assert [entry.text for entry in read] == [text for _, _, text in cues]
    assert abs(float(read[0].start) - 0.5) <= 0.08 and abs(float(read[1].end) - 4.0) <= 0.08


def test_spanish_exclamations_get_the_opening_mark_the_model_cannot_read() -> None:
    from flowocr.ocr.langs import opening_marks

    assert opening_marks("es", "Vámonos!") == "¡Vámonos!"
    assert opening_marks("es", "Sí, claro. Vamos!") == "Sí, claro. ¡Vamos!"
    assert opening_marks("es", "¿Qué? No! Espera.") == "¿Qué? ¡No! Espera."
    assert opening_marks("es", '"Corre!"\n- Ya voy!') == '"¡Corre!"\n- ¡Ya voy!'
    assert opening_marks("es", "¡Ya!") == "¡Ya!" and opening_marks("es", "Hola.") == "Hola."
    assert opening_marks("en", "No!") == "No!" and opening_marks("fr", "Allez !") == "Allez !"


def test_english_words_the_recogniser_glued_are_parted_and_compounds_names_and_other_languages_are_not() -> None:
    from flowocr.ocr.langs import as_written
    from flowocr.ocr.words import split_glued

    # misreadings of the dev corpora (seeds 13 and 11): a space the recogniser dropped
    assert split_glued("Isee.") == "I see."
    assert split_glued("Iwas at the library allday.") == "I was at the library all day."
    assert split_glued("Whose caris this?") == "Whose car is this?"
    assert split_glued("Maybe it'sjust the wind.") == "Maybe it's just the wind."
    assert split_glued("Tomorrowatseven, theusualplace.") == "Tomorrow at seven, the usual place."
    assert split_glued("我明白了。\nWatchout!") == "我明白了。\nWatch out!"
    # ... and the word I read as l
    assert split_glued("Where am l?") == "Where am I?" and split_glued("l'm here.") == "I'm here."
    assert split_glued("lonly slept four hours.") == "I only slept four hours."
    # words, compounds the vocabulary lacks, names, misreadings that are no two words, other languages: as they are
    for text in ("Attention passengers, the train is arriving.", "Keyframes come once a second.",
                 "Timestamps do not start at zero", "PixelTube", "Noto", "Don't whorry", "Nasilsin?",
                 "Çay ister misin?", "No entiendo nada.", "Vou pegar o ônibus.", "AV1 is", "3721", "lamp",
                 "lonely", "log's"):  # fmt: skip
        assert split_glued(text) == text, text
    # for the languages whose Latin lines are English only
    assert as_written("en", "caris") == "car is" and as_written("ch", "caris") == "car is"
    assert as_written("fr", "caris") == "caris" and as_written("es", "Vamos!") == "¡Vamos!"


def test_run_lang_es_writes_the_opening_exclamation_mark(tmp_path) -> None:
    cues = [("00:00:00,500", "00:00:02,000", "¡Vámonos!"), ("00:00:02,500", "00:00:04,000", "¿Qué hora es?")]
    video = subtitled_video(tmp_path, "spanish", cues)
    texts = {}
    for lang in ("es", "ch"):
        out = tmp_path / lang
        done = run_cli("run", str(video), "--lang", lang, "-o", str(out), "--formats", "srt", "-q")
        assert done.returncode == 0, done.stderr
        texts[lang] = [entry.text for entry in read_srt(out / "spanish.srt")]
    assert texts["es"] == ["¡Vámonos!", "¿Qué hora es?"]
    assert texts["ch"] == ["Vámonos!", "¿Qué hora es?"]  # what the model reads: "¡" is not in its alphabet


def test_the_calibration_fingerprint_names_the_engine() -> None:
    from flowocr.calibrate.machine import machine_fingerprint

    rapid_fp, tess_fp = machine_fingerprint("rapidocr"), machine_fingerprint("tesseract")
    assert rapid_fp.engine.startswith("rapidocr ") and tess_fp.engine.startswith("tesserocr ")
    assert rapid_fp.key != tess_fp.key  # one calibration per engine
    assert any(name.endswith("det_small.onnx") for name, _ in tess_fp.models)  # it detects with PP-OCR's model
