"""A small local web server for the explorer: type a sentence, see its attention.

``GET /`` answers the explorer page with a text box; ``GET`` or ``POST
/api/attention`` (``?text=…``, a form body or a JSON body ``{"text": …}``)
answers the page's data for that sentence as JSON, made by ``compute(text)``.
Input over the character cap, over the token cap, or refused by ``compute``
with a ValueError (too long for the model's context, say) gets HTTP 400 and
``{"error": "…"}``, which the page shows as text.

The server binds to 127.0.0.1 only and answers only requests addressed to it
by that name (a ``Host`` header of 127.0.0.1 or localhost with its port), so a
web page elsewhere cannot reach it through a rebound DNS name.

Left out: TLS, authentication, and more than one sentence at a time through
``compute`` (calls are serialised by a lock: a model is not assumed to be
thread-safe).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from attnlab.explorer.heads import SENTENCE
from attnlab.explorer.page import render_page, validate_data

log = logging.getLogger(__name__)

Compute = Callable[[str], Mapping[str, Any]]
API_PATH = "/api/attention"
DEFAULT_MAX_CHARS = 400
DEFAULT_MAX_TOKENS = 128
LOOPBACK = ("127.0.0.1", "localhost")


class _Refused(ValueError):
    """Input the server will not compute: answered with HTTP 400 and this message."""


@dataclass
class _App:
    compute: Compute
    max_chars: int
    max_tokens: int
    default_text: str
    lock: threading.Lock

    def attention(self, text: str) -> Mapping[str, Any]:
        text = text.strip()
        if not text:
            raise _Refused("type a sentence first")
        if len(text) > self.max_chars:
            raise _Refused(f"the input is {len(text)} characters; the limit is {self.max_chars}")
        with self.lock:
            try:
                data = self.compute(text)
            except ValueError as err:  # the model's own refusal, e.g. longer than its context
                raise _Refused(str(err).strip().splitlines()[0] or "input refused") from err
        validate_data(data)
        longest = max(len(view["tokens"]) for view in data["views"])
        if longest > self.max_tokens:
            raise _Refused(f"the input is {longest} tokens; the limit is {self.max_tokens}")
        return data


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: _App) -> None:
        super().__init__(address, _Handler)
        self.app = app
        port = self.server_address[1]
        self.allowed_hosts = {f"{name}:{port}" for name in LOOPBACK}
        try:
            first = app.attention(app.default_text)
        except BaseException:
            self.server_close()
            raise
        self.page = render_page(first, api_url=API_PATH, text=app.default_text).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "attnlab-explorer"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib name)
        log.debug("%s - %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        body = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        host = self.headers.get("Host")
        if host is None or host.lower() in self.server.allowed_hosts:
            return True
        self._json(HTTPStatus.BAD_REQUEST, {"error": "unexpected Host header"})
        return False

    def _answer(self, text: str | None) -> None:
        if text is None:
            self._json(HTTPStatus.BAD_REQUEST, {"error": "missing parameter: text"})
            return
        try:
            data = self.server.app.attention(text)
        except _Refused as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})
        except Exception:  # a bug in compute: say so, keep serving, keep the details in the log
            log.exception("compute failed for a %d-character input", len(text))
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error (see log)"})
        else:
            self._json(HTTPStatus.OK, data)

    def do_GET(self) -> None:  # noqa: N802 (stdlib name)
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif url.path == API_PATH:
            self._answer(parse_qs(url.query).get("text", [None])[0])
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {url.path}"})

    def do_POST(self) -> None:  # noqa: N802 (stdlib name)
        if not self._host_ok():
            return
        if urlsplit(self.path).path != API_PATH:
            self._json(HTTPStatus.NOT_FOUND, {"error": "POST only to " + API_PATH})
            return
        length = int(self.headers.get("Content-Length") or 0)
        limit = 4 * self.server.app.max_chars + 1024  # UTF-8 and form encoding both fit
        if length > limit:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "request body too large"})
            return
        raw = self.rfile.read(length).decode("utf-8", errors="replace")
        text: str | None
        if self.headers.get("Content-Type", "").startswith("application/json"):
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            text = body.get("text") if isinstance(body, dict) else None
            text = text if isinstance(text, str) else None
        else:
            text = parse_qs(raw).get("text", [None])[0]
        self._answer(text)


def make_server(
    compute: Compute,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    default_text: str = SENTENCE,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> _Server:
    """Bind the explorer server (not yet serving); ``port=0`` picks a free port.

    ``compute(default_text)`` runs once now, for the page's first view, so a
    broken ``compute`` fails here rather than in the browser.
    """
    if host not in LOOPBACK:
        raise ValueError(f"the explorer server binds to 127.0.0.1 only, not {host!r}")
    if max_chars < 1 or max_tokens < 1:
        raise ValueError(f"max_chars and max_tokens must be >= 1, got {max_chars}, {max_tokens}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be in 0..65535, got {port}")
    app = _App(compute, max_chars, max_tokens, default_text, threading.Lock())
    return _Server(("127.0.0.1", port), app)


def serve(
    compute: Compute,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    default_text: str = SENTENCE,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the explorer until interrupted; ``ready(url)`` is called once it listens."""
    server = make_server(
        compute, host, port, default_text=default_text, max_chars=max_chars, max_tokens=max_tokens
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
) -> RunningServer:
    """Start the explorer server on 127.0.0.1 in a daemon thread; ``port=0`` = any free port."""
    server = make_server(
        compute, "127.0.0.1", port,
        default_text=default_text, max_chars=max_chars, max_tokens=max_tokens,
    )  # fmt: skip
    thread = threading.Thread(target=server.serve_forever, name="attnlab-explorer", daemon=True)
    thread.start()
    return RunningServer(server, thread)
