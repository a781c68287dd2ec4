"""Probe stage: facts of a video (one ffprobe call), its frame index (packet scan) and the time grid."""

from flowocr.probe.facts import VideoInfo, check_path, probe
from flowocr.probe.index import FrameIndex, Packet, build_index, keyframe_at_or_before, sample_grid
from flowocr.probe.scan import PacketScan, scan_index

__all__ = [
    "FrameIndex",
    "Packet",
    "PacketScan",
    "VideoInfo",
    "build_index",
    "check_path",
    "keyframe_at_or_before",
    "probe",
    "sample_grid",
    "scan_index",
]
