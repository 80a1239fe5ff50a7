"""The report's HTML page: the Markdown rendered, figures inlined, sized for a laptop screen.

``markdown-it-py`` renders CommonMark with tables and raw HTML off, so a record's text can
never inject markup; the few elements Markdown has no syntax for are made here, in the
renderer, from safe tokens: ids on the experiment headings (the contents table links to
them), a caption's style on the paragraph under a figure, the natural size of each figure
as ``width``/``height`` attributes (the style sheet scales it down to the column, keeping
its shape), and a verdict's colour.

At 1280 × 800 nothing scrolls sideways: the column is at most 1180 px, a figure at most
the column, and a table or code block wider than the column scrolls inside its own box.
"""

from __future__ import annotations

import base64
import html
import re
import struct
from pathlib import Path
from typing import Any

from attnlab.kit.claims import STATUSES
from attnlab.report.words import t, verdict

CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2125;
       max-width: 1180px; margin: 1.5rem auto; padding: 0 1.2rem; overflow-wrap: break-word; }
h1 { border-bottom: 2px solid #1d2125; padding-bottom: .3rem; font-size: 1.7rem; }
h2 { border-bottom: 1px solid #ccd; padding-bottom: .2rem; margin-top: 2.5rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: 13px; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ccd; padding: .25rem .5rem; vertical-align: top; }
th { background: #eef0f4; }
tbody tr:nth-child(even) { background: #f8f9fb; }
code { background: #f1f2f4; padding: 0 .25rem; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: #f1f2f4; padding: .6rem; overflow-x: auto; max-width: 100%; }
img { max-width: 100%; height: auto; border: 1px solid #dde; display: block; }
p.caption, p.caption em { color: #555; font-size: 13.5px; margin-top: .3rem; }
table.claims { display: table; width: 100%; table-layout: fixed; }
table.claims th:nth-child(1) { width: 2.5em; } table.claims th:nth-child(2) { width: 28%; }
table.claims th:nth-child(3) { width: 8.5em; } table.claims th:nth-child(4) { width: 20%; }
table.claims th:nth-child(5) { width: 10%; } table.claims th:nth-child(6) { width: 12%; }
table.claims th:nth-child(7) { width: 5.5em; }
table.claims td { overflow-wrap: break-word; }
.missing { color: #a33; }
.held { color: #1a7f37; } .not-held { color: #c62828; } .inconclusive { color: #5b5f97; }
.skipped { color: #8a6d00; } .failed, .error { color: #c62828; }
"""

_NUMBERED = re.compile(r"^(\d+)\. ")


def data_uri(path: Path) -> str:
    """``data:image/png;base64,…`` of a PNG file."""
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of a PNG from its header, or None when it is not one."""
    try:
        head = Path(path).read_bytes()[:24]
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def anchor(index: int) -> str:
    """The id of the heading of the ``index``-th experiment section (the contents link)."""
    return f"exp-{index}"


def _only_image(token: Any) -> bool:
    children = [c for c in (token.children or []) if c.type != "softbreak"]
    return token.type == "inline" and len(children) == 1 and children[0].type == "image"


def to_html(markdown: str, image_src: Any = None, table_class: dict[str, str] | None = None,
            missing: str = "figure not available: {path}") -> str:
    """The HTML body of ``markdown`` (CommonMark + tables, raw HTML off); each image's
    ``src`` is passed through ``image_src``, which returns ``(src, size)`` or a plain src
    (None: the ``missing`` line). ``table_class`` gives a table whose first header cell
    reads a key the class of its value."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        path = token.attrGet("src") or ""
        got = image_src(path) if image_src is not None else None
        src, size = got if isinstance(got, tuple) else (got, None)
        alt = html.escape(token.content)
        if src is None:
            return f'<span class="missing">{html.escape(missing.format(path=path))}</span>'
        dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
        return f'<img src="{html.escape(src)}" alt="{alt}"{dims}>'

    def heading_open(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        number = _NUMBERED.match(tokens[idx + 1].content) if token.tag == "h2" else None
        if number:
            token.attrSet("id", anchor(int(number.group(1))))
        return renderer.renderToken(tokens, idx, options, env)

    def paragraph_open(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        if idx >= 2 and _only_image(tokens[idx - 2]):  # the paragraph under a figure
            tokens[idx].attrSet("class", "caption")
        return renderer.renderToken(tokens, idx, options, env)

    def table_open(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        first = tokens[idx + 4] if idx + 4 < len(tokens) else None  # table thead tr th inline
        if first is not None and first.type == "inline" and first.content in (table_class or {}):
            tokens[idx].attrSet("class", table_class[first.content])
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("image", image)
    md.add_render_rule("table_open", table_open)
    md.add_render_rule("heading_open", heading_open)
    md.add_render_rule("paragraph_open", paragraph_open)
    return md.render(markdown)


def to_page(markdown: str, title: str, base: Path, lang: str = "en") -> str:
    """A self-contained HTML page: inline CSS, figures as data URIs, no external reference."""
    def image_src(rel: str) -> tuple[str, tuple[int, int] | None] | None:
        path = (base / rel).resolve()
        if path.suffix.lower() != ".png" or not path.is_file():
            return None
        return data_uri(path), png_size(path)

    body = to_html(markdown, image_src, {t("claims.col.n", lang): "claims"},
                   t("page.missing", lang, path="{path}"))
    # colour the verdicts, the longer words first ("not held" holds "held")
    for status in sorted(STATUSES + ("failed",), key=lambda s: -len(verdict(s, lang))):
        word = html.escape(verdict(status, lang))
        cls = status.replace(" ", "-")
        body = body.replace(f"<strong>{word}</strong>", f'<strong class="{cls}">{word}</strong>')
    return (
        f"<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title.replace('`', ''))}</title>\n"  # a title shows no code marks
        f"<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}</body>\n</html>\n"
    )


__all__ = ["CSS", "anchor", "data_uri", "png_size", "to_html", "to_page"]
