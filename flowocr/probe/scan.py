"""The streamed packet scan: ffprobe reads packet headers only (no decoding) and we read its lines as they come.

This is where frame identity comes from (see :mod:`flowocr.probe.index`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction

from flowocr import ffmpeg
from flowocr.errors import EmptyVideo, NotAVideo, ProcessFailed, TruncatedVideo
from flowocr.probe.facts import VideoInfo
from flowocr.probe.index import FrameIndex, Packet, build_index

# ffprobe's stderr when the file ends before the data its header points to.
_TRUNCATION_MARKS = ("partial file", "Truncating packet", "End of file", "truncated")


def parse_packet_line(line: str) -> Packet | None:
    """One ``csv=p=0`` line of ``-show_entries packet=pts,dts,duration,flags`` (None for blank lines).

    ffprobe prints the fields in its own order (pts, dts, duration, flags); a missing value is ``N/A``.
    """
    line = line.strip()
    if not line:
        return None
    fields = line.split(",")
    if len(fields) < 4:
        raise ValueError(f"unexpected packet line {line!r}")
    pts, dts, duration, flags = fields[0], fields[1], fields[2], fields[3]
    return Packet(
        pts=_int_or_none(pts),
        dts=_int_or_none(dts),
        duration=_int_or_none(duration),
        key="K" in flags,
        discard="D" in flags,
    )


def _int_or_none(text: str) -> int | None:
    return None if text in ("", "N/A") else int(text)


class PacketScan:
    """A running ffprobe packet scan; iterate it for packets in decode order, as ffprobe prints them.

    After iteration ends, :attr:`truncated` tells whether ffprobe reported that the file stops early.
    ``close()`` stops ffprobe at any time; iteration then ends early and :attr:`stopped` is True.
    """

    def __init__(self, info: VideoInfo) -> None:
        self.info = info
        self.truncated = False
        self.count = 0
        self._closed = False
        self._finished = False
        self._proc = ffmpeg.Process(
            ffmpeg.packet_scan_argv(info.path, info.stream_index), what=f"ffprobe packet scan of {info.path}"
        )

    @property
    def cpu_s(self) -> float | None:
        """CPU seconds ffprobe used, once it exited (None before, or off Linux)."""
        return self._proc.cpu_s

    def __iter__(self) -> Iterator[Packet]:
        try:
            try:
                for raw in self._proc.stdout:
                    packet = parse_packet_line(raw.decode("ascii", "replace"))
                    if packet is not None:
                        self.count += 1
                        yield packet
            except (OSError, ValueError):
                if self.stopped:
                    return  # its pipe was closed under the reader by close()
                raise
            rc = self._proc.wait()
            if rc != 0 and not self._proc.stopped_by_us:
                raise self._proc.failure(rc)
            tail = self._proc.stderr_tail()
            self.truncated = any(mark in tail for mark in _TRUNCATION_MARKS)
            self._finished = not self._closed
        finally:
            self._proc.stop()

    def close(self) -> None:
        self._closed = True
        self._proc.stop()

    @property
    def stopped(self) -> bool:
        """``close()`` came before the whole output was read: the packets read are not the whole stream."""
        return self._closed and not self._finished

    def stderr_tail(self) -> str:
        return self._proc.stderr_tail()


def scan_index(info: VideoInfo) -> FrameIndex:
    """Scan the whole file and build its frame index.

    Raises :class:`EmptyVideo` when no frame would be shown, :class:`TruncatedVideo` when the file ends
    before the data its header announces, :class:`NotAVideo` for unusable timestamps.
    """
    scan = PacketScan(info)
    try:
        packets = list(scan)
    except ProcessFailed as exc:
        raise NotAVideo(f"{info.path}: cannot read its packets ({exc}); the file may be damaged") from exc
    if scan.truncated:
        header = f"its header announces {info.frames_from_header} frames, " if info.frames_from_header else ""
        raise TruncatedVideo(
            f"{info.path}: file is truncated ({header}only {len(packets)} packets are present); "
            "re-download or re-encode it"
        )
    try:
        return build_index(packets, info.time_base, info.frame_rate)
    except ValueError as exc:
        if not packets or "no frame is shown" in str(exc):
            raise EmptyVideo(f"{info.path}: the video stream has no frames; nothing to read") from exc
        raise NotAVideo(f"{info.path}: unusable frame timestamps ({exc}); try remuxing it") from exc


def source_frames(
    info: VideoInfo, index: FrameIndex, lo: int, hi: int, *, started: Callable[[ffmpeg.Process], None] | None = None
) -> set[int] | None:
    """Pts of the frames the source really yields when decoded, for frames ``[lo, hi)`` of the index.

    This asks ffprobe to decode the stretch (from the keyframe before it), independently of any lane. A
    frame of the index that is not in the result is absent from the material itself (a skip packet, a
    damaged picture). Returns None when the source cannot be probed. ``started`` gets the ffprobe process as
    soon as it runs, so that its owner can stop it from another thread (a stopped check returns None).
    """
    from flowocr.probe.index import keyframe_at_or_before

    tb = index.time_base
    start = index.pts_of(keyframe_at_or_before(index, lo)) * tb - Fraction(1, 1000)
    end = (index.pts_of(hi) if hi < len(index) else index.end_pts) * tb + Fraction(1, 1000)
    proc = ffmpeg.Process(
        ffmpeg.decoded_frames_argv(info.path, info.stream_index, start, end),
        what=f"ffprobe frame check of {info.path}",
    )
    if started is not None:
        started(proc)
    found: set[int] = set()
    try:
        for raw in proc.stdout:
            text = raw.decode("ascii", "replace").strip().rstrip(",")
            if text and text != "N/A":
                found.add(int(text.split(",")[0]))
        if proc.wait() != 0:
            return None
    except (OSError, ValueError):
        return None
    finally:
        proc.stop()
    return found
