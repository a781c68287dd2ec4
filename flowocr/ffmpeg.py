"""The one place that builds ffmpeg/ffprobe command lines and spawns them.

Every command is an argv list. Every process has a stop path (:meth:`Process.stop`), and a failure carries
the exit code and the tail of the process's stderr. Live processes are tracked so that tests (and the CLI's
last-resort cleanup) can prove that nothing is left running.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import threading
import weakref
from collections.abc import Callable, Sequence
from fractions import Fraction

from flowocr.errors import ProcessFailed, ToolMissing
from flowocr.system import exited_cpu_s, process_cpu_s

_TOOL_PACKAGE = "ffmpeg"
# ``-loglevel level+...`` prefixes each line with its level (``[error] ``); kept out of error messages.
_LEVEL_TAG = re.compile(r"\[(?:quiet|panic|fatal|error|warning|info|verbose|debug|trace)\] ")
_live: weakref.WeakSet[Process] = weakref.WeakSet()
_live_lock = threading.Lock()

#: glibc's malloc, as set for every child: blocks up to 64 MB come from the heap and stay there. By default a
#: large block (a raw-video packet: 6 MB for a 1080p BGR frame) is mapped fresh for each frame and unmapped after
#: it, and the kernel zeroes and faults in every page again. Measured on 60 s of 1080p H.264, 120 BGR frames
#: piped out: 156k-458k page faults and 0.7-1.7 s of system time by default, 30k and 0.4 s with these settings;
#: decoding itself is unchanged. Ignored by other C libraries; a value the user set is kept.
_CHILD_MALLOC = "glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=268435456"


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GLIBC_TUNABLES", _CHILD_MALLOC)
    return env


def tool(name: str) -> str:
    """Absolute path of ``ffmpeg`` or ``ffprobe``; raises :class:`ToolMissing` when it is not on PATH."""
    found = shutil.which(name)
    if found is None:
        raise ToolMissing(
            f"{name} not found on PATH: install it (Debian/Ubuntu: apt-get install {_TOOL_PACKAGE}) "
            "or put its folder on PATH"
        )
    return found


def live_processes() -> list[Process]:
    """Processes started by this module that have not been reaped yet."""
    with _live_lock:
        return [p for p in _live if p.running]


def stop_all() -> None:
    """Stop every process this module started (last-resort cleanup on Ctrl-C)."""
    for proc in live_processes():
        proc.stop()


class Process:
    """One ffmpeg/ffprobe child with its stderr drained by a thread.

    ``on_stderr_line(line) -> bool`` sees every stderr line first; lines it returns True for are consumed
    (per-frame reports), the rest are kept in a bounded tail for error messages.
    """

    TAIL_LINES = 25

    def __init__(
        self,
        argv: Sequence[str],
        *,
        what: str,
        pass_fds: Sequence[int] = (),
        on_stderr_line: Callable[[str], bool] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.what = what
        self._on_line = on_stderr_line
        self._tail: collections.deque[str] = collections.deque(maxlen=self.TAIL_LINES)
        self._popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(pass_fds),
            close_fds=True,
            env=child_env(),
        )
        self.stderr_done = threading.Event()
        self._stopped = False
        #: CPU seconds the process used (user + system), known once it exited (None before, or off Linux)
        self.cpu_s: float | None = None
        with _live_lock:
            _live.add(self)
        self._stderr_thread = threading.Thread(target=self._drain_stderr, name=f"stderr:{what}", daemon=True)
        self._stderr_thread.start()

    @property
    def stdout(self):
        return self._popen.stdout

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def running(self) -> bool:
        if self._popen.returncode is None:
            self._account(block=False)  # poll() would reap it: its CPU account goes with it
        return self._popen.returncode is None and self._popen.poll() is None

    def _account(self, *, block: bool) -> None:
        """Read :attr:`cpu_s` once the process exited and before it is reaped (``block``: wait for the exit)."""
        if self.cpu_s is None and self._popen.returncode is None:
            self.cpu_s = exited_cpu_s(self._popen.pid, block=block)

    @property
    def stopped_by_us(self) -> bool:
        return self._stopped

    def _drain_stderr(self) -> None:
        try:
            for raw in self._popen.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if self._on_line is not None and self._on_line(line):
                    continue
                if line:
                    self._tail.append(_LEVEL_TAG.sub("", line, count=1))
        except (OSError, ValueError):
            pass
        finally:
            self.stderr_done.set()

    def stderr_tail(self) -> str:
        return "\n".join(self._tail)

    def wait(self) -> int:
        """Wait for exit and for its stderr to be read completely; returns the exit code."""
        self._account(block=True)
        rc = self._popen.wait()
        self._stderr_thread.join()
        return rc

    def failure(self, rc: int | None = None) -> ProcessFailed:
        rc = self._popen.returncode if rc is None else rc
        tail = self.stderr_tail()
        last = tail.splitlines()[-1] if tail else "no message"
        return ProcessFailed(f"{self.what}: exited with code {rc}: {last}", returncode=rc, stderr_tail=tail)

    def check(self) -> None:
        """Wait for exit; raise :class:`ProcessFailed` (exit code + stderr tail) unless it exited 0."""
        rc = self.wait()
        if rc != 0:
            raise self.failure(rc)

    def stop(self, grace: float = 2.0) -> None:
        """Terminate (then kill) the process, reap it, and close its pipes. Safe to call at any time."""
        if self.running:
            self._stopped = True
            if self.cpu_s is None:
                self.cpu_s = process_cpu_s(self._popen.pid)  # so far: what it uses after SIGTERM is not counted
            try:
                self._popen.terminate()
                self._popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._popen.kill()
            except ProcessLookupError:
                pass
        self._popen.wait()
        for stream in (self._popen.stdout, self._popen.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if threading.current_thread() is not self._stderr_thread:
            self._stderr_thread.join(timeout=5)

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# --- command lines -----------------------------------------------------------------------------------------


def probe_argv(path: str) -> list[str]:
    """One ffprobe call for the container and every stream (rotation comes with the stream's side data)."""
    return [tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_format", "-show_streams", path]


def packet_scan_argv(path: str, stream_index: int) -> list[str]:
    """Packet headers only (no decoding): pts, dts, duration in the stream time base, and the flags."""
    return [
        tool("ffprobe"), "-v", "error", "-select_streams", str(stream_index),
        "-show_entries", "packet=pts,dts,duration,flags", "-of", "csv=p=0", path,
    ]  # fmt: skip


def decoded_frames_argv(path: str, stream_index: int, start: Fraction, end: Fraction) -> list[str]:
    """ffprobe *decoding* an interval (absolute seconds) and printing each frame's timestamp.

    Used to ask the source itself whether a frame exists (tail-gap verification): slow, so only for gaps.
    """
    interval = f"{seconds_arg(start)}%{seconds_arg(end)}"
    return [
        tool("ffprobe"), "-v", "error", "-select_streams", str(stream_index), "-read_intervals", interval,
        "-show_entries", "frame=best_effort_timestamp", "-of", "csv=p=0", path,
    ]  # fmt: skip


def identity_argv() -> list[str]:
    """``ffmpeg -hwaccels`` with its banner: stderr's first line names the build (``ffmpeg version 5.1.6-0+deb12u1
    ...``), stdout lists the hardware acceleration methods compiled in, one a line after a header line. One
    process instead of ``-version`` and ``-hwaccels`` apart: each start costs about 0.1 s before a run begins."""
    return [tool("ffmpeg"), "-hwaccels"]


def capture(argv: Sequence[str], *, what: str, timeout: float = 30) -> tuple[str, str]:
    """Run a short command to its end and return its stdout and stderr; :class:`ProcessFailed` (with the exit code
    and the stderr tail) when it exits non-zero or runs past ``timeout`` seconds (it is killed then)."""
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProcessFailed(f"{what}: still running after {timeout:g} s; stopped") from exc
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        tail = "\n".join(stderr.splitlines()[-Process.TAIL_LINES :])
        last = tail.splitlines()[-1] if tail else "no message"
        raise ProcessFailed(f"{what}: exited with code {done.returncode}: {last}", returncode=done.returncode,
                            stderr_tail=tail)  # fmt: skip
    return done.stdout.decode("utf-8", "replace"), stderr


def seconds_arg(value: Fraction) -> str:
    """A time in seconds as ffmpeg parses it (microsecond precision, rounded down)."""
    micro = (value * 1_000_000).__floor__()
    sign = "-" if micro < 0 else ""
    micro = abs(micro)
    return f"{sign}{micro // 1_000_000}.{micro % 1_000_000:06d}"


def decode_argv(
    path: str,
    *,
    filter_script: str,
    outputs: Sequence[tuple[str, str, str]],
    seek: Fraction | None = None,
    hwaccel: str | None = None,
) -> list[str]:
    """ffmpeg decoding one input through a filter graph script into raw-video pipes.

    ``outputs`` are ``(label, pix_fmt, target)`` triples, e.g. ``("m", "bgr24", "pipe:1")``. Timestamps are
    kept as they are in the file (``-copyts``) and no frame is duplicated or dropped to fit a rate
    (``-fps_mode passthrough``). ``seek`` is relative to the file's start time and lands on a keyframe at or
    before it; nothing is dropped after the seek (``-noaccurate_seek``): the filter graph keeps frames by pts.
    """
    argv = [tool("ffmpeg"), "-hide_banner", "-nostdin", "-nostats", "-loglevel", "level+info"]
    if hwaccel:
        argv += ["-hwaccel", hwaccel]
    argv += ["-copyts", "-noaccurate_seek"]
    if seek is not None:
        argv += ["-ss", seconds_arg(seek)]
    argv += ["-i", path, "-filter_complex_script", filter_script]
    for label, pix_fmt, target in outputs:
        argv += ["-map", f"[{label}]", "-fps_mode", "passthrough", "-pix_fmt", pix_fmt, "-f", "rawvideo", target]
    return argv


def pipe_target(fd: int) -> str:
    return "pipe:1" if fd == 1 else f"pipe:{fd}"


def close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
