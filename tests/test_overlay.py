"""Overlays (flowocr.cues.overlay): the rule on synthetic cues, and real runs over a generated video with a static
logo and over a real clip with a channel logo."""

from __future__ import annotations

import json
import shutil
import subprocess
from fractions import Fraction as F
from pathlib import Path

import pytest

from flowocr.cues.model import Cue
from flowocr.cues.overlay import covered, find_overlays, mark_overlays, written_cues
from flowocr.output.writers import read_srt
from tests.conftest import run_cli

LOGO_BOX = (540.0, 20.0, 620.0, 44.0)
BOTTOM = (200.0, 300.0, 440.0, 330.0)


def cue(start, end, text, box=BOTTOM, track=0) -> Cue:
    return Cue(F(start), F(end), text, box, 0.9, track)


def subtitles(n: int, every: float = 3.0, box=BOTTOM) -> list[Cue]:
    """``n`` different lines back to back at the bottom, ``every`` seconds each."""
    lines = ["Where were you?", "At the station.", "It rained all day.", "We missed the train.", "Never again.",
             "Tomorrow then.", "Good night.", "See you."]  # fmt: skip
    return [cue(F(k * every), F((k + 1) * every), lines[k % len(lines)], box) for k in range(n)]


def test_the_union_of_spans_counts_overlapping_time_once():
    assert covered([(F(0), F(2)), (F(1), F(3)), (F(5), F(6))]) == 4
    assert covered([]) == 0


def test_a_logo_read_two_ways_is_one_overlay_and_the_subtitles_stay():
    logo = [cue(0, F(19, 5), "TVB NEWS", LOGO_BOX, 1), cue(F(19, 5), 24, "TVB NEWE", (541.0, 21.0, 619.0, 45.0), 1)]
    cues = subtitles(8) + logo
    marked, overlays = mark_overlays(cues, F(24))
    assert len(overlays) == 1
    o = overlays[0]
    assert o.text == "TVB NEWE" and (o.start, o.end, o.covered) == (0, 24, 24)  # the reading on screen longest
    assert sorted(o.cues) == [8, 9]
    assert [c.kind for c in marked] == ["text"] * 8 + ["overlay"] * 2
    assert [c.text for c in written_cues(marked)] == [c.text for c in subtitles(8)]
    assert written_cues(marked, keep_overlays=True) == marked


def test_a_part_of_a_logo_read_alone_is_the_logos_but_other_text_in_its_box_is_not():
    logo = cue(F(1), 24, "TVB NEWS", LOGO_BOX, 1)
    piece = cue(0, F(1), "NEWS", (583.0, 21.0, 619.0, 43.0), 1)  # the right half of the box, read on the first frame
    marked, overlays = mark_overlays(subtitles(8) + [logo, piece], F(24))
    assert [sorted(o.cues) for o in overlays] == [[8, 9]] and overlays[0].text == "TVB NEWS"
    assert (overlays[0].start, overlays[0].end, overlays[0].covered) == (0, 24, 24)
    assert [c.text for c in written_cues(marked)] == [c.text for c in subtitles(8)]
    unlike = cue(0, F(1), "EXIT", (583.0, 21.0, 619.0, 43.0), 1)  # other text there: kept
    beside = cue(0, F(1), "NEWS", (583.0, 50.0, 619.0, 72.0), 1)  # the logo's letters outside its box: kept
    later = cue(F(30), F(31), "NEWS", (583.0, 21.0, 619.0, 43.0), 1)  # long after it: kept
    for other in (unlike, beside, later):
        marked, _ = mark_overlays(subtitles(8) + [logo, other], F(32))
        assert other in written_cues(marked), other


def test_a_long_title_with_no_other_text_coming_and_going_is_text():
    assert find_overlays([cue(0, 30, "Chapter One", LOGO_BOX)], F(30)) == []
    # ... and with one subtitle under it, still: one change of other text is not text that comes and goes
    assert find_overlays([cue(0, 30, "Chapter One", LOGO_BOX), cue(5, 8, "Hello.")], F(30)) == []


def test_text_on_screen_for_less_than_half_the_video_is_not_an_overlay():
    long_line = cue(0, 14, "A ten-second sign over the door", LOGO_BOX, 1)
    assert find_overlays(subtitles(10) + [long_line], F(30)) == []
    longer = cue(0, 16, "A ten-second sign over the door", LOGO_BOX, 1)
    assert len(find_overlays(subtitles(10) + [longer], F(30))) == 1


def test_in_a_short_clip_only_text_on_screen_nearly_all_of_it_is_an_overlay():
    # a 6.4 s sign in a 9.3 s clip is more than half of it, but no longer than a subtitle can be: text
    sign = cue(F(9, 10), F(73, 10), "Épilogue", LOGO_BOX, 1)
    short = [cue(F(11, 10), F(42, 10), "Déjà l'été."), cue(F(49, 10), F(59, 10), "Un café ?"), cue(7, 9, "Il pleut.")]
    assert find_overlays(short + [sign], F(93, 10)) == []
    logo = cue(0, F(93, 10), "CH7", LOGO_BOX, 1)  # from the first frame to the last: a logo
    assert len(find_overlays(short + [logo], F(93, 10))) == 1


