"""The review page (``<stem>.review.html``): its data and flags as pure functions, the crops kept while reading,
and the page itself in a real headless browser (Debian's chromium and chromedriver, PyPI's selenium; those tests
skip, saying which is missing, where one is)."""

from __future__ import annotations

import base64
import importlib.util
import json
import math
import re
import shutil
import time
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import FIXTURES, page_data, run_cli

from flowocr.cues.model import Cue
from flowocr.cues.overlay import written_cues
from flowocr.ocr.types import TextLine
from flowocr.output.review import (
    CROP_MAX_WIDTH,
    LOW_SCORE,
    CropKeeper,
    IndexEntry,
    cue_flags,
    index_html,
    review_html,
    video_src,
)
from flowocr.output.writers import parse_srt, srt_text, vtt_text

NTSC = Fraction(1001, 30000)  # one frame at 30000/1001 fps
DEMO_FRAME = Fraction(1, 25)  # fixtures/demo.mp4: 25 fps from 0


def cue(start, end, text="Hello", *, score=0.95, track=0, frames=None, box=(100.0, 300.0, 540.0, 330.0)) -> Cue:
    lo, hi = frames or (-1, -1)
    return Cue(Fraction(start), Fraction(end), text, box, score, track, lo, hi)


# --- pure: flags, data, page ------------------------------------------------------------------------------------


def test_flags_name_low_confidence_very_short_split_and_overlay_cues():
    f = NTSC
    cues = [
        cue(0, 2, "Fine", frames=(0, 60)),
        cue(3, 5, "Unsure", score=LOW_SCORE - 0.01, frames=(90, 150)),
        cue(6, Fraction(64, 10), "Blink", frames=(180, 192)),
        cue(10, 12, "We read subtitles", frames=(300, 360)),
        cue(12 + 2 * f, 14, "We read subtitle", frames=(362, 420)),  # two frames after its similar neighbour
        cue(14 + 3 * f, 16, "We read subtitles", frames=(423, 480)),  # three: not split from it
        cue(12, 14, "We read subtitles", track=1, frames=(360, 420)),  # another track is not a neighbour
        Cue(Fraction(20), Fraction(22), "EXIT", (0.0, 0.0, 50.0, 20.0), 0.99, 0, 600, 660, kind="overlay"),
    ]
    assert cue_flags(cues, f) == [(), ("low",), ("short",), ("split",), ("split",), (), (), ("overlay",)]


def test_split_neighbours_without_frame_indices_are_measured_in_frame_durations():
    cues = [cue(0, 1, "Same text"), cue(1 + 2 * NTSC, 2, "Same text"), cue(2 + 3 * NTSC, 3, "Same text")]
    assert cue_flags(cues, NTSC) == [("split",), ("split",), ()]


def test_the_page_embeds_the_writers_milliseconds_in_the_writers_order():
    cues = [
        cue(16 * NTSC, 40 * NTSC, "second on its track 0"),  # 0.53387 s: floored to 533, not rounded to 534
        cue(16 * NTSC, Fraction(16) * NTSC + Fraction(1, 5000), "a tenth of a millisecond", track=1),
        cue(Fraction(1, 10), 1, "first"),
    ]
    page = review_html(cues, title="t.mp4", video="t.mp4", frame_s=NTSC)
    data = page_data(page)
    got = [(c["n"], c["start_ms"], c["end_ms"], c["text"], c["track"]) for c in data["cues"]]
    assert got == [(1, 100, 1000, "first", 0), (2, 533, 1334, "second on its track 0", 0),
                   (3, 533, 534, "a tenth of a millisecond", 1)]  # fmt: skip
    assert [e.start for e in parse_srt(srt_text(cues))] == [Fraction(m, 1000) for m in (100, 533, 533)]
    assert data["frame_s"] == pytest.approx(float(NTSC)) and data["cues"][1]["start_s"] == float(16 * NTSC)
    assert data["cues"][0]["img"] is None  # no crop given: the page shows a placeholder


def test_the_page_is_self_contained_and_cue_text_cannot_end_its_script():
    page = review_html([cue(0, 1, "a </script><script>alert(1)</script> <!-- b")], title="x", video="x.mp4",
                       frame_s=NTSC)  # fmt: skip
    assert "http:" not in page and "https:" not in page and "//" not in re.sub(r"(?s)<script>.*?</script>", "", page)
    assert page.count("</script>") == 2  # the data's and the script's own ends only
    assert "flowocrReview" in page and "li.cue" in page  # review.js and review.css, inlined
    assert page_data(page)["cues"][0]["text"] == "a </script><script>alert(1)</script> <!-- b"


