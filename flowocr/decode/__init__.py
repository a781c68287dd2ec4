"""Decode stage: ffmpeg lanes that deliver exact, identified frames."""

from flowocr.decode.lane import AuxSpec, BlockDecoder, Frame, LaneStats, decode_all

__all__ = ["AuxSpec", "BlockDecoder", "Frame", "LaneStats", "decode_all"]
