"""The decode process's side of the aux stream: start (or reach) the change detector, forward frames in block
order, collect its per-frame results.

Every failure of the link (cannot connect, cannot write, the detector closed or died, a result out of order)
is raised as :class:`AuxError` to the run, never turned into a shorter aux stream. A detector that stays alive but
silent is a failure too: no wait on it is longer than :func:`silence_timeout` (a result awaited that long, or a
frame that cannot be written for that long).
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import threading
import time

import numpy as np

from flowocr.aux import protocol
from flowocr.aux.detector import FrameChange
from flowocr.errors import FlowOcrError

_START_TIMEOUT_S = 60
#: The longest a run waits on a silent detector (s). The detector answers each batch of frames in milliseconds (a
#: 320 px frame is a few ms of work); a minute of silence while a result is awaited means it hangs.
#: ``FLOWOCR_AUX_TIMEOUT`` (seconds) overrides it.
SILENCE_TIMEOUT_S = 60.0


def silence_timeout() -> float:
    value = os.environ.get("FLOWOCR_AUX_TIMEOUT", "").strip()
    try:
        return float(value) if value else SILENCE_TIMEOUT_S
    except ValueError:
        from flowocr.errors import UsageError

        raise UsageError(f"invalid FLOWOCR_AUX_TIMEOUT ({value}); give seconds, e.g. 60") from None


class AuxError(FlowOcrError):
    """The aux stream to the change detector broke; the run stops (its report says why)."""

    exit_code = 9


class Detector:
    """A change-detector process started by flowocr (``flowocr aux-serve --listen 127.0.0.1:0``).

    By default it serves one aux stream (``--once``). ``many=True`` keeps it for several runs one after the
    other (a batch: one process start instead of one per video). Either way it exits when its stdin closes, so
    it never outlives flowocr, even one killed with SIGKILL before it connected."""

    def __init__(self, *, many: bool = False) -> None:
        argv = [sys.executable, "-m", "flowocr", "aux-serve", "--listen", "127.0.0.1:0", "--until-stdin-closes"]
        if not many:
            argv.append("--once")
        self.many = many
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)  # fmt: skip
        # A detector that starts but never listens must not hang the run: its first line has _START_TIMEOUT_S.
        ready, _, _ = select.select([self.proc.stdout], [], [], _START_TIMEOUT_S)
        if not ready:
            self.stop()
            raise AuxError(f"the change detector did not start: it printed no address in {_START_TIMEOUT_S} s")
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            err = self.proc.stderr.read().strip().splitlines()
            self.stop()
            raise AuxError(f"the change detector did not start: {err[-1] if err else line or 'no output'}")
        self.address = line.removeprefix("listening on ")
        # Its stderr (a line per dropped connection) is read as it comes: a full pipe would stall it.
        self._drain = threading.Thread(target=self._drain_stderr, name="aux-detector-stderr", daemon=True)
        self._drain.start()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _drain_stderr(self) -> None:
        try:
            for _ in self.proc.stderr:
                pass
        except (OSError, ValueError):
            pass

    def stop(self) -> None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()  # a detector serving many runs exits on this
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=2 if self.many else 0)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class AuxLink:
    """One aux stream: :meth:`send` frames in order, read results with :meth:`wait_for` / :attr:`results`.

    ``results[i]`` is the change at the i-th frame sent (frames are consecutive indices from ``first``).
    """

    def __init__(self, address: str) -> None:
        from flowocr.aux.server import parse_address

        self.address = address
        host, port = parse_address(address)
        try:
            self.sock = socket.create_connection((host, port), timeout=_START_TIMEOUT_S)
        except OSError as exc:
            raise AuxError(f"cannot connect to the change detector at {address}: {exc.strerror or exc}") from exc
        self.timeout = silence_timeout()
        self.sock.settimeout(self.timeout)  # a send blocked that long fails; the reader treats it as idle time
        self.results: dict[int, FrameChange] = {}
        self.last_answered = -1  # the latest frame with a result
        self.sent: list[int] = []
        self.done = False
        self.error: BaseException | None = None
        self._heard = time.monotonic()  # when the last result came
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="aux-results", daemon=True)
        self._reader.start()

    def send(self, index: int, pts: int, image: np.ndarray) -> None:
        self._raise_if_failed()
        height, width = image.shape
        with self._cond:
            self.sent.append(index)  # before sending: its result may come back at once
        try:
            header = protocol.pack_frame(index, pts, width, height)
            protocol.send_parts(self.sock, [header, np.ascontiguousarray(image)])
        except OSError as exc:
            self._fail(AuxError(f"cannot write to the change detector at {self.address}: {exc.strerror or exc}"))
            self._raise_if_failed()

    def finish(self) -> None:
        """Send the end marker and wait for every result."""
        try:
            self.sock.sendall(protocol.pack_end())
        except OSError as exc:
            self._fail(AuxError(f"cannot write to the change detector at {self.address}: {exc.strerror or exc}"))
        with self._cond:
            since = time.monotonic()
            while not self.done and self.error is None:
                self._wait(since, f"the rest of its {len(self.sent)} results")
        self._raise_if_failed()

    def forget_before(self, index: int) -> None:
        """Drop the results of the frames before ``index`` (the reader needs them no more): a long video's results
        are not all kept."""
        with self._cond:
            for i in [i for i in self.results if i < index]:
                del self.results[i]

    def wait_for(self, index: int) -> FrameChange:
        with self._cond:
            since = time.monotonic()
            while index not in self.results and self.error is None and not self.done:
                self._wait(since, f"the result for frame {index}")
            self._raise_if_failed()
            if index not in self.results:
                raise AuxError(f"the change detector at {self.address} gave no result for frame {index}")
            return self.results[index]

    def _wait(self, since: float, what: str) -> None:
        """One wait for a result (caller holds the lock); AuxError once none came for the silence timeout."""
        quiet = time.monotonic() - max(since, self._heard)
        if quiet >= self.timeout:
            raise AuxError(f"the change detector at {self.address} sent nothing for {quiet:.0f} s while flowocr "
                           f"waited for {what}; it hangs (FLOWOCR_AUX_TIMEOUT sets the limit)")  # fmt: skip
        self._cond.wait(timeout=self.timeout - quiet)

    def _read(self) -> None:
        try:
            n = 0
            while True:
                try:
                    item = protocol.read_result(self.sock)
                except protocol.Idle:
                    continue  # nothing awaited, or the waiting side times out (_wait)
                if item is None:
                    break
                index, appeared, vanished, strokes, cells, rows, cols = item
                with self._cond:
                    expected = self.sent[n] if n < len(self.sent) else None
                    if index != expected:
                        raise AuxError(f"the change detector answered for frame {index}, expected {expected}")
                    self.results[index] = FrameChange(index, appeared, vanished, strokes, cells, rows, cols)
                    self.last_answered = index
                    self._heard = time.monotonic()
                    n += 1
                    self._cond.notify_all()
            with self._cond:
                if n != len(self.sent):
                    raise AuxError(f"the change detector answered {n} of {len(self.sent)} frames")
                self.done = True
                self._cond.notify_all()
        except protocol.PeerClosed:
            self._fail(AuxError(f"the change detector at {self.address} closed the connection (did it die?)"))
        except OSError as exc:
            self._fail(AuxError(f"lost the change detector at {self.address}: {exc.strerror or exc}"))
        except BaseException as exc:  # noqa: BLE001 - relayed to the run
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        with self._cond:
            if self.error is None and not self.done:
                self.error = exc
            self._cond.notify_all()

    def _raise_if_failed(self) -> None:
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._reader.join(timeout=5)


class AuxGate:
    """Between the sharded source and the reader: aux frames go on to the detector (checked against the frame
    index), main frames wait until the detector has answered for them, since the reader decides by its answers.

    ``after``: a resumed run's checkpoint frame; main frames up to it are dropped. ``lookahead``: a main frame waits
    until the detector has answered for that many frames after it too (the reader compares frames around a change).
    """

    def __init__(self, link: AuxLink, index, video: str, *, after: int = -1, lookahead: int = 0) -> None:
        self.link = link
        self.index = index
        self.video = video
        self.after = after
        self.lookahead = lookahead
        self.next_aux = 0
        self.pending: list = []  # main frames waiting for the detector to cover them
        self.sent = 0

    def take(self, frame) -> list:
        """Hand ``frame`` on; the main frames that are ready now, in order."""
        if frame.stream == "aux":
            # A forward jump skips frames the source itself lacks (the sharded source checked them before it handed
            # this frame on; a lost one would have stopped it): the detector compares across the gap.
            if frame.index < self.next_aux:
                raise AuxError(
                    f"{self.video}: the aux stream went back from frame {self.next_aux - 1} to {frame.index}"
                )
            expected = self.index.pts_of(frame.index)
            if frame.pts != expected:
                raise AuxError(f"{self.video}: aux frame {frame.index} has pts {frame.pts}, the index says {expected}")
            self.link.send(frame.index, frame.pts, frame.data)  # the text area only, scaled (AuxSpec)
            self.next_aux = frame.index + 1
            self.sent += 1
        elif frame.index > self.after:
            self.pending.append(frame)
        return self._ready(wait=False)

    def finish(self) -> list:
        """The end of the stream: every main frame still waiting, once the detector has answered for all."""
        if self.pending and self.next_aux <= self.pending[-1].index:
            raise AuxError(f"{self.video}: the aux stream ended at frame {self.next_aux}, before main frame "
                           f"{self.pending[-1].index}")  # fmt: skip
        self.link.finish()
        return self._ready(wait=True)

    def _ready(self, wait: bool) -> list:
        out = []
        while self.pending:
            frame = self.pending[0]
            if not wait:
                last = frame.index + self.lookahead
                if last >= self.next_aux or self.link.last_answered < last:
                    break  # its aux frame, or one it waits for, has not arrived or been answered yet
            self.link.wait_for(frame.index)
            out.append(self.pending.pop(0))
        return out
