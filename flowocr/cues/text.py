"""Comparing OCR readings: normalisation, edit distance and similarity. Pure functions, shared by the cue
builder and the scorer.

Two normalisations exist for two questions:

* :func:`text_key` asks "is this the same text?" under OCR flicker: Unicode NFKC, case-folded, with all
  whitespace and punctuation removed (a dropped comma or a space read between two CJK glyphs is not a
  different subtitle).
* :func:`normalise_whitespace` asks "is this the same line?" for exact-line scoring: only whitespace is
  normalised; punctuation and case still count.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache


def text_key(text: str) -> str:
    """The comparison key of a reading: NFKC, case-folded, without whitespace and punctuation (categories Z*, P*,
    and control characters). An all-punctuation reading ("...", "-") has the empty key."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "ZPC")


def normalise_whitespace(text: str) -> str:
    """Lines stripped, runs of whitespace inside a line collapsed to one space, empty lines dropped, joined by
    ``\\n``. Case and punctuation are kept."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions, each cost 1) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def ratio(a: str, b: str) -> float:
    """``1 - edit_distance / max(len)``, in [0, 1]; 1.0 for two empty strings.

    For orientation: "iloveyou" vs "iloveyoutoo" is 0.73; two 8-glyph lines differing in 2 glyphs are 0.75,
    in 1 glyph 0.875; "welcometotodaysshow" vs "welcome" is 0.37.
    """
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - edit_distance(a, b) / longest


@lru_cache(maxsize=4096)
def similarity(a: str, b: str) -> float:
    """How alike two readings are, in [0, 1], on their :func:`text_key`.

    The plain :func:`ratio` of the keys, raised for multi-line readings when one reading's lines are all found
    among the other's (a frame where one line of a stacked bilingual subtitle was not read is a partial reading
    of the same cue, not a different text): then the mean best per-line ratio counts instead.
    """
    whole = ratio(text_key(a), text_key(b))
    lines_a = [k for k in (text_key(line) for line in a.splitlines()) if k]
    lines_b = [k for k in (text_key(line) for line in b.splitlines()) if k]
    if len(lines_a) == len(lines_b) or not lines_a or not lines_b:
        return whole
    fewer, more = (lines_a, lines_b) if len(lines_a) < len(lines_b) else (lines_b, lines_a)
    partial = sum(max(ratio(line, other) for other in more) for line in fewer) / len(fewer)
    return max(whole, partial)
