"""Corpus evaluation (flowocr/cues/corpus.py) on hand-made outcomes: buckets, the overlay rule, the columns,
naive beside us and the rows where we are worse. No video, no OCR."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from fractions import Fraction

import pytest
from conftest import ROOT

from flowocr.cues.corpus import (
    Overlay,
    VideoOutcome,
    category_rows,
    cue_categories,
    length_bucket,
    method_outcome,
    overlays_of,
    report_json,
    size_bucket,
    stats,
    table_lines,
    totals,
    totals_lines,
    truth_cues,
    video_categories,
    video_line,
    worse_than_naive,
)

# 25 fps, 250 frames (10 s): frame k is shown at k/25 s.
TIMES = [Fraction(k, 25) for k in range(250)]
END = Fraction(10)
F = Fraction(1, 25)


def s(x: float | str) -> Fraction:
    return Fraction(str(x))


TRUTH = [
    (s(0.5), s(2.5), "The station is closed today"),  # 50 frames, 2 s
    (s(3), s(3.2), "Wait!"),  # 5 frames, 0.2 s
    (s(4), s(4.04), "Hm"),  # 1 frame
    (s(5), s(9), "PLATFORM 9"),  # 4 s, a sign at the top
]
META_CUES = [
    {"start": "0.500", "end": "2.500", "text": "The station is closed today", "size_px": 19.5, "lang": "en",
     "position": "bottom", "track": "dialogue", "fade_in_ms": 0, "fade_out_ms": 0, "box": True, "outline": 3},
    {"start": "3.000", "end": "3.200", "text": "Wait!", "size_px": 20, "lang": "en", "position": "bottom",
     "track": "dialogue", "fade_in_ms": 120, "fade_out_ms": 0, "box": False, "outline": 0},
    {"start": "4.000", "end": "4.040", "text": "Hm", "size_px": 44.9, "lang": "en", "position": "middle",
     "track": "dialogue", "box": False, "outline": 1.5},
    {"start": "5.000", "end": "9.000", "text": "PLATFORM 9", "size_px": 45, "lang": "latin", "position": "top",
     "track": "sign", "fade_in_ms": 0, "fade_out_ms": 0},
]  # fmt: skip
META = {
    "categories": {"codec": "h264", "fps_label": "25", "resolution": "360p", "bitrate": "low", "background": "fast",
                   "tracks": 2, "logo": True, "vfr": False},
    "cues": META_CUES,
    "overlays": [{"kind": "overlay", "text": "NEWS 24", "box": [540, 5, 630, 35], "start": "0", "end": "6"}],
}  # fmt: skip


def truth():
    return truth_cues(TRUTH, TIMES, END, META_CUES)


def outcome(pred, *, calls: int = 4, seconds: float | None = 2.0, overlays=()):
    return method_outcome(pred, truth(), TIMES, overlays, ocr_calls=calls, seconds=seconds)


def video(name: str, ours, naive=None, categories=None, decode_s: float | None = 1.0) -> VideoOutcome:
    return VideoOutcome(name, categories or video_categories(META), truth(), decode_s, ours, naive)


def shifted(cue, start_frames: int = 0, end_frames: int = 0, text: str | None = None):
    start, end, t = cue
    return (start + start_frames * F, end + end_frames * F, t if text is None else text)


# --- buckets ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("px", "bucket"),
    [(10, "<20"), (19.9, "<20"), (20, "20-29"), (29.9, "20-29"), (30, "30-44"), (44.9, "30-44"), (45, ">=45")],
)
def test_text_height_buckets_have_their_lower_edge_inside(px, bucket):
    assert size_bucket(px) == bucket


@pytest.mark.parametrize(
    ("frames", "seconds", "bucket"),
    [
        (0, Fraction(0), "1-2 frames"),
        (1, F, "1-2 frames"),
        (2, 2 * F, "1-2 frames"),
        (3, 3 * F, "3 frames-0.5 s"),
        (12, Fraction(12, 25), "3 frames-0.5 s"),
        (2, Fraction(2, 3), "1-2 frames"),  # two frames of a 3 fps video: still a 2-frame cue
        (3, Fraction(1, 2), "0.5-1 s"),
        (24, Fraction(24, 25), "0.5-1 s"),
        (25, Fraction(1), "1-3 s"),
        (74, Fraction(74, 25), "1-3 s"),
        (75, Fraction(3), ">=3 s"),
    ],
)
def test_cue_length_buckets_count_frames_first_then_seconds(frames, seconds, bucket):
    assert length_bucket(frames, seconds) == bucket


def test_truth_cues_know_their_frames_length_and_categories():
    cues = truth()
    assert [(c.start_frame, c.end_frame, c.seconds) for c in cues] == [
        (13, 63, Fraction(2)),  # 0.5 s falls between frames 12 and 13: 13 is the first shown, 63 the first after
        (75, 80, Fraction(1, 5)),
        (100, 101, F),
        (125, 225, Fraction(4)),
    ]
    assert [c.categories for c in cues] == [
        {"length": "1-3 s", "size": "<20", "lang": "en", "position": "bottom", "track": "dialogue", "fade": "no",
         "style": "box"},
        {"length": "3 frames-0.5 s", "size": "20-29", "lang": "en", "position": "bottom", "track": "dialogue",
         "fade": "yes", "style": "outline 0"},
        {"length": "1-2 frames", "size": "30-44", "lang": "en", "position": "middle", "track": "dialogue",
         "style": "outline >0"},
        {"length": ">=3 s", "size": ">=45", "lang": "latin", "position": "top", "track": "sign", "fade": "no"},
    ]  # fmt: skip


def test_truth_cues_find_their_json_entry_by_text_when_the_lists_differ():
    shuffled = [META_CUES[3], META_CUES[0], {"start": "1", "text": "not in the srt"}]
    cues = truth_cues(TRUTH, TIMES, END, shuffled)
    assert cues[0].categories["size"] == "<20" and cues[3].categories["track"] == "sign"
    assert cues[1].categories == {"length": "3 frames-0.5 s"}  # no entry: only what the frames say
    assert cue_categories(None, 3, Fraction(1, 2)) == {"length": "0.5-1 s"}


def test_a_truth_cue_at_the_very_end_lasts_to_the_end_of_the_video():
    (cue,) = truth_cues([(s(9.5), s(10), "Bye")], TIMES, END)
    assert (cue.start_frame, cue.end_frame, cue.seconds) == (238, 250, Fraction(12, 25))


def test_video_categories_are_labels_and_absent_fields_are_left_out():
    assert video_categories(META) == {"codec": "h264", "fps_label": "25", "resolution": "360p", "bitrate": "low",
                                      "background": "fast", "tracks": "2", "logo": "yes"}  # fmt: skip
    assert video_categories({"categories": {"codec": "vp9"}}) == {"codec": "vp9"}
    assert video_categories({}) == {}


# --- outcomes and the overlay rule ------------------------------------------------------------------------------


def test_a_reading_of_an_overlay_during_its_time_is_an_overlay_not_a_phantom():
    overlays = overlays_of(META)
    assert overlays == (Overlay("NEWS 24", Fraction(0), Fraction(6)),)
    pred = [
        *TRUTH,
        (s(0), s(5.9), "NEWS 24"),  # the logo, read while it is there
        (s(1), s(2), "NEWS 2A"),  # a misreading of it, still alike
        (s(7), s(8), "NEWS 24"),  # after the logo is gone: text that was not there
        (s(1), s(2), "Breaking"),  # while the logo is there but unlike it
    ]
    result = outcome(pred, overlays=overlays)
    assert [p.kind for p in result.preds] == ["matched"] * 4 + ["overlay", "overlay", "phantom", "phantom"]
    assert (result.count("overlay"), result.count("phantom")) == (2, 2)


def test_overlays_are_never_missed_and_an_overlay_without_times_covers_the_video():
    result = outcome(TRUTH, overlays=(Overlay("NEWS 24"),))
    assert all(c.matched for c in result.cues) and result.count("overlay") == 0
    anytime = outcome([*TRUTH, (s(9), s(9.5), "NEWS 24")], overlays=(Overlay("NEWS 24"),))
    assert anytime.preds[-1].kind == "overlay"


def test_a_prediction_matching_a_truth_cue_stays_matched_even_if_it_reads_like_an_overlay():
    result = outcome(TRUTH, overlays=(Overlay("PLATFORM 9"),))
    assert [p.kind for p in result.preds] == ["matched"] * 4


def test_per_cue_outcomes_keep_exact_edits_and_boundary_errors():
    pred = [shifted(TRUTH[0], 1, -2), shifted(TRUTH[1], text="Wait"), shifted(TRUTH[3], 0, 0, "PLATFORM9")]
    result = outcome(pred)
    c = result.cues
    assert (c[0].matched, c[0].exact, c[0].edits, c[0].start_error, c[0].end_error) == (True, True, 0, 1, -2)
    assert (c[1].exact, c[1].edits, c[1].chars) == (False, 1, 5)
    assert (c[2].matched, c[2].edits, c[2].start_error, c[2].pred) == (False, 2, None, None)
    assert (c[3].exact, c[3].edits) == (False, 1)


# --- columns ----------------------------------------------------------------------------------------------------


def test_stats_count_exact_cer_missed_and_boundaries_of_both_ends():
    pred = [shifted(TRUTH[0], 1, -2), shifted(TRUTH[1], text="Wait"), shifted(TRUTH[3], 3, 0), (s(6), s(7), "Boo")]
    st = stats([video("v", outcome(pred, calls=6, seconds=3.0), decode_s=1.5)], "ours")
    assert st.cues == 4 and st.videos == 1
    assert st.exact == pytest.approx(2 / 4)  # the first and the last; "Wait" is not exact, "Hm" is missed
    chars = len("The station is closed today") + 5 + 2 + len("PLATFORM 9")
    assert st.cer == pytest.approx((0 + 1 + 2 + 0) / chars)
    assert (st.missed, st.missed_long, st.long_cues, st.missed_short, st.short_cues) == (1, 0, 2, 0, 1)
    # boundaries: +1 -2 | 0 0 | +3 0  -> within 0: 3/6, within 1: 4/6, within 2: 5/6
    assert st.within == pytest.approx((3 / 6, 4 / 6, 5 / 6))
    assert (st.phantom, st.overlay, st.split) == (1, 0, 0)
    assert st.calls_per_cue == pytest.approx(6 / 4) and st.ratio == pytest.approx(2.0)


def test_the_ratio_is_the_median_over_videos_and_calls_per_cue_pool_the_videos():
    videos = [video(f"v{k}", outcome(TRUTH, calls=calls, seconds=secs), decode_s=1.0)
              for k, (calls, secs) in enumerate([(4, 1.0), (8, 2.0), (12, 9.0)])]  # fmt: skip
    st = stats(videos, "ours")
    assert st.ratio == pytest.approx(2.0) and st.calls_per_cue == pytest.approx(24 / 12)
    untimed = stats([video("u", outcome(TRUTH, seconds=None))], "ours")
    assert untimed.ratio is None


def test_missed_by_length_counts_only_cues_of_that_length():
    st = stats([video("v", outcome([]))], "ours")
    assert (st.missed, st.missed_long, st.long_cues, st.missed_short, st.short_cues) == (4, 2, 2, 1, 1)
    assert st.exact == 0.0 and st.cer == 1.0 and st.within is None


def test_per_video_rows_have_phantoms_and_per_cue_rows_leave_them_out():
    ours = outcome([*TRUTH, (s(6), s(7), "Boo")])
    rows = category_rows([video("a", ours), video("b", ours, categories={"codec": "vp9"})])
    by_label = {r.label: r for r in rows}
    assert [r.label for r in rows if r.category == "codec"] == ["codec=h264", "codec=vp9"]
    assert by_label["codec=h264"].ours.phantom == 1 and by_label["codec=h264"].ours.cues == 4
    assert by_label["tracks=2"].ours.videos == 1
    per_cue = by_label["size=<20"]
    assert per_cue.ours.cues == 2
    assert per_cue.ours.phantom is per_cue.ours.calls_per_cue is per_cue.ours.ratio is None
    assert [r.value for r in rows if r.category == "length"] == ["1-2 frames", "3 frames-0.5 s", "1-3 s", ">=3 s"]
    assert [r.value for r in rows if r.category == "style"] == ["outline 0", "outline >0", "box"]
    line = next(t for t in table_lines(rows) if t.startswith("size=<20"))
    assert line.split()[6] == "-"  # phantom column


def test_values_of_resolution_and_fps_sort_by_their_meaning():
    cats = [{"resolution": r, "fps_label": f} for r, f in [("1080p", "29.97"), ("360p", "vfr"), ("720p", "120")]]
    rows = category_rows([video(f"v{k}", outcome(TRUTH), categories=c) for k, c in enumerate(cats)])
    assert [r.value for r in rows if r.category == "resolution"] == ["360p", "720p", "1080p"]
    assert [r.value for r in rows if r.category == "fps_label"] == ["29.97", "120", "vfr"]


# --- naive beside us --------------------------------------------------------------------------------------------


def naive_corpus():
    """Ours misses the 1-frame cue and reads one phantom; naive reads everything but one inexact text."""
    ours = outcome([TRUTH[0], TRUTH[1], TRUTH[3], (s(6), s(7), "Boo")], calls=4)
    naive = outcome([TRUTH[0], TRUTH[1], TRUTH[2], shifted(TRUTH[3], 0, 0, "PLATF0RM 9")], calls=30, seconds=8.0)
    return [video("a", ours, naive)]


def test_naive_columns_stand_beside_ours():
    videos = naive_corpus()
    total = totals(videos)
    assert total.naive is not None and (total.naive.missed, total.naive.phantom) == (0, 0)
    assert total.naive.exact == pytest.approx(3 / 4) and total.ours.exact == pytest.approx(3 / 4)
    header, first = table_lines([total])[:2]
    assert header.split()[:5] == ["row", "cues", "exact", "CER", "missed"]
    assert first.split()[:5] == ["all", "4", "0.75|0.75", "0.045", "1|0"]  # CER: "Hm" missed, 2 of 44 characters
    assert "calls/cue 1.00|7.50" in video_line(videos[0])
    assert any(line.split()[:3] == ["phantom", "(of", "truth"] and "1/4 (25.0%)" in line and "0/4 (0.0%)" in line
               for line in totals_lines(total, videos))  # fmt: skip


def test_rows_where_we_are_worse_than_naive_name_the_columns():
    rows = category_rows(naive_corpus())
    worse = {row.label: cols for row, cols in worse_than_naive(rows)}
    assert worse["codec=h264"] == ("missed", "phantom")
    assert worse["length=1-2 frames"] == ("exact", "missed")
    assert "length=>=3 s" not in worse  # naive misread it: we are better there
    assert "size=>=45" not in worse
    assert worse_than_naive(category_rows([video("a", outcome(TRUTH))])) == []  # no naive: nothing to compare


def test_the_json_report_holds_totals_rows_and_missed_and_phantom_cues_with_times():
    data = json.loads(json.dumps(report_json(naive_corpus())))
    assert data["totals"]["ours"]["missed"] == 1 and data["totals"]["naive"]["missed"] == 0
    assert {"row": "codec=h264", "columns": ["missed", "phantom"]} in data["worse_than_naive"]
    (v,) = data["videos"]
    assert v["ours"]["missed"] == [{"start": 4.0, "end": 4.04, "text": "Hm", "frames": 1,
                                    "categories": v["truth"][2]["categories"]}]  # fmt: skip
    assert v["ours"]["phantom"] == [{"start": 6.0, "end": 7.0, "text": "Boo"}]
    assert [p["kind"] for p in v["naive"]["preds"]] == ["matched"] * 4
    assert v["summary"]["ours"]["phantom"] == 1


def test_an_outcome_per_truth_cue_is_required():
    with pytest.raises(ValueError, match="one outcome per truth cue"):
        VideoOutcome("v", {}, truth()[:2], 1.0, outcome(TRUTH))


# --- the script ---------------------------------------------------------------------------------------------------


def test_each_corpus_video_is_read_in_its_own_language_unless_the_run_names_one():
    spec = importlib.util.spec_from_file_location("flowocr_eval_script", ROOT / "scripts" / "eval.py")
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # dataclasses look their module up by name
    spec.loader.exec_module(script)
    meta = {"categories": {"lang": "es"}}
    assert script.video_lang(meta, []) == "es"
    assert script.video_lang(meta, ["--lang", "en"]) is None and script.video_lang(meta, ["--lang=en"]) is None
    assert script.video_lang({"categories": {}}, []) is None and script.video_lang({}, ["--fps", "3"]) is None


def test_eval_corpus_refuses_a_folder_without_corpus_json(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval.py"), "corpus", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "not a corpus folder" in done.stderr
    (tmp_path / "corpus.json").write_text(json.dumps({"seed": 1, "count": 1, "videos": ["a"]}))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval.py"), "corpus", str(tmp_path),
                           "--only", "b"], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "lacks: b" in done.stderr
