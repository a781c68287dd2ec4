"""The cue builder on hand-made OCR results: no video, no model."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowocr.cues import Cue, CueBuilder, FrameText, build_cues, text_blocks
from flowocr.cues.text import similarity, text_key
from flowocr.ocr.types import TextLine

# Sampled at 2 per second from a 24 fps video: sample k is frame 12k at k/2 s.
STEP = 12
BOTTOM = 300  # y of a bottom subtitle line in a 640x360 frame
TOP = 20


def line(text: str, y: float = BOTTOM, score: float = 0.95, x0: float = 100, x1: float = 540, h: float = 30):
    return TextLine(text, score, ((x0, y), (x1, y), (x1, y + h), (x0, y + h)))


def sample(k: int, *lines: TextLine) -> FrameText:
    return FrameText(index=k * STEP, pts=k * STEP * 512, time=Fraction(k, 2), lines=tuple(lines))


def frames_of(readings: list[str | None], **kw) -> list[FrameText]:
    """One bottom line per sample; None is a sample where nothing was read."""
    return [sample(k, *([line(t, **kw)] if t else [])) for k, t in enumerate(readings)]


def cues_of(frames: list[FrameText], **options) -> list[Cue]:
    n = len(frames)
    return build_cues(frames, Fraction(n, 2), n * STEP, **options)


def texts(cues: list[Cue]) -> list[str]:
    return [c.text for c in cues]


def test_flickering_readings_of_one_subtitle_are_one_cue():
    readings = ["Mind the gap, please.", "Mind the gap please.", "Mind the gap, please.", "Mind tbe gap, please.",
                "Mind the gap, please", "Mind the gap, please."]  # fmt: skip
    cues = cues_of(frames_of(readings))
    assert texts(cues) == ["Mind the gap, please."]
    assert (cues[0].start, cues[0].end) == (0, 3)


def test_a_wrong_first_reading_is_flicker_of_what_follows():
    cues = cues_of(frames_of(["Hel1o there", "Hello there", "Hello there", "Hello there"]))
    assert texts(cues) == ["Hello there"]
    assert cues[0].start == 0


def test_one_sample_where_the_line_was_not_read_is_bridged():
    cues = cues_of(frames_of(["Next stop", "Next stop", None, "Next stop", "Next stop"]))
    assert [(c.text, c.start, c.end) for c in cues] == [("Next stop", 0, Fraction(5, 2))]


def test_text_absent_for_two_samples_is_a_real_gap_that_splits_cues():
    cues = cues_of(frames_of(["Yes.", "Yes.", None, None, "Yes.", "Yes."]))
    assert [(c.text, c.start, c.end) for c in cues] == [("Yes.", 0, 1), ("Yes.", 2, 3)]
    assert [(c.start_index, c.end_index) for c in cues] == [(0, 2 * STEP), (4 * STEP, 6 * STEP)]


def test_similar_lines_each_read_consistently_stay_apart():
    cues = cues_of(frames_of(["I love you."] * 4 + ["I love you too."] * 4))
    assert [(c.text, c.start, c.end) for c in cues] == [("I love you.", 0, 2), ("I love you too.", 2, 4)]


def test_chinese_lines_differing_in_two_of_eight_glyphs_stay_apart():
    first, second = "我们去公园散步吧", "我们去商店散步吧"
    assert similarity(first, second) >= 0.6  # similar enough to be flicker, were it not persistent
    cues = cues_of(frames_of([first] * 3 + [second] * 3))
    assert texts(cues) == [first, second]


def test_back_to_back_cues_split_at_the_first_sample_of_the_new_text():
    cues = cues_of(frames_of(["The train leaves at noon."] * 3 + ["Please take your seats now."] * 3))
    assert [(c.start, c.end) for c in cues] == [(0, Fraction(3, 2)), (Fraction(3, 2), 3)]
    assert cues[0].end_index == cues[1].start_index == 3 * STEP


def test_stacked_bilingual_lines_are_one_cue_read_top_to_bottom():
    # The boxes RapidOCR finds on demo.mp4 at 1 s (touching lines: centres one line height apart).
    zh = line("欢迎观看本期节目", y=277, x0=224, x1=414, h=31)
    en = line("Welcome to today's show", y=308, x0=180, x1=459, h=35)
    cues = cues_of([sample(k, en, zh) for k in range(4)])
    assert texts(cues) == ["欢迎观看本期节目\nWelcome to today's show"]
    assert cues[0].box == (180, 277, 459, 343)


def test_lines_further_apart_than_one_and_a_half_line_heights_are_separate_blocks():
    blocks = text_blocks([line("upper", y=200), line("lower", y=246)])  # centres 46 px apart, 1.53 heights
    assert [b.text for b in blocks] == ["lower", "upper"]  # bottom first


def test_a_sample_missing_one_line_of_a_bilingual_cue_does_not_split_it():
    zh, en = line("感谢观看", y=276, h=32), line("Thanks for watching", y=310, h=26)
    frames = [sample(0, zh, en), sample(1, zh, en), sample(2, zh), sample(3, zh, en), sample(4, zh, en)]
    cues = cues_of(frames)
    assert [(c.text, c.start, c.end) for c in cues] == [("感谢观看\nThanks for watching", 0, Fraction(5, 2))]


def test_top_caption_and_bottom_subtitle_are_two_tracks_numbered_from_the_bottom():
    frames = [sample(k, line("Breaking news", y=TOP), line("He said nothing.")) for k in range(4)]
    cues = cues_of(frames)
    assert sorted((c.track, c.text) for c in cues) == [(0, "He said nothing."), (1, "Breaking news")]
    assert all((c.start, c.end) == (0, 2) for c in cues)


def test_a_caption_coming_and_going_above_a_steady_subtitle_gets_its_own_track():
    frames = [
        sample(k, line("Long subtitle line"), *([line("Caption", y=TOP)] if 2 <= k < 5 else [])) for k in range(8)
    ]
    cues = cues_of(frames)
    assert [(c.track, c.text, c.start, c.end) for c in cues] == [
        (0, "Long subtitle line", 0, 4),
        (1, "Caption", 1, Fraction(5, 2)),
    ]


def test_pieces_of_one_row_are_joined_with_a_space_except_between_cjk_glyphs():
    latin = text_blocks([line("world", x0=330, x1=420), line("Hello", x0=200, x1=320)])
    cjk = text_blocks([line("公园", x0=330, x1=400), line("我们去", x0=200, x1=320)])
    assert [b.text for b in latin] == ["Hello world"]
    assert [b.text for b in cjk] == ["我们去公园"]


def test_vote_picks_the_reading_with_the_most_confidence_not_the_most_samples():
    good, bad = "Hello world", "Hello warld"
    frames = [sample(0, line(good, score=0.95)), sample(1, line(bad, score=0.6)), sample(2, line(good, score=0.95)),
              sample(3, line(bad, score=0.6)), sample(4, line(bad, score=0.6))]  # fmt: skip
    cues = cues_of(frames)
    assert texts(cues) == [good]  # 2 x 0.95 = 1.9 beats 3 x 0.6 = 1.8
    assert cues[0].score == pytest.approx((2 * 0.95 + 3 * 0.6) / 5)


def test_vote_picks_the_majority_reading_at_equal_confidence():
    cues = cues_of(frames_of(["Central Station", "Central Statlon", "Central Station", "Centra1 Station"]))
    assert texts(cues) == ["Central Station"]


def test_vote_among_readings_all_different_picks_the_one_most_alike_the_others():
    # over a busy picture no two readings of a bilingual cue agree; the one that lost its English line scores
    # highest on its own, but the others, all two lines, are alike one another
    zh, en = "从这里坐地铁到机场", "The metro to the airport"
    readings = [[line(zh, y=240, score=0.96)],
                [line(zh, y=240, score=0.9), line("The metro jothe airport", y=272, score=0.8)],
                [line(zh, y=240, score=0.9), line(en, y=272, score=0.85)],
                [line("从这里坐地铁到机", y=240, score=0.9), line("The metro to the air port", y=272, score=0.8)]]
    frames = [sample(k, *lines) for k, lines in enumerate(readings)]
    assert texts(cues_of(frames)) == [f"{zh}\n{en}"]
    # the plain vote (alike_vote 0, the reference merge's) takes the reading of most summed score
    assert texts(cues_of(frames, alike_vote=0)) == [zh]


def test_a_cue_seen_in_one_sample_is_kept_only_when_confident():
    confident = cues_of([sample(0), sample(1, line("Hurry!", score=0.9)), sample(2), sample(3)])
    unsure = cues_of([sample(0), sample(1, line("Hurry!", score=0.7)), sample(2), sample(3)])
    assert [(c.text, c.start, c.end) for c in confident] == [("Hurry!", Fraction(1, 2), 1)]
    assert unsure == []


def test_a_block_seen_in_one_sample_is_kept_on_its_clearest_line():
    # a sign seen once at the end of a video: its headline reads at 0.9, its small print at 0.55 (mean 0.725)
    sign = [line("Beware of Hawks!!", y=240, score=0.9), line("they may swoop at food", y=272, score=0.55)]
    kept = cues_of([sample(0), sample(1), sample(2, *sign)])
    assert [(c.text, c.start) for c in kept] == [("Beware of Hawks!!\nthey may swoop at food", 1)]
    assert kept[0].score == pytest.approx(0.725)  # the cue's score is still the mean
    unsure = [line("Beware of Hawks!!", y=240, score=0.75), line("they may swoop at food", y=272, score=0.55)]
    assert cues_of([sample(0), sample(1), sample(2, *unsure)]) == []


def test_a_short_distinct_cue_between_two_others_is_kept():
    readings = ["Please take your seats now."] * 3 + ["Hurry!"] + ["Next stop: Central Station."] * 3
    cues = cues_of(frames_of(readings))
    assert texts(cues) == ["Please take your seats now.", "Hurry!", "Next stop: Central Station."]


def test_low_score_blank_and_punctuation_only_lines_are_ignored():
    frames = [sample(k, line("garbage", y=TOP, score=0.4), line("   "), line("...", y=200), line("Real text"))
              for k in range(3)]  # fmt: skip
    assert texts(cues_of(frames)) == ["Real text"]


def test_a_cue_lasting_to_the_end_ends_at_the_end_of_the_video():
    frames = frames_of(["Thanks for watching"] * 3)
    cues = build_cues(frames, Fraction(7, 4), 42)
    assert [(c.start, c.end, c.start_index, c.end_index) for c in cues] == [(0, Fraction(7, 4), 0, 42)]


def test_feed_returns_a_cue_as_soon_as_it_can_no_longer_change():
    builder = CueBuilder()
    frames = frames_of(["First line"] * 3 + [None, None, "Second"])
    returned = [builder.feed(f) for f in frames]
    assert [texts(r) for r in returned] == [[], [], [], [], ["First line"], []]
    assert texts(builder.finish(Fraction(3), 6 * STEP)) == ["Second"]


def test_a_change_of_text_is_final_once_the_new_text_persists():
    builder = CueBuilder(confirm_frames=3)
    returned = [texts(builder.feed(f)) for f in frames_of(["Old text"] * 3 + ["New text here"] * 3)]
    assert returned == [[], [], [], [], [], ["Old text"]]


def test_frames_must_come_in_time_order():
    builder = CueBuilder()
    builder.feed(sample(2, line("x")))
    with pytest.raises(ValueError, match="time order"):
        builder.feed(sample(1, line("x")))


def test_options_are_validated_with_their_name():
    with pytest.raises(ValueError, match="confirm_frames"):
        CueBuilder(confirm_frames=0)
    with pytest.raises(TypeError):
        CueBuilder(no_such_option=1)


def test_text_key_ignores_case_spacing_and_punctuation_but_not_letters():
    assert text_key("Mind the gap, please.") == text_key("mind the  gap please")
    assert text_key("I love you.") != text_key("I love you too.")


# Random streams: a few texts in two bands, with dropouts and flicker.
_TEXTS = ["Alpha beta", "Alpha betta", "Gamma delta", "欢迎观看", "欢迎观众", "Hi"]
_reading = st.one_of(st.none(), st.tuples(st.sampled_from(_TEXTS), st.floats(0.3, 1.0)))


@st.composite
def streams(draw):
    n = draw(st.integers(0, 30))
    bottom = draw(st.lists(_reading, min_size=n, max_size=n))
    top = draw(st.lists(_reading, min_size=n, max_size=n))
    frames = []
    for k in range(n):
        lines = [line(bottom[k][0], score=bottom[k][1])] if bottom[k] else []
        lines += [line(top[k][0], y=TOP, score=top[k][1])] if top[k] else []
        frames.append(sample(k, *lines))
    return frames


@settings(max_examples=300, deadline=None)
@given(streams(), st.integers(1, 4), st.integers(0, 2))
def test_cues_are_ordered_and_never_overlap_on_one_track(frames, confirm, gap):
    end = Fraction(len(frames), 2)
    cues = cues_of(frames, confirm_frames=confirm, max_gap=gap)
    assert cues == sorted(cues, key=lambda c: (c.start, c.track))
    times = {f.time for f in frames} | {end}
    seen = {ln.text for f in frames for ln in f.lines}
    for c in cues:
        assert c.start < c.end and c.start in times and c.end in times
        assert c.text in seen
    for track in {c.track for c in cues}:
        on_track = [c for c in cues if c.track == track]
        assert all(a.end <= b.start for a, b in zip(on_track, on_track[1:]))


@settings(max_examples=200, deadline=None)
@given(streams())
def test_every_confident_reading_is_inside_a_cue_on_screen_at_its_time(frames):
    cues = cues_of(frames)
    for f in frames:
        for ln in f.lines:
            if ln.score >= 0.8:
                assert any(c.start <= f.time < c.end and c.box[1] <= ln.bounds[1] < c.box[3] for c in cues), (f, ln)


@settings(max_examples=100, deadline=None)
@given(streams())
def test_streaming_feed_returns_every_cue_once(frames):
    builder = CueBuilder()
    streamed = [c for f in frames for c in builder.feed(f)]
    streamed += builder.finish(Fraction(len(frames), 2), len(frames) * STEP)
    assert sorted(streamed, key=lambda c: (c.start, c.track)) == cues_of(frames)
