"""A slice of the random evaluation corpus (DESIGN §13), read by flowocr and scored in `make test`.

Eight quick videos of seed 7 (`scripts/make_corpus.py --seed 7 --count 8 --quick`: 10-15 s, at most 720p, every
category drawn at random) are generated once and cached outside the repository
(``$FLOWOCR_CORPUS_CACHE``, default ``~/.cache/flowocr/corpus``); `scripts/eval.py corpus` reads them with
`flowocr run` and scores them against their frame-exact truth. The thresholds are what the reader reached on this
slice when it was written, less a margin for one cue: a change that loses cues, reads worse or places boundaries
off the frame fails here. The goals themselves are judged on a seed never tuned on (README, "Reading quality").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEED, COUNT = 7, 8
# Measured on this slice when the reader was last changed (2026-12-06, seventh session, README "Reading quality";
# 37 cues, 64 boundaries): no cue of >= 0.5 s missed, no phantom, no reading of video 007's corner logo written as a
# cue, exact 0.784, boundaries within one frame 0.922, 2.08 OCR calls per cue (before a read recognised only new
# boxes: exact 0.811, within one frame 0.906, 2.70 calls, 3 split pieces instead of 2: video 001's misread
# 'Twenty-eight ffifty.' was read again and split off, now its line is kept, one cue misread and none split; 2026-12-05:
# within one frame 0.891, 2.54 calls per cue; 2026-12-04: 0.806, 3.54; 5.22 before one text state a window was read
# between samples). The thresholds allowed about one cue (or two boundaries) worse, and 0.3 calls per cue more,
# when they were set (exact now lies at the threshold's edge; calls were 3.0 until 2026-12-06).
MAX_PHANTOM = 1
MIN_EXACT = 0.78
MIN_WITHIN_1 = 0.86
MAX_CALLS_PER_CUE = 2.4

# The corpus draws real footage from ../shared/videos when present: without it, seed 7 is another corpus, which the
# thresholds below were not measured on.
SHARED = ROOT.parent / "shared" / "videos"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed"),
              pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/videos (the footage) is absent")]  # fmt: skip


def corpus_dir() -> Path:
    """Outside the repository and outside the per-session XDG_CACHE_HOME of conftest: made once per machine."""
    base = os.environ.get("FLOWOCR_CORPUS_CACHE") or str(Path.home() / ".cache" / "flowocr" / "corpus")
    return Path(base) / f"seed{SEED}-quick-{COUNT}"  # with ../shared footage


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    folder = corpus_dir()
    argv = [sys.executable, str(ROOT / "scripts" / "make_corpus.py"), "--seed", str(SEED), "--count", str(COUNT),
            "--quick", "--jobs", "2", str(folder)]  # fmt: skip
    made = subprocess.run(argv, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    out = tmp_path_factory.mktemp("slice") / "score.json"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval.py"), "corpus", str(folder), "--json",
                           str(out)], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def test_every_video_of_the_slice_is_read_completely(scored):
    assert len(scored["videos"]) == COUNT and not scored["not_scored"]
    assert all(v["ours"]["complete"] for v in scored["videos"]), [v["name"] for v in scored["videos"]]


def test_no_cue_of_half_a_second_or_more_is_missed_and_few_phantoms(scored):
    ours = scored["totals"]["ours"]
    assert ours["missed_long"] == 0, ours
    assert ours["phantom"] <= MAX_PHANTOM, ours


def test_the_slices_corner_logo_is_an_overlay_not_a_cue(scored):
    logos = [v for v in scored["videos"] if v["categories"].get("logo") == "yes"]
    assert logos, "the slice has a video with a logo (seed 7: 007)"
    assert scored["totals"]["ours"]["overlay"] == 0, scored["totals"]["ours"]  # no reading of it in the subtitles


def test_lines_are_read_exactly_and_boundaries_land_on_their_frame(scored):
    ours = scored["totals"]["ours"]
    assert ours["exact"] >= MIN_EXACT, ours
    assert ours["within"][1] >= MIN_WITHIN_1, ours


def test_ocr_calls_per_cue_stay_bounded(scored):
    assert scored["totals"]["ours"]["calls_per_cue"] <= MAX_CALLS_PER_CUE, scored["totals"]["ours"]
