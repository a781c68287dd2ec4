"""Facts about a video from one ffprobe call: codec, size, rotation, time base, rate, start, duration."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

from flowocr import ffmpeg
from flowocr.errors import MissingInput, NotAVideo, NoVideoStream, ProcessFailed


@dataclass(frozen=True)
class VideoInfo:
    """What ffprobe's header reading says about the first real video stream of a file.

    Times are exact: ``time_base`` and ``frame_rate`` are Fractions, ``start_pts`` is in the stream time base.
    ``frames_from_header`` is what the container claims (may be None or wrong); the packet scan counts frames
    from the content. ``width``/``height`` are the stored size; ``display_width``/``display_height`` are after
    the display rotation, which is what decoded frames look like (ffmpeg applies the rotation).
    """

    path: str
    container: str
    stream_index: int
    codec: str
    width: int
    height: int
    rotation: int
    pix_fmt: str
    time_base: Fraction
    frame_rate: Fraction
    avg_frame_rate: Fraction | None
    start_pts: int | None
    start_time: Fraction | None
    format_start_time: Fraction | None
    duration: Fraction | None
    frames_from_header: int | None
    #: ``tv`` (video range), ``pc`` (full range), or None when the stream does not say.
    color_range: str | None = None

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"invalid frame size {self.width}x{self.height}")
        if self.time_base <= 0:
            raise ValueError(f"invalid time base {self.time_base}")
        if self.rotation % 90:
            raise ValueError(f"invalid rotation {self.rotation} (multiples of 90 are supported)")

    @property
    def display_width(self) -> int:
        return self.height if self.rotation % 180 else self.width

    @property
    def display_height(self) -> int:
        return self.width if self.rotation % 180 else self.height

    @property
    def frame_bytes(self) -> int:
        """Bytes of one full-size bgr24 frame as decoded (rotation applied)."""
        return self.display_width * self.display_height * 3

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, Fraction):
                out[key] = _fraction_text(value)
        out["display_width"] = self.display_width
        out["display_height"] = self.display_height
        out["start_seconds"] = None if self.start_time is None else float(self.start_time)
        out["duration_seconds"] = None if self.duration is None else float(self.duration)
        out["fps"] = float(self.frame_rate)
        return out


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def check_path(path: str) -> None:
    """Raise :class:`MissingInput` for a path that is absent or not a regular file."""
    if not os.path.exists(path):
        raise MissingInput(f"{path}: no such file; check the path")
    if os.path.isdir(path):
        raise MissingInput(f"{path}: is a directory; give a video file (or use `flowocr run DIR` for a batch)")
    if not os.access(path, os.R_OK):
        raise MissingInput(f"{path}: not readable; check its permissions")


def probe(path: str) -> VideoInfo:
    """Read a file's video facts with one ffprobe call.

    Raises :class:`MissingInput`, :class:`NotAVideo` (not a media file), :class:`NoVideoStream` (audio
    only, ...), or :class:`ProcessFailed`.
    """
    check_path(path)
    argv = ffmpeg.probe_argv(path)
    done = subprocess.run(argv, capture_output=True, check=False)
    stderr = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0:
        last = stderr.splitlines()[-1] if stderr else f"ffprobe exited with code {done.returncode}"
        if done.returncode > 0:
            # ffprobe read the file and refused it: not a container it knows, or a damaged header.
            raise NotAVideo(f"{path}: not a readable video ({_strip_path(last, path)}); is it truncated?")
        raise ProcessFailed(
            f"{path}: ffprobe failed: {_strip_path(last, path)}", returncode=done.returncode, stderr_tail=stderr
        )
    try:
        data = json.loads(done.stdout.decode("utf-8", "replace") or "{}")
    except json.JSONDecodeError as exc:
        raise NotAVideo(f"{path}: ffprobe gave unreadable output ({exc})") from exc
    return parse_probe(path, data)


def _strip_path(line: str, path: str) -> str:
    return line.replace(f"{path}: ", "").strip()


def parse_probe(path: str, data: dict[str, Any]) -> VideoInfo:
    """Turn ffprobe's JSON (``-show_format -show_streams``) into :class:`VideoInfo` (pure)."""
    fmt = data.get("format") or {}
    streams = data.get("streams") or []
    video = [
        s
        for s in streams
        if s.get("codec_type") == "video" and not (s.get("disposition") or {}).get("attached_pic")
    ]
    if not video:
        kinds = sorted({s.get("codec_type", "unknown") for s in streams})
        found = ", ".join(kinds) if kinds else "no streams at all"
        raise NoVideoStream(f"{path}: has no video stream (found: {found}); give a file with video")
    s = video[0]
    width, height = int(s.get("width") or 0), int(s.get("height") or 0)
    if width <= 0 or height <= 0:
        raise NotAVideo(f"{path}: video stream has no frame size; the file may be damaged")
    time_base = _fraction(s.get("time_base")) or Fraction(1, 1000)
    frame_rate = _fraction(s.get("r_frame_rate")) or _fraction(s.get("avg_frame_rate")) or Fraction(25)
    start_pts = _int(s.get("start_pts"))
    return VideoInfo(
        path=path,
        container=str(fmt.get("format_name", "unknown")),
        stream_index=int(s.get("index", 0)),
        codec=str(s.get("codec_name", "unknown")),
        width=width,
        height=height,
        rotation=_rotation(s),
        pix_fmt=str(s.get("pix_fmt", "unknown")),
        time_base=time_base,
        frame_rate=frame_rate,
        avg_frame_rate=_fraction(s.get("avg_frame_rate")),
        start_pts=start_pts,
        start_time=None if start_pts is None else start_pts * time_base,
        format_start_time=_decimal(fmt.get("start_time")),
        duration=_decimal(s.get("duration")) or _decimal(fmt.get("duration")),
        frames_from_header=_int(s.get("nb_frames")),
        color_range=s.get("color_range") if s.get("color_range") in ("tv", "pc") else None,
    )


def _rotation(stream: dict[str, Any]) -> int:
    """Display rotation in degrees clockwise-positive as ffmpeg applies it, normalised to 0/90/180/270."""
    angle = None
    for side in stream.get("side_data_list") or []:
        if "rotation" in side:
            angle = float(side["rotation"])
    if angle is None:
        tag = (stream.get("tags") or {}).get("rotate")
        angle = -float(tag) if tag not in (None, "") else 0.0
    return int(round(-angle / 90.0)) * 90 % 360


def _fraction(text: Any) -> Fraction | None:
    if text in (None, "", "N/A"):
        return None
    try:
        value = Fraction(str(text))
    except (ValueError, ZeroDivisionError):
        return None
    return value if value > 0 else None


def _decimal(text: Any) -> Fraction | None:
    if text in (None, "", "N/A"):
        return None
    try:
        return Fraction(str(text))
    except ValueError:
        return None


def _int(text: Any) -> int | None:
    if text in (None, "", "N/A"):
        return None
    try:
        return int(text)
    except ValueError:
        return None
