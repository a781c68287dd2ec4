"""The streaming wrapper around the pure planner: ffprobe's packet scan → final frames → keyframes → blocks."""

from __future__ import annotations

from collections.abc import Iterator

from flowocr.errors import EmptyVideo, FlowOcrError, TruncatedVideo
from flowocr.plan.blocks import Block, End, Keyframe, check_tiling, plan_blocks
from flowocr.probe.facts import VideoInfo
from flowocr.probe.live import IndexBuilder, LiveIndex
from flowocr.probe.scan import PacketScan


class ScanKilled(FlowOcrError):
    """The packet scan was killed on purpose (fault injection); the planner treats it as a scan failure."""


def keyframe_events(
    scan: PacketScan, index: LiveIndex, info: VideoInfo, *, fail_after: int | None = None
) -> Iterator[Keyframe | End]:
    """Keyframes as they become final (see :mod:`flowocr.probe.live`), then the end of the stream.

    Grows ``index`` as it goes; on a complete scan it finishes ``index`` before yielding :class:`End`.
    ``fail_after`` kills the scan's ffprobe after that many packets (fault injection, DESIGN §12).
    """
    builder = IndexBuilder()
    tb = info.time_base
    origin: list[int] = []

    def finalised(frames) -> Iterator[Keyframe]:
        index.append(frames)
        if not origin and len(index):
            origin.append(index.pts_of(0))
        for frame in frames:
            if frame.key:
                yield Keyframe(frame.index, (frame.pts - origin[0]) * tb)

    for n, packet in enumerate(scan, start=1):
        yield from finalised(builder.feed(packet))
        if fail_after is not None and n >= fail_after:
            scan.close()
            raise ScanKilled(f"{info.path}: packet scan killed after {n} packets (injected fault)")
    if scan.truncated:
        raise TruncatedVideo(f"{info.path}: the packet scan stopped early: the file is truncated")
    yield from finalised(builder.finish())
    if not len(index):
        raise EmptyVideo(f"{info.path}: the video stream has no frames; nothing to read")
    end_pts = builder.end_pts(tb, info.frame_rate)
    index.finish(end_pts)
    yield End(len(index), (end_pts - index.pts_of(0)) * tb)


def plan_video(info: VideoInfo, *, block_sec, first_block_sec) -> tuple[list[Block], LiveIndex]:
    """The whole plan of a file (what `flowocr plan` prints): blocks and the complete index."""
    index = LiveIndex(info.time_base)
    scan = PacketScan(info)
    try:
        events = keyframe_events(scan, index, info)
        blocks = list(check_tiling(plan_blocks(events, block_sec=block_sec, first_block_sec=first_block_sec)))
    finally:
        scan.close()
    return blocks, index
