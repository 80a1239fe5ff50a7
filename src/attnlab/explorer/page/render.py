"""One self-contained HTML page that shows attention, computed in the page from one data dict.

The data dict (its shape, checks and arithmetic: ``attnlab.explorer.page.data``)
travels as JSON inside ``<script type="application/json">`` with ``<``, ``>``,
``&``, U+2028 and U+2029 escaped. The page's script — the parts in
``SCRIPT_PARTS``, joined in that order inside one function — computes the
weights under the switches and draws three views: one head, every head in a
grid, and the heads of a layer overlaid. It writes every token and title
with ``textContent``, ``setAttribute`` or canvas text, never as markup. A
Content-Security-Policy allows only that script (by hash) and no network
except the page's own server, so the page works offline; exports are made in
the page, as downloads.

A large page carries its matrices in float16 (``attnlab.explorer.page.encoding``):
the first script part, ``decode.js``, turns them back into numbers before
the others read the data, and the page states the precision measured.

Left out: attention to padding or special tokens, value vectors and head
outputs (only where each token looks, and, in the composed views, the norms
of what it takes).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from attnlab.explorer.page.data import (  # noqa: F401 (re-exported: the page's data and arithmetic)
    DataError,
    effective_tokens,
    head_weights,
    page_weights,
    validate_data,
)
from attnlab.explorer.page.encoding import ENCODE_ABOVE, encode_page, matrix_count
from attnlab.files import write_text
from attnlab.i18n import catalogue, resolve_lang
from attnlab.i18n import text as _text

DOMAIN = "explorer"  # the interface's text: attnlab/i18n/explorer.json, English and Spanish


def say(key: str, lang: str, **fields: object) -> str:
    """The interface text ``key`` in ``lang`` (``en`` or ``es``)."""
    return _text(DOMAIN, key, lang, **fields)


def interface_text(lang: str) -> dict[str, str]:
    """Every interface string in ``lang``, as the page's script reads it (``ui`` in core.js)."""
    return {key: entry[lang] for key, entry in catalogue(DOMAIN).items()}

SCRIPT_PARTS = ("decode.js", "core.js", "head.js", "grid.js", "overlay.js", "export.js",
                "main.js", "roles.js")


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
    text = resources.files("attnlab.explorer").joinpath("web", name).read_text(encoding="utf-8")
    if closing in text.lower():  # would end the inline element early
        raise RuntimeError(f"{name} must not contain {closing!r}")
    return text


def page_script() -> str:
    """The page's whole script: its parts in order, inside one strict-mode function."""
    parts = "\n".join(_asset(name, "</script") for name in SCRIPT_PARTS)
    return f'(() => {{\n"use strict";\n{parts}\n}})();\n'


def counted(n: int, noun: str, lang: str = "en") -> str:
    """``1 layer``, ``2 layers``, ``3 cabezas``: a count with its noun in the right number
    (``count.<noun>`` and ``count.<noun>s`` in the catalogue; no "layer(s)")."""
    return say(f"count.{noun}" if n == 1 else f"count.{noun}s", lang, n=n)


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data: blob:; connect-src 'self'; base-uri 'none'; form-action 'self'"
    )


def _form(max_chars: int | None, t: Any) -> str:
    limit = f' maxlength="{int(max_chars)}"' if max_chars else ""
    return f"""
<form class="ask" data-testid="form">
  <label for="attnlab-text">{t("form.sentence")}</label>
  <input id="attnlab-text" name="text" type="text" data-testid="text" autocomplete="off"
         spellcheck="false" required{limit}>
  <button type="submit" data-testid="submit">{t("form.submit")}</button>
  <span data-testid="status" aria-live="polite"></span>
</form>
<p class="error" data-testid="error" role="alert" hidden></p>"""


def _body(t: Any) -> str:
    """The page's fixed markup, its words from the catalogue (``t``: key -> escaped text)."""
    return f"""
<div class="modes" role="group" aria-label="{t("modes.label")}">
  <button type="button" data-testid="mode-head">{t("mode.head")}</button>
  <button type="button" data-testid="mode-grid">{t("mode.grid")}</button>
  <button type="button" data-testid="mode-overlay">{t("mode.overlay")}</button>
</div>
<div class="controls">
  <label data-testid="view-control">{t("control.sentence")}
    <select data-testid="view-select"></select></label>
  <label data-testid="layer-control">{t("control.layer")}
    <select data-testid="layer-select"></select></label>
  <label data-testid="head-control">{t("control.head")}
    <select data-testid="head-select"></select></label>
  <label><input type="checkbox" data-testid="causal"> {t("control.causal")}</label>
  <label><input type="checkbox" data-testid="scale" checked> {t("control.scale")}</label>
  <span class="export">{t("control.download")}
    <button type="button" data-testid="export-png">PNG</button>
    <button type="button" data-testid="export-csv">CSV</button>
    <button type="button" data-testid="export-json">JSON</button></span>
  <a data-testid="link" href="#">{t("control.link")}</a>
</div>
<p class="formula" data-testid="formula"></p>
<p class="fixed" data-testid="fixed" hidden></p>
<p class="note" data-testid="note"></p>
<div class="words" data-testid="words" role="group" aria-label="{t("tokens.label")}"></div>
<section data-testid="panel-head">
  <div class="panels">
    <section class="panel" aria-live="polite">
      <h2 data-testid="row-title"></h2>
      <p data-testid="row-eff"></p>
      <ol class="bars" data-testid="row"></ol>
      <h2 data-testid="col-title"></h2>
      <ol class="bars" data-testid="col"></ol>
    </section>
    <section class="panel">
      <h2>{t("matrix.title.table")}</h2>
      <div class="scroll"><table class="matrix" data-testid="matrix"></table></div>
    </section>
  </div>
  <details data-testid="inside" open>
    <summary>{t("inside.summary")}</summary>
    <div data-testid="inside-body"></div>
  </details>
  <details data-testid="head-weights">
    <summary>{t("weights.summary")}</summary>
    <div data-testid="matrices"></div>
  </details>
</section>
<section data-testid="panel-grid" hidden>
  <p class="note">{t("grid.note")}</p>
  <div class="grid" data-testid="grid"></div>
</section>
<section data-testid="panel-overlay" hidden>
  <div class="swatches" data-testid="overlay-heads" role="group"
       aria-label="{t("overlay.label")}"></div>
  <div class="overlay">
    <div class="scroll" data-testid="lines-box"></div>
    <div class="scroll" data-testid="overlay-matrix-box"></div>
  </div>
</section>
<noscript><p>{t("noscript")}</p></noscript>"""