def test_video_src_is_relative_to_the_page_and_url_quoted(tmp_path):
    video = tmp_path / "in" / "my talk #1.mp4"
    assert video_src(video, tmp_path / "out" / "my talk #1.review.html") == "../in/my%20talk%20%231.mp4"
    assert video_src(video, tmp_path / "in" / "p.html") == "my%20talk%20%231.mp4"


def test_the_batch_index_links_each_page_relatively_with_its_cue_count():
    page = index_html([IndexEntry("in/a b.mp4", "a%20b.review.html", 6),
                       IndexEntry("in/c.mp4", None, None, "failed: in/c.mp4: no video stream")])  # fmt: skip
    assert '<a href="a%20b.review.html">in/a b.mp4</a></td><td class="n">6</td><td>complete' in page
    assert "<td>in/c.mp4</td><td class=\"n\"></td><td>failed: in/c.mp4: no video stream</td>" in page


def test_write_review_index_lists_the_batch_with_counts_from_the_reports(tmp_path):
    from flowocr.batch import write_review_index
    from flowocr.pipeline import RunOptions

    options = RunOptions(out_dir=str(tmp_path))
    (tmp_path / "a.review.html").write_text("page")
    (tmp_path / "a.report.json").write_text(json.dumps({"complete": True, "cues": 4}))
    path = write_review_index(["v/a.mp4", "v/b.mp4"], options, {"v/b.mp4": "v/b.mp4: broken"})
    assert path == tmp_path / "index.html"
    text = path.read_text()
    assert '<a href="a.review.html">v/a.mp4</a></td><td class="n">4</td>' in text and "failed: v/b.mp4: broken" in text


# --- crops kept while reading -----------------------------------------------------------------------------------


def _frame(width=1920, height=1080):
    import numpy as np

    image = np.zeros((height, width, 3), np.uint8)
    image[900:960, 400:1500] = 255  # a white "line of text"
    return image


