"""The languages ``--lang`` offers: code -> name, the engine that reads it, and what that engine needs.

Two engines share the languages:

- ``rapidocr``: the PP-OCRv6 recogniser shipped in the rapidocr wheel. Its alphabet (18,709 characters, in the
  model's metadata) holds Chinese, kana, Latin with Latin-1, Latin Extended-A and -B, and Greek without its
  accented letters or final sigma; no Hangul, Cyrillic, Arabic, Hebrew, Thai or Devanagari, and of Vietnamese's
  tone letters only two. A Latin-script language is offered on it only when every letter it needs beyond ASCII
  (:attr:`Language.letters`, lower case; the capitals are checked too) is in that alphabet:
  ``tests/test_langs.py`` checks each against the loaded model. Greek (no ``ς``, no ``ά``) and Vietnamese fail
  that check and are read by Tesseract.
- ``tesseract``: Tesseract's LSTM models (``tesserocr``, extra ``flowocr[tesseract]``), one Debian package of
  data per language (``tesseract-ocr-kor``); PP-OCR's detector still finds the lines (see
  :mod:`flowocr.ocr.tesseract`).

Pure data: importing this module loads nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_LANG = "ch"


@dataclass(frozen=True)
class Language:
    """One ``--lang`` value.

    ``engine``: the engine ``--engine auto`` picks for it. ``letters``: for a language read by rapidocr, the letters
    it needs beyond ASCII, lower case (each one's capital is needed as well). ``tessdata``: for a language read by
    Tesseract, the name of its trained data (``kor`` for ``kor.traineddata``, Debian package
    ``tesseract-ocr-kor``). ``rtl``: written right to left.
    """

    code: str
    name: str
    engine: str
    letters: str = ""
    tessdata: str | None = None
    rtl: bool = False

    def __post_init__(self) -> None:
        if self.engine not in ("rapidocr", "tesseract"):
            raise ValueError(f"{self.code}: unknown engine {self.engine!r}")
        if (self.engine == "tesseract") != (self.tessdata is not None):
            raise ValueError(f"{self.code}: a Tesseract language names its trained data, and only it")

    @property
    def package(self) -> str | None:
        """The Debian package holding this language's Tesseract data, None for a rapidocr language."""
        return None if self.tessdata is None else f"tesseract-ocr-{self.tessdata}"

    def needed_letters(self) -> str:
        """Every letter beyond ASCII this language needs, lower case and capitals (``ß``'s capital is ``SS``)."""
        out = []
        for letter in self.letters:
            for ch in letter + letter.upper():
                if ord(ch) > 0x7F and ch not in out:
                    out.append(ch)
        return "".join(out)


def _rapid(code: str, name: str, letters: str = "") -> Language:
    return Language(code, name, "rapidocr", letters=letters)


def _tess(code: str, name: str, tessdata: str, *, rtl: bool = False) -> Language:
    return Language(code, name, "tesseract", tessdata=tessdata, rtl=rtl)


#: Kana Japanese needs (the ideographs are the Chinese ones): hiragana ぁ-ん and katakana ァ-ヶ with ー, but not the
#: obsolete ゐ and ヱ (wi, we; out of use since 1946), which the model's alphabet lacks.
_KANA = "".join(chr(c) for c in (*range(0x3041, 0x3094), *range(0x30A1, 0x30F7)) if chr(c) not in "ゐヱ") + "ー"

LANGUAGES: dict[str, Language] = {
    lang.code: lang
    for lang in (
        _rapid("ch", "Chinese and English"),
        _rapid("en", "English"),
        _rapid("ja", "Japanese", _KANA),
        _rapid("fr", "French", "àâæçéèêëîïôœùûüÿ"),
        _rapid("de", "German", "äöüß"),
        _rapid("es", "Spanish", "áéíñóúü"),  # "¿" is in the alphabet, "¡" is not: opening_marks puts it back
        _rapid("it", "Italian", "àèéìíîòóùú"),
        _rapid("pt", "Portuguese", "áâãàçéêíóôõú"),
        _rapid("nl", "Dutch", "áéëíïóöúü"),
        _rapid("pl", "Polish", "ąćęłńóśźż"),
        _rapid("tr", "Turkish", "çğıİöşüâî"),
        _rapid("sv", "Swedish", "åäöé"),
        _rapid("da", "Danish", "æøåé"),
        _rapid("no", "Norwegian", "æøåéèêóòô"),
        _rapid("fi", "Finnish", "äöåšž"),
        _rapid("cs", "Czech", "áčďéěíňóřšťúůýž"),
        _rapid("sk", "Slovak", "áäčďéíĺľňóôŕšťúýž"),
        _rapid("ro", "Romanian", "ăâîșțşţ"),
        _rapid("hu", "Hungarian", "áéíóöőúüű"),
        _rapid("hr", "Croatian", "čćđšž"),
        _rapid("sl", "Slovenian", "čšž"),
        _rapid("et", "Estonian", "äöõüšž"),
        _rapid("lv", "Latvian", "āčēģīķļņšūž"),
        _rapid("lt", "Lithuanian", "ąčęėįšųūž"),
        _rapid("is", "Icelandic", "áðéíóúýþæö"),
        _rapid("ca", "Catalan", "àçéèíïòóúü·"),
        _rapid("gl", "Galician", "áéíñóúü"),
        _rapid("eu", "Basque", "ñü"),
        _rapid("sq", "Albanian", "çë"),
        _rapid("id", "Indonesian"),
        _rapid("ms", "Malay"),
        _tess("ko", "Korean", "kor"),
        _tess("ru", "Russian", "rus"),
        _tess("uk", "Ukrainian", "ukr"),
        _tess("bg", "Bulgarian", "bul"),
        _tess("sr", "Serbian (Cyrillic)", "srp"),
        _tess("el", "Greek", "ell"),
        _tess("ar", "Arabic", "ara", rtl=True),
        _tess("fa", "Persian", "fas", rtl=True),
        _tess("he", "Hebrew", "heb", rtl=True),
        _tess("th", "Thai", "tha"),
        _tess("vi", "Vietnamese", "vie"),
        _tess("hi", "Hindi", "hin"),
    )
}


def supported_codes() -> str:
    """``ch, en, ja, ...``: every code, for error messages."""
    return ", ".join(LANGUAGES)


def language(code: str) -> Language:
    """The language of ``code`` (case and surrounding spaces ignored); UsageError naming every code otherwise."""
    from flowocr.errors import UsageError

    found = LANGUAGES.get(code.strip().lower())
    if found is None:
        raise UsageError(f"Invalid language {code!r}. Supported values are {supported_codes()} (see flowocr langs).")
    return found


def codes_for(engine: str) -> tuple[str, ...]:
    """The codes read by ``engine`` (``rapidocr`` or ``tesseract``), in table order."""
    return tuple(code for code, lang in LANGUAGES.items() if lang.engine == engine)


#: A sentence of a line: up to its end mark (and closing quotes or brackets after it), then spaces.
_SENTENCE = re.compile(r"[^.!?…]*(?:[.!?…]+[\"'”’»)\]]*|$)\s*")


#: Languages whose Latin lines are English: their glued words are parted (:mod:`flowocr.ocr.words`).
ENGLISH_LATIN = frozenset({"en", "ch"})


def as_written(code: str, text: str) -> str:
    """``text`` read for language ``code`` as the language writes it: with its opening marks
    (:func:`opening_marks`), and for English (``en``, ``ch``) with the words the recogniser glued together parted
    (:func:`flowocr.ocr.words.split_glued`: "Whose caris this?" -> "Whose car is this?")."""
    text = opening_marks(code, text)
    if code in ENGLISH_LATIN and any("a" <= ch.lower() <= "z" for ch in text):
        from flowocr.ocr.words import split_glued

        text = split_glued(text)
    return text


def opening_marks(code: str, text: str) -> str:
    """``text`` read for language ``code``, with the opening marks the language writes and the shipped model cannot
    read put back: Spanish opens each exclamation with "¡", which the model's alphabet lacks ("¡Vámonos!" is read
    "Vámonos!"), so with ``es`` each sentence ending with "!" that has no "¡" gets one before its first letter (after
    an opening quote or dash). Other languages: ``text`` as it is."""
    if code != "es" or "!" not in text:
        return text
    out = []
    for line in text.split("\n"):
        pieces = []
        for sentence in _SENTENCE.findall(line):
            if sentence.rstrip().rstrip("\"'”’»)]").endswith("!") and "¡" not in sentence:
                first = next((k for k, ch in enumerate(sentence) if ch.isalnum()), None)
                if first is not None:
                    sentence = sentence[:first] + "¡" + sentence[first:]
            pieces.append(sentence)
        out.append("".join(pieces))
    return "\n".join(out)
