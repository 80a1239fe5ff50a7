"""What a request to the explorer's server carries, read strictly: its Content-Length and the
``text`` of a query string, a form body or a JSON body. Anything malformed is a ``BadRequest``
with the status and the one-line message the server answers with (``httpd`` sends it as JSON).

Bytes that are not UTF-8 are refused, naming the first bad byte, as the command line refuses
such text (they were once decoded to U+FFFD and answered 200). A Content-Length past the
body limit is a 413 however many digits it has. Left out: chunked bodies (refused in httpd).
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from urllib.parse import parse_qs

DIGITS = re.compile(r"[0-9]+")
HUGE_DIGITS = 15  # a Content-Length of more digits is too large whatever the limit (no int())


class BadRequest(ValueError):
    """A request refused before any computing: answered with ``status`` and this message."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def _not_utf8(where: str, raw: bytes, err: UnicodeDecodeError) -> BadRequest:
    return BadRequest(HTTPStatus.BAD_REQUEST, f"{where} is not valid UTF-8 (byte "
                      f"0x{raw[err.start]:02x} at byte {err.start + 1}): send the text as UTF-8")


def content_length(values: list[str], limit: int) -> int:
    """The one Content-Length of ``values`` (the header's occurrences), at most ``limit``."""
    if len(set(values)) != 1 or not DIGITS.fullmatch(values[0].strip()):
        shown = ", ".join(values)[:40]
        raise BadRequest(HTTPStatus.BAD_REQUEST,
                         f"Content-Length must be one whole number of bytes, not {shown!r}")
    digits = values[0].strip().lstrip("0") or "0"
    length = int(digits) if len(digits) <= HUGE_DIGITS else None
    if length is None or length > limit:
        said = length if length is not None else f"a {len(digits)}-digit number of"
        raise BadRequest(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                         f"the body is {said} bytes; the limit is {limit}")
    return length


def query_text(query: str, where: str) -> str | None:
    """The ``text`` field of a query string or form body (None if absent)."""
    try:
        return parse_qs(query, errors="strict").get("text", [None])[0]
    except UnicodeDecodeError as err:
        raise _not_utf8(where, err.object, err) from err


def body_text(body: bytes, content_type: str) -> str | None:
    """The ``text`` of a JSON body (``{"text": …}``) or a form body (None if absent)."""
    try:
        raw = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8("the body", body, err) from err
    if not content_type.startswith("application/json"):
        return query_text(raw, "the body")
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    text = parsed.get("text") if isinstance(parsed, dict) else None
    return text if isinstance(text, str) else None
