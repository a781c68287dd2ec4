"""The streaming wrapper around the pure planner: ffprobe's packet scan → final frames → keyframes → blocks.

A scan that fails part way (ffprobe killed or crashing; not a truncated file, which is bad input) is run again
from the start of the file, up to :data:`SCAN_ATTEMPTS` scans in all. The frames the new scan finalises are checked
against the ones already final (the index is append-only: what a lane has read never changes), and the index grows
on from where the failed scan left it. So every block is planned from a complete index and gets every check of a
block; there is no block whose frames are numbered by counting. Packet scans read headers only: a second one costs
a small share of the decode (about 1 s for an hour of 1080p H.264 here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flowocr.errors import DecodeError, EmptyVideo, FlowOcrError, NotAVideo, ProcessFailed, TruncatedVideo
from flowocr.plan.blocks import Block, End, Keyframe, check_tiling, plan_blocks
from flowocr.probe.facts import VideoInfo
from flowocr.probe.live import IndexBuilder, LiveIndex
from flowocr.probe.scan import PacketScan

#: Packet scans run in all before the run fails: the first, and two more after failures part way.
SCAN_ATTEMPTS = 3


class ScanKilled(FlowOcrError):
    """The packet scan was killed on purpose (fault injection); the planner treats it as a scan failure."""


class ScanStopped(FlowOcrError):
    """The packet scan was stopped on purpose (the source is closing): no end of the stream was seen."""


def keyframe_events(
    info: VideoInfo,
    index: LiveIndex,
    *,
    open_scan: Callable[[VideoInfo], PacketScan] = PacketScan,
    fail_after: int | None = None,
    kills: int = 1,
    on_failure: Callable[[BaseException], None] | None = None,
) -> Iterator[Keyframe | End]:
    """Keyframes as they become final (see :mod:`flowocr.probe.live`), then the end of the stream.

    Grows ``index`` as it goes; on a complete scan it finishes ``index`` before yielding :class:`End`. A scan that
    fails part way is reported to ``on_failure`` and run again (module docstring); after :data:`SCAN_ATTEMPTS`
    failures, :class:`DecodeError`. ``fail_after`` kills the first ``kills`` scans' ffprobe after that many packets
    (fault injection, DESIGN §12).
    """
    failures: list[BaseException] = []
    while True:
        scan = open_scan(info)
        try:
            yield from _one_scan(scan, index, info, fail_after if len(failures) < kills else None)
            return
        except (ProcessFailed, ScanKilled) as exc:  # ffprobe died (stopped by us, a scan ends as ScanStopped)
            failures.append(exc)
            if on_failure is not None:
                on_failure(exc)
            if len(failures) >= SCAN_ATTEMPTS:
                raise DecodeError(
                    f"{info.path}: the packet scan failed {len(failures)} times, the last time after {len(index)} "
                    f"frames ({exc}); the file may be damaged: try remuxing it (ffmpeg -i IN -c copy OUT)"
                ) from exc
        finally:
            scan.close()


def _one_scan(scan: PacketScan, index: LiveIndex, info: VideoInfo, fail_after: int | None) -> Iterator[Keyframe | End]:
    builder = IndexBuilder()
    tb = info.time_base

    def finalised(frames) -> Iterator[Keyframe]:
        for frame in frames:
            if frame.index < len(index):
                if index.pts_of(frame.index) != frame.pts:
                    raise DecodeError(f"{info.path}: the packet scan run again gives frame {frame.index} the pts "
                                      f"{frame.pts}, the first one gave {index.pts_of(frame.index)}")  # fmt: skip
                continue
            index.append([frame])
            if frame.key:
                yield Keyframe(frame.index, (frame.pts - index.pts_of(0)) * tb)

    def feed(packet):
        try:
            return builder.feed(packet)
        except ValueError as exc:
            raise NotAVideo(f"{info.path}: unusable frame timestamps ({exc}); try remuxing it") from exc

    for n, packet in enumerate(scan, start=1):
        yield from finalised(feed(packet))
        if fail_after is not None and n >= fail_after:
            scan.close()
            raise ScanKilled(f"{info.path}: packet scan killed after {n} packets (injected fault)")
    if scan.stopped:
        raise ScanStopped(f"{info.path}: the packet scan was stopped")
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
    events = keyframe_events(info, index)
    blocks = list(check_tiling(plan_blocks(events, block_sec=block_sec, first_block_sec=first_block_sec)))
    return blocks, index
