"""The explorer page's one input, the *data* dict: its shape, its checks, and its arithmetic.

Dimension legend: ``n`` tokens of a view (its queries, the rows), ``m`` its keys
(the columns: ``m = n`` unless the view has ``sources``), ``d`` query/key width of a
head (``d_k``), ``r``/``c`` rows/columns of a small labelled matrix (a hand head's
W_Q, W_K or feature table).

::

    {"title": str, "description": str (one sentence: what the page shows),
     "causal": bool (optional, starting state of the causal switch, default False),
     "scale": bool (optional, starting state of the √d_k switch, default True),
     "encoding": {"precision": str, …} (optional: how the matrices were encoded),
     "views": [{"name": str, "tokens": [str] * n,
                "sources": [str] * m (optional: the keys when they are another
                                      sequence, e.g. the source sentence of a
                                      cross-attention; then m ≠ n is allowed),
                "attends": "causal" | "bidirectional" | "cross" (optional: the
                           model's own mask for this view; "cross" by default
                           with sources),
                "fixed": str (optional: why the switches cannot recompute this view),
                "given": bool (optional: its weights were given to show(), not computed
                               by a model the explorer ran),
                "layers": [{"heads": [head] * H}] * L,
                "composed": {"rollout": [n×n] * L, "value_weighted": [n×n] * L
                             (optional), "note": str} (optional, not with sources:
                             attention composed across layers,
                             attnlab.explorer.page.composed)}]}

    head = {"name": str, "d_k": int,
            "q": n×d, "k": m×d (optional: the head's queries and keys, RoPE applied),
            "dims": [str] * d (optional: names of the d query/key dimensions),
            "scores": n×m (optional: raw q·k where q and k are not given),
            "bias": n×m (optional: added after the scaling, e.g. ALiBi),
            "window": int (optional: under the causal mask, keys more than
                           window - 1 places back are masked too),
            "weights": n×m (optional: the model's own weights, shown while the
                            switches are at their starting state),
            "note": str (optional),
            "w_q", "w_k", "features": (optional) {"rows", "cols", "values": r×c}}

Any n×m or n×d matrix may be an encoded object instead of nested lists
(float16 or 8-bit in base64: ``attnlab.explorer.page.encoding``). A head needs
``q`` and ``k``, or ``scores``, or ``weights``; one with only
``weights`` is *fixed* (its view says why in ``fixed``), and the switches are
off for it. The page's script computes every other weight itself, row by row::

    s = q·kᵀ · (1/√d_k if the √d_k switch is on else 1) + bias
    weights = softmax(s) with keys after the query (and, with a window, keys
    window or more places back) at exactly 0 under the causal mask

The causal mask is the page's causal switch for a view without ``attends``. A view
with ``attends`` keeps its model's own mask whatever the switch says: "causal"
always masks later keys, "bidirectional" (an encoder) and "cross" (a target's
queries over a source's keys) never mask. "cross" needs ``sources``; the other two
refuse them (a self-attention's keys are its own tokens).

``head_weights`` does the same in NumPy, so tests can compare the page with it.

Left out: batches (one sentence per view), value vectors and head outputs, and
attention composed across layers for two-sequence views (rollout multiplies
n×n matrices of one sequence).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attnlab.errors import DataError as _AttnlabDataError
from attnlab.explorer.page.encoding import decode, is_encoded
from attnlab.reference.softmax import effective_tokens, softmax

__all__ = [
    "ATTENDS",
    "DataError",
    "as_array",
    "effective_tokens",
    "head_weights",
    "is_fixed",
    "page_weights",
    "rounded",
    "validate_data",
    "view_attends",
]

ATTENDS = ("causal", "bidirectional", "cross")  # a view's own mask (its "attends")


class DataError(_AttnlabDataError):
    """The data dict does not have the shape the page reads (also a ValueError)."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_encoded(values: Mapping, n_rows: int, n_cols: int | None, where: str) -> None:
    """An encoded matrix (``attnlab.explorer.page.encoding``): its format, shape and byte count."""
    shape = values.get("shape")
    if values.get("enc") not in ("f16", "u8") or not isinstance(values.get("b64"), str):
        raise DataError("%s: an encoded matrix needs enc 'f16' or 'u8' and b64 text", where)
    if (not isinstance(shape, Sequence) or len(shape) != 2 or shape[0] != n_rows
            or not _positive_int(shape[1]) or (n_cols is not None and shape[1] != n_cols)):
        if n_cols:
            raise DataError("%s.shape: expected [%s, %s], got %r", where, n_rows, n_cols, shape)
        raise DataError("%s.shape: expected [%s, width], got %r", where, n_rows, shape)
    try:
        decode(values)
    except (ValueError, TypeError, KeyError) as err:
        raise DataError("%s: the encoded matrix does not decode (%s)", where, err) from err


