"""The aux stream and the change detector (DESIGN §6–7): windows, windowed == whole, TCP failures, frame timing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import FIXTURES, child_processes, marked_env, processes_marked, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from flowocr.aux.client import AuxError
from flowocr.aux.detector import RECEPTIVE_FIELD, detect
from flowocr.aux.windows import next_window, slice_new
from flowocr.decode.lane import AuxSpec, decode_all
from flowocr.ocr.strokes import Strokes
from flowocr.ocr.types import TextLine
from flowocr.pipeline import RunOptions, VideoRun
from flowocr.probe import probe, scan_index
from flowocr.read.pixel import ChangeTest, measure

# --- windows: the exact vectors of the issue ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((1, 0, False), None), ((2, 0, False), (0, 0, 2)), ((6, 2, False), None), ((7, 2, False), (0, 2, 7)),
        ((12, 7, False), (4, 7, 12)), ((20, 12, True), (9, 12, 17)), ((20, 17, True), (14, 17, 20)),
        ((20, 20, True), None), ((1, 0, True), (0, 0, 1)),
    ],
)  # fmt: skip
def test_next_window_vectors_initial_2_chunk_5_ctx_3(args, expected):
    assert next_window(*args, initial=2, chunk=5, left_ctx=3) == expected


def test_next_window_vectors_initial_0_chunk_6_ctx_10():
    assert next_window(6, 0, False, initial=0, chunk=6, left_ctx=10) == (0, 0, 6)
    assert next_window(12, 6, False, initial=0, chunk=6, left_ctx=10) == (0, 6, 12)


def test_slice_new_vectors():
    items = [f"s{i}" for i in range(16)]
    assert slice_new(items, (4, 7, 12), 2) == [f"s{i}" for i in range(6, 16)]
    assert slice_new([0, 1, 2, 3], (0, 0, 2), 2) == [0, 1, 2, 3]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=40), st.integers(0, 6), st.integers(1, 8), st.integers(0, 5))
def test_windows_tile_the_stream_under_any_arrival_pattern(arrivals, initial, chunk, left_ctx):
    available = emitted = 0
    tiles = []
    for k, n in enumerate(arrivals):
        available += n
        finished = k == len(arrivals) - 1
        while (w := next_window(available, emitted, finished, initial=initial, chunk=chunk, left_ctx=left_ctx)):
            ctx, new_start, new_end = w
            assert ctx == max(0, new_start - left_ctx) and new_start == emitted and new_end > new_start
            tiles.append((new_start, new_end))
            emitted = new_end
    assert emitted == available
    assert [a for a, _ in tiles] == ([0] + [b for _, b in tiles[:-1]] if tiles else [])


@pytest.fixture(scope="module")
def aux_frames():
    info = probe(str(FIXTURES / "h264_bframes_2997.mp4"))
    index = scan_index(info)
    return [(f.index, f.image) for f in decode_all(info, index, [], aux=AuxSpec()) if f.stream == "aux"]


def windowed(frames, left_ctx: int):
    out = []
    emitted = 0
    while (w := next_window(len(frames), emitted, True, initial=3, chunk=7, left_ctx=left_ctx)):
        out += slice_new(detect(frames[w[0] : w[2]]), w, 1)
        emitted = w[2]
    return out


def test_windowed_detection_equals_whole_stream_detection_with_enough_left_context(aux_frames):
    assert windowed(aux_frames, RECEPTIVE_FIELD) == detect(aux_frames)
    assert windowed(aux_frames, RECEPTIVE_FIELD + 4) == detect(aux_frames)


def test_a_detector_fed_in_parts_equals_whole_stream_detection(aux_frames):
    from flowocr.aux.detector import ChangeDetector

    for frames in (aux_frames, held_frames([2, 3], text_from=30)):  # a held picture looks furthest back
        whole = detect(frames)
        for sizes in ((1,), (3, 7), (16,), (2, 1, 5)):
            detector, out, at, k = ChangeDetector(), [], 0, 0
            while at < len(frames):
                size = sizes[k % len(sizes)]
                out += detector.feed(frames[at : at + size])
                at, k = at + size, k + 1
            assert out == whole, sizes


def test_a_too_short_left_context_leaves_a_seam(aux_frames):
    whole = detect(aux_frames)
    short = windowed(aux_frames, 0)
    seams = [i for i, (a, b) in enumerate(zip(short, whole)) if a != b]
    window_starts = {0, 3} | set(range(3, len(aux_frames), 7))
    assert seams and set(seams) <= window_starts


# --- the run with the detector process -------------------------------------------------------------------------


def test_cues_are_frame_exact_and_a_cue_between_two_samples_is_found(tmp_path):
    video = FIXTURES / "h264_bframes_2997.mp4"
    result = run_cli("run", str(video), "-o", str(tmp_path), "--quiet")
    assert result.returncode == 0, result.stderr
    score = json.loads(subprocess.run([sys.executable, "scripts/eval.py", str(video), str(video.with_suffix(".srt")),
                                       "--pred", str(tmp_path / "h264_bframes_2997.srt"), "--json"],
                                      capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert score["missed"] == 0 and score["within_1"] == 1.0, score
    report = json.loads((tmp_path / "h264_bframes_2997.report.json").read_text())
    assert report["timing_accuracy"] == "frame" and report["aux"]["extra_frames"] >= 1
    assert "ffmpeg" not in child_processes()


def test_no_aux_runs_on_the_sample_grid(tmp_path):
    result = run_cli("run", str(FIXTURES / "vfr.mkv"), "-o", str(tmp_path), "--quiet", "--no-aux")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "vfr.report.json").read_text())
    assert report["timing_accuracy"] == "sample" and report["aux"] is None


def test_a_detector_started_on_its_own_serves_a_run(tmp_path):
    server = subprocess.Popen([sys.executable, "-m", "flowocr", "aux-serve", "--listen", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        address = server.stdout.readline().strip().removeprefix("listening on ")
        for _ in range(2):  # it serves one run after another
            result = run_cli("run", str(FIXTURES / "av1.mkv"), "-o", str(tmp_path), "--quiet", "--aux-connect", address)
            assert result.returncode == 0, result.stderr
            assert json.loads((tmp_path / "av1.report.json").read_text())["aux"]["detector"] == address
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_batch_shares_one_detector_and_replaces_it_when_it_died(tmp_path):
    from flowocr.cli.commands import _batch_detector

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.mp4", "b.mp4"):
        (folder / name).write_bytes((FIXTURES / "demo.mp4").read_bytes())
    env, mark = marked_env()
    result = run_cli("run", str(folder), "-o", str(tmp_path / "out"), "--quiet", env=env)
    assert result.returncode == 0, result.stderr
    detectors = {json.loads((tmp_path / "out" / f"{n}.report.json").read_text())["aux"]["detector"] for n in "ab"}
    assert len(detectors) == 1  # one process served both videos
    assert (tmp_path / "out" / "a.srt").read_text() == (tmp_path / "out" / "b.srt").read_text()
    assert processes_marked(mark) == []  # the detector stopped with the batch

    first = _batch_detector(None)
    try:
        assert _batch_detector(first) is first
        first.proc.kill()
        first.proc.wait()
        second = _batch_detector(first)
        assert second is not first and second.alive and second.address != first.address
        second.proc.stdin.close()  # what happens when flowocr dies: the detector ends with it
        assert second.proc.wait(timeout=10) == 0
    finally:
        for detector in (first, locals().get("second")):
            if detector is not None:
                detector.stop()


def test_no_detector_at_the_address_is_one_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = run_cli("run", str(FIXTURES / "av1.mkv"), "-o", str(tmp_path), "--aux-connect", f"127.0.0.1:{port}")
    assert result.returncode != 0
    assert "cannot connect to the change detector" in result.stderr and "Traceback" not in result.stderr


def test_a_detector_that_closes_the_socket_stops_the_run(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def rude_peer():
            conn, _ = server.accept()
            conn.recv(1000)
            conn.close()

        threading.Thread(target=rude_peer, daemon=True).start()
        run = VideoRun(str(FIXTURES / "demo.mp4"), RunOptions(out_dir=str(tmp_path), aux_connect=f"127.0.0.1:{port}"))
        with pytest.raises(AuxError, match="closed the connection|cannot write|lost the change detector"):
            list(run.cues())
    assert run.report["complete"] is False and "change detector" in run.report["error"]
    assert not (tmp_path / "demo.srt").exists()
    assert "ffmpeg" not in child_processes()


def test_the_detector_process_killed_mid_run_stops_the_run_with_no_process_left(tmp_path, monkeypatch):
    from flowocr.aux.client import AuxLink

    run = VideoRun(str(FIXTURES / "hevc_opengop.mkv"), RunOptions(out_dir=str(tmp_path), fps=5))
    send = AuxLink.send

    def send_and_kill_at_frame_5(link, index, pts, image):
        if index == 5:  # the detector is killed for real while the aux stream is still flowing
            run.detector.proc.kill()
            run.detector.proc.wait()
        return send(link, index, pts, image)

    monkeypatch.setattr(AuxLink, "send", send_and_kill_at_frame_5)
    with pytest.raises(AuxError, match="closed the connection|cannot write|lost the change detector"):
        for _ in run.cues():
            pass
    assert run.report["complete"] is False
    assert run.detector.proc.poll() is not None
    assert "ffmpeg" not in child_processes() and "ffprobe" not in child_processes()


def test_frames_go_out_in_parts_without_joining_and_arrive_whole():
    """send_parts hands the header and the pixels to the kernel as they are; big buffers go out in pieces."""
    from flowocr.aux import protocol

    left, right = socket.socketpair()
    pixels = np.arange(3 * 1024 * 1024, dtype=np.uint32).view(np.uint8).reshape(-1, 4096)  # 12 MB
    header = protocol.pack_frame(7, 700, 4096, pixels.shape[0])
    sender = threading.Thread(target=protocol.send_parts, args=(left, [header, pixels]))
    sender.start()
    index, pts, width, height, data = protocol.read_frame(right)
    sender.join()
    left.close()
    right.close()
    assert (index, pts, width, height) == (7, 700, 4096, pixels.shape[0])
    assert bytes(data) == pixels.tobytes()


# --- reuse after a detector spike -----------------------------------------------------------------------------------


def _map_with_text(stroke_pixels: int) -> tuple[Strokes, tuple[TextLine, ...]]:
    """A 40 x 100 stroke map (scale 1) whose text box (x 10-60, y 10-20) holds ``stroke_pixels`` stroke pixels."""
    mask = np.zeros((40, 100), bool)
    mask[12, 12 : 12 + stroke_pixels] = True
    line = TextLine("text", 0.99, ((10.0, 10.0), (60.0, 10.0), (60.0, 20.0), (10.0, 20.0)))
    return Strokes(mask, 1.0), (line,)


def test_a_spike_is_read_unless_the_pixel_test_sees_the_text_it_would_vouch_for():
    test = ChangeTest()
    faint, faint_lines = _map_with_text(test.inside_min - 3)  # a subtitle the stroke map barely shows
    clear, clear_lines = _map_with_text(40)
    empty = Strokes(np.zeros((40, 100), bool), 1.0)
    def unchanged(now, ref, lines, *, spiked):
        return test.unchanged(measure(now, ref, lines, (0, 0)), spiked=spiked)

    # nothing moved: reused without a spike; with one, only text the test can see is vouched for
    assert unchanged(faint, faint, faint_lines, spiked=False)
    assert not unchanged(faint, faint, faint_lines, spiked=True)
    assert unchanged(clear, clear, clear_lines, spiked=True)
    assert unchanged(empty, empty, (), spiked=False)
    assert not unchanged(empty, empty, (), spiked=True)  # an empty area cannot vouch for new text
    # the clear text gone: changed, with or without a spike
    assert not unchanged(empty, clear, clear_lines, spiked=False)
    assert not unchanged(empty, clear, clear_lines, spiked=True)


def held_frames(holds: list[int], text_from: int) -> list[tuple[int, np.ndarray]]:
    """Aux frames of a blocky random picture held for ``holds`` frames per picture in turn (a picture on twos,
    threes), with bars of bright text from frame ``text_from`` on, over a dark strip of it (rows 72-88)."""
    rng = np.random.default_rng(5)
    frames, k = [], 0
    while len(frames) < 60:
        picture = _blocks(rng)
        for _ in range(holds[k % len(holds)]):
            frames.append((len(frames), _picture(picture, text=len(frames) >= text_from)))
        k += 1
    return frames[:60]


def _blocks(rng) -> np.ndarray:
    """A blocky random picture, 96 x 320 aux pixels."""
    return np.kron(rng.integers(30, 140, (12, 40)), np.ones((8, 8))).astype(np.uint8)


def _picture(picture: np.ndarray, *, text: bool) -> np.ndarray:
    """``picture`` with its rows 72-88 a dark strip, with bright bars in it when ``text``."""
    image = picture.copy()
    image[72:88] = 20
    if text:
        image[76:84, 44:276:4] = 230  # glyph-like bars
    return image


@pytest.mark.parametrize("holds", [[2], [3], [2, 3]])
def test_a_held_picture_keeps_its_stable_edges_steady_and_a_line_over_it_steps_them_up(holds):
    """A picture on twos or threes: each frame's stable edges are those still since before the picture last moved,
    so they do not swing with the picture's own edges from frame to frame (which hid every text step), and the
    text's edges show as a step once it came."""
    from flowocr.aux.detector import STABLE

    frames = held_frames(holds, text_from=30)
    stable = np.array([c.grid()[STABLE].sum() for c in detect(frames)])
    before, after = stable[8:30], stable[34:]  # held from the second move on
    # compared with the frame before alone, a repeated frame would count every edge of the picture (5634 here)
    assert before.max() < 1.5 * np.median(before)
    assert after.min() > before.max() + 1000  # the line's edges, still while the picture moves under them
    assert windowed(frames, RECEPTIVE_FIELD) == detect(frames)


