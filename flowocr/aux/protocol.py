"""The aux wire format between the decode process and the change detector (TCP, big-endian, no pickles).

decode → detector: ``FRAME`` (index, pts, width, height, then width*height grey bytes) ... ``END``.
detector → decode: ``RESULT`` (index, appeared, vanished, strokes, cell rows, cell cols, then the cell planes:
``PLANES * rows * cols`` bytes) per frame, in order ... ``DONE``.
"""

from __future__ import annotations

import socket
import struct

PLANES = 5  # cell planes per result: appeared, vanished, strokes, diff, stable (flowocr.aux.detector.FrameChange)

FRAME = b"AUXF"
END = b"AUXE"
RESULT = b"AUXR"
DONE = b"AUXD"
_FRAME = struct.Struct("!4sqqII")
_RESULT = struct.Struct("!4sqIIIHH")


class PeerClosed(ConnectionError):
    """The other side closed the connection before its end marker."""


class Idle(TimeoutError):
    """The socket's timeout passed before the first byte of a message: nothing was lost, the caller may wait on."""


def recv_exact(sock: socket.socket, size: int, *, idle_ok: bool = False) -> bytearray:
    """``size`` bytes. A timeout before the first byte raises :class:`Idle` when ``idle_ok``; any other timeout (a
    message stalled part way) is raised as it is."""
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        try:
            n = sock.recv_into(view[got:], size - got)
        except TimeoutError as exc:
            if idle_ok and got == 0:
                raise Idle(str(exc)) from exc
            raise
        if not n:
            raise PeerClosed(f"connection closed with {size - got} of {size} bytes still to come")
        got += n
    return buf


def send_parts(sock: socket.socket, parts: list) -> None:
    """Send the buffers ``parts`` one after the other, without joining them into one (no copy)."""
    views = [memoryview(part).cast("B") for part in parts]
    while views:
        sent = sock.sendmsg(views)
        while sent:
            if sent >= len(views[0]):
                sent -= len(views.pop(0))
            else:
                views[0] = views[0][sent:]
                sent = 0


def pack_frame(index: int, pts: int, width: int, height: int) -> bytes:
    return _FRAME.pack(FRAME, index, pts, width, height)


def pack_end() -> bytes:
    return _FRAME.pack(END, -1, 0, 0, 0)


def read_frame(sock: socket.socket) -> tuple[int, int, int, int, bytearray] | None:
    """The next frame (index, pts, width, height, pixels), or None at the end marker."""
    magic, index, pts, width, height = _FRAME.unpack(recv_exact(sock, _FRAME.size))
    if magic == END:
        return None
    if magic != FRAME:
        raise ValueError(f"unexpected message {magic!r} in the aux stream")
    return index, pts, width, height, recv_exact(sock, width * height)


def pack_result(index: int, appeared: int, vanished: int, strokes: int, cells: bytes = b"", rows: int = 0,
                cols: int = 0) -> bytes:  # fmt: skip
    if len(cells) != PLANES * rows * cols:
        raise ValueError(f"{len(cells)} cell bytes for {rows} x {cols} cells")
    return _RESULT.pack(RESULT, index, appeared, vanished, strokes, rows, cols) + cells


def pack_done() -> bytes:
    return _RESULT.pack(DONE, -1, 0, 0, 0, 0, 0)


def read_result(sock: socket.socket) -> tuple[int, int, int, int, bytes, int, int] | None:
    """The next result (index, appeared, vanished, strokes, cells, rows, cols), or None at the end marker.
    :class:`Idle` when the socket's timeout passed with no result begun."""
    head = recv_exact(sock, _RESULT.size, idle_ok=True)
    magic, index, appeared, vanished, strokes, rows, cols = _RESULT.unpack(head)
    if magic == DONE:
        return None
    if magic != RESULT:
        raise ValueError(f"unexpected message {magic!r} from the change detector")
    cells = bytes(recv_exact(sock, PLANES * rows * cols)) if rows * cols else b""
    return index, appeared, vanished, strokes, cells, rows, cols
