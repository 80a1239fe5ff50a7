"""A small Markdown → HTML converter for the Markdown attnlab itself writes.

The report is written once, as Markdown, and the HTML page is that same text
converted here, so the two never disagree. Only the subset our tables, claims
and report use is understood:

- ``#`` … ``####`` headings;
- pipe tables (a header row, a rule row whose colons set the alignment, body rows;
  ``\\|`` is a literal bar inside a cell);
- ``- `` list items, with indented continuation lines; two trailing spaces
  (or a trailing backslash) break the line;
- images alone on a line, ``![alt](path)``: ``image_src(path)`` gives the ``src``
  (the report passes a function returning a ``data:`` URI, so the page is self-contained);
- fenced code blocks (```` ``` ````), ``---`` rules, paragraphs;
- inline ``**bold**``, ``*italic*`` and ```code```.

Everything else is text, and all text is HTML-escaped first, so a record can
never inject markup. Left out on purpose: links (the page must not point
anywhere), nested lists, raw HTML, reference-style anything.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

ImageSrc = Callable[[str], str | None]

_HEADING = re.compile(r"^(#{1,4})\s+(.*?)\s*#*\s*$")
_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)\s]+)\)\s*$")
_ITEM = re.compile(r"^[-*]\s+(.*)$")
_RULE_CELL = re.compile(r"^\s*:?-{1,}:?\s*$")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])")


def inline(text: str) -> str:
    """Escape ``text`` and apply bold, italic and code spans.

    >>> inline("**a** < `b*c*` and *d*")
    '<strong>a</strong> &lt; <code>b*c*</code> and <em>d</em>'
    """
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(f"<code>{html.escape(m.group(1), quote=False)}</code>")
        return f"\x00{len(spans) - 1}\x00"

    text = _CODE.sub(keep, text)
    text = html.escape(text, quote=False)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    text = _ITALIC.sub(r"<em>\1</em>", text)
    return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], text)


def split_row(line: str) -> list[str]:
    """Cells of a pipe-table row (outer bars optional, ``\\|`` kept as a bar).

    >>> split_row("| a | b \\\\| c |")
    ['a', 'b | c']
    """
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [c.strip().replace("\\|", "|") for c in cells]


def is_table_start(lines: list[str], i: int) -> bool:
    """Line ``i`` is a header row and line ``i + 1`` its rule row."""
    if i + 1 >= len(lines) or not lines[i].lstrip().startswith("|"):
        return False
    rule = split_row(lines[i + 1])
    return bool(rule) and all(_RULE_CELL.match(c) for c in rule)


def table_html(rows: list[str]) -> str:
    """A header row, a rule row and body rows, as an HTML table."""
    header, rule, body = split_row(rows[0]), split_row(rows[1]), [split_row(r) for r in rows[2:]]
    aligns = []
    for c in rule:
        c = c.strip()
        aligns.append("right" if c.endswith(":") and not c.startswith(":")
                      else "center" if c.startswith(":") and c.endswith(":") else "")

    def cell(tag: str, text: str, col: int) -> str:
        align = aligns[col] if col < len(aligns) else ""
        style = f' style="text-align:{align}"' if align else ""
        return f"<{tag}{style}>{inline(text)}</{tag}>"

    width = len(header)
    out = ["<table>", "<thead><tr>" + "".join(cell("th", h, i) for i, h in enumerate(header))
           + "</tr></thead>", "<tbody>"]
    for r in body:
        r = (r + [""] * width)[:max(width, len(r))]
        out.append("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


def _lines_html(parts: list[str]) -> str:
    """Join the lines of a paragraph or item, breaking where a line ends in two spaces."""
    out = []
    for k, line in enumerate(parts):
        hard = line.endswith("  ") or line.endswith("\\")
        text = inline(line.rstrip().rstrip("\\").strip())
        out.append(text + ("<br>" if hard and k < len(parts) - 1 else ""))
    return "\n".join(out)


def slug(text: str) -> str:
    """An id for a heading: lower case, words joined by hyphens.

    >>> slug("3. Why divide by √d_k?")
    '3-why-divide-by-d_k'
    """
    return "-".join(re.findall(r"[a-z0-9_]+", text.lower())) or "section"


def to_html(markdown: str, image_src: ImageSrc | None = None) -> str:
    """The HTML body for ``markdown`` (see the module docstring for the subset)."""
    lines = markdown.splitlines()
    out: list[str] = []
    ids: dict[str, int] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
        elif stripped.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            code = html.escape("\n".join(lines[i + 1:j]), quote=False)
            out.append(f"<pre><code>{code}</code></pre>")
            i = j + 1
        elif m := _HEADING.match(stripped):
            level, text = len(m.group(1)), m.group(2)
            key = slug(text)
            ids[key] = ids.get(key, 0) + 1
            anchor = key if ids[key] == 1 else f"{key}-{ids[key]}"
            out.append(f'<h{level} id="{anchor}">{inline(text)}</h{level}>')
            i += 1
        elif stripped in ("---", "***") and not is_table_start(lines, i):
            out.append("<hr>")
            i += 1
        elif is_table_start(lines, i):
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            out.append(table_html(lines[i:j]))
            i = j
        elif m := _IMAGE.match(stripped):
            alt, path = m.group(1), m.group(2)
            src = image_src(path) if image_src is not None else None
            if src is None:
                out.append(f'<p class="missing">figure not available: {html.escape(path)}</p>')
            else:
                out.append(f'<figure><img src="{html.escape(src)}" alt="{html.escape(alt)}">'
                           f"<figcaption>{inline(alt)}</figcaption></figure>")
            i += 1
        elif _ITEM.match(stripped):
            items: list[str] = []
            while i < len(lines) and (m := _ITEM.match(lines[i].strip())) and \
                    (not items or not lines[i].startswith("  ")):
                parts = [m.group(1) + (" " * 2 if lines[i].endswith("  ") else "")]
                i += 1
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip() \
                        and not _ITEM.match(lines[i].strip()):
                    parts.append(lines[i].strip() + ("  " if lines[i].endswith("  ") else ""))
                    i += 1
                items.append(f"<li>{_lines_html(parts)}</li>")
            out.append("<ul>\n" + "\n".join(items) + "\n</ul>")
        else:
            parts = [line]
            i += 1
            while i < len(lines) and lines[i].strip() and not _starts_block(lines, i):
                parts.append(lines[i])
                i += 1
            out.append(f"<p>{_lines_html(parts)}</p>")
    return "\n".join(out) + "\n"


def _starts_block(lines: list[str], i: int) -> bool:
    s = lines[i].strip()
    return bool(
        _HEADING.match(s) or _IMAGE.match(s) or _ITEM.match(s) or s.startswith("```")
        or is_table_start(lines, i)
    )
