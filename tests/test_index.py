"""Frame index and time grid: pure functions, property-tested against a naive reading of DESIGN §2."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowocr.probe.index import FrameIndex, Packet, build_index, keyframe_at_or_before, sample_grid


def naive_grid(pts: list[int], end_pts: int, tb: Fraction, fps: Fraction) -> list[int]:
    """Every sample time, one by one, exactly as DESIGN §2 words it."""
    chosen: list[int] = []
    k = 0
    while True:
        t = pts[0] * tb + Fraction(k) / fps
        if t >= end_pts * tb:
            return chosen
        on_screen = max(i for i, p in enumerate(pts) if p * tb <= t)
        if not chosen or chosen[-1] != on_screen:
            chosen.append(on_screen)
        k += 1


intervals = st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=60)
time_bases = st.sampled_from([Fraction(1, 1000), Fraction(1, 90000), Fraction(1, 25), Fraction(1001, 30000)])
rates = st.sampled_from([Fraction(2), Fraction(1, 3), Fraction(30000, 1001), Fraction(7, 2), Fraction(60)])


def make_index(start: int, gaps: list[int], last: int, tb: Fraction) -> FrameIndex:
    pts = [start]
    for gap in gaps[:-1]:
        pts.append(pts[-1] + gap)
    return FrameIndex(pts=tuple(pts), time_base=tb, keyframes=(0,), end_pts=pts[-1] + last)


@settings(max_examples=300, deadline=None)
@given(st.integers(-5000, 5000), intervals, st.integers(1, 400), time_bases, rates)
def test_grid_equals_the_naive_definition_for_any_timing(start, gaps, last, tb, fps):
    index = make_index(start, gaps, last, tb)
    assert sample_grid(index, fps) == naive_grid(list(index.pts), index.end_pts, tb, fps)


@settings(max_examples=200, deadline=None)
@given(intervals, st.integers(1, 400), time_bases, rates, st.integers(-10**6, 10**6))
def test_grid_does_not_depend_on_the_start_time(gaps, last, tb, fps, shift):
    a = make_index(0, gaps, last, tb)
    b = make_index(shift, gaps, last, tb)
    assert sample_grid(a, fps) == sample_grid(b, fps)


@settings(max_examples=200, deadline=None)
@given(st.integers(-5000, 5000), intervals, st.integers(1, 400), time_bases, rates)
def test_grid_is_increasing_starts_at_the_first_frame_and_never_repeats(start, gaps, last, tb, fps):
    grid = sample_grid(make_index(start, gaps, last, tb), fps)
    assert grid[0] == 0
    assert all(b > a for a, b in zip(grid, grid[1:]))


def test_grid_of_a_29_97_fps_video_at_2_fps_picks_the_frame_on_screen():
    # 30000/1001 fps in a 1/30000 time base: frame i at 1001 * i.
    index = FrameIndex(pts=tuple(1001 * i for i in range(90)), time_base=Fraction(1, 30000),
                       keyframes=(0,), end_pts=1001 * 90)  # fmt: skip
    # t = 0.5 s = 15000 ticks: frame 14 is at 14014, frame 15 at 15015 > 15000.
    assert sample_grid(index, Fraction(2))[:3] == [0, 14, 29]


def test_grid_at_a_rate_above_the_frame_rate_samples_every_frame_once():
    index = FrameIndex(pts=(0, 40, 80, 120), time_base=Fraction(1, 1000), keyframes=(0,), end_pts=160)
    assert sample_grid(index, Fraction(1000)) == [0, 1, 2, 3]


def test_grid_rejects_a_non_positive_rate():
    index = FrameIndex(pts=(0,), time_base=Fraction(1, 1000), keyframes=(0,), end_pts=40)
    with pytest.raises(ValueError):
        sample_grid(index, Fraction(0))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-10**9, 10**9), min_size=1, max_size=80, unique=True), st.randoms())
def test_index_is_presentation_order_and_maps_pts_both_ways(pts_values, rnd):
    packets = [Packet(pts=p, dts=None, duration=1, key=(i % 5 == 0), discard=False) for i, p in enumerate(pts_values)]
    rnd.shuffle(packets)
    index = build_index(packets, Fraction(1, 1000), Fraction(25))
    assert list(index.pts) == sorted(pts_values)
    for i, p in enumerate(index.pts):
        assert index.index_of(p) == i
        assert index.pts_of(i) == p
        assert index.on_screen_at(p) == i
    assert index.index_of(max(pts_values) + 1) is None
    assert index.on_screen_at(min(pts_values) - 1) is None


def test_index_skips_discarded_packets_and_keeps_keyframes_by_presentation_position():
    packets = [
        Packet(pts=0, dts=-2, duration=1, key=True, discard=True),
        Packet(pts=3, dts=-1, duration=1, key=True, discard=False),
        Packet(pts=1, dts=0, duration=1, key=False, discard=False),
        Packet(pts=2, dts=1, duration=1, key=False, discard=False),
        Packet(pts=5, dts=2, duration=1, key=True, discard=False),
        Packet(pts=4, dts=3, duration=1, key=False, discard=False),
    ]
    index = build_index(packets, Fraction(1, 25), Fraction(25))
    assert index.pts == (1, 2, 3, 4, 5)
    assert index.keyframes == (2, 4)
    assert keyframe_at_or_before(index, 3) == 2
    assert keyframe_at_or_before(index, 1) == 0
    assert index.end_pts == 6


def test_index_end_uses_the_last_interval_when_the_last_packet_has_no_duration():
    packets = [Packet(pts=p, dts=p, duration=None, key=p == 0, discard=False) for p in (0, 40, 100)]
    assert build_index(packets, Fraction(1, 1000), Fraction(25)).end_pts == 160


def test_index_rejects_an_empty_stream_and_duplicate_pts():
    with pytest.raises(ValueError, match="no frame"):
        build_index([], Fraction(1, 1000), Fraction(25))
    dup = [Packet(pts=5, dts=5, duration=1, key=True, discard=False)] * 2
    with pytest.raises(ValueError, match="share"):
        build_index(dup, Fraction(1, 1000), Fraction(25))