def render_page(
    data: Mapping[str, Any],
    *,
    api_url: str | None = None,
    text: str = "",
    max_chars: int | None = None,
    encode: bool | None = None,
    lang: str = "en",
) -> str:
    """The explorer for ``data`` as one HTML document (script and styles inlined).

    ``encode`` puts the matrices in float16 (``attnlab.explorer.page.encoding``), and
    the page states the precision; by default a page is encoded when its
    matrices hold more than ``ENCODE_ABOVE`` numbers (about 2 MB as text), so
    small pages keep their numbers as written.

    With ``api_url`` the page also has a text box (at most ``max_chars``
    characters); a typed sentence is sent as ``GET {api_url}?text=…`` and the
    JSON answer (new data, or ``{"error": …}``) replaces the page's data.
    ``text`` fills the box at first. ``lang`` (``en`` or ``es``) is the language of the
    interface: its buttons, switches, captions and notes (``attnlab/i18n/explorer.json``);
    the data's own text (title, notes) is as the data says.
    """
    lang = resolve_lang(lang)

    def t(key: str) -> str:
        return html.escape(say(key, lang))

    validate_data(data)
    if encode or (encode is None and matrix_count(data) > ENCODE_ABOVE):
        data = encode_page(data)
    js = page_script()
    css = _asset("explorer.css", "</style")
    title = html.escape(data["title"])
    config = {"api": api_url, "text": text, "maxChars": max_chars}
    return f"""<!doctype html>
<html lang="{lang}">
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
</header>{_form(max_chars, t) if api_url else ""}{_body(t)}
</main>
<script type="application/json" id="attnlab-data">{script_json(data)}</script>
<script type="application/json" id="attnlab-config">{script_json(config)}</script>
<script type="application/json" id="attnlab-ui">{script_json(interface_text(lang))}</script>
<script>{js}</script>
</body>
</html>
"""


def write_page(
    data: Mapping[str, Any], path: str | Path, *, encode: bool | None = None, lang: str = "en"
) -> Path:
    """Write the page for ``data`` to ``path`` atomically (parent folders created): a failure
    leaves any previous file as it was. ``encode`` and ``lang`` as in ``render_page``. Returns
    the path."""
    return write_text(Path(path), render_page(data, encode=encode, lang=lang))


class ExplorerView:
    """The explorer for a notebook: ``display(ExplorerView(data))`` shows it inline.

    ``_repr_html_`` puts the page in a sandboxed ``<iframe srcdoc>`` (the page
    escaped as an attribute): its script runs even where a notebook does not
    run scripts of its outputs, and its script and styles stay apart from the
    notebook's. Downloads are allowed; nothing reaches the network.
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        height: int = 900,
        encode: bool | None = None,
        lang: str = "en",
    ) -> None:
        validate_data(data)
        self.data = data
        self.height = height
        self.encode = encode  # as in render_page: None encodes large pages only
        self.lang = resolve_lang(lang)  # the interface's language

    def html(self) -> str:
        """The standalone page."""
        return render_page(self.data, encode=self.encode, lang=self.lang)

    def save(self, path: str | Path) -> Path:
        """Write the standalone page to ``path``."""
        return write_page(self.data, path, encode=self.encode, lang=self.lang)

    def __repr__(self) -> str:
        """One line where HTML is not shown (a plain terminal, an untrusted notebook, GitHub's
        preview): what the page shows and how to see it."""
        views, lang = self.data["views"], self.lang
        first = views[0]
        heads = max(len(layer["heads"]) for layer in first["layers"])
        shape = say("repr.shape", lang, layers=counted(len(first["layers"]), "layer", lang),
                    heads=counted(heads, "head", lang),
                    tokens=counted(len(first["tokens"]), "token", lang))  # fmt: skip
        more = say("repr.more", lang, n=len(views) - 1) if len(views) > 1 else ""
        return say("repr", lang, title=self.data["title"], shape=shape, more=more)

    def _repr_html_(self) -> str:
        return (
            f'<iframe title="{html.escape(self.data["title"])}" '
            'sandbox="allow-scripts allow-downloads" '
            f'style="width:100%;height:{int(self.height)}px;border:0" '
            f'srcdoc="{html.escape(self.html(), quote=True)}"></iframe>'
        )
