"""One self-contained HTML page that shows attention weights, computed in the page.

Dimension legend: ``n`` tokens of a view, ``r``/``c`` rows/columns of a small
labelled matrix (a head's W_Q, W_K or feature table).

The page takes one JSON-able dict, the *data*::

    {"title": str, "description": str (one sentence: what the page shows),
     "causal": bool (optional, starting state of the causal switch, default False),
     "views": [{"name": str, "tokens": [str] * n,
                "layers": [{"heads": [{"name": str,
                                       "scores": n×n raw, UNSCALED q·k scores,
                                       "d_k": int,
                                       "note": str (optional),
                                       "w_q", "w_k", "features": (optional)
                                           {"rows": [str] * r, "cols": [str] * c,
                                            "values": r×c numbers}}]}]}]}

The weights are computed by the page's script, row by row:
``softmax(scores / √d_k)`` (or without the division), with keys after the
query set to exactly 0 under the causal mask, so both switches recompute
live; each row's effective number of tokens is ``exp(entropy)``.

Safety: the data travels as JSON inside ``<script type="application/json">``
with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, and the script writes
every token and title with ``textContent``. A Content-Security-Policy allows
only the page's own script (by hash) and no network except the page's own
server, so the page works offline.

Left out: attention to padding or special tokens, value vectors and head
outputs (only where each word looks, not what it takes), and weights supplied
directly instead of scores.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.files import write_text


class DataError(ValueError):
    """The data dict does not have the shape the page reads."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_grid(values: Any, n_rows: int, n_cols: int, where: str) -> None:
    if not isinstance(values, Sequence) or len(values) != n_rows:
        raise DataError(f"{where}: expected {n_rows} rows of {n_cols} numbers")
    for i, row in enumerate(values):
        if not isinstance(row, Sequence) or len(row) != n_cols:
            raise DataError(f"{where}[{i}]: expected {n_cols} numbers")
        if not all(_is_number(x) for x in row):
            raise DataError(f"{where}[{i}]: every entry must be a finite number")


def _check_strings(items: Any, where: str, allow_empty: bool = False) -> None:
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise DataError(f"{where}: expected a list of strings")
    if not items and not allow_empty:
        raise DataError(f"{where}: must not be empty")
    if not all(isinstance(t, str) for t in items):
        raise DataError(f"{where}: every entry must be a string")


def _check_labelled(m: Any, where: str) -> None:
    if not isinstance(m, Mapping):
        raise DataError(f"{where}: expected {{'rows', 'cols', 'values'}}")
    _check_strings(m.get("rows"), f"{where}.rows")
    _check_strings(m.get("cols"), f"{where}.cols")
    _check_grid(m.get("values"), len(m["rows"]), len(m["cols"]), f"{where}.values")


def _check_head(h: Any, n: int, where: str) -> None:
    if not isinstance(h, Mapping):
        raise DataError(f"{where}: expected a dict")
    if not isinstance(h.get("name"), str):
        raise DataError(f"{where}.name: expected a string")
    d_k = h.get("d_k")
    if not isinstance(d_k, int) or isinstance(d_k, bool) or d_k < 1:
        raise DataError(f"{where}.d_k: expected a positive integer, got {d_k!r}")
    _check_grid(h.get("scores"), n, n, f"{where}.scores")
    if "note" in h and not isinstance(h["note"], str):
        raise DataError(f"{where}.note: expected a string")
    for key in ("w_q", "w_k", "features"):
        if key in h:
            _check_labelled(h[key], f"{where}.{key}")


def validate_data(data: Any) -> None:
    """Raise DataError (a ValueError) naming the first part of ``data`` the page cannot read."""
    if not isinstance(data, Mapping):
        raise DataError(f"explorer data must be a dict, got {type(data).__name__}")
    for key in ("title", "description"):
        if not isinstance(data.get(key), str):
            raise DataError(f"data.{key}: expected a string")
    if "causal" in data and not isinstance(data["causal"], bool):
        raise DataError("data.causal: expected true or false")
    views = data.get("views")
    if not isinstance(views, Sequence) or not views:
        raise DataError("data.views: expected a non-empty list")
    for v, view in enumerate(views):
        where = f"views[{v}]"
        if not isinstance(view, Mapping) or not isinstance(view.get("name"), str):
            raise DataError(f"{where}: expected a dict with a string 'name'")
        _check_strings(view.get("tokens"), f"{where}.tokens")
        layers = view.get("layers")
        if not isinstance(layers, Sequence) or not layers:
            raise DataError(f"{where}.layers: expected a non-empty list")
        for li, layer in enumerate(layers):
            heads = layer.get("heads") if isinstance(layer, Mapping) else None
            if not isinstance(heads, Sequence) or not heads:
                raise DataError(f"{where}.layers[{li}].heads: expected a non-empty list")
            for hi, h in enumerate(heads):
                _check_head(h, len(view["tokens"]), f"{where}.layers[{li}].heads[{hi}]")