def _line(x0, y0, x1, y1, text="line") -> TextLine:
    return TextLine(text, 0.9, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


def _size(jpeg: bytes) -> tuple[int, int]:
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    return image.shape[1], image.shape[0]


def test_a_cue_gets_the_crop_of_its_box_from_a_frame_read_inside_it():
    keeper = CropKeeper()
    keeper.offer(_frame(), (_line(400, 900, 1500, 960),))
    keeper.settle(10)
    inside = cue(0, 1, frames=(8, 20), box=(400.0, 900.0, 1500.0, 960.0))
    width, height = _size(keeper.crop(inside))
    assert width <= CROP_MAX_WIDTH and abs(width / height - 1112 / 72) < 1.5  # the box and its margin, scaled down
    assert keeper.crop(cue(0, 1, frames=(11, 20), box=inside.box)) is None  # frame 10 is outside [11, 20)


def test_reused_readings_take_no_crop_and_offers_pair_with_readings_in_order():
    keeper = CropKeeper()
    keeper.offer(_frame(), (_line(400, 900, 1500, 960),))
    keeper.offer(_frame(), ())  # a frame read empty: nothing to show
    keeper.settle(4)
    keeper.settle(6)
    box = (400.0, 900.0, 1500.0, 960.0)
    assert keeper.crop(cue(0, 1, frames=(4, 5), box=box)) is not None
    assert keeper.crop(cue(0, 1, frames=(5, 7), box=box)) is None
    assert keeper.crop(cue(0, 1, frames=(4, 5), box=(100.0, 100.0, 300.0, 150.0))) is None  # not on that crop


def test_crops_are_forgotten_before_the_oldest_open_cue_and_bounded_in_bytes():
    keeper = CropKeeper()
    for index in range(5):
        keeper.offer(_frame(), (_line(400, 900, 1500, 960),))
        keeper.settle(index)
    keeper.forget_before(3)
    box = (400.0, 900.0, 1500.0, 960.0)
    assert keeper.crop(cue(0, 1, frames=(0, 3), box=box)) is None
    assert keeper.crop(cue(0, 1, frames=(3, 4), box=box)) is not None
    one = len(keeper._kept[3].jpeg)
    small = CropKeeper(budget_bytes=2 * one)
    for index in range(4):
        small.offer(_frame(), (_line(400, 900, 1500, 960),))
        small.settle(index)
    assert sorted(small._kept) == [2, 3] and small.dropped == 2


# --- a real run --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """fixtures/demo.mp4 through ``flowocr run`` once for this module, default formats; its output folder."""
    out = tmp_path_factory.mktemp("review") / "out"
    done = run_cli("run", str(FIXTURES / "demo.mp4"), "-o", str(out), "--progress", "plain")
    assert done.returncode == 0, done.stderr
    (out / "stderr.txt").write_text(done.stderr)
    return out


def test_a_run_writes_its_review_page_with_a_crop_per_cue_and_says_where(demo):
    page = (demo / "demo.review.html").read_text()
    data = page_data(page)
    srt = parse_srt((demo / "demo.srt").read_text())
    assert [c["text"] for c in data["cues"]] == [e.text for e in srt] and len(srt) == 6
    assert all(c["img"] and c["img"].startswith("data:image/jpeg;base64,") for c in data["cues"])
    assert all(_size(base64.b64decode(c["img"].split(",", 1)[1]))[0] <= CROP_MAX_WIDTH for c in data["cues"])
    assert Path(demo / data["video"]).resolve() == (FIXTURES / "demo.mp4").resolve()
    assert f"review page: {demo / 'demo.review.html'}" in (demo / "stderr.txt").read_text()
    assert json.loads((demo / "demo.report.json").read_text())["review_page"] == str(demo / "demo.review.html")


# --- in the browser ----------------------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
_missing = [what for what, there in (("selenium (pip install selenium)", importlib.util.find_spec("selenium")),
                                     ("chromium (apt-get install chromium)", Path(CHROMIUM).is_file()),
                                     ("chromedriver (apt-get install chromium-driver)", Path(CHROMEDRIVER).is_file()))
            if not there]  # fmt: skip
needs_browser = pytest.mark.skipif(bool(_missing), reason=f"no headless browser: {', '.join(_missing)} missing")


class Browser:
    """Headless chromium driven by selenium: console and network logs on, downloads into a folder of choice."""

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                    "--autoplay-policy=no-user-gesture-required", "--mute-audio"):  # fmt: skip
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)

    def open(self, page: Path) -> None:
        self.driver.get(page.resolve().as_uri())
        self.driver.find_element("css selector", "li.cue")

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def download(self, button: str, folder: Path) -> bytes:
        """Click ``button`` (its id) and return the one file it downloads into the empty ``folder``."""
        folder.mkdir(parents=True)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})
        self.driver.find_element("id", button).click()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            files = [p for p in folder.iterdir() if not p.name.endswith(".crdownload")]
            if files:
                time.sleep(0.1)  # the rename ends the download
                return files[0].read_bytes()
            time.sleep(0.05)
        raise AssertionError(f"{button}: nothing downloaded into {folder}")

    def close(self) -> None:
        self.driver.quit()


@pytest.fixture(scope="module")
def browser():
    if _missing:
        pytest.skip(f"no headless browser: {', '.join(_missing)} missing")
    b = Browser()
    yield b
    b.close()


@pytest.fixture
def demo_page(browser, demo) -> Browser:
    browser.driver.get_log("browser")  # what earlier tests logged is theirs
    browser.driver.get_log("performance")
    browser.open(demo / "demo.review.html")
    return browser


@needs_browser
def test_the_page_loads_from_a_file_path_with_no_console_error_and_no_network_request(demo_page):
    driver = demo_page.driver
    demo_page.js("return document.querySelector('video').play().catch(() => null)")  # the video loads too
    deadline = time.monotonic() + 5
    while demo_page.js("return document.querySelector('video').readyState") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    # The video loaded (from beside the page: a relative file:// address; media loads are not in the network log).
    loaded = demo_page.js("const v = document.querySelector('video'); return [v.error, v.readyState >= 2]")
    assert loaded == [None, True]
    assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    urls = [json.loads(e["message"])["message"]["params"]["request"]["url"] for e in driver.get_log("performance")
            if json.loads(e["message"])["message"]["method"] == "Network.requestWillBeSent"]  # fmt: skip
    assert urls and all(u.split(":", 1)[0] in ("file", "data", "blob") for u in urls), urls


@needs_browser
def test_the_page_shows_one_entry_per_srt_cue(demo_page, demo):
    srt = parse_srt((demo / "demo.srt").read_text())
    shown = demo_page.js("return [...document.querySelectorAll('li.cue textarea')].map(t => t.value)")
    assert shown == [e.text for e in srt]


