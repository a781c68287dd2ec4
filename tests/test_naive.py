"""The naive method (OCR at 3 fps, similar consecutive texts merged): its merging rule on hand-made blocks, and
one real reading of the demo video."""

from __future__ import annotations

import shutil
from fractions import Fraction

import pytest
from conftest import FIXTURES

from flowocr.cues import TextBlock
from flowocr.cues.text import similarity
from flowocr.output import read_srt
from flowocr.read.naive import Sample, merge_samples, naive_cues

# Sampled at 3 per second from a 30 fps video: sample k is frame 10k at k/3 s.
BOTTOM = (100.0, 300.0, 540.0, 330.0)
TOP = (100.0, 20.0, 540.0, 50.0)


def block(text: str, box=BOTTOM, score: float = 0.9) -> TextBlock:
    return TextBlock(text, score, box)


def samples_of(*per_sample) -> list[Sample]:
    """One Sample per argument: None (nothing read), a text (one bottom block), or a tuple of blocks."""
    out = []
    for k, item in enumerate(per_sample):
        blocks = () if item is None else (block(item),) if isinstance(item, str) else tuple(item)
        out.append(Sample(index=10 * k, time=Fraction(k, 3), blocks=blocks))
    return out


def merge(samples: list[Sample], **kw):
    n = len(samples)
    return merge_samples(samples, end_time=Fraction(n, 3), end_index=10 * n, **kw)


def spans(cues) -> list[tuple[str, Fraction, Fraction]]:
    return [(c.text, c.start, c.end) for c in cues]


def test_similar_consecutive_readings_are_one_cue_ending_at_the_next_sample():
    cues = merge(samples_of(None, "Mind the gap, please.", "Mind the gap please.", "Mind the gap, please.", None))
    assert spans(cues) == [("Mind the gap, please.", Fraction(1, 3), Fraction(4, 3))]
    assert (cues[0].start_index, cues[0].end_index) == (10, 40)


def test_a_cue_on_the_last_sample_ends_at_the_end_of_the_video():
    cues = merge_samples(samples_of(None, "Bye"), end_time=Fraction(7, 10), end_index=21)
    assert spans(cues) == [("Bye", Fraction(1, 3), Fraction(7, 10))] and cues[0].end_index == 21


def test_a_reading_below_the_similarity_threshold_starts_a_new_cue():
    a, b = "I love you.", "I love you too."
    assert 0.6 < similarity(a, b) < 0.8
    cues = merge(samples_of(a, a, b, b))
    assert spans(cues) == [(a, 0, Fraction(2, 3)), (b, Fraction(2, 3), Fraction(4, 3))]


def test_one_sample_without_the_text_splits_it_no_gap_is_bridged():
    cues = merge(samples_of("Next stop", None, "Next stop"))
    assert spans(cues) == [("Next stop", 0, Fraction(1, 3)), ("Next stop", Fraction(2, 3), 1)]


def test_a_single_misread_sample_is_a_cue_of_its_own_no_filtering():
    cues = merge(samples_of("Hello there", "Xq#z", "Hello there"))
    assert [c.text for c in cues] == ["Hello there", "Xq#z", "Hello there"]


def test_text_is_the_most_frequent_reading_then_the_highest_summed_score():
    frequent = merge(samples_of("Mind the gap", "Mind tbe gap", "Mind the gap"))
    assert [c.text for c in frequent] == ["Mind the gap"]
    tie = merge(samples_of((block("Mind tbe gap", score=0.7),), (block("Mind the gap", score=0.95),)))
    assert [c.text for c in tie] == ["Mind the gap"]
    assert tie[0].score == pytest.approx(0.825)


def test_blocks_in_two_places_are_two_cues_with_their_own_times():
    sign, line = block("EXIT", TOP), block("Where are we going?")
    cues = merge(samples_of((line, sign), (line, sign), (line,), None))
    assert spans(cues) == [("Where are we going?", 0, 1), ("EXIT", 0, Fraction(2, 3))]
    assert [c.track for c in cues] == [0, 1]


def test_the_same_text_in_another_place_is_another_cue():
    moved = block("Where are we going?", TOP)
    cues = merge(samples_of("Where are we going?", (moved,)))
    assert spans(cues) == [
        ("Where are we going?", 0, Fraction(1, 3)),
        ("Where are we going?", Fraction(1, 3), Fraction(2, 3)),
    ]


def test_two_readings_of_one_place_continue_the_most_similar_cue():
    left, right = (0.0, 300.0, 300.0, 330.0), (250.0, 300.0, 640.0, 330.0)
    first = (block("Good morning", left), block("Bonjour tout le monde", right))
    # one wide block overlapping both: it continues the cue whose text it has, the other cue ends
    cues = merge(samples_of(first, (block("Bonjour tout le monde", BOTTOM),)))
    assert spans(cues) == [("Good morning", 0, Fraction(1, 3)), ("Bonjour tout le monde", 0, Fraction(2, 3))]


def test_nothing_read_is_no_cue_and_samples_must_come_in_order():
    assert merge(samples_of(None, None)) == []
    assert merge_samples([], end_time=Fraction(1), end_index=3) == []
    with pytest.raises(ValueError, match="time order"):
        merge(list(reversed(samples_of("a", "b"))))
    with pytest.raises(ValueError, match="end"):
        merge_samples(samples_of("a", "b"), end_time=Fraction(1, 3), end_index=10)


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
def test_naive_reads_the_six_cues_of_the_demo_at_three_samples_per_second():
    video = FIXTURES / "demo.mp4"
    result = naive_cues(str(video))
    truth = read_srt(FIXTURES / "demo.srt")
    assert result.ocr_calls == 36  # 12 s at 3 per second
    assert [c.text for c in result.cues] == [t.text for t in truth]
    for cue, expected in zip(result.cues, truth):
        # times on the 3 fps grid: a start is at most one step (1/3 s) late, an end likewise
        assert 0 <= cue.start - expected.start < Fraction(1, 3) + Fraction(1, 25)
        assert 0 <= cue.end - expected.end < Fraction(1, 3) + Fraction(1, 25)
