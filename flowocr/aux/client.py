"""The decode process's side of the aux stream: start (or reach) the change detector, forward frames in block
order, collect its per-frame results.

Every failure of the link (cannot connect, cannot write, the detector closed or died, a result out of order)
is raised as :class:`AuxError` to the run, never turned into a shorter aux stream.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import numpy as np

from flowocr.aux import protocol
from flowocr.aux.detector import FrameChange
from flowocr.errors import FlowOcrError

_START_TIMEOUT_S = 60


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
        self.sock.settimeout(None)
        self.results: dict[int, FrameChange] = {}
        self.sent: list[int] = []
        self.done = False
        self.error: BaseException | None = None
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
            while not self.done and self.error is None:
                self._cond.wait()
        self._raise_if_failed()

    def covered(self) -> int:
        """How many of the frames sent have their result."""
        with self._cond:
            return len(self.results)

    def wait_for(self, index: int) -> FrameChange:
        with self._cond:
            while index not in self.results and self.error is None and not self.done:
                self._cond.wait()
            self._raise_if_failed()
            if index not in self.results:
                raise AuxError(f"the change detector at {self.address} gave no result for frame {index}")
            return self.results[index]

    def _read(self) -> None:
        try:
            n = 0
            while True:
                item = protocol.read_result(self.sock)
                if item is None:
                    break
                index, appeared, vanished, strokes = item
                with self._cond:
                    expected = self.sent[n] if n < len(self.sent) else None
                    if index != expected:
                        raise AuxError(f"the change detector answered for frame {index}, expected {expected}")
                    self.results[index] = FrameChange(index, appeared, vanished, strokes)
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
