"""Scoring cues against ground truth, with vectors computed by hand; and the eval script on a fixture."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from fractions import Fraction

import pytest
from conftest import FIXTURES, ROOT

from flowocr.cues import frame_at_or_after, score_cues

# 25 fps, 100 frames: frame k is shown at k/25 s.
FRAMES = [Fraction(k, 25) for k in range(100)]
F = Fraction(1, 25)

TRUTH = [
    (Fraction(1, 2), Fraction(2), "The train leaves at noon."),
    (Fraction(2), Fraction(3), "Please take your seats now."),
    (Fraction(5, 2), Fraction(3), "Hurry!"),
]


def shifted(cues, frames: int):
    return [(s + frames * F, e + frames * F, t) for s, e, t in cues]


def test_a_perfect_prediction_scores_perfectly():
    score = score_cues(TRUTH, TRUTH, FRAMES)
    assert (score.exact, score.cer, score.missed, score.phantom, score.split) == (1.0, 0.0, 0, 0, 0)
    assert score.start_errors == score.end_errors == (0, 0, 0)
    assert score.within_1 == score.start_within_1 == score.end_within_1 == 1.0


def test_a_prediction_one_frame_late_has_errors_of_one_frame():
    score = score_cues(shifted(TRUTH, 1), TRUTH, FRAMES)
    assert score.start_errors == score.end_errors == (1, 1, 1)
    assert score.within_1 == 1.0 and score.exact == 1.0


def test_a_prediction_two_frames_early_is_not_within_one_frame():
    score = score_cues(shifted(TRUTH, -2), TRUTH, FRAMES)
    assert score.start_errors == score.end_errors == (-2, -2, -2)
    assert score.within_1 == 0.0


def test_a_missing_cue_is_missed_and_all_its_characters_are_errors():
    score = score_cues(TRUTH[:2], TRUTH, FRAMES)
    chars = sum(len(t) for _, _, t in TRUTH)
    assert (score.missed, score.missed_cues, score.phantom) == (1, (2,), 0)
    assert score.cer == pytest.approx(len("Hurry!") / chars)
    assert score.exact == pytest.approx(2 / 3)


def test_an_extra_cue_is_a_phantom():
    extra = (Fraction(3), Fraction(7, 2), "Mind the gap")
    score = score_cues([*TRUTH, extra], TRUTH, FRAMES)
    assert (score.phantom, score.phantom_cues, score.missed, score.cer) == (1, (3,), 0, 0.0)


def test_wrong_text_where_a_cue_was_is_a_miss_and_a_phantom():
    pred = [TRUTH[0], (TRUTH[1][0], TRUTH[1][1], "Something else entirely")]
    score = score_cues(pred, TRUTH[:2], FRAMES)
    assert (score.missed, score.phantom, score.exact) == (1, 1, 0.5)


def test_character_error_rate_counts_edits_over_truth_characters():
    truth = [(Fraction(0), Fraction(1), "Hello world")]  # 11 characters
    score = score_cues([(Fraction(0), Fraction(1), "Hello word")], truth, FRAMES)
    assert (score.char_errors, score.truth_chars) == (1, 11)
    assert score.cer == pytest.approx(1 / 11) and score.exact == 0.0


def test_whitespace_differences_are_still_exact_lines_but_punctuation_is_not():
    truth = [(Fraction(0), Fraction(1), "欢迎观看\nWelcome  to the show"), (Fraction(1), Fraction(2), "Hi, you.")]
    pred = [(Fraction(0), Fraction(1), " 欢迎观看 \n\nWelcome to the show "), (Fraction(1), Fraction(2), "Hi you.")]
    score = score_cues(pred, truth, FRAMES)
    assert [m.exact for m in score.matches] == [True, False]
    assert score.char_errors == 1 and score.missed == 0


def test_a_truth_cue_split_in_two_is_matched_by_the_longer_piece_and_the_other_is_no_phantom():
    truth = [(Fraction(1), Fraction(3), "Next stop: Central Station.")]
    pred = [
        (Fraction(1), Fraction(31, 25), "Next stop: Central Station."),
        (Fraction(3, 2), Fraction(3), "Next stop: Centra1 Statlon"),
    ]
    score = score_cues(pred, truth, FRAMES)
    assert [(m.truth, m.pred) for m in score.matches] == [(0, 0)]  # the exact text wins over the longer overlap
    assert (score.split, score.split_cues, score.phantom, score.missed) == (1, (1,), 0, 0)
    assert score.end_errors == (-44,)  # the best piece ends at frame 31 instead of 75


def test_matching_prefers_the_more_similar_of_two_overlapping_cues():
    truth = [(Fraction(0), Fraction(2), "Alpha"), (Fraction(1), Fraction(3), "Bravo")]
    pred = [(Fraction(0), Fraction(3), "Bravo")]
    score = score_cues(pred, truth, FRAMES)
    assert [(m.truth, m.pred) for m in score.matches] == [(1, 0)]
    assert score.missed_cues == (0,)


def test_times_map_to_the_first_frame_shown_at_or_after_them():
    assert frame_at_or_after(FRAMES, Fraction(0)) == 0
    assert frame_at_or_after(FRAMES, Fraction(1, 25)) == 1
    assert frame_at_or_after(FRAMES, Fraction(41, 1000)) == 2  # 41 ms lies between frames 1 and 2
    assert frame_at_or_after(FRAMES, Fraction(10)) == 100  # after the last frame


def test_a_time_between_frames_in_truth_and_the_next_frame_in_prediction_are_no_error():
    truth = [(Fraction(41, 1000), Fraction(1), "x")]
    score = score_cues([(Fraction(2, 25), Fraction(1), "x")], truth, FRAMES)
    assert score.start_errors == (0,)


def test_no_truth_and_no_prediction_is_a_perfect_score():
    score = score_cues([], [], FRAMES)
    assert (score.exact, score.cer, score.within_1, score.missed, score.phantom) == (1.0, 0.0, 1.0, 0, 0)


def test_frame_times_must_be_present_and_increasing():
    with pytest.raises(ValueError, match="empty"):
        score_cues([], [], [])
    with pytest.raises(ValueError, match="increasing"):
        score_cues([], [], [Fraction(1), Fraction(0)])


@pytest.mark.skipif(shutil.which("ffprobe") is None, reason="ffprobe is not installed")
def test_eval_script_scores_the_ground_truth_against_itself_as_perfect():
    video, srt = FIXTURES / "h264_bframes_2997.mp4", FIXTURES / "h264_bframes_2997.srt"
    argv = [sys.executable, str(ROOT / "scripts" / "eval.py"), str(video), str(srt), "--pred", str(srt), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["truth_cues"], report["exact"], report["cer"], report["within_1"]) == (5, 1.0, 0.0, 1.0)
    assert report["start_errors"] == [0, 0, 0, 0, 0]