def _check_grid(values: Any, n_rows: int, n_cols: int | None, where: str) -> None:
    """``values`` must be ``n_rows`` rows of ``n_cols`` (or any one width) finite numbers,
    or an encoded matrix of that shape.

    Checked in NumPy (a page of a 12-layer model holds millions of numbers); booleans
    inside a row of numbers are read as 0 and 1.
    """
    if is_encoded(values):
        _check_encoded(values, n_rows, n_cols, where)
        return
    if not isinstance(values, Sequence) or isinstance(values, str) or len(values) != n_rows:
        raise DataError("%s: expected %s rows of numbers", where, n_rows)
    try:
        a = np.asarray(values)
    except ValueError:  # rows of different lengths
        a = None
    first = values[0] if n_rows else ()
    width = n_cols if n_cols is not None else (len(first) if isinstance(first, Sequence) else 0)
    if a is None or a.ndim != 2 or a.shape[1] != width or width == 0 or a.dtype.kind not in "iuf":
        for i, row in enumerate(values):  # find the row to name
            if not isinstance(row, Sequence) or len(row) != width or width == 0:
                if width:
                    raise DataError("%s[%s]: expected %s numbers", where, i, width)
                raise DataError("%s[%s]: expected the same number of numbers", where, i)
            if not all(_is_number(x) for x in row):
                raise DataError("%s[%s]: every entry must be a finite number", where, i)
        raise DataError("%s: expected rows of numbers", where)
    bad = ~np.isfinite(a).all(axis=1) if a.dtype.kind == "f" else np.zeros(n_rows, bool)
    if bad.any():
        raise DataError("%s[%s]: every entry must be a finite number", where,
                        int(np.argmax(bad)))


def _check_strings(items: Any, where: str) -> None:
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise DataError("%s: expected a list of strings", where)
    if not items:
        raise DataError("%s: must not be empty", where)
    if not all(isinstance(t, str) for t in items):
        raise DataError("%s: every entry must be a string", where)


def _check_labelled(m: Any, where: str) -> None:
    if not isinstance(m, Mapping):
        raise DataError("%s: expected {'rows', 'cols', 'values'}", where)
    _check_strings(m.get("rows"), f"{where}.rows")
    _check_strings(m.get("cols"), f"{where}.cols")
    _check_grid(m.get("values"), len(m["rows"]), len(m["cols"]), f"{where}.values")


def _positive_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def _width(m: Any) -> int:
    """Columns of a checked matrix, plain or encoded."""
    return int(m["shape"][1]) if is_encoded(m) else len(m[0])


def as_array(m: Any) -> np.ndarray:
    """A matrix of the data (nested lists, or encoded) as float64 NumPy."""
    return decode(m) if is_encoded(m) else np.asarray(m, dtype=np.float64)


def is_fixed(head: Mapping[str, Any]) -> bool:
    """True for a head given only by its weights: the switches cannot recompute it."""
    return "scores" not in head and not ("q" in head and "k" in head)


def view_attends(view: Mapping[str, Any]) -> str | None:
    """The view's own mask: its ``attends``, "cross" for a view with ``sources`` that does
    not say, and None for a view the page's causal switch governs."""
    return view.get("attends", "cross" if "sources" in view else None)


