"""The parent's side of the wire to a checked child: bounded frames read against one deadline.

What the parent sends is a pickle of its own data (the child may trust it). What comes back is
never unpickled: a frame of at most :data:`MAX_FRAME` bytes, a JSON header that describes a
tree of None, bool, int, float, str, list, tuple and str-keyed dict, and arrays given as a
numeric or bool dtype, a shape and raw bytes (the format is in :mod:`attnlab.labs.child`).
Every read and write waits with ``select`` for at most what is left of the deadline, so a
child that sends four bytes of a header and sleeps costs the time limit, not a hang. Anything
else (a frame too long, JSON that is not such a tree, an object dtype, bytes that do not add
up) stops the check as :class:`Stopped` ``("garbled")``.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import select
import struct
import time
import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np

MAX_FRAME = 64 << 20  # bytes of one answer; every exercise's output is far smaller
MAX_HEADER = 4 << 20  # bytes of its JSON header
MAX_NODES = 100_000  # values in one answer
_STEP = 0.1  # seconds between looks at whether the child still lives
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,59}")


class Stopped(BaseException):  # noqa: N818 - not an error of the checker: the check's end
    """The child gave no usable answer: ``why`` is "time", "crash", "garbled" or "reference".

    A BaseException, so a case's ``except Exception`` cannot swallow it."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Opaque:
    """An output the child could not describe (an object of the learner's own type): any
    arithmetic on it fails, so a case fails on it as on that object."""

    __slots__ = ()

    def __reduce__(self) -> tuple:  # passed back to the child (a cache, say): a plain string
        return (str, (f"<{type(self).__name__} object>",))


def send(fd: int, message: Any, deadline: float, alive: Callable[[], bool]) -> None:
    """Write ``message`` (pickled) as one frame to ``fd`` before ``deadline``."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(struct.pack(">I", len(body)) + body)
    while view:
        _wait(fd, deadline, alive, write=True)
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            continue
        except OSError:  # the child closed its end: it has ended
            raise Stopped("crash") from None


def receive(fd: int, deadline: float, alive: Callable[[], bool]) -> dict[str, Any]:
    """The next answer's header, its ``value`` decoded; :class:`Stopped` when there is none."""
    length = struct.unpack(">I", _read(fd, 4, deadline, alive))[0]
    if not 4 <= length <= MAX_FRAME:
        raise Stopped("garbled")
    frame = bytearray(_read(fd, length, deadline, alive))
    head = struct.unpack(">I", frame[:4])[0]
    if head > min(MAX_HEADER, length - 4):
        raise Stopped("garbled")
    try:
        header = json.loads(bytes(frame[4:4 + head]))
        if type(header) is not dict or type(header.get("kind")) is not str:
            raise ValueError
        if "value" in header:
            header["value"] = _value(header["value"], memoryview(frame)[4 + head:], [0])
    except (ValueError, TypeError, KeyError, RecursionError, UnicodeDecodeError):
        raise Stopped("garbled") from None
    if header.get("refused") is True:
        raise Stopped("reference")
    return header


def clean(text: Any, limit: int = 160) -> str:
    """A line from the child as one printable line: no control characters, no surrogates."""
    if type(text) is not str:
        return ""
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = "".join("?" if unicodedata.category(c)[0] == "C" else c for c in text)
    return (text.strip().splitlines() or [""])[0][:limit]


def name(text: Any) -> str:
    """A type's name from the child, or "object" when it does not look like one."""
    return text if type(text) is str and _NAME.fullmatch(text) else "object"


def _value(node: Any, blob: memoryview, count: list[int]) -> Any:
    count[0] += 1
    if count[0] > MAX_NODES:
        raise ValueError("too many values")
    if node is None or type(node) in (bool, int, float, str):
        return node
    if type(node) is not dict:
        raise ValueError("not a value")
    tag = node["t"]
    if tag in ("list", "tuple"):
        items = [_value(v, blob, count) for v in _typed(node["v"], list)]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {str(k): _value(v, blob, count) for k, v in _typed(node["v"], dict).items()}
    if tag == "opaque":
        return type(name(node.get("type")), (Opaque,), {"__slots__": ()})()
    if tag == "array":
        return _array(node, blob)
    raise ValueError("not a value")


def _array(node: dict, blob: memoryview) -> Any:
    dtype = np.dtype(_typed(node["dtype"], str))
    if dtype.kind not in "biufc" or dtype.hasobject or dtype.fields is not None:
        raise ValueError("not a numeric dtype")
    shape = tuple(_typed(s, int) for s in _typed(node["shape"], list))
    at, n = _typed(node["at"], int), _typed(node["n"], int)
    if len(shape) > 32 or any(s < 0 for s in shape) or at < 0 or at + n > len(blob):
        raise ValueError("bad array")
    if int(np.prod(shape, dtype=object)) * dtype.itemsize != n:
        raise ValueError("bytes do not match the shape")
    a = np.frombuffer(blob, dtype=dtype, count=n // dtype.itemsize, offset=at).reshape(shape)
    return a[()] if node.get("scalar") is True and a.ndim == 0 else a


def _typed(x: Any, kind: type) -> Any:
    if type(x) is not kind:
        raise ValueError(f"expected {kind.__name__}")
    return x


def _read(fd: int, n: int, deadline: float, alive: Callable[[], bool]) -> bytes:
    chunks, left = [], n
    while left:
        _wait(fd, deadline, alive, write=False)
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except BlockingIOError:
            continue
        if not chunk:
            raise Stopped("crash")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _wait(fd: int, deadline: float, alive: Callable[[], bool], write: bool) -> None:
    """Return when ``fd`` is ready; :class:`Stopped` at the deadline or when the child ended
    with nothing left to read (a process it started may still hold the pipe open)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Stopped("time")
        ready = select.select([], [fd], [], min(left, _STEP)) if write else \
            select.select([fd], [], [], min(left, _STEP))
        if ready[0] or ready[1]:
            return
        if not alive():
            raise Stopped("crash")
