"""scripts/make_corpus.py: frame-exact timing and truth (pure), deterministic draws, and one real generation."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import subprocess
import sys
from fractions import Fraction

import pytest
from conftest import ROOT

from flowocr.cues.score import frame_at_or_after


def _corpus_script():
    spec = importlib.util.spec_from_file_location("flowocr_make_corpus", ROOT / "scripts" / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


mc = _corpus_script()

# A fixed environment, so the pure tests do not depend on this machine's fonts or footage.
ENV = mc.Environment(
    fonts={"zh": ("Noto Sans CJK SC", "Noto Serif CJK SC"), "ja": ("Noto Sans CJK JP",),
           "en": ("DejaVu Sans", "Noto Sans CJK SC"), "latin": ("DejaVu Sans", "DejaVu Serif")},
    footage=mc.FOOTAGE[:2],
)

VFR = mc.Timeline(Fraction(60), 600, (mc.KeepRule(120, 1, (0,)), mc.KeepRule(300, 3, (0, 1)),
                                      mc.KeepRule(450, 5, (0,)), mc.KeepRule(600, 2, (0,))))


def assert_every_frame_is_a_boundary(timeline):
    """For every frame b: an event starting at boundary_cs(b) is first shown on b, and the SRT value written
    for b selects b among the frame times (frame_at_or_after, as the scorer does)."""
    ms, times = timeline.ms, timeline.times
    for b in range(1, timeline.frames):
        cs = mc.boundary_cs(ms, b)
        assert mc.shown_frames(ms, cs, mc.boundary_cs(ms, timeline.frames)) == (b, timeline.frames)
        assert 10 * cs <= ms[b] and 10 * cs > ms[b - 1]
        assert frame_at_or_after(times, Fraction(mc.srt_ms(timeline, b), 1000)) == b


def test_libass_clock_truncates_the_float_product_as_vf_subtitles_does():
    tb = Fraction(1001, 30000)
    assert [mc.libass_ms(n, tb) for n in (0, 1, 2, 3, 30)] == [0, 33, 66, 100, 1001]
    assert all(mc.libass_ms(n, tb) == int(float(n) * (1001 / 30000) * 1000) for n in range(5000))
    assert mc.libass_ms(24, Fraction(1, 24)) == 1000


def test_centisecond_boundaries_switch_on_the_exact_frame_at_23_976_fps():
    assert_every_frame_is_a_boundary(mc.Timeline(Fraction(24000, 1001), 2000))


def test_centisecond_boundaries_switch_on_the_exact_frame_at_59_94_fps():
    assert_every_frame_is_a_boundary(mc.Timeline(Fraction(60000, 1001), 3000))


def test_centisecond_boundaries_switch_on_the_exact_frame_of_a_vfr_timeline():
    assert {b - a for a, b in zip(VFR.pts, VFR.pts[1:])} == {1, 2, 5}  # source frames between kept ones
    assert_every_frame_is_a_boundary(VFR)


def test_select_expression_keeps_the_frames_of_the_timeline():
    expr = mc.select_expr(VFR.keep).replace("\\,", ",").replace("if(", "when(")
    env = {"when": lambda c, a, b: a if c else b, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
           "mod": lambda a, b: a % b}
    kept = [n for n in range(VFR.source_frames) if eval(expr, env, {"n": n})]  # noqa: S307 - our own expression
    assert tuple(kept) == VFR.pts


def test_frames_closer_than_ten_milliseconds_have_no_centisecond_between_them():
    with pytest.raises(ValueError, match="less than 10 ms"):
        mc.boundary_cs([0, 8, 16], 1)


def test_a_fade_counts_from_the_frame_at_half_its_fade_in_to_the_frame_past_half_its_fade_out():
    tl = mc.Timeline(Fraction(25), 100)  # frames every 40 ms
    ms = tl.ms
    start, end = mc.boundary_cs(ms, 10), mc.boundary_cs(ms, 50)  # 400 ms and 2000 ms
    assert (start, end) == (40, 200)
    # fade in 200 ms: half opaque from 500 ms, the first frame there is 520 ms (frame 13);
    # fade out 200 ms: half opaque up to 1900 ms, the last frame there is 1880 ms (frame 47).
    assert mc.fade_truth(ms, start, end, 200, 200) == (13, 48)
    # 160 ms: exactly half opaque at 480 ms (frame 12) and at 1920 ms (frame 48): both count.
    assert mc.fade_truth(ms, start, end, 160, 160) == (12, 49)
    assert mc.fade_truth(ms, start, end, 0, 0) == mc.shown_frames(ms, start, end) == (10, 50)
    assert mc.fade_truth(ms, start, end, 0, 300) == (10, 47)


def test_cue_truth_of_a_faded_cue_keeps_the_event_times_and_writes_frame_selecting_srt_times():
    tl = mc.Timeline(Fraction(30000, 1001), 600)
    plan = mc.draw_video(3, 0, ENV, mc.DrawOptions(quick=True))
    cue = dataclasses.replace(plan.cues[0], event_start=30, event_end=120, fade_in_ms=300, fade_out_ms=240)
    truth = mc.cue_truth(cue, tl)
    assert (truth.event_start_cs, truth.event_end_cs) == (mc.boundary_cs(tl.ms, 30), mc.boundary_cs(tl.ms, 120))
    assert truth.start_frame == frame_at_or_after(tl.ms, 10 * truth.event_start_cs + 150)
    assert frame_at_or_after(tl.times, Fraction(truth.start_ms, 1000)) == truth.start_frame
    assert frame_at_or_after(tl.times, Fraction(truth.end_ms, 1000)) == truth.end_frame
    assert 30 < truth.start_frame < truth.end_frame < 120


def test_draws_depend_only_on_seed_and_index():
    opts = mc.DrawOptions()
    first = mc.draw_video(11, 5, ENV, opts)
    for k in range(5):
        mc.draw_video(11, k, ENV, opts)  # other draws in between change nothing
    again = mc.draw_video(11, 5, ENV, opts)
    assert again == first and mc.params_hash(again) == mc.params_hash(first)
    assert mc.ass_document(again) == mc.ass_document(first)
    assert mc.draw_video(12, 5, ENV, opts) != first and mc.draw_video(11, 6, ENV, opts) != first


def test_a_longer_count_starts_with_the_videos_of_a_shorter_one():
    opts = mc.DrawOptions(quick=True)
    names = mc.corpus_names(4, 9, ENV, opts)
    assert mc.corpus_names(4, 8, ENV, opts) == names[:8]
    assert len(set(names)) == 9 and all(mc.NAME_RE.match(n) for n in names)


def test_drawn_plans_are_consistent_and_respect_their_bounds():
    for k in range(40):
        opts = mc.DrawOptions(max_height=720) if k % 2 else mc.DrawOptions()
        plan = mc.draw_video(2, k, ENV, opts)
        assert plan.height <= (opts.max_height or 2160)
        tl = plan.timeline
        assert plan.cues, plan.name
        dialogue = [c for c in plan.cues if c.track == "dialogue"]
        assert all(a.event_end <= b.event_start for a, b in zip(dialogue, dialogue[1:])), plan.name
        for cue in plan.cues:
            truth = mc.cue_truth(cue, tl)
            assert cue.event_start <= truth.start_frame < truth.end_frame <= cue.event_end < tl.frames
            assert "{" not in cue.text and "\\" not in cue.text and cue.text.strip()
            assert 12 <= cue.style.size <= 60 * max(1, plan.height / 1080) * 1.2
        doc = mc.json_document(plan, "h", False)
        assert doc["frames"] == tl.frames and len(doc["cues"]) == len(plan.cues)
        assert mc.srt_document(plan).count(" --> ") == len(plan.cues)


def test_a_video_names_the_lang_its_user_would_give():
    def cues(lang, *texts):
        return [{"lang": lang, "text": t} for t in texts]

    assert mc.run_lang(cues("latin", "¿Dónde está mi teléfono?", "Tengo diecisiete.")) == "es"
    assert mc.run_lang(cues("latin", "Tu veux un café ?", "Épilogue")) == "fr"
    assert mc.run_lang(cues("latin", "Dziękuję.", "Tak.")) == "pl"
    assert mc.run_lang(cues("ja", "元気だった？")) == "ja"
    assert mc.run_lang(cues("zh", "小心！") + cues("en", "OK.")) == "ch"
    assert mc.run_lang(cues("ja", "え？") + cues("en", "Exit")) == "ch"
    langs = {mc.json_document(mc.draw_video(2, k, ENV, mc.DrawOptions()), "h", False)["categories"]["lang"]
             for k in range(40)}
    assert {"ch", "ja"} < langs and langs <= {"ch", "ja", *mc.LATIN}, langs


def test_quick_draws_are_short_and_small():
    for k in range(20):
        plan = mc.draw_video(5, k, ENV, mc.DrawOptions(quick=True))
        assert plan.height <= 720 and 9.9 <= float(plan.timeline.duration) <= 15.1


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
def test_two_quick_videos_are_generated_verified_and_then_cached(tmp_path):
    argv = [sys.executable, str(ROOT / "scripts" / "make_corpus.py"), "--seed", "1", "--count", "2", "--quick",
            "--max-height", "480", "--jobs", "2", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    listing = json.loads((tmp_path / "corpus.json").read_text())
    assert listing["generator"] == "make_corpus" and listing["seed"] == 1 and len(listing["videos"]) == 2
    for name in listing["videos"]:
        meta = json.loads((tmp_path / f"{name}.json").read_text())
        assert meta["verified"] and (tmp_path / meta["video"]).is_file()
        srt = (tmp_path / meta["srt"]).read_text()
        assert srt.count(" --> ") == len(meta["cues"]) > 0
        assert all(c["bbox"][2] < meta["categories"]["width"] for c in meta["cues"])
    assert not list(tmp_path.glob(".*part*"))
    videos = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir() if p.suffix in {".mp4", ".mkv", ".webm", ".avi"}}
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stderr.count(": cached in") == 2, again.stderr
    assert {name: (tmp_path / name).stat().st_mtime_ns for name in videos} == videos  # not encoded again