@needs_browser
def test_the_unedited_downloads_are_the_runs_srt_and_vtt_byte_for_byte(demo_page, demo, tmp_path):
    assert demo_page.download("download-srt", tmp_path / "srt") == (demo / "demo.srt").read_bytes()
    assert demo_page.download("download-vtt", tmp_path / "vtt") == (demo / "demo.vtt").read_bytes()


@needs_browser
def test_editing_one_cues_text_changes_exactly_that_cue_in_the_downloaded_srt(demo_page, demo, tmp_path):
    box = demo_page.driver.find_elements("css selector", "li.cue textarea")[2]
    box.clear()
    box.send_keys("Corrected line")
    got = parse_srt(demo_page.download("download-srt", tmp_path / "srt").decode("utf-8"))
    run = parse_srt((demo / "demo.srt").read_text())
    assert [(e.start, e.end) for e in got] == [(e.start, e.end) for e in run]
    assert [k for k, (a, b) in enumerate(zip(got, run)) if a.text != b.text] == [2] and got[2].text == "Corrected line"


@needs_browser
def test_clicking_a_cue_seeks_the_video_to_its_start_and_plays(demo_page, demo):
    start = parse_srt((demo / "demo.srt").read_text())[3].start
    demo_page.js("const v = document.querySelector('video'); window.seekedTo = null; v.addEventListener('seeking', "
                 "() => { if (window.seekedTo === null) window.seekedTo = v.currentTime; })")
    demo_page.driver.find_elements("css selector", "li.cue .crop")[3].click()
    deadline = time.monotonic() + 5
    while demo_page.js("return window.seekedTo") is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert abs(Fraction(demo_page.js("return window.seekedTo")) - start) <= DEMO_FRAME
    assert demo_page.js("return document.querySelector('li.cue.current').dataset.n") == "4"


@needs_browser
def test_a_cue_of_a_video_starting_late_seeks_to_its_start_on_the_players_clock(browser, tmp_path):
    # start_offset.mkv's first frame is at 7.5 s; Chromium's clock counts from the stream's zero for it.
    done = run_cli("run", str(FIXTURES / "start_offset.mkv"), "-o", str(tmp_path), "--quiet", "--formats", "srt,html")
    assert done.returncode == 0, done.stderr
    start = parse_srt((tmp_path / "start_offset.srt").read_text())[1].start
    browser.open(tmp_path / "start_offset.review.html")
    deadline = time.monotonic() + 5
    while browser.js("return document.querySelector('video').readyState") < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert browser.js("return flowocrReview.offset()") == 7.5
    browser.driver.find_elements("css selector", "li.cue .crop")[1].click()
    time_now = Fraction(browser.js("return document.querySelector('video').currentTime")) - Fraction(15, 2)
    assert start <= time_now <= start + Fraction(1, 2)  # seeked there, and playing


@needs_browser
def test_keys_move_between_cues_accept_them_and_step_a_start_by_one_frame(demo_page):
    from selenium.webdriver.common.keys import Keys

    body = demo_page.driver.find_element("tag name", "body")
    current = "return document.querySelector('li.cue.current').dataset.n"
    body.send_keys("j")
    body.send_keys("j")
    body.send_keys(Keys.ARROW_UP)
    assert demo_page.js(current) == "1"
    body.send_keys("a")  # accepts cue 1, goes on to cue 2
    assert demo_page.js(current) == "2"
    assert demo_page.js("return document.querySelector('li.cue[data-n=\"1\"]').classList.contains('reviewed')")
    before = demo_page.js("return window.flowocrReview.cues[1].startMs")
    body.send_keys("]")
    assert demo_page.js("return window.flowocrReview.cues[1].startMs") == before + 40  # one frame of 25 fps
    body.send_keys(Keys.ENTER)
    assert demo_page.js("return document.activeElement.matches('li.cue.current textarea')")


@needs_browser
def test_a_typed_time_is_taken_and_one_that_is_not_a_time_or_not_before_the_end_is_refused(demo_page):
    from selenium.webdriver.common.keys import Keys

    start = demo_page.driver.find_elements("css selector", "li.cue input.start")[0]
    for typed, shown in (("0:00:00.3", "00:00:00,300"), ("soon", "00:00:00,300"), ("00:00:02,480", "00:00:00,300")):
        start.send_keys(Keys.CONTROL, "a")
        start.send_keys(typed, Keys.TAB)
        assert start.get_attribute("value") == shown, typed
    srt = parse_srt(demo_page.js("return flowocrReview.srtText(flowocrReview.cues)"))
    assert srt[0].start == Fraction(3, 10) and srt[0].end == Fraction(248, 100)  # cue 1 ends at 2.480