def _check_head(h: Any, n: int, m: int, where: str) -> None:
    if not isinstance(h, Mapping):
        raise DataError("%s: expected a dict", where)
    if not isinstance(h.get("name"), str):
        raise DataError("%s.name: expected a string", where)
    if not _positive_int(h.get("d_k")):
        raise DataError("%s.d_k: expected a positive integer, got %r", where, h.get("d_k"))
    if ("q" in h) != ("k" in h):
        raise DataError("%s: q and k go together", where)
    if "q" in h:
        _check_grid(h["q"], n, None, f"{where}.q")
        _check_grid(h["k"], m, _width(h["q"]), f"{where}.k")
        if "dims" in h:
            _check_strings(h["dims"], f"{where}.dims")
            if len(h["dims"]) != _width(h["q"]):
                raise DataError("%s: expected one name per q dimension", f"{where}.dims")
    for key in ("scores", "bias", "weights"):
        if key in h:
            _check_grid(h[key], n, m, f"{where}.{key}")
    if "window" in h and not _positive_int(h["window"]):
        raise DataError("%s.window: expected a positive integer", where)
    if is_fixed(h) and "weights" not in h:
        raise DataError("%s: expected q and k, scores, or weights", where)
    if "note" in h and not isinstance(h["note"], str):
        raise DataError("%s.note: expected a string", where)
    for key in ("w_q", "w_k", "features"):
        if key in h:
            _check_labelled(h[key], f"{where}.{key}")


def _check_composed(c: Any, n: int, n_layers: int, where: str) -> None:
    if not isinstance(c, Mapping) or not isinstance(c.get("note"), str):
        raise DataError("%s: expected {'rollout', 'note'} (and 'value_weighted')", where)
    for key in ("rollout", "value_weighted"):
        if key not in c and key == "value_weighted":
            continue
        layers = c.get(key)
        if not isinstance(layers, Sequence) or len(layers) != n_layers:
            raise DataError("%s.%s: expected one n×n matrix per layer (%s)", where, key, n_layers)
        for li, m in enumerate(layers):
            _check_grid(m, n, n, f"{where}.{key}[{li}]")


def _check_sources(view: Mapping[str, Any], where: str) -> int:
    """A view's ``sources`` and ``attends`` agree; returns m, the number of its keys."""
    attends = view.get("attends")
    if "attends" in view and attends not in ATTENDS:
        raise DataError("%s.attends: expected one of %s, got %r", where, ", ".join(ATTENDS),
                        attends)  # fmt: skip
    if "sources" not in view:
        if attends == "cross":
            raise DataError("%s.sources: a cross view needs its source tokens", where)
        return len(view["tokens"])
    _check_strings(view["sources"], f"{where}.sources")
    if attends == "causal":
        raise DataError("%s.sources: a causal self-attention has no sources (its keys are its "
                        "own tokens)", where)  # fmt: skip
    if attends == "bidirectional":
        raise DataError("%s.sources: a bidirectional self-attention has no sources (its keys "
                        "are its own tokens)", where)  # fmt: skip
    if "composed" in view:
        raise DataError("%s.composed: a view with sources has no composed attention", where)
    return len(view["sources"])


