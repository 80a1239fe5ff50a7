"""A small local web server for the explorer: type a sentence, see its attention.

``GET /`` answers the explorer page with a text box; ``GET`` or ``POST
/api/attention`` (``?text=…``, a form body or a JSON body ``{"text": …}``)
answers the page's data for that sentence as JSON, made by ``compute(text)``.
Every answer that is not the page is JSON, refusals included: ``{"error":
"…"}`` with a 4xx status (over the character or token cap, refused by
``compute`` with a ValueError, a malformed request, an over-long URL), so the
page can always show the message.

Bounded by construction, so that ordinary abuse cannot knock it over:

- the listen queue holds ``LISTEN_QUEUE`` connections and at most
  ``MAX_WORKERS`` are handled at once; more wait in the queue, unanswered
  but not reset;
- a connection holds no worker until it has sent something: accepted
  connections wait in a lobby (one thread, one ``select``) that hands each to
  a worker once bytes arrive, and closes one that sent nothing for
  ``IDLE_TIMEOUT`` seconds (at most ``connections.LOBBY_CAP`` wait; past that the oldest
  is closed), so idle connections cannot make a real request wait;
- once a worker reads a request, a silence of ``STALL_TIMEOUT`` seconds (a
  body shorter than its Content-Length, say) is answered at once with a 408,
  and a request not complete ``READ_DEADLINE`` seconds after its first byte
  is read no further (a client trickling a byte now and then cannot hold a
  worker): what arrived is answered, usually with a 400, and the connection
  closes;
- a client that goes away before its answer is written costs nothing but a
  debug line in the log (no traceback), and text that is not Unicode (a lone
  surrogate such as ``"\ud800"`` in a JSON body), like bytes that are not UTF-8 (in a body
  or percent-escaped), is refused with a 400 naming the first bad byte;
- a request may read at most ``REQUEST_CAP`` bytes (request line, headers and
  body together), the URL at most ``MAX_URL`` bytes, and the body only what a
  valid ``Content-Length`` (digits only) announces, under the body limit (a larger one,
  however many digits, is answered 413).

The server binds to 127.0.0.1 only and answers only requests addressed to it
by that name (a ``Host`` header of 127.0.0.1 or localhost with its port), so a
web page elsewhere cannot reach it through a rebound DNS name.

Left out: TLS, authentication, keep-alive (HTTP/1.0: one request per
connection), and more than one sentence at a time through ``compute`` (calls
are serialised by a lock: a model is not assumed to be thread-safe).
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from attnlab.errors import UsageError
from attnlab.explorer.page.render import render_page
from attnlab.explorer.server.app import App, Compute, Refused
from attnlab.explorer.server.connections import CappedReader, Lobby
from attnlab.explorer.server.fields import BadRequest, body_text, content_length, query_text
from attnlab.explorer.sources.heads import SENTENCE

log = logging.getLogger(__name__)

API_PATH = "/api/attention"
DEFAULT_MAX_CHARS = 400
DEFAULT_MAX_TOKENS = 128
LOOPBACK = ("127.0.0.1", "localhost")
LISTEN_QUEUE = 128  # the kernel's queue of connections not yet accepted (was 5: bursts were reset)
MAX_WORKERS = 16  # connections handled at once; each holds at most REQUEST_CAP bytes of input
IDLE_TIMEOUT = 10.0  # seconds a connection may wait in the lobby sending nothing
STALL_TIMEOUT = 2.0  # seconds of silence in the middle of a request before it is answered 408
READ_DEADLINE = 10.0  # seconds a connection has, from its first byte, to send its whole request
REQUEST_CAP = 128 * 1024  # bytes one request may read: request line, headers and body
MAX_URL = 16 * 1024  # bytes of the request target; the page's own URLs are far shorter


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = LISTEN_QUEUE

    def __init__(self, address: tuple[str, int], app: App, idle_timeout: float,
                 read_deadline: float, stall_timeout: float) -> None:  # fmt: skip
        # Before binding: a port in use makes the base class call server_close, which sets it.
        self.closing = threading.Event()
        super().__init__(address, _Handler)  # OSError (EADDRINUSE, EACCES) if it cannot bind
        self.app = app
        self.idle_timeout = idle_timeout
        self.read_deadline = read_deadline
        self.stall_timeout = stall_timeout
        self.slots = threading.BoundedSemaphore(MAX_WORKERS)
        port = self.server_address[1]
        self.allowed_hosts = {f"{name}:{port}" for name in LOOPBACK}
        try:
            first = app.attention(app.default_text)
            page = render_page(first, api_url=API_PATH, text=app.default_text,
                               max_chars=app.max_chars, lang=app.lang)  # fmt: skip
        except BaseException:
            self.server_close()
            raise
        self.page = page.encode("utf-8")
        self.lobby = Lobby(self)

    def process_request(self, request: Any, client_address: Any) -> None:
        """The accept loop only puts a new connection in the lobby; it never waits."""
        self.lobby.add(request, client_address)

    def dispatch(self, request: Any, client_address: Any) -> None:
        """Hand a connection that has sent bytes to a worker thread once one of
        ``MAX_WORKERS`` is free; until then the lobby waits (idle ones with it)."""
        while not self.slots.acquire(timeout=0.2):
            if self.closing.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a reset, a broken pipe, a timeout) is no error of ours:
        a debug line. Anything else is a bug: logged with its traceback."""
        err = sys.exc_info()[1]
        if isinstance(err, ConnectionError | TimeoutError):
            log.debug("%s went away: %s", client_address, err)
        else:
            log.error("answering %s failed", client_address, exc_info=err)

    def shutdown(self) -> None:
        self.closing.set()
        super().shutdown()

    def server_close(self) -> None:
        self.closing.set()
        super().server_close()
        lobby = getattr(self, "lobby", None)
        if lobby is not None:
            lobby._wake()
            lobby.thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "attnlab-explorer"
    sys_version = ""
    default_request_version = "HTTP/1.0"  # so even a garbled request line gets a status line
    def setup(self) -> None:
        # On the socket: the request has begun (the lobby saw its first byte), so a silence
        # this long in the middle of it is answered (a body) or ends the connection.
        self.timeout = self.server.stall_timeout
        super().setup()
        self.rfile = CappedReader(self.rfile, REQUEST_CAP)
        # Past the deadline, reading ends: a blocked or later read sees end-of-file.
        self.deadline = threading.Timer(self.server.read_deadline, self._stop_reading)
        self.deadline.daemon = True
        self.deadline.start()

    def _stop_reading(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RD)
        except OSError:  # already closed
            pass

    def finish(self) -> None:
        self.deadline.cancel()
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib name)
        log.debug("%s - %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
        body = text.encode("utf-8", "backslashreplace")  # a stray surrogate: its JSON escape
        self._send(status, body, "application/json; charset=utf-8")

    def _refuse(self, status: int, message: str) -> None:
        """Answer a malformed request, then read what the client may still be sending (within
        the cap), so that closing the socket does not reset the answer away."""
        self.close_connection = True
        self._json(status, {"error": message})
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_WR)  # the answer is complete: the client may go
            self.connection.settimeout(0.5)
            while self.rfile.read(16384):
                pass
        except OSError:
            pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (over-long request line, bad request line,
        too many headers, unknown method), as JSON like every other answer."""
        if code == HTTPStatus.REQUEST_URI_TOO_LONG:
            message = "the request line is over 64 KiB: send a shorter sentence"
        elif code == HTTPStatus.NOT_IMPLEMENTED:  # a method without a do_ method here
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, "only GET and POST are answered here"
        self._refuse(code, message or HTTPStatus(code).phrase)

    def _host_ok(self) -> bool:
        host = self.headers.get("Host")
        if host is None or host.lower() in self.server.allowed_hosts:
            return True
        self._refuse(HTTPStatus.BAD_REQUEST, "unexpected Host header")
        return False

    def _url_ok(self) -> bool:
        if len(self.path) <= MAX_URL:
            return True
        self._refuse(
            HTTPStatus.REQUEST_URI_TOO_LONG,
            f"the request URL is {len(self.path)} bytes; the limit is {MAX_URL}: "
            "send a shorter sentence",
        )
        return False

    def _answer(self, text: str | None) -> None:
        if text is None:
            self._json(HTTPStatus.BAD_REQUEST, {"error": "missing parameter: text"})
            return
        try:
            data = self.server.app.attention(text)
        except Refused as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})
        except Exception:  # a bug in compute: say so, keep serving, keep the details in the log
            log.exception("compute failed for a %d-character input", len(text))
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error (see log)"})
        else:
            self._json(HTTPStatus.OK, data)

    def do_GET(self) -> None:  # noqa: N802 (stdlib name)
        if not (self._host_ok() and self._url_ok()):
            return
        url = urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif url.path == API_PATH:
            try:
                text = query_text(url.query, "the URL's text")
            except BadRequest as err:
                self._json(err.status, {"error": str(err)})
                return
            self._answer(text)
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {url.path[:200]}"})

    def _body(self) -> bytes | None:
        """The request body, or None after refusing a bad or too large one."""
        if self.headers.get("Transfer-Encoding"):
            self._refuse(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
            return None
        try:
            length = content_length(self.headers.get_all("Content-Length") or ["0"],
                                    self.server.app.body_limit)  # fmt: skip
        except BadRequest as err:
            self._refuse(err.status, str(err))
            return None
        body = bytearray()
        try:
            while len(body) < length:
                chunk = self.rfile.read1(length - len(body))
                if not chunk:
                    break
                body += chunk
        except TimeoutError:
            self._refuse(HTTPStatus.REQUEST_TIMEOUT, f"the body stopped after {len(body)} of "
                         f"{length} bytes (nothing more for {self.server.stall_timeout:g} s)")
            return None
        if len(body) != length:
            self._refuse(
                HTTPStatus.BAD_REQUEST, f"the body ended after {len(body)} of {length} bytes"
            )
            return None
        return bytes(body)

    def do_POST(self) -> None:  # noqa: N802 (stdlib name)
        if not (self._host_ok() and self._url_ok()):
            return
        if urlsplit(self.path).path != API_PATH:
            self._refuse(HTTPStatus.NOT_FOUND, "POST only to " + API_PATH)
            return
        body = self._body()
        if body is None:
            return
        try:
            text = body_text(body, self.headers.get("Content-Type", ""))
        except BadRequest as err:
            self._json(err.status, {"error": str(err)})
            return
        self._answer(text)


def make_server(
    compute: Compute,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    default_text: str = SENTENCE,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    idle_timeout: float = IDLE_TIMEOUT,
    read_deadline: float = READ_DEADLINE,
    stall_timeout: float = STALL_TIMEOUT,
    lang: str = "en",
) -> _Server:
    """Bind the explorer server (not yet serving); ``port=0`` picks a free port.

    ``compute(default_text)`` runs once now, for the page's first view, so a
    broken ``compute`` fails here rather than in the browser. A connection
    that sends nothing for ``idle_timeout`` seconds is closed; one silent for
    ``stall_timeout`` seconds in the middle of its request is answered (408) or
    closed; one that has not sent its whole request within ``read_deadline``
    seconds of its first byte is read no further. ``lang`` (``en`` or ``es``) is the page's
    interface language.
    """
    if host not in LOOPBACK:
        raise UsageError("the explorer server binds to 127.0.0.1 only, not %r", host)
    if max_chars < 1 or max_tokens < 1:
        raise UsageError("max_chars and max_tokens must be >= 1, got %s, %s", max_chars, max_tokens)
    if not 0 <= port <= 65535:
        raise UsageError("port must be in 0..65535, got %s", port)
    if not (idle_timeout > 0 and read_deadline > 0 and stall_timeout > 0):
        raise UsageError("idle_timeout, read_deadline and stall_timeout must be > 0 seconds, "
                         "got %s, %s and %s", idle_timeout, read_deadline, stall_timeout)
    app = App(compute, max_chars, max_tokens, default_text, threading.Lock(), lang)
    return _Server(("127.0.0.1", port), app, idle_timeout, read_deadline, stall_timeout)


def serve(
    compute: Compute,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    default_text: str = SENTENCE,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    ready: Callable[[str], None] | None = None,
    lang: str = "en",
) -> None:
    """Serve the explorer until interrupted; ``ready(url)`` is called once it listens."""
    server = make_server(
        compute, host, port, default_text=default_text, max_chars=max_chars, max_tokens=max_tokens,
        lang=lang,
    )
    with server:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        log.info("explorer serving at %s", url)
        if ready is not None:
            ready(url)
        server.serve_forever()


@dataclass
class RunningServer:
    """An explorer server answering from a background thread (for tests and notebooks)."""

    server: _Server
    thread: threading.Thread

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def shutdown(self) -> None:
        """Stop serving, close the socket and wait for the thread."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def start_server(
    compute: Compute,
    port: int = 0,
    *,
    default_text: str = SENTENCE,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    idle_timeout: float = IDLE_TIMEOUT,
    read_deadline: float = READ_DEADLINE,
    stall_timeout: float = STALL_TIMEOUT,
    lang: str = "en",
) -> RunningServer:
    """Start the explorer server on 127.0.0.1 in a daemon thread; ``port=0`` = any free port."""
    server = make_server(
        compute, "127.0.0.1", port, default_text=default_text, max_chars=max_chars,
        max_tokens=max_tokens, idle_timeout=idle_timeout, read_deadline=read_deadline,
        stall_timeout=stall_timeout, lang=lang,
    )  # fmt: skip
    thread = threading.Thread(target=server.serve_forever, name="attnlab-explorer", daemon=True)
    thread.start()
    return RunningServer(server, thread)

