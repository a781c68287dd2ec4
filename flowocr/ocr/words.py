"""English words the recogniser glued together: ``"Whose caris this?"`` is written ``"Whose car is this?"``.

PP-OCRv6 drops the narrow space between two English words now and then, most often in small text with a thick
outline (a bilingual subtitle's English line at 480p: ``"Isee."``, ``"Iwas at the library allday."``,
``"Tomorrowatseven, theusualplace."``). The recogniser's own space probability there is below what
:func:`flowocr.ocr.rapid.ctc_decode` recovers, and the picture does not tell either: measured on the middle frames
of the dev corpora's English lines read right but for spaces (seeds 13 and 11), the widest run of text-free columns
between the two letters of a dropped space was 0.06-0.48 of the text's height (median 0.18), as between two
letters of one word (median 0.15, 95th percentile 0.33). So the words decide.

A token (letters, one apostrophe at most, punctuation around it) is split into two or three words only where

- it is not a word itself: not in the vocabulary of ``wordninja`` (126,136 words and fragments of English
  Wikipedia, by frequency), and has no capital after its first letter (a name such as ``PixelTube``);
- each piece is a common word (within the ``COMMON`` most frequent, a three-letter one that is not a function word
  within the ``SHORT_COMMON``; ``a`` and ``I`` the only one-letter words; a contraction ``it's`` by its stem), at
  least one piece is a function word (:data:`FUNCTION_WORDS`: the closed classes of English, where dropped spaces
  lie: ``"caris"``, ``"Isee"``), every other piece has three letters or more, and one piece at least has. These
  keep compounds and foreign words whole: ``keyframes`` is not ``key frames``, ``initialises`` not ``initial is
  es``, Spanish ``entiendo`` not ``en tien do``, Turkish ``ister`` not ``is ter``, ``Noto`` not ``No to``.

The recogniser also reads the word ``I`` as ``l``: a token ``l`` (``l'm``, ``l've``, ``l'll``, ``l'd``) is ``I``
(``I'm``...), and a token that is no word but ``l`` and a common word is ``I`` and that word (``lonly``).

A line with a letter beyond ASCII (``ç``, ``ı``, ``é``) is left as it is. Applied to the lines of languages whose
Latin text is English (``en``; ``ch``, Chinese with English), as the language's other marks are
(:func:`flowocr.ocr.langs.as_written`). Loads the vocabulary on first use. Known wrong splits, of words the
vocabulary lacks: ``inlined``, ``invariants`` (``in lined``, ``in variants``); a lone ``l`` that is a litre ("5 l")
becomes ``I``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

#: A piece must be among this many most frequent words of the vocabulary ("tomorrow" is the 9,434th, "arriving"
#: the 9,439th in its Wikipedia order; conversational words rank low there).
COMMON = 20000
#: ... and a piece of three letters that is not a function word among this many (Turkish "ister" is not "is ter":
#: "ter" is the 14,537th; "car", "see" and "day" are within the first 700).
SHORT_COMMON = 5000
#: Closed-class English words: articles, pronouns, determiners, prepositions, conjunctions, auxiliaries and modals.
FUNCTION_WORDS = frozenset("""
a an the i you he she it we they me him her us them my your his its our their mine yours this that these those
all some any no every each both either neither more most much many few less other such very too
is am are was were be been being do does did have has had will would can could shall should may might must not
of to in on at by for from with into onto over under about after before up down off out than
and or but if so as because when where why how what who whom whose which there here then
""".split())
_SUFFIXES = frozenset({"s", "t", "re", "ve", "ll", "d", "m"})  # it's, don't, we're, I've, you'll, I'd, I'm
_I_CONTRACTIONS = frozenset({"'m", "'ve", "'ll", "'d"})  # l'm: I'm
_TOKEN = re.compile(r"^([^\w']*)([A-Za-z]+(?:'[A-Za-z]+)?)([^\w']*)$")


@lru_cache(maxsize=1)
def _model():
    import wordninja

    model = wordninja.DEFAULT_LANGUAGE_MODEL
    return model, model._wordcost, math.log(len(model._wordcost))


def _rank(word: str) -> int | None:
    """The word's place in the vocabulary by frequency (0: the most frequent), None when it is not there. wordninja
    stores ``log((rank + 1) * log(n))``."""
    _, cost, log_n = _model()
    c = cost.get(word.lower())
    return None if c is None else round(math.exp(c) / log_n) - 1


def _common(piece: str) -> bool:
    if "'" in piece:
        stem, suffix = piece.split("'", 1)
        return suffix.lower() in _SUFFIXES and _common(stem)
    if len(piece) == 1:
        return piece in ("a", "A", "I")
    rank = _rank(piece)
    return rank is not None and rank < (SHORT_COMMON if len(piece) == 3 and not _function(piece) else COMMON)


def _stem(piece: str) -> str:
    """``piece`` without its contraction (``it`` of ``it's``)."""
    return piece.split("'", 1)[0]


def _function(piece: str) -> bool:
    return _stem(piece).lower() in FUNCTION_WORDS


def split_token(token: str) -> str:
    """``token`` with a space between the English words glued in it (module docstring), else as it is."""
    m = _TOKEN.match(token)
    if m is None:
        return token
    before, core, after = m.groups()
    if core == "l" or (core[0] == "l" and core[1:] in _I_CONTRACTIONS):  # "Where am l?", "l'm": I
        return before + "I" + core[1:] + after
    rest = core[1:]  # "lonly": I only
    if (core[0] == "l" and "'" not in core and (len(rest) >= 3 or _function(rest)) and _rank(core) is None
            and _common(rest)):  # fmt: skip
        return before + "I " + rest + after
    if len(core) < 4 or any(ch.isupper() for ch in core[1:]) or _rank(core) is not None:
        return token
    pieces = _model()[0].split(core)
    if (not 2 <= len(pieces) <= 3 or "".join(pieces) != core or not all(_common(p) for p in pieces)
            or not any(_function(p) for p in pieces)
            or not all(_function(p) or len(_stem(p)) >= 3 for p in pieces)
            or max(len(p) for p in pieces) < 3):  # fmt: skip
        return token
    return before + " ".join(pieces) + after


def split_glued(text: str) -> str:
    """``text`` (lines) with the English words glued in its tokens parted (:func:`split_token`), in the lines
    without letters beyond ASCII (a Turkish or Spanish line read with ``ch`` is left alone)."""
    return "\n".join(line if any(ch.isalpha() and not ch.isascii() for ch in line)
                     else " ".join(split_token(t) for t in line.split(" ")) for line in text.split("\n"))  # fmt: skip
