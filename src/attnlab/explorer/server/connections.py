"""The explorer server's connections below HTTP: a request's capped input stream, and the
lobby where accepted connections wait, holding no worker, until they send their first byte.

Kept apart from ``attnlab.explorer.server.httpd`` (the HTTP answers) so each reads in one sitting.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time
from typing import Any, Protocol

log = logging.getLogger(__name__)

LOBBY_CAP = 512  # connections waiting for their first byte; past it the oldest is closed


class Dispatcher(Protocol):
    """What the lobby needs of its server."""

    idle_timeout: float
    closing: threading.Event

    def dispatch(self, request: Any, client_address: Any) -> None: ...

    def shutdown_request(self, request: Any) -> None: ...


class CappedReader:
    """A request's input stream that gives at most ``cap`` bytes, then end-of-file."""

    def __init__(self, raw: Any, cap: int) -> None:
        self.raw, self.left = raw, cap

    def _take(self, chunk: bytes) -> bytes:
        self.left -= len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        return self._take(self.raw.readline(size)) if size > 0 else b""

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        return self._take(self.raw.read(size)) if size > 0 else b""

    def read1(self, size: int) -> bytes:
        """At most ``size`` bytes, returning as soon as some arrive (b"" at end-of-file)."""
        size = min(size, self.left)
        return self._take(self.raw.read1(size)) if size > 0 else b""

    def close(self) -> None:
        self.raw.close()


class Lobby:
    """Accepted connections that have sent nothing yet, watched by one thread.

    A connection is handed to a worker (``server.dispatch``) once it is
    readable (bytes, or the client's close), and closed if it stays silent for
    the idle timeout; so a crowd of idle connections holds no worker. Other
    threads only append to ``incoming`` and wake the loop through a socket
    pair: the selector is the lobby thread's alone.
    """

    def __init__(self, server: Dispatcher) -> None:
        self.server = server
        self.selector = selectors.DefaultSelector()
        self.waiting: dict[socket.socket, tuple[Any, float]] = {}  # oldest first
        self.incoming: list[tuple[socket.socket, Any]] = []
        self.lock = threading.Lock()
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.selector.register(self.wake_r, selectors.EVENT_READ)
        self.thread = threading.Thread(target=self._loop, name="attnlab-lobby", daemon=True)
        self.thread.start()

    def add(self, sock: socket.socket, address: Any) -> None:
        with self.lock:
            self.incoming.append((sock, address))
        self._wake()

    def _wake(self) -> None:
        try:
            self.wake_w.send(b"x")
        except OSError:  # closed, or its buffer full of wake-ups already
            pass

    def _drop(self, sock: socket.socket) -> None:
        self.selector.unregister(sock)
        del self.waiting[sock]

    def _loop(self) -> None:
        idle = self.server.idle_timeout
        while not self.server.closing.is_set():
            for key, _ in self.selector.select(timeout=min(idle, 0.5)):
                if key.fileobj is self.wake_r:
                    try:
                        while self.wake_r.recv(4096):
                            pass
                    except OSError:
                        pass
                    continue
                sock = key.fileobj
                address, _ = self.waiting[sock]
                self._drop(sock)
                try:
                    self.server.dispatch(sock, address)  # waits for a free worker
                except Exception:  # no thread to be had, say: this connection goes, not the lobby
                    log.exception("could not hand %s to a worker", address)
                    self.server.shutdown_request(sock)
            with self.lock:
                arrived, self.incoming = self.incoming, []
            now = time.monotonic()
            for sock, address in arrived:
                self.waiting[sock] = (address, now)
                self.selector.register(sock, selectors.EVENT_READ)
            while len(self.waiting) > LOBBY_CAP:  # the oldest make room
                oldest = next(iter(self.waiting))
                self._drop(oldest)
                self.server.shutdown_request(oldest)
            for sock, (_, since) in list(self.waiting.items()):
                if now - since > idle:
                    self._drop(sock)
                    self.server.shutdown_request(sock)
        self.close()

    def close(self) -> None:
        """Close every waiting connection and the lobby's own sockets (lobby thread)."""
        with self.lock:
            arrived, self.incoming = self.incoming, []
        for sock in [*self.waiting, *(s for s, _ in arrived)]:
            self.server.shutdown_request(sock)
        self.waiting.clear()
        self.selector.close()
        self.wake_r.close()
        self.wake_w.close()