@needs_browser
def test_the_pages_srt_and_vtt_writers_equal_flowocrs_on_awkward_text_and_times(browser, demo, tmp_path):
    odd = [
        "tab\tand  spaces\u3000\nsecond\r\nthird\rfourth",
        "  \u2028line sep\u2029para sep\x85nel\x0bvt\x0cff\x1cfs\x1dgs\x1eRS\x1fus-not-a-break",
        "a < b && c > d </c.yellow>",
        "\ufeffbom stays\u200b zero-width stays",
        "\n\n  blank lines  \n\n\nvanish\n",
    ]
    cues = [cue(k * 10 * NTSC + Fraction(1, 3), k * 10 * NTSC + 4, text, track=k % 2) for k, text in enumerate(odd)]
    cues += [cue(Fraction(3600 * 100 + 1, 7), Fraction(3600 * 100 + 2, 7) + Fraction(1, 10**6), "past 100 hours")]
    cues += [cue(Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**5), "tied start, other track", track=1)]
    page = tmp_path / "odd.review.html"
    page.write_text(review_html(cues, title="odd", video=video_src(FIXTURES / "demo.mp4", page), frame_s=NTSC))
    browser.open(page)
    assert browser.js("return flowocrReview.srtText(flowocrReview.cues)") == srt_text(cues)
    assert browser.js("return flowocrReview.vttText(flowocrReview.cues)") == vtt_text(cues)
    assert math.isclose(browser.js("return flowocrReview.cues.length"), len(cues))


@needs_browser
def test_an_overlays_cue_is_shown_flagged_and_left_out_of_the_downloads_as_the_writers_leave_it_out(browser, tmp_path):
    logo = Cue(Fraction(0), Fraction(30), "CH7 NEWS", (500.0, 10.0, 620.0, 40.0), 0.95, 1, kind="overlay")
    cues = [cue(1, 3, "First line"), logo, cue(4, 6, "Second line")]
    for keep in (False, True):
        page = tmp_path / f"logo{keep}.review.html"
        page.write_text(review_html(cues, title="logo", video=video_src(FIXTURES / "demo.mp4", page), frame_s=NTSC,
                                    keep_overlays=keep))  # fmt: skip
        browser.open(page)
        assert browser.js("return document.querySelectorAll('li.cue').length") == 3
        written = cues if keep else written_cues(cues)
        assert browser.js("return flowocrReview.srtText(flowocrReview.cues)") == srt_text(written)
        assert ("CH7 NEWS" in srt_text(written)) is keep


@needs_browser
def test_a_flag_filter_shows_only_the_cues_with_that_flag(browser, tmp_path):
    cues = [cue(0, 2, "Fine"), cue(3, 5, "Unsure", score=0.5), cue(6, Fraction(62, 10), "Blink", score=0.4)]
    page = tmp_path / "flags.review.html"
    page.write_text(review_html(cues, title="flags", video=video_src(FIXTURES / "demo.mp4", page), frame_s=NTSC))
    browser.open(page)
    visible = "return [...document.querySelectorAll('li.cue:not(.hidden)')].map(li => li.dataset.n)"
    browser.driver.find_element("css selector", "button[data-filter='low']").click()
    assert browser.js(visible) == ["2", "3"]
    browser.driver.find_element("css selector", "button[data-filter='short']").click()
    assert browser.js(visible) == ["3"]
    browser.driver.find_element("css selector", "button[data-filter='all']").click()
    assert browser.js(visible) == ["1", "2", "3"]


def test_progress_names_the_review_page_of_a_video_and_the_index_of_a_batch(capsys, tmp_path):
    from flowocr.cli.progress import JsonProgress, PlainProgress

    report = {"cues": 6, "complete": True, "ocr": {"calls": 7, "reused": 17}, "timing": {"total_s": 3.8},
              "review_page": "out/demo.review.html"}  # fmt: skip
    PlainProgress(1).finished("demo.mp4", report)
    PlainProgress(2).review_index(tmp_path / "index.html")
    err = capsys.readouterr().err
    assert "review page: out/demo.review.html" in err and f"review pages: {tmp_path / 'index.html'}" in err
    JsonProgress(1).finished("demo.mp4", report)
    JsonProgress(2).review_index(tmp_path / "index.html")
    done, index = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert done["event"] == "done" and done["review_page"] == "out/demo.review.html"
    assert index == {"event": "review_index", "path": str(tmp_path / "index.html")}