def test_a_still_picture_under_a_line_that_comes_is_no_held_one():
    """On a still picture the line's edges are stable from the frame after it came (the change of a line is no
    move of the picture)."""
    from flowocr.aux.detector import STABLE

    picture = _blocks(np.random.default_rng(2))
    frames = [(k, _picture(picture, text=k >= 6)) for k in range(12)]
    stable = [int(c.grid()[STABLE].sum()) for c in detect(frames)]
    assert stable[7] - stable[6] >= 400 and stable[8:] == [stable[7]] * 4  # the 464 bar pixels: still from frame 7


def test_a_line_that_comes_on_a_repeat_of_a_held_picture_is_stable_from_the_frame_after():
    """On threes (moves at 30, 33, ...), a line that comes on the repeat at 31 has all its edges stable at 32, as on a
    still picture (its strokes changed since the move, so they are no part of the moved picture), not from the next
    move on. (At 31 its outline's dark pixels count already: they became edges without changing.)"""
    from flowocr.aux.detector import STABLE

    frames = held_frames([3], text_from=31)
    stable = np.array([c.grid()[STABLE].sum() for c in detect(frames)])
    assert stable[31] > stable[8:31].max() + 800 and stable[32] >= stable[31] + 400  # the 464 bar pixels


def test_one_cut_on_a_still_picture_is_no_hold():
    """A cut, then a still picture: the frames after the cut compare with the frame before them (a hold needs two
    moves on its cadence), so all of the new picture's edges are stable from the frame after the cut."""
    from flowocr.aux.detector import STABLE

    rng = np.random.default_rng(3)
    first, second = _blocks(rng), _blocks(rng)
    frames = [(k, _picture(first if k < 10 else second, text=k >= 12)) for k in range(16)]
    stable = [int(c.grid()[STABLE].sum()) for c in detect(frames)]
    assert stable[11] > 0.9 * stable[9] and stable[14] > stable[11] + 400
