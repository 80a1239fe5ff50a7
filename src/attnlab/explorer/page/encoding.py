"""Compact matrices for large explorer pages: float16 (or 8-bit) numbers in base64.

Dimension legend: ``r``/``c`` rows/columns of one matrix, ``n`` tokens, ``L``
layers.

A page of GPT-2 small on 128 tokens holds about 4.7 million numbers (q, k and
weights of 144 heads); as decimal text that is tens of megabytes. Any matrix
of a head (``q``, ``k``, ``weights``, ``scores``, ``bias``) and each layer's
matrix of a view's ``composed`` views may instead travel as one of::

    {"enc": "f16", "shape": [r, c], "b64": "..."}
        little-endian IEEE float16, row-major;
    {"enc": "f16", "shape": [n, n], "tri": "lower", "b64": "..."}
        the same, holding only the lower triangle row by row (row i: i + 1
        numbers), for causal weights whose upper triangle is exactly zero;
    {"enc": "u8", "shape": [r, c], "scale": s, "offset": o, "b64": "..."}
        one byte per number, value = offset + scale · byte.

The page's first script part (``decode.js``) turns every such object back into
nested arrays of numbers before any other part reads the data; ``decode``
and ``decode_data`` here do the same in NumPy (tests, and anyone reading a
saved page). ``encode_page`` encodes a page's matrices in float16 and states
in ``data["encoding"]["precision"]`` the largest error it measured, so the
page can say how far its numbers are from the model's.

float16 keeps about 3 significant digits (relative error at most 2⁻¹¹ ≈
4.9e-4 for |x| ≥ 6.1e-5, absolute error at most 3e-8 below that) and holds
|x| ≤ 65504; a matrix with larger entries stays as decimal text. Left out:
compression of the bytes (the page would need an asynchronous decoder).
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

__all__ = [
    "ENCODE_ABOVE",
    "F16_MAX",
    "decode",
    "decode_data",
    "encode_f16",
    "encode_page",
    "encode_u8",
    "is_encoded",
    "matrix_count",
]

F16_MAX = 65504.0  # the largest finite float16
ENCODE_ABOVE = 200_000  # numbers in a page's matrices above which ``render_page`` encodes it
HEAD_FIELDS = ("q", "k", "weights", "scores", "bias")
COMPOSED_FIELDS = ("rollout", "value_weighted")


def is_encoded(x: Any) -> bool:
    """True for an encoded matrix (a dict with ``enc``)."""
    return isinstance(x, Mapping) and "enc" in x


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _lower_only(a: np.ndarray) -> bool:
    return a.ndim == 2 and a.shape[0] == a.shape[1] and not np.triu(a, 1).any()


def encode_f16(x: Any) -> dict[str, Any]:
    """``x`` (r, c) as float16 bytes in base64; a square matrix whose upper triangle is exactly
    zero keeps only its lower triangle. Entries beyond ±65504 are a ValueError."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"expected a matrix, got shape {a.shape}")
    if not np.isfinite(a).all() or (a.size and np.abs(a).max() > F16_MAX):
        raise ValueError("float16 holds only finite numbers up to 65504 in size")
    out: dict[str, Any] = {"enc": "f16", "shape": list(a.shape)}
    if _lower_only(a) and a.shape[0] > 1:
        out["tri"] = "lower"
        a = a[np.tril_indices(a.shape[0])]  # row by row: (0,0), (1,0), (1,1), …
    out["b64"] = _b64(a.astype("<f2").tobytes())
    return out


def encode_u8(x: Any) -> dict[str, Any]:
    """``x`` (r, c) as one byte per number: value = offset + scale · byte, with offset the
    smallest entry and scale the range over 255 (absolute error at most scale / 2)."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2 or not np.isfinite(a).all():
        raise ValueError(f"expected a matrix of finite numbers, got shape {a.shape}")
    offset = float(a.min()) if a.size else 0.0
    spread = float(a.max()) - offset if a.size else 0.0
    scale = spread / 255 if spread > 0 else 1.0
    q = np.clip(np.rint((a - offset) / scale), 0, 255).astype(np.uint8)
    return {"enc": "u8", "shape": list(a.shape), "scale": scale, "offset": offset,
            "b64": _b64(q.tobytes())}  # fmt: skip


def decode(obj: Mapping[str, Any]) -> np.ndarray:
    """The matrix (r, c) an encoded object holds, as float64 (what ``decode.js`` computes)."""
    shape = tuple(int(s) for s in obj["shape"])
    raw = base64.b64decode(obj["b64"])
    if obj["enc"] == "u8":
        byte = np.frombuffer(raw, dtype=np.uint8).astype(np.float64)
        return (float(obj["offset"]) + float(obj["scale"]) * byte).reshape(shape)
    if obj["enc"] != "f16":
        raise ValueError(f"unknown encoding {obj['enc']!r}")
    values = np.frombuffer(raw, dtype="<f2").astype(np.float64)
    if obj.get("tri") == "lower":
        out = np.zeros(shape)
        out[np.tril_indices(shape[0])] = values
        return out
    return values.reshape(shape)


def _matrices(data: Mapping[str, Any]) -> Iterator[tuple[Any, Any, Any]]:
    """Every (container, key, value) of a matrix the encoding may replace, in page order."""
    for view in data.get("views", ()):
        for layer in view.get("layers", ()):
            for head in layer.get("heads", ()):
                for key in HEAD_FIELDS:
                    if key in head:
                        yield head, key, head[key]
        composed = view.get("composed")
        if isinstance(composed, Mapping):
            for key in COMPOSED_FIELDS:
                for li, m in enumerate(composed.get(key, ())):
                    yield composed[key], li, m


def matrix_count(data: Mapping[str, Any]) -> int:
    """How many numbers the page's matrices hold (encoded ones by their shape)."""
    total = 0
    for _, _, m in _matrices(data):
        if is_encoded(m):
            total += int(np.prod(m["shape"]))
        else:
            total += sum(len(row) for row in m)
    return total


def encode_page(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with every matrix in float16 (decimal text where float16 cannot hold
    it) and ``encoding.precision``: the largest error measured on this page, in words."""
    out = copy.deepcopy(dict(data))
    worst_abs, worst_rel, kept = 0.0, 0.0, 0
    for holder, key, m in list(_matrices(out)):
        if is_encoded(m):
            continue
        a = np.asarray(m, dtype=np.float64)
        try:
            enc = encode_f16(a)
        except ValueError:
            kept += 1
            continue
        err = np.abs(decode(enc) - a)
        worst_abs = max(worst_abs, float(err.max(initial=0.0)))
        normal = np.abs(a) >= 6.103515625e-05  # float16's smallest normal number
        if normal.any():
            worst_rel = max(worst_rel, float((err[normal] / np.abs(a[normal])).max()))
        holder[key] = enc
    text = (
        "float16 (about 3 significant digits): the largest error on this page is "
        f"{worst_abs:.1e} absolute, {worst_rel:.1e} relative"
    )
    if kept:
        text += f"; {kept} matrices with entries beyond ±65504 are kept as decimal text"
    out["encoding"] = {"precision": text, "max_abs_error": worst_abs,
                       "max_rel_error": worst_rel}  # fmt: skip
    return out


def decode_data(data: Any) -> Any:
    """``data`` with every encoded matrix replaced by nested lists (a saved page's data as
    ``decode.js`` sees it); anything else is returned as it is."""
    if is_encoded(data):
        return decode(data).tolist()
    if isinstance(data, Mapping):
        return {key: decode_data(value) for key, value in data.items()}
    if isinstance(data, list):
        return [decode_data(x) for x in data]
    return data
