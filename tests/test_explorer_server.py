"""The explorer's local server under load and abuse (127.0.0.1 only, bounded): 200 requests
50 at a time all answered with a status, none reset; malformed requests get a 4xx JSON answer;
idle connections are closed; the server's memory stays bounded."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attnlab.explorer import hand_compute, start_server
from attnlab.explorer.server.httpd import MAX_URL

HOST = "127.0.0.1"


def _raw(port: int, request: bytes, timeout: float = 20.0) -> tuple[int, dict | str]:
    """Send ``request`` as is; return the status and the parsed body. A reset raises."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status = int(head.split()[1])
    is_json = b"application/json" in head
    return status, json.loads(body) if is_json else body.decode("utf-8", "replace")


def _get(port: int, target: str) -> bytes:
    return f"GET {target} HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode()


def _post(port: int, headers: str, body: bytes = b"") -> bytes:
    return (f"POST /api/attention HTTP/1.1\r\nHost: {HOST}:{port}\r\n{headers}\r\n\r\n"
            .encode() + body)  # fmt: skip


def _requests(port: int) -> list[tuple[str, bytes, set[int]]]:
    """Ten kinds of request, well-formed and malformed, and the statuses each may get."""
    json_body = json.dumps({"text": "la gata duerme"}).encode()
    return [
        ("page", _get(port, "/"), {200}),
        ("api", _get(port, "/api/attention?text=la%20gata%20que%20duerme"), {200}),
        ("post", _post(port, f"Content-Type: application/json\r\nContent-Length: {len(json_body)}",
                       json_body), {200}),  # fmt: skip
        ("too long", _get(port, "/api/attention?text=" + "a" * 500), {400}),
        ("negative length", _post(port, "Content-Length: -1", b"x" * 4096), {400}),
        ("word length", _post(port, "Content-Length: lots", b"text=a"), {400}),
        ("huge length", _post(port, "Content-Length: 209715200", b"x" * 4096), {413}),
        ("method", f"DELETE / HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode(), {405}),
        ("long url", _get(port, "/?" + "a" * (MAX_URL + 10)), {414}),
        ("nowhere", _get(port, "/nowhere"), {404}),
    ]


def test_malformed_requests_get_a_4xx_json_answer() -> None:
    with start_server(hand_compute) as srv:
        for kind, request, statuses in _requests(srv.port)[3:]:
            status, body = _raw(srv.port, request)
            assert status in statuses and isinstance(body, dict) and body["error"], kind
        cases = {
            b"GARBAGE\r\n\r\n": 400,
            b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n": 414,  # past the stdlib's 64 KiB line
            _post(srv.port, "Transfer-Encoding: chunked", b"5\r\nhello\r\n0\r\n\r\n"): 411,
            _post(srv.port, "Content-Length: 5\r\nContent-Length: 6", b"text="): 400,
            _post(srv.port, "Content-Length: ５", b"text="): 400,  # a digit, but not ASCII
            f"GET / HTTP/1.1\r\nHost: evil.example:{srv.port}\r\n\r\n".encode(): 400,
        }
        for request, expected in cases.items():
            status, body = _raw(srv.port, request)
            assert status == expected and isinstance(body, dict), (request[:40], status, body)
        status, body = _raw(srv.port, _post(srv.port, "Content-Length: -1", b"x" * 4096))
        assert body == {"error": "Content-Length must be one whole number of bytes, not '-1'"}
        status, body = _raw(srv.port, _get(srv.port, "/?" + "a" * (MAX_URL + 10)))
        assert body["error"].endswith(f"the limit is {MAX_URL}: send a shorter sentence")


def test_idle_connections_are_closed_and_do_not_block_the_server() -> None:
    with start_server(hand_compute, idle_timeout=0.5) as srv:
        idle = [socket.create_connection((HOST, srv.port), timeout=10) for _ in range(20)]
        start = time.monotonic()
        status, _ = _raw(srv.port, _get(srv.port, "/api/attention?text=hola"))
        assert status == 200 and time.monotonic() - start < 8  # more idle ones than workers
        for s in idle:
            assert s.recv(1) == b""  # closed by the server, without a reset
            s.close()


def _trickle(port: int, head: bytes, stop: float) -> tuple[bytes, float]:
    """Send ``head``, then one byte every 0.2 s until the server answers or closes (or
    ``stop`` seconds pass); return what came back and when, in seconds."""
    start = time.monotonic()
    with socket.create_connection((HOST, port), timeout=0.2) as s:
        s.sendall(head)
        answer = b""
        while time.monotonic() - start < stop:
            try:
                s.sendall(b"a")
            except OSError:  # the server no longer reads: collect its answer
                pass
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            answer += chunk
        return answer, time.monotonic() - start


def test_a_client_trickling_bytes_is_cut_off_at_the_read_deadline() -> None:
    with start_server(hand_compute, idle_timeout=5, read_deadline=1.0) as srv:
        body_head = _post(srv.port, "Content-Length: 1000")  # then a byte every 0.2 s
        answer, seconds = _trickle(srv.port, body_head, stop=15)
        assert 1.0 <= seconds < 5, seconds  # the deadline, not the idle timeout, ended it
        assert answer.startswith(b"HTTP/1.0 400") and b"the body ended after" in answer
        header_head = f"GET / HTTP/1.1\r\nHost: {HOST}:{srv.port}\r\nX-Slow: ".encode()
        answer, seconds = _trickle(srv.port, header_head, stop=15)  # headers never end
        assert 1.0 <= seconds < 5 and answer.startswith(b"HTTP/1.0 "), (seconds, answer[:40])
        status, _ = _raw(srv.port, _get(srv.port, "/api/attention?text=hola"))
        assert status == 200  # a request sent at once is not affected


def _rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_load_every_request_answered_none_reset_memory_bounded() -> None:
    code = "import sys; from attnlab.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "explore", "--serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = proc.stdout.readline()
        assert line.startswith("explorer at http://127.0.0.1:"), line + proc.stderr.read()
        port = int(line.split(":")[2].split("/")[0])
        kinds = _requests(port)
        for _, request, statuses in kinds:  # warm up every path once
            assert _raw(port, request)[0] in statuses
        before = _rss_kib(proc.pid, "VmRSS")

        def one(i: int) -> tuple[str, int]:
            kind, request, statuses = kinds[i % len(kinds)]
            status, _ = _raw(port, request)  # a reset raises ConnectionResetError here
            assert status in statuses, (kind, status)
            return kind, status

        with ThreadPoolExecutor(max_workers=50) as pool:  # 50 at a time
            answered = list(pool.map(one, range(200)))
        assert len(answered) == 200
        assert sum(1 for _, s in answered if 400 <= s < 500) == 140  # 7 of 10 kinds refused
        peak = _rss_kib(proc.pid, "VmHWM")
        assert peak - before < 64 * 1024, f"server grew by {(peak - before) / 1024:.0f} MiB"
        assert proc.poll() is None  # still serving
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.skipif(not Path("/usr/bin/ss").exists(), reason="reads the backlog with ss")
def test_listen_queue_holds_a_burst_of_50() -> None:
    """The kernel's queue of not-yet-accepted connections (``ss``'s Send-Q of a listening
    socket) was 5: where a full queue resets new connections (macOS, or Linux with
    tcp_abort_on_overflow), a burst of 50 lost a third of them."""
    with start_server(hand_compute) as srv:
        out = subprocess.run(["/usr/bin/ss", "-ltnH", f"sport = :{srv.port}"], check=True,
                             capture_output=True, text=True).stdout.split()  # fmt: skip
        assert int(out[2]) >= 50, out  # State Recv-Q Send-Q Local Peer


def test_idle_connections_hold_no_worker_under_the_default_timeouts() -> None:
    """20 connections that send nothing (more than the 16 workers) and a normal request
    answered at once: idle connections wait in the lobby, not in a worker."""
    with start_server(hand_compute) as srv:
        idle = [socket.create_connection((HOST, srv.port), timeout=10) for _ in range(20)]
        time.sleep(0.3)  # all of them accepted
        start = time.monotonic()
        status, _ = _raw(srv.port, _get(srv.port, "/api/attention?text=hola"))
        assert status == 200 and time.monotonic() - start < 2.0, time.monotonic() - start
        for s in idle:
            s.close()


def test_a_lone_surrogate_in_a_json_body_is_a_400(capfd) -> None:
    with start_server(hand_compute) as srv:
        body = b'{"text": "la \\ud800 gata"}'
        headers = f"Content-Type: application/json\r\nContent-Length: {len(body)}"
        status, answer = _raw(srv.port, _post(srv.port, headers, body))
    assert status == 400 and "lone surrogate (U+D800)" in answer["error"], answer
    assert "Traceback" not in capfd.readouterr().err


def test_a_body_shorter_than_its_length_is_answered_within_the_stall_timeout() -> None:
    with start_server(hand_compute, stall_timeout=0.5) as srv:
        start = time.monotonic()
        with socket.create_connection((HOST, srv.port), timeout=10) as s:
            s.sendall(_post(srv.port, "Content-Length: 100", b"text=la"))  # 7 of 100 bytes
            answer = b""
            while chunk := s.recv(65536):  # to the server's close: headers and body may part
                answer += chunk
        seconds = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.0 408") and b"the body stopped after 7 of 100" in answer
    assert 0.5 <= seconds < 3, seconds


def test_clients_that_leave_early_print_no_traceback(capfd) -> None:
    """Requests whose clients reset the connection before (or while) the answer is written:
    the server keeps serving, and stderr holds no BrokenPipeError or reset traceback."""
    import struct

    with start_server(hand_compute) as srv:
        for request in [_get(srv.port, "/"), _get(srv.port, "/api/attention?text=la%20gata"),
                        _post(srv.port, "Content-Length: 5000", b"text=")]:  # fmt: skip
            for _ in range(5):
                s = socket.create_connection((HOST, srv.port), timeout=10)
                s.sendall(request)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()  # a reset, at once
        time.sleep(0.5)
        assert _raw(srv.port, _get(srv.port, "/api/attention?text=hola"))[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("length", ["1000000000000", "9" * 40, "0" * 20 + "999999"])
def test_a_content_length_past_the_limit_is_a_413_however_many_digits(length: str) -> None:
    """10^12 was a 400 ("must be one whole number"): it is a whole number, only too large."""
    with start_server(hand_compute) as srv:
        status, answer = _raw(srv.port, _post(srv.port, f"Content-Length: {length}", b"text=a"))
    assert status == 413 and "the limit is" in answer["error"], answer


@pytest.mark.parametrize(("headers", "body", "where"), [
    ("Content-Type: application/json", b'{"text": "la gata \xff"}', "the body"),
    ("Content-Type: application/x-www-form-urlencoded", b"text=la+gata+\xfe", "the body"),
    ("Content-Type: application/x-www-form-urlencoded", b"text=la%20gata%FF", "the body"),
])  # fmt: skip
def test_a_body_that_is_not_utf8_is_a_400_naming_the_byte(headers, body, where) -> None:
    """Such bytes became U+FFFD and were answered 200, where the CLI refuses them."""
    with start_server(hand_compute) as srv:
        status, answer = _raw(srv.port, _post(srv.port, f"{headers}\r\nContent-Length: "
                                              f"{len(body)}", body))  # fmt: skip
        get_status, get_answer = _raw(srv.port, _get(srv.port, "/api/attention?text=gata%E9"))
    assert status == 400 and answer["error"].startswith(f"{where} is not valid UTF-8 (byte 0x")
    assert get_status == 400 and "not valid UTF-8 (byte 0xe9" in get_answer["error"]


def test_explore_serve_ends_with_130_on_ctrl_c(tmp_path) -> None:
    """Ctrl-C (SIGINT) stops ``attnlab explore --serve`` with 130, as every command; it was 0."""
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "attnlab.cli.main", "explore", "--serve",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)  # fmt: skip
    try:
        assert "explorer at http://127.0.0.1:" in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        assert "explorer stopped" in proc.stdout.read()
    finally:
        proc.kill()
