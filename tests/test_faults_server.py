"""The explorer server's request parsing, property-based: random request lines, headers,
Content-Lengths and bodies (JSON with lone surrogates, forms, bytes that are not UTF-8),
sent whole, cut short, with the client closing or waiting. Every request must get a
well-formed HTTP answer (status line, headers, a body of exactly its Content-Length, JSON
that parses where it says JSON) or a closed connection, within a deadline, and nothing may
reach stderr as a traceback. Loopback only; bounded examples, a few seconds."""

from __future__ import annotations

import json
import re
import socket
import time

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from attnlab.explorer import hand_compute, start_server

HOST = "127.0.0.1"
STALL, DEADLINE, IDLE = 0.2, 1.0, 0.5  # the server's timeouts here, seconds
ANSWER_WITHIN = 4.0  # seconds: the longest wait is a stall, then the 0.5 s drain of a refusal
STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([1-5][0-9][0-9]) [^\r\n]*")

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
surrogate_escapes = st.integers(0xD800, 0xDFFF).map(lambda c: f"\\u{c:04x}")


@st.composite
def bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    """(content type, body): JSON (perhaps with lone surrogate escapes), a form, raw bytes."""
    kind = draw(st.sampled_from(["json", "json-surrogate", "form", "bytes", "none"]))
    if kind == "json":
        return "application/json", json.dumps({"text": draw(texts)}).encode()
    if kind == "json-surrogate":
        before, after = (json.dumps(draw(texts))[1:-1] for _ in range(2))
        text = before + draw(surrogate_escapes) + after
        return "application/json", ('{"text": "' + text + '"}').encode()
    if kind == "form":
        return "application/x-www-form-urlencoded", b"text=" + draw(texts).encode()
    if kind == "bytes":
        return draw(st.sampled_from(["application/json", "text/plain"])), draw(
            st.binary(max_size=200))
    return "", b""


@st.composite
def requests(draw: st.DrawFn, port: int) -> tuple[bytes, bool]:
    """(request bytes, whether the client closes its side after sending): mostly a request
    the page could send, with one part or another broken, cut short or left hanging."""
    method = draw(st.sampled_from(["POST"] * 4 + ["GET"] * 2 + ["HEAD", "DELETE", "", "G\x00T"]))
    target = draw(st.one_of(
        st.sampled_from(["/api/attention"] * 4 + ["/", "/nowhere", "*", ""]),
        texts.map(lambda t: "/api/attention?text=" + t.replace(" ", "%20")),
    ))  # fmt: skip
    version = draw(st.sampled_from(["HTTP/1.1"] * 3 + ["HTTP/1.0", "HTTP/9.9", "", "x y"]))
    line = " ".join(part for part in (method, target, version) if part)
    content_type, body = draw(bodies())
    length = draw(st.sampled_from(["exact"] * 3 + ["other", "", "-1", "lots", "1e3", "５",
                                                   "99999999999999", "3, 3"]))  # fmt: skip
    if length == "exact":
        length = str(len(body))
    elif length == "other":
        length = str(draw(st.integers(0, 400)))
    hosts = [f"{HOST}:{port}"] * 3 + [f"localhost:{port}", "evil.example", ""]
    headers = [f"Host: {draw(st.sampled_from(hosts))}"]
    if draw(st.integers(0, 4)):
        headers.append(f"Content-Length: {length}")
    if content_type:
        headers.append(f"Content-Type: {content_type}")
    if draw(st.integers(0, 9)) == 0:
        headers.append("Transfer-Encoding: chunked")
    headers += draw(st.lists(texts.map(lambda t: "X-" + t.replace("\r", "").replace("\n", "")),
                             max_size=2))  # fmt: skip
    raw = (line + "\r\n" + "\r\n".join(headers) + "\r\n\r\n").encode("utf-8", "replace") + body
    cut = draw(st.one_of(st.none(), st.none(), st.integers(0, max(len(raw) - 1, 0))))
    return (raw if cut is None else raw[:cut]), draw(st.booleans())


def _exchange(port: int, request: bytes, close_after: bool) -> tuple[bytes, float]:
    start = time.monotonic()
    with socket.create_connection((HOST, port), timeout=ANSWER_WITHIN) as s:
        s.sendall(request)
        if close_after:
            s.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while chunk := s.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:  # a refusal may reset what the client still sends
            pass
    return b"".join(chunks), time.monotonic() - start


def _well_formed(answer: bytes) -> None:
    head, sep, body = answer.partition(b"\r\n\r\n")
    assert sep, answer[:200]
    lines = head.split(b"\r\n")
    assert STATUS_LINE.fullmatch(lines[0]), lines[0]
    fields = dict(line.split(b": ", 1) for line in lines[1:])
    assert int(fields[b"Content-Length"]) == len(body), (fields, len(body))
    if fields[b"Content-Type"].startswith(b"application/json"):
        assert isinstance(json.loads(body.decode("utf-8")), dict)


def test_every_request_gets_a_well_formed_answer_or_a_close_and_no_traceback(capfd) -> None:
    with start_server(hand_compute, idle_timeout=IDLE, read_deadline=DEADLINE,
                      stall_timeout=STALL) as srv:  # fmt: skip

        post = f"POST /api/attention HTTP/1.1\r\nHost: {HOST}:{srv.port}\r\n"
        surrogate = b'{"text": "\\ud800"}'

        @settings(max_examples=120, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
        @example(case=((post + f"Content-Type: application/json\r\nContent-Length: "
                        f"{len(surrogate)}\r\n\r\n").encode() + surrogate, False))
        @example(case=((post + "Content-Length: 100\r\n\r\n").encode() + b"text=la", False))
        @given(case=requests(srv.port))
        def one(case: tuple[bytes, bool]) -> None:
            request, close_after = case
            answer, seconds = _exchange(srv.port, request, close_after)
            assert seconds < ANSWER_WITHIN, (request[:80], seconds)
            if answer:
                _well_formed(answer)

        one()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err[-2000:]
