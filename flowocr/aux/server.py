"""The change-detector process: ``flowocr aux-serve --listen HOST:PORT``.

It serves one aux stream per connection: frames in, one result per frame out, in order. Work is batched with
the streaming windows of :mod:`flowocr.aux.windows`, so results for early frames go back while later frames are
still arriving; one :class:`~flowocr.aux.detector.ChangeDetector` per connection carries the frames a window's
first results depend on (the receptive field) from one window to the next, so each frame is computed once.
"""

from __future__ import annotations

import socket
import sys

import numpy as np

from flowocr.aux import protocol
from flowocr.aux.detector import ChangeDetector
from flowocr.aux.windows import next_window

INITIAL = 4
CHUNK = 16


def serve_connection(conn: socket.socket) -> None:
    pending: list[tuple[int, np.ndarray]] = []  # frames received and not yet fed to the detector
    detector = ChangeDetector()  # it keeps the frames before that the next ones depend on
    received = emitted = 0
    finished = False
    while True:
        if not finished:
            item = protocol.read_frame(conn)
            if item is None:
                finished = True
            else:
                index, _pts, width, height, data = item
                pending.append((index, np.frombuffer(data, np.uint8).reshape(height, width)))
                received += 1
        while (window := next_window(received, emitted, finished, initial=INITIAL, chunk=CHUNK,
                                     left_ctx=0)) is not None:  # fmt: skip
            _, new_start, new_end = window
            count = new_end - new_start
            results = detector.feed(pending[:count])
            del pending[:count]
            packed = [protocol.pack_result(r.index, r.appeared, r.vanished, r.strokes, r.cells, r.rows, r.cols)
                      for r in results]  # fmt: skip
            conn.sendall(b"".join(packed))
            emitted = new_end
        if finished and emitted == received:
            conn.sendall(protocol.pack_done())
            return


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"invalid address {text!r}; give HOST:PORT (e.g. 127.0.0.1:7000)")
    return host or "127.0.0.1", int(port)


def serve(listen: str, *, once: bool = False, until_stdin_closes: bool = False) -> None:
    """Listen on ``listen`` (port 0: any free port); print ``listening on HOST:PORT``; serve connections, one
    after the other. ``once``: exit after the first. ``until_stdin_closes``: exit when stdin reaches its end
    (the parent closed it, or died)."""
    host, port = parse_address(listen)
    if until_stdin_closes:
        import os
        import threading

        def watch() -> None:
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                os._exit(0)

        threading.Thread(target=watch, name="stdin-watch", daemon=True).start()
    with socket.create_server((host, port)) as server:
        bound = server.getsockname()
        print(f"listening on {bound[0]}:{bound[1]}", flush=True)
        while True:
            conn, _ = server.accept()
            with conn:
                try:
                    serve_connection(conn)
                except (protocol.PeerClosed, ConnectionError, ValueError) as exc:
                    print(f"flowocr aux-serve: connection dropped: {exc}", file=sys.stderr, flush=True)
            if once:
                return
