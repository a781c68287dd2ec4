"""The single-lane frame source and `flowocr frames`, checked against ffmpeg's own framemd5 decode."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from fractions import Fraction

import cv2
import numpy as np
import pytest
from conftest import (
    CONCEALED,
    FAILS_CLEANLY,
    FIXTURES,
    child_processes,
    ffmpeg_framemd5,
    fixture_videos,
    needs_shared,
    reference_grid,
    run_cli,
    shared_videos,
)

from flowocr import ffmpeg
from flowocr.decode import AuxSpec, BlockDecoder
from flowocr.decode.lane import aux_filter, main_format_for
from flowocr.errors import DecodeError, ProcessFailed
from flowocr.plan import Block
from flowocr.probe import keyframe_at_or_before, probe, sample_grid, scan_index


def assert_frames_equal_reference(lines: list[dict], ref, fps: Fraction) -> None:
    grid = reference_grid(ref, fps)
    assert [line["index"] for line in lines] == grid
    for line in lines:
        frame = ref[line["index"]]
        assert line["md5"] == frame.md5, f"frame {line['index']}"
        assert abs(Fraction(line["time"]).limit_denominator(10**7) - frame.time) < Fraction(1, 10**6)


@pytest.mark.parametrize("fps", [Fraction(2), Fraction(7, 3)], ids=["2fps", "7/3fps"])
@pytest.mark.parametrize("video", fixture_videos(), ids=lambda p: p.name)
def test_frames_equal_ffmpeg_framemd5_grid_for_every_fixture(video, fps):
    result = run_cli("frames", str(video), "--fps", str(fps))
    assert result.returncode == 0, result.stderr
    assert_frames_equal_reference(result.json_lines(), ffmpeg_framemd5(video), fps)


@needs_shared
@pytest.mark.parametrize("video", shared_videos(), ids=lambda p: p.name)
def test_frames_equal_ffmpeg_framemd5_for_each_shared_clip(video):
    """A clip that is present decodes, or fails the way it is known to: a regression fails, it is never a skip."""
    result = run_cli("frames", str(video))
    if video.name in FAILS_CLEANLY:
        code, word = FAILS_CLEANLY[video.name]
        assert result.returncode == code and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert word in result.stderr and "Traceback" not in result.stderr, result.stderr
        return
    assert result.returncode == 0, result.stderr
    ref = ffmpeg_framemd5(video)
    lines = result.json_lines()
    if "absent from the source" in result.stderr:
        # Skip packets (e.g. TSCC screen captures): the source itself lacks some indexed frames, so index
        # positions differ from ffmpeg's frame count. Every delivered frame must still be ffmpeg's frame.
        by_time = {frame.time: frame.md5 for frame in ref}
        for line in lines:
            assert by_time[Fraction(line["time"]).limit_denominator(10**7)] == line["md5"]
        return
    if video.name in CONCEALED:
        lines = [{**line, "md5": ref[line["index"]].md5} for line in lines]  # pixels aside (see CONCEALED)
    assert_frames_equal_reference(lines, ref, Fraction(2))


def test_start_and_end_select_a_slice_of_the_same_grid():
    video = FIXTURES / "h264_bframes_2997.mp4"
    whole = run_cli("frames", str(video), "--fps", "3").json_lines()
    part = run_cli("frames", str(video), "--fps", "3", "--start", "2.5", "--end", "5").json_lines()
    assert part == [line for line in whole if 2.5 <= line["time"] < 5]
    assert part and part[0]["index"] > 0


def test_frames_writes_pngs_named_by_index(tmp_path):
    import cv2

    video = FIXTURES / "demo.mp4"
    lines = run_cli("frames", str(video), "--fps", "1", "-o", str(tmp_path)).json_lines()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{line['index']:06d}.png" for line in lines]
    image = cv2.imread(str(tmp_path / f"{lines[3]['index']:06d}.png"))
    assert hashlib.md5(image.tobytes()).hexdigest() == lines[3]["md5"]


@pytest.mark.parametrize("name", ["hevc_opengop.mkv", "h264_bframes_2997.mp4", "vfr.mkv", "start_offset.mkv"])
def test_a_block_decoded_from_a_keyframe_seek_equals_that_part_of_the_whole_file(name):
    video = FIXTURES / name
    info = probe(str(video))
    index = scan_index(info)
    every = list(range(len(index)))
    ref = ffmpeg_framemd5(video)
    assert len(ref) == len(index)
    for kf in index.keyframes[1:4]:
        hi = min(len(index), kf + 17)
        block = Block(number=1, lo=kf, hi=hi, seek=keyframe_at_or_before(index, kf))
        got = [(f.index, hashlib.md5(f.image.tobytes()).hexdigest()) for f in
               BlockDecoder(info, index, block, every).frames()]  # fmt: skip
        assert got == [(i, ref[i].md5) for i in range(kf, hi)]
        # A block that starts between keyframes decodes from the keyframe before it.
        if kf + 3 < hi:
            block = Block(number=1, lo=kf + 3, hi=hi, seek=kf)
            got = [f.index for f in BlockDecoder(info, index, block, every).frames()]
            assert got == list(range(kf + 3, hi))


def test_aux_filter_takes_the_luma_plane_only_where_there_is_one():
    info = probe(str(FIXTURES / "demo.mp4"))
    for pix_fmt in ("yuv420p", "yuvj420p", "yuv420p10le", "nv12", "p010le"):
        assert aux_filter(replace(info, pix_fmt=pix_fmt), 8, 6).startswith("extractplanes=y,"), pix_fmt
    for pix_fmt in ("rgb24", "bgr0", "pal8", "gbrp", "gray"):
        assert aux_filter(replace(info, pix_fmt=pix_fmt), 8, 6) == "scale=8:6:flags=area", pix_fmt


@pytest.mark.parametrize("name", ["demo.mp4", "vfr.mkv"])
def test_aux_stream_is_every_frame_scaled_grey_and_equals_ffmpeg(name):
    video = FIXTURES / name
    info = probe(str(video))
    index = scan_index(info)
    aux = AuxSpec(scale=0.35)
    w, h = aux.size(info)
    assert aux_filter(info, w, h) == f"extractplanes=y,scale={w}:{h}:flags=area"  # the luma plane, scaled
    ref = ffmpeg_framemd5(video, f"extractplanes=y,scale={w}:{h}:flags=area", pix_fmt="gray")
    grid = sample_grid(index, Fraction(2))
    frames = list(BlockDecoder(info, index, Block(0, 0, len(index), 0), grid, aux=aux).frames())
    aux_frames = [f for f in frames if f.stream == "aux"]
    assert [f.index for f in aux_frames] == list(range(len(index)))
    assert [hashlib.md5(f.image.tobytes()).hexdigest() for f in aux_frames] == [r.md5 for r in ref]
    assert aux_frames[0].image.shape == (h, w)
    assert [f.index for f in frames if f.stream == "main"] == grid


def test_aux_stream_of_a_text_area_is_cropped_before_scaling_and_capped_in_width():
    video = FIXTURES / "demo.mp4"
    info = probe(str(video))  # 640 x 360
    assert AuxSpec(scale=0.35).size(info) == (224, 126)
    assert AuxSpec(scale=0.35, max_width=320).size(info) == (224, 126)  # under the cap: the scale holds
    band = AuxSpec(scale=0.35, area=(0, 252, 640, 108), max_width=160)
    assert band.size(info) == (160, 27)  # 0.35 would give 224 px: capped, the scale is 0.25
    with pytest.raises(ValueError):
        AuxSpec(max_width=1)
    w, h = band.size(info)
    expected = f"extractplanes=y,crop=640:108:0:252,scale={w}:{h}:flags=area"
    assert aux_filter(info, w, h, band.area) == expected
    assert aux_filter(info, w, h, (0, 0, 640, 360)) == f"extractplanes=y,scale={w}:{h}:flags=area"  # whole frame
    index = scan_index(info)
    frames = [f for f in BlockDecoder(info, index, Block(0, 0, len(index), 0), [], aux=band).frames()]
    assert [hashlib.md5(f.data.tobytes()).hexdigest() for f in frames] == [
        r.md5 for r in ffmpeg_framemd5(video, expected, pix_fmt="gray")
    ]


def test_main_frames_as_i420_are_ffmpegs_own_planes_and_read_as_bgr_and_grey():
    video = FIXTURES / "demo.mp4"
    info = probe(str(video))
    assert main_format_for(info) == "yuv420p"
    assert main_format_for(replace(info, pix_fmt="yuv444p")) == "bgr24"  # would lose chroma: BGR from ffmpeg
    assert main_format_for(replace(info, pix_fmt="yuvj420p")) == "bgr24"  # full range: ffmpeg converts
    assert main_format_for(replace(info, color_range="pc")) == "bgr24"  # tagged full range: the same
    assert main_format_for(replace(info, width=641)) == "bgr24"  # I420 needs an even size
    index = scan_index(info)
    grid = sample_grid(index, Fraction(2))
    block = Block(0, 0, len(index), 0)
    planes = list(BlockDecoder(info, index, block, grid, main_format="yuv420p").frames())
    ref = ffmpeg_framemd5(video, pix_fmt="yuv420p")
    assert [f.index for f in planes] == grid
    assert [hashlib.md5(f.data.tobytes()).hexdigest() for f in planes] == [ref[i].md5 for i in grid]
    assert planes[0].nbytes == 640 * 360 * 3 // 2
    bgr = {f.index: f.image for f in BlockDecoder(info, index, block, grid).frames()}  # ffmpeg's own BGR
    for frame in planes:
        image = frame.image
        assert image.shape == (360, 640, 3) and image.dtype == np.uint8
        assert np.abs(image.astype(int) - bgr[frame.index]).mean() < 2  # another rounding, the same picture
        grey = frame.grey()
        diff = np.abs(grey.astype(int) - cv2.cvtColor(bgr[frame.index], cv2.COLOR_BGR2GRAY))
        assert np.percentile(diff, 99) <= 3, frame.index  # video range stretched to full range
        assert np.array_equal(frame.grey((10, 20, 30, 40)), grey[20:60, 10:40])
        # reduced while still video range, then stretched: the levels of reducing the stretched grey, give or take
        # the rounding of each (the stretch is 255/219)
        small = frame.grey((0, 0, 640, 360), size=(320, 180))
        reduced = cv2.resize(grey, (320, 180), interpolation=cv2.INTER_AREA)
        assert small.shape == (180, 320)
        off = np.abs(small.astype(int) - reduced)
        assert np.percentile(off, 99) <= 2 and off.mean() < 0.6, frame.index


def test_aux_every_third_frame_is_on_its_own_grid():
    info = probe(str(FIXTURES / "demo.mp4"))
    index = scan_index(info)
    block = Block(number=0, lo=10, hi=60, seek=keyframe_at_or_before(index, 10))
    frames = BlockDecoder(info, index, block, [], aux=AuxSpec(scale=0.2, every=3)).frames()
    assert [f.index for f in frames] == list(range(10, 60, 3))


def test_closing_early_leaves_no_process_behind():
    info = probe(str(FIXTURES / "demo.mp4"))
    index = scan_index(info)
    decoder = BlockDecoder(info, index, Block(0, 0, len(index), 0), list(range(len(index))), aux=AuxSpec())
    frames = decoder.frames()
    next(frames)
    next(frames)
    assert "ffmpeg" in child_processes()
    frames.close()
    assert ffmpeg.live_processes() == []
    assert "ffmpeg" not in child_processes()


def test_a_failing_ffmpeg_carries_its_exit_code_and_stderr_tail():
    info = probe(str(FIXTURES / "demo.mp4"))
    index = scan_index(info)
    decoder = BlockDecoder(info, index, Block(0, 0, len(index), 0), [0], hwaccel="no-such-hwaccel")
    with pytest.raises(ProcessFailed) as caught:
        list(decoder.frames())
    assert caught.value.returncode not in (0, None)
    assert "no-such-hwaccel" in caught.value.stderr_tail
    assert ffmpeg.live_processes() == []


def test_a_frame_the_source_has_but_the_lane_dropped_is_an_error():
    # Fault injection for real: this lane's ffmpeg is told not to output one grid frame.
    video = FIXTURES / "demo.mp4"
    info = probe(str(video))
    index = scan_index(info)
    grid = sample_grid(index, Fraction(2))
    decoder = BlockDecoder(info, index, Block(0, 0, len(index), 0), grid, inject_drop=[grid[5]])
    with pytest.raises(DecodeError, match=f"source has were not delivered \\(frames {grid[5]}\\)"):
        list(decoder.frames())
    assert decoder.stats.lost_main == [grid[5]] and decoder.stats.material_main == []
    relaxed = BlockDecoder(info, index, Block(0, 0, len(index), 0), grid, inject_drop=[grid[5]], strict=False)
    assert [f.index for f in relaxed.frames()] == grid[:5] + grid[6:]
    assert relaxed.stats.lost_main == [grid[5]]


def test_an_ffmpeg_killed_mid_block_is_an_error_not_a_short_block():
    import os
    import signal

    video = FIXTURES / "demo.mp4"
    info = probe(str(video))
    index = scan_index(info)
    decoder = BlockDecoder(info, index, Block(0, 0, len(index), 0), list(range(len(index))))
    frames = decoder.frames()
    next(frames)
    os.kill(decoder._proc.pid, signal.SIGKILL)  # noqa: SLF001 - fault injection
    with pytest.raises(ProcessFailed, match="code -9"):
        list(frames)
    assert ffmpeg.live_processes() == []


def test_only_grid_frames_cross_the_pipe_at_full_size():
    video = FIXTURES / "demo.mp4"
    info = probe(str(video))
    index = scan_index(info)
    grid = sample_grid(index, Fraction(1))
    decoder = BlockDecoder(info, index, Block(0, 0, len(index), 0), grid)
    assert [f.index for f in decoder.frames()] == grid
    assert decoder.stats.decoded_frames == len(index) > 10 * len(grid)
