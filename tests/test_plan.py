"""Block planning (pure) and the streamed index: property tests, no ffmpeg."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowocr.plan import Block, End, Keyframe, check_tiling, plan_blocks
from flowocr.probe.index import FrameIndex, Packet, build_index, grid_between, sample_grid
from flowocr.probe.live import IndexBuilder, LiveIndex, final_frames


@st.composite
def keyframe_streams(draw):
    """Frames at 25 fps with keyframes at random positions (frame 0 always a keyframe)."""
    frames = draw(st.integers(1, 3000))
    keys = sorted(set(draw(st.lists(st.integers(1, max(1, frames - 1)), max_size=60))) | {0})
    keys = [k for k in keys if k < frames]
    return frames, keys


def events(frames: int, keys: list[int], fps: int = 25):
    return [Keyframe(k, Fraction(k, fps)) for k in keys] + [End(frames, Fraction(frames, fps))]


block_secs = st.sampled_from([Fraction(1, 2), Fraction(2), Fraction(5), Fraction(20)])
first_secs = st.sampled_from([Fraction(0), Fraction(1, 5), Fraction(2)])


@settings(max_examples=400, deadline=None)
@given(keyframe_streams(), block_secs, first_secs)
def test_blocks_tile_the_stream_exactly_and_seek_to_keyframes(stream, block_sec, first_sec):
    frames, keys = stream
    blocks = list(check_tiling(plan_blocks(events(frames, keys), block_sec=block_sec, first_block_sec=first_sec)))
    assert blocks[0].lo == 0 and blocks[-1].hi == frames
    assert all(a.hi == b.lo for a, b in zip(blocks, blocks[1:]))
    assert [b.number for b in blocks] == list(range(len(blocks)))
    assert blocks[0].seek == 0
    for b in blocks[1:]:
        assert b.seek == b.lo and b.lo in keys


def plan_by_hand(frames: int, keys: list[int], block_sec: Fraction, first_sec: Fraction) -> list[tuple[int, int]]:
    """DESIGN §3 read plainly, over the whole list at once: greedy cuts, then the tail rule."""
    cuts = [0]
    target = first_sec if first_sec > 0 else block_sec
    for k in keys:
        if k > 0 and Fraction(k - cuts[-1], 25) >= target:
            cuts.append(k)
            target = block_sec
    pieces = [(a, b) for a, b in zip(cuts, cuts[1:] + [frames])]
    if len(pieces) > 1 and Fraction(pieces[-1][1] - pieces[-1][0], 25) < block_sec / 2:
        pieces[-2:] = [(pieces[-2][0], frames)]
    return pieces


@settings(max_examples=400, deadline=None)
@given(keyframe_streams(), block_secs, first_secs)
def test_streamed_plan_equals_the_plan_made_by_hand_over_the_whole_list(stream, block_sec, first_sec):
    frames, keys = stream
    blocks = list(plan_blocks(events(frames, keys), block_sec=block_sec, first_block_sec=first_sec))
    assert [(b.lo, b.hi) for b in blocks] == plan_by_hand(frames, keys, block_sec, first_sec)


def test_first_block_is_short_and_later_ones_long():
    keys = list(range(0, 1000, 25))  # a keyframe every second
    blocks = list(plan_blocks(events(1000, keys), block_sec=Fraction(10), first_block_sec=Fraction(2)))
    assert [(b.lo, b.hi) for b in blocks] == [(0, 50), (50, 300), (300, 550), (550, 800), (800, 1000)]


def test_a_remainder_under_half_a_block_joins_the_previous_block():
    keys = list(range(0, 1000, 25))
    blocks = list(plan_blocks(events(1090, keys), block_sec=Fraction(20), first_block_sec=Fraction(0)))
    # 0-500 (20 s), then 500-1000 (20 s) and a 3.6 s remainder: merged.
    assert [(b.lo, b.hi) for b in blocks] == [(0, 500), (500, 1090)]


def test_planning_is_streamed_a_block_is_yielded_before_the_end_event():
    seen = []

    def source():
        for k in range(0, 5000, 25):
            seen.append(k)
            yield Keyframe(k, Fraction(k, 25))
        seen.append("end")
        yield End(5000, Fraction(200))

    first = next(plan_blocks(source(), block_sec=Fraction(20), first_block_sec=Fraction(2)))
    assert (first.lo, first.hi) == (0, 50)
    assert "end" not in seen and max(seen) < 1000


def test_tiling_violations_are_caught_as_blocks_arrive():
    with pytest.raises(ValueError, match="gap"):
        list(check_tiling([Block(0, 0, 10, 0), Block(1, 11, 20, 11)]))
    with pytest.raises(ValueError, match="overlap"):
        list(check_tiling([Block(0, 0, 10, 0), Block(1, 9, 20, 9)]))


@st.composite
def decode_orders(draw):
    """A stream of B-frame GOPs: presentation pts, and packets in a valid decode order (pts >= dts)."""
    gops = draw(st.lists(st.integers(1, 12), min_size=1, max_size=15))
    reorder = draw(st.integers(0, 3))
    packets = []
    base = 0
    for size in gops:
        pts = list(range(base, base + size))
        order = [pts[0]] + sorted(pts[1:], key=lambda p: (p - pts[0] - 1) // (reorder + 1) * 10 - p % (reorder + 1))
        packets += [(p, i == 0) for i, p in enumerate(order)]
        base += size
    dts0 = -reorder
    out = []
    for n, (p, key) in enumerate(packets):
        dts = dts0 + n
        out.append(Packet(pts=p * 10, dts=min(dts * 10, p * 10), duration=10, key=key, discard=False))
    # dts must not decrease; clamp keeps it monotone only if pts allow it, else fall back to no dts.
    if any(b.dts < a.dts for a, b in zip(out, out[1:])):
        out = [Packet(p.pts, None, p.duration, p.key, p.discard) for p in out]
    return out


@settings(max_examples=300, deadline=None)
@given(decode_orders())
def test_streamed_index_equals_the_sorted_index_and_only_appends(packets):
    whole = build_index(packets, Fraction(1, 250), Fraction(25))
    streamed = list(final_frames(iter(packets)))
    assert tuple(f.pts for f in streamed) == whole.pts
    assert [f.index for f in streamed] == list(range(len(whole)))
    assert tuple(f.index for f in streamed if f.key) == whole.keyframes
    builder = IndexBuilder()
    for p in packets:
        builder.feed(p)
    builder.finish()
    assert builder.end_pts(Fraction(1, 250), Fraction(25)) == whole.end_pts


def test_a_packet_before_a_final_frame_is_refused():
    builder = IndexBuilder()
    builder.feed(Packet(pts=0, dts=0, duration=1, key=True, discard=False))
    builder.feed(Packet(pts=10, dts=5, duration=1, key=False, discard=False))
    assert [f.pts for f in builder.feed(Packet(pts=20, dts=15, duration=1, key=False, discard=False))] == [10]
    with pytest.raises(ValueError, match="already final"):
        builder.feed(Packet(pts=7, dts=16, duration=1, key=False, discard=False))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=2, max_size=80), st.integers(1, 300),
       st.sampled_from([Fraction(2), Fraction(30000, 1001), Fraction(1, 3)]), st.randoms())  # fmt: skip
def test_block_grids_join_into_the_whole_file_grid(gaps, last, fps, rnd):
    pts = [0]
    for g in gaps[:-1]:
        pts.append(pts[-1] + g)
    index = FrameIndex(tuple(pts), Fraction(1, 1000), (0,), pts[-1] + last)
    cuts = sorted(set(rnd.sample(range(1, len(pts)), k=min(4, len(pts) - 1))))
    bounds = [0, *cuts, len(pts)]
    joined = []
    for lo, hi in zip(bounds, bounds[1:]):
        joined += grid_between(index, lo, hi, index.end_pts if hi == len(pts) else None, fps)
    assert joined == sample_grid(index, fps)
    live = LiveIndex(Fraction(1, 1000))
    live.pts.extend(pts)
    assert grid_between(live, 0, len(pts), index.end_pts, fps) == sample_grid(index, fps)