def page_weights(scores: Any, d_k: int, *, causal: bool, scale: bool = True) -> np.ndarray:
    """The weights the page shows, in NumPy (the page's script does the same), shape (n, n).

    ``softmax(scores / √d_k)`` per row (no division when ``scale`` is False);
    with ``causal`` the keys after the query get exactly 0.
    """
    s = np.asarray(scores, dtype=np.float64) / (math.sqrt(d_k) if scale else 1.0)  # (n, n)
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))  # exp(-inf) = 0 exactly
    return e / e.sum(axis=-1, keepdims=True)


def effective_tokens(weights: Any) -> np.ndarray:
    """exp(entropy) of each row: 1 for a one-hot row, n for a uniform one. Shape (n,)."""
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log(np.where(w > 0, w, 1.0))  # 0·log 0 counts as 0
    return np.exp(-(w * logs).sum(axis=-1))


def script_json(obj: Any) -> str:
    """JSON that is safe between ``<script>`` tags: no ``</script>``, no line separators.

    >>> script_json({"t": "</script>&"})
    '{"t":"\\\\u003c/script\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(raw, escaped)
    return text


def _asset(name: str, closing: str) -> str:
    text = resources.files("attnlab.explorer").joinpath(name).read_text(encoding="utf-8")
    if closing in text.lower():  # would end the inline element early
        raise RuntimeError(f"{name} must not contain {closing!r}")
    return text


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'self'"
    )


_FORM = """
<form class="ask" data-testid="form">
  <label for="attnlab-text">Sentence</label>
  <input id="attnlab-text" name="text" type="text" data-testid="text" autocomplete="off"
         spellcheck="false" required>
  <button type="submit" data-testid="submit">Show attention</button>
  <span data-testid="status" aria-live="polite"></span>
</form>
<p class="error" data-testid="error" role="alert" hidden></p>"""


def render_page(data: Mapping[str, Any], *, api_url: str | None = None, text: str = "") -> str:
    """The explorer for ``data`` as one HTML document (script and styles inlined).

    With ``api_url`` the page also has a text box; a typed sentence is sent as
    ``GET {api_url}?text=…`` and the JSON answer (new data, or ``{"error": …}``)
    replaces the page's data. ``text`` fills the box at first.
    """
    validate_data(data)
    js = _asset("explorer.js", "</script")
    css = _asset("explorer.css", "</style")
    title = html.escape(data["title"])
    config = {"api": api_url, "text": text}
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{html.escape(_csp(js))}">
<title>{title}</title>
<style>
{css}</style>
</head>
<body>
<main id="explorer">
<header>
  <h1 data-testid="title">{title}</h1>
  <p class="description" data-testid="description">{html.escape(data["description"])}</p>
</header>{_FORM if api_url else ""}
<div class="controls">
  <label data-testid="view-control">View <select data-testid="view-select"></select></label>
  <label>Layer <select data-testid="layer-select"></select></label>
  <label>Head <select data-testid="head-select"></select></label>
  <label><input type="checkbox" data-testid="causal"> causal mask</label>
  <label><input type="checkbox" data-testid="scale" checked> divide by √d_k</label>
</div>
<p class="formula" data-testid="formula"></p>
<p class="note" data-testid="note"></p>
<div class="words" data-testid="words" role="group" aria-label="Words: choose one"></div>
<div class="panels">
  <section class="panel" aria-live="polite">
    <h2 data-testid="row-title"></h2>
    <p data-testid="row-eff"></p>
    <ol class="bars" data-testid="row"></ol>
  </section>
  <section class="panel">
    <h2>All rows (shading = weight)</h2>
    <div class="scroll"><table class="matrix" data-testid="matrix"></table></div>
  </section>
</div>
<details data-testid="head-weights">
  <summary>How this head computes its scores</summary>
  <div data-testid="matrices"></div>
</details>
<noscript><p>This page needs JavaScript to compute the weights.</p></noscript>
</main>
<script type="application/json" id="attnlab-data">{script_json(data)}</script>
<script type="application/json" id="attnlab-config">{script_json(config)}</script>
<script>{js}</script>
</body>
</html>
"""


def write_page(data: Mapping[str, Any], path: str | Path) -> Path:
    """Write the page for ``data`` to ``path`` (parent folders created); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render_page(data))
    return path


class ExplorerView:
    """The explorer for a notebook: ``display(ExplorerView(data))`` shows it inline.

    ``_repr_html_`` puts the page in a sandboxed ``<iframe srcdoc>`` (the page
    escaped as an attribute), so its script and styles stay apart from the
    notebook's.
    """

    def __init__(self, data: Mapping[str, Any], height: int = 760) -> None:
        validate_data(data)
        self.data = data
        self.height = height

    def html(self) -> str:
        """The standalone page."""
        return render_page(self.data)

    def save(self, path: str | Path) -> Path:
        """Write the standalone page to ``path``."""
        return write_page(self.data, path)

    def _repr_html_(self) -> str:
        return (
            f'<iframe title="{html.escape(self.data["title"])}" sandbox="allow-scripts" '
            f'style="width:100%;height:{int(self.height)}px;border:0" '
            f'srcdoc="{html.escape(self.html(), quote=True)}"></iframe>'
        )