def validate_data(data: Any) -> None:
    """Raise DataError (a ValueError) naming the first part of ``data`` the page cannot read."""
    if not isinstance(data, Mapping):
        raise DataError("explorer data must be a dict, got %s", type(data).__name__)
    for key in ("title", "description"):
        if not isinstance(data.get(key), str):
            raise DataError("data.%s: expected a string", key)
    for key in ("causal", "scale"):
        if key in data and not isinstance(data[key], bool):
            raise DataError("data.%s: expected true or false", key)
    encoding = data.get("encoding", {"precision": ""})
    if not isinstance(encoding, Mapping) or not isinstance(encoding.get("precision"), str):
        raise DataError("data.encoding: expected {'precision': str}")
    views = data.get("views")
    if not isinstance(views, Sequence) or not views:
        raise DataError("data.views: expected a non-empty list")
    for v, view in enumerate(views):
        where = f"views[{v}]"
        if not isinstance(view, Mapping) or not isinstance(view.get("name"), str):
            raise DataError("%s: expected a dict with a string 'name'", where)
        _check_strings(view.get("tokens"), f"{where}.tokens")
        if "given" in view and not isinstance(view["given"], bool):
            raise DataError("%s.given: expected true or false", where)
        if "fixed" in view and not isinstance(view["fixed"], str):
            raise DataError("%s.fixed: expected a string (the reason)", where)
        m = _check_sources(view, where)
        layers = view.get("layers")
        if not isinstance(layers, Sequence) or not layers:
            raise DataError("%s.layers: expected a non-empty list", where)
        for li, layer in enumerate(layers):
            heads = layer.get("heads") if isinstance(layer, Mapping) else None
            if not isinstance(heads, Sequence) or not heads:
                raise DataError("%s.layers[%s].heads: expected a non-empty list", where, li)
            for hi, h in enumerate(heads):
                _check_head(h, len(view["tokens"]), m, f"{where}.layers[{li}].heads[{hi}]")
                if is_fixed(h) and "fixed" not in view:
                    raise DataError("%s.fixed: a head has only weights; say why", where)
        if "composed" in view:
            _check_composed(view["composed"], len(view["tokens"]), len(layers),
                            f"{where}.composed")  # fmt: skip


def _masked_softmax(s: np.ndarray, causal: bool, window: int | None) -> np.ndarray:
    """Row softmax of s (n, m); under ``causal`` (only where m = n) masked keys get exactly 0."""
    if causal:
        back = np.arange(s.shape[0])[:, None] - np.arange(s.shape[1])[None, :]  # (n, n) i - j
        allowed = (back >= 0) & ((back < window) if window else True)
        s = np.where(allowed, s, -np.inf)
    return softmax(s)  # exp(-inf) = 0 exactly


def page_weights(scores: Any, d_k: int, *, causal: bool, scale: bool = True) -> np.ndarray:
    """``softmax(scores / √d_k)`` per row of raw scores (n, n) (no division when ``scale``
    is False); with ``causal`` the keys after the query get exactly 0."""
    s = np.asarray(scores, dtype=np.float64) / (math.sqrt(d_k) if scale else 1.0)  # (n, n)
    return _masked_softmax(s, causal, None)


def head_weights(
    head: Mapping[str, Any],
    *,
    causal: bool,
    scale: bool,
    own: bool = False,
    attends: str | None = None,
) -> np.ndarray:
    """The weights (n, m) the page shows for ``head`` under the switches, in NumPy.

    ``own`` says the switches are at the data's starting state, where a head's
    own ``weights`` (if given) are shown as they are; a fixed head always shows them.
    ``attends`` is the head's view's own mask (``view_attends``): when set, the causal
    switch (``causal``) is ignored and the view's mask applies ("causal" masks later
    keys; "bidirectional" and "cross" mask nothing).
    """
    if attends is not None and attends not in ATTENDS:
        raise ValueError(f"attends must be one of {', '.join(ATTENDS)} or None, got {attends!r}")
    if "weights" in head and (own or is_fixed(head)):
        return as_array(head["weights"])
    if "q" in head:
        raw = as_array(head["q"]) @ as_array(head["k"]).T  # (n, d) @ (d, m) -> (n, m)
    else:
        raw = as_array(head["scores"])  # (n, m)
    s = raw / math.sqrt(head["d_k"]) if scale else raw
    if "bias" in head:
        s = s + as_array(head["bias"])
    masked = causal if attends is None else attends == "causal"
    return _masked_softmax(s, masked, head.get("window"))


def rounded(x: Any, digits: int = 7) -> list:
    """``x`` as nested lists of floats with ``digits`` significant digits (float32 holds
    about 7), so the page's JSON stays short; zeros and exact values pass unchanged.

    >>> rounded([0.1234567891, -2.0, 0.0], 4)
    [0.1235, -2.0, 0.0]
    """
    a = np.asarray(x, dtype=np.float64)
    mag = np.floor(np.log10(np.where(a == 0, 1.0, np.abs(a))))  # exponent of each entry
    factor = 10.0 ** (digits - 1 - mag)
    return (np.round(a * factor) / factor).tolist()