def test_a_sign_that_changes_in_one_place_is_text():
    signs = [cue(k * 6, (k + 1) * 6, text, LOGO_BOX, 1) for k, text in
             enumerate(["Exit", "Platform 4", "Closed today", "Welcome", "Tickets"])]  # fmt: skip
    assert find_overlays(subtitles(10) + signs, F(30)) == []


def test_subtitles_at_one_place_are_never_an_overlay_however_long_together():
    # every line at the same box for the whole video: the texts differ, so no place covers a long share
    assert find_overlays(subtitles(10), F(30)) == []


def test_a_repeated_line_in_one_place_for_most_of_the_video_joins_across_a_short_gap_only():
    # the same text back on screen after a gap longer than `near` is compared again only through a chain
    far = [cue(0, 8, "TVB NEWS", LOGO_BOX, 1), cue(20, 30, "TVB NEWS", LOGO_BOX, 1)]
    assert find_overlays(subtitles(10) + far, F(30)) == []
    near = [cue(0, 8, "TVB NEWS", LOGO_BOX, 1), cue(12, 30, "TVB NEWS", LOGO_BOX, 1)]
    assert len(find_overlays(subtitles(10) + near, F(30))) == 1


# --- real runs ----------------------------------------------------------------------------------------------------

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
LINES = ["Where were you", "At the station", "It rained all day", "We missed the train"]


@pytest.fixture(scope="module")
def logo_video(tmp_path_factory) -> Path:
    """8 s, 640x360, 25 fps: a static "CH7 NEWS" logo top right on every frame, four 2 s lines at the bottom."""
    if shutil.which("ffmpeg") is None or not Path(FONT).exists():
        pytest.skip("ffmpeg or the DejaVu font is not installed")
    path = tmp_path_factory.mktemp("logo") / "logo.mp4"
    draws = [f"drawtext=fontfile={FONT}:text='CH7 NEWS':x=w-tw-20:y=18:fontsize=26:fontcolor=white:borderw=2"]
    for k, line in enumerate(LINES):
        draws.append(f"drawtext=fontfile={FONT}:text='{line}':x=(w-tw)/2:y=h-60:fontsize=30:fontcolor=white:"
                     f"borderw=2:enable='between(t,{2 * k},{2 * k + 2 - 0.001})'")  # fmt: skip
    background = "gradients=size=640x360:rate=25:duration=8:speed=0.02"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", background,
                    "-vf", ",".join(draws), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-y", str(path)],
                   check=True)  # fmt: skip
    return path


def test_a_static_logo_is_kept_out_of_the_subtitles_and_kept_in_the_report_and_jsonl(logo_video, tmp_path):
    done = run_cli("run", str(logo_video), "-o", str(tmp_path), "-q")
    assert done.returncode == 0, done.stderr
    texts = [e.text for e in read_srt(tmp_path / "logo.srt")]
    assert texts == LINES, texts
    report = json.loads((tmp_path / "logo.report.json").read_text())
    assert [o["text"] for o in report["overlays"]] == ["CH7 NEWS"] and report["cues"] == len(LINES)
    last = json.loads((tmp_path / "logo.frames.jsonl").read_text().splitlines()[-1])
    assert last["kind"] == "overlay" and last["text"] == "CH7 NEWS" and last["box"][0] > 320
    assert "CH7" not in (tmp_path / "logo.vtt").read_text() + (tmp_path / "logo.txt").read_text()


def test_keep_overlays_writes_the_logo_as_a_cue(logo_video, tmp_path):
    done = run_cli("run", str(logo_video), "-o", str(tmp_path), "-q", "--keep-overlays", "--formats", "srt,json")
    assert done.returncode == 0, done.stderr
    texts = [e.text for e in read_srt(tmp_path / "logo.srt")]
    assert "CH7 NEWS" in texts and all(line in texts for line in LINES), texts
    assert json.loads((tmp_path / "logo.report.json").read_text())["cues"] == len(LINES) + 1


TEST_A = Path(__file__).resolve().parent.parent.parent / "shared" / "videos" / "rapidvideocr_test_a.mp4"


@pytest.mark.slow
@pytest.mark.skipif(not TEST_A.exists(), reason="../shared/videos/rapidvideocr_test_a.mp4 is absent")
def test_the_channel_logo_of_a_real_clip_is_an_overlay_and_every_subtitle_line_is_found(tmp_path):
    done = run_cli("run", str(TEST_A), "-o", str(tmp_path), "-q", "--formats", "srt,json")
    assert done.returncode == 0, done.stderr
    texts = [e.text for e in read_srt(tmp_path / "rapidvideocr_test_a.srt")]
    assert not [t for t in texts if "视频" in t], texts  # the logo reads "…看视频小蔡"
    # the clip's four subtitle lines (checked by eye against the video; the exhaustive reference has them too)
    assert len(texts) == 4 and texts[0].startswith("耶稣也留不住他") and texts[-1].startswith("这些片段中"), texts
    overlays = json.loads((tmp_path / "rapidvideocr_test_a.report.json").read_text())["overlays"]
    assert len(overlays) == 1 and "视频" in overlays[0]["text"] and overlays[0]["box"][0] > 900, overlays
