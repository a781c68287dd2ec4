"""Scoring predicted cues against ground truth (DESIGN §12): exact lines, character error rate, missed and
phantom cues, start/end error in frames. Pure; cues are ``(start, end, text)`` with exact times in seconds
from the first frame (an :class:`~flowocr.output.SrtEntry` is one).

**Frames.** A cue is on screen on the frames with ``start <= t < end``, as libass shows a burned-in subtitle
(``frame_times`` are the presentation times of *all* frames). So a cue's start frame is the first frame with
``t >= start`` and its end frame the first frame with ``t >= end`` (``len(frame_times)`` past the last frame).
Errors are ``predicted - truth`` in frames: positive means late.

**Matching.** A truth cue and a prediction may match when they overlap in time and their texts are alike
(:func:`~flowocr.cues.text.similarity` at least ``min_similarity``, 0.5 by default: punctuation, case and
spacing aside, at least half the characters agree, or one reading holds only some of the other's lines). Pairs
are taken greedily, most similar first (then the longest overlap), each cue at most once.

**Outcomes.** A truth cue without a match is *missed*: all its characters count as errors. A prediction without
a match is *split* when it overlaps a matched truth cue with alike text (the truth cue was cut in two; it is
scored by its best piece only, so the split shows in that piece's start or end error) and a *phantom*
otherwise (text that was not there, or wrong text where a cue was).

**Rates.** ``exact`` is the fraction of truth cues whose match has the same text after
:func:`~flowocr.cues.text.normalise_whitespace` (case and punctuation count). ``cer`` is the edit distance of
matched texts (same normalisation) plus the characters of missed truth cues, over all truth characters
(phantoms are counted apart, not in the CER). ``within_1`` is the fraction of truth cues matched with start
and end both within one frame. With no truth cues every rate is perfect (1.0, CER 0.0).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from flowocr.cues.text import edit_distance, normalise_whitespace, similarity

TimedText = tuple[Fraction, Fraction, str]


@dataclass(frozen=True)
class CueMatch:
    """A truth cue (index into truth) matched to a prediction (index into pred); errors in frames, edits in
    characters of the whitespace-normalised texts."""

    truth: int
    pred: int
    start_error: int
    end_error: int
    edits: int
    exact: bool


@dataclass(frozen=True)
class Score:
    """The accuracy of a prediction against the truth; see the module docstring for each definition.

    ``start_errors``/``end_errors`` hold one value per matched truth cue, in truth order (as ``matches``).
    ``missed``, ``phantom`` and ``split`` are counts; the cue indices are in ``missed_cues`` (truth),
    ``phantom_cues`` and ``split_cues`` (pred).
    """

    truth_cues: int
    pred_cues: int
    exact: float
    cer: float
    missed: int
    phantom: int
    split: int
    start_errors: tuple[int, ...]
    end_errors: tuple[int, ...]
    within_1: float
    start_within_1: float
    end_within_1: float
    truth_chars: int
    char_errors: int
    matches: tuple[CueMatch, ...]
    missed_cues: tuple[int, ...]
    phantom_cues: tuple[int, ...]
    split_cues: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.matches) + self.missed != self.truth_cues:
            raise ValueError("every truth cue is either matched or missed")
        if len(self.matches) + self.phantom + self.split != self.pred_cues:
            raise ValueError("every prediction is matched, split or phantom")


def frame_at_or_after(frame_times: Sequence[Fraction], t: Fraction) -> int:
    """Index of the first frame shown at or after time ``t``; ``len(frame_times)`` when none is."""
    return bisect.bisect_left(frame_times, t)


def score_cues(
    pred: Sequence[TimedText],
    truth: Sequence[TimedText],
    frame_times: Sequence[Fraction],
    *,
    min_similarity: float = 0.5,
) -> Score:
    """Score ``pred`` against ``truth`` on the frames at ``frame_times`` (sorted, seconds from the first frame)."""
    if not frame_times:
        raise ValueError("frame_times is empty: the video has no frames to score on")
    if any(b <= a for a, b in zip(frame_times, frame_times[1:])):
        raise ValueError("frame_times must be strictly increasing")
    if not 0.0 <= min_similarity <= 1.0:
        raise ValueError(f"min_similarity must be in [0, 1], got {min_similarity}")

    candidates = []
    for i, (t_start, t_end, t_text) in enumerate(truth):
        for j, (p_start, p_end, p_text) in enumerate(pred):
            overlap = min(t_end, p_end) - max(t_start, p_start)
            if overlap > 0:
                sim = similarity(t_text, p_text)
                if sim >= min_similarity:
                    candidates.append((-sim, -overlap, i, j))
    candidates.sort()
    pair_of_truth: dict[int, int] = {}
    used_pred: set[int] = set()
    for _, _, i, j in candidates:
        if i not in pair_of_truth and j not in used_pred:
            pair_of_truth[i] = j
            used_pred.add(j)

    matches = []
    char_errors = 0
    truth_chars = 0
    for i, (t_start, t_end, t_text) in enumerate(truth):
        expected = normalise_whitespace(t_text)
        truth_chars += len(expected)
        if i not in pair_of_truth:
            char_errors += len(expected)
            continue
        j = pair_of_truth[i]
        p_start, p_end, p_text = pred[j]
        got = normalise_whitespace(p_text)
        edits = edit_distance(expected, got)
        char_errors += edits
        matches.append(
            CueMatch(
                truth=i,
                pred=j,
                start_error=frame_at_or_after(frame_times, p_start) - frame_at_or_after(frame_times, t_start),
                end_error=frame_at_or_after(frame_times, p_end) - frame_at_or_after(frame_times, t_end),
                edits=edits,
                exact=expected == got,
            )
        )

    # A prediction is a split piece when an alike candidate pair ties it to a truth cue that is matched.
    fragment = {j for _, _, i, j in candidates if i in pair_of_truth and j not in used_pred}
    unmatched = [j for j in range(len(pred)) if j not in used_pred]
    split_cues = tuple(j for j in unmatched if j in fragment)
    phantom_cues = tuple(j for j in unmatched if j not in fragment)
    missed_cues = tuple(i for i in range(len(truth)) if i not in pair_of_truth)

    def share(count: int) -> float:
        return count / len(truth) if truth else 1.0

    return Score(
        truth_cues=len(truth),
        pred_cues=len(pred),
        exact=share(sum(m.exact for m in matches)),
        cer=char_errors / truth_chars if truth_chars else 0.0,
        missed=len(missed_cues),
        phantom=len(phantom_cues),
        split=len(split_cues),
        start_errors=tuple(m.start_error for m in matches),
        end_errors=tuple(m.end_error for m in matches),
        within_1=share(sum(abs(m.start_error) <= 1 and abs(m.end_error) <= 1 for m in matches)),
        start_within_1=share(sum(abs(m.start_error) <= 1 for m in matches)),
        end_within_1=share(sum(abs(m.end_error) <= 1 for m in matches)),
        truth_chars=truth_chars,
        char_errors=char_errors,
        matches=tuple(matches),
        missed_cues=missed_cues,
        phantom_cues=phantom_cues,
        split_cues=split_cues,
    )
