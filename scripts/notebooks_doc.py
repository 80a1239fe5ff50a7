"""The six chapter notebooks in English and Spanish, written from one source each.

``notebooks/source/NN_name.md`` holds a notebook's cells in order: each Markdown cell in both
languages, each code cell once (a cell may add a Spanish version of its code, for a call that
can answer in Spanish, such as ``attnlab.explorer.show(..., lang="es")``). From it this script
writes ``notebooks/NN_name.ipynb`` (English) and ``notebooks/es/NN_name.ipynb`` (Spanish), both
without outputs, as tests/test_notebooks.py wants them.

    python scripts/notebooks_doc.py          # write the twelve notebooks
    python scripts/notebooks_doc.py --check  # exit 1 if one is stale or missing

A source reads as Markdown. A line ``<!-- metadata {...} -->`` gives the notebook's metadata
(JSON); then each cell starts with ``<!-- cell markdown ID -->`` or ``<!-- cell code ID -->``
(``ID`` is the cell's id in both notebooks), and a Markdown cell holds ``<!-- en -->`` and
``<!-- es -->`` parts. A code cell is one fenced block, used by both languages, optionally
followed by ``<!-- es -->`` and the Spanish notebook's block. Blank lines around a part are not
part of the cell.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "source"
LANGS = ("en", "es")
FOLDERS = {"en": NOTEBOOKS, "es": NOTEBOOKS / "es"}
MARKER = re.compile(r"^<!-- (?:cell (markdown|code) (\S+)|(en|es)|metadata (.*)) -->$")
FENCE = re.compile(r"\A```python\n(.*)\n```\Z", re.S)


def parse(text: str, name: str = "source") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The notebook metadata and the cells of a source: ``{"type", "id", "en", "es"}`` each."""
    metadata: dict[str, Any] | None = None
    cells: list[dict[str, Any]] = []
    part: list[str] | None = None  # the lines of the part being read
    for number, line in enumerate(text.split("\n"), 1):
        found = MARKER.match(line)
        if found is None:
            if part is None:
                if line.strip() and not line.startswith("<!--"):
                    raise SystemExit(f"{name}:{number}: text outside a cell")
                continue
            part.append(line)
            continue
        kind, cell_id, lang, meta = found.groups()
        if meta is not None:
            metadata = json.loads(meta)
            part = None
        elif kind is not None:
            cells.append({"type": kind, "id": cell_id, "parts": {}})
            part = cells[-1]["parts"].setdefault("both", []) if kind == "code" else None
        else:
            if not cells or lang in cells[-1]["parts"]:
                raise SystemExit(f"{name}:{number}: <!-- {lang} --> out of place")
            part = cells[-1]["parts"].setdefault(lang, [])
    if metadata is None:
        raise SystemExit(f"{name}: no <!-- metadata {{...}} --> line")
    return metadata, [_cell(c, name) for c in cells]


def _cell(cell: dict[str, Any], name: str) -> dict[str, Any]:
    parts = {k: "\n".join(v).strip("\n") for k, v in cell["parts"].items()}
    where = f"{name}: cell {cell['id']}"
    if cell["type"] == "markdown":
        if sorted(parts) != ["en", "es"] or not all(parts.values()):
            raise SystemExit(f"{where}: a Markdown cell needs an <!-- en --> and an <!-- es --> "
                             "part")
        return {"type": "markdown", "id": cell["id"], **parts}
    if set(parts) - {"both", "es"}:
        raise SystemExit(f"{where}: a code cell has its code and at most an <!-- es --> version")
    code = {}
    for key, block in parts.items():
        fenced = FENCE.match(block)
        if fenced is None:
            raise SystemExit(f"{where}: code must be one ```python block")
        code[key] = fenced.group(1)
    return {"type": "code", "id": cell["id"], "en": code["both"],
            "es": code.get("es", code["both"])}


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def notebook(metadata: dict[str, Any], cells: list[dict[str, Any]], lang: str) -> dict[str, Any]:
    """The nbformat-4 notebook of ``cells`` in ``lang``, without outputs."""
    out = []
    for cell in cells:
        node: dict[str, Any] = {"cell_type": cell["type"], "id": cell["id"], "metadata": {},
                                "source": _lines(cell[lang])}
        if cell["type"] == "code":
            node.update(execution_count=None, outputs=[])
        out.append(node)
    return {"cells": out, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def dumps(nb: dict[str, Any]) -> str:
    """A notebook as stored: indented JSON, keys sorted, non-ASCII kept, one final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def rendered() -> dict[Path, str]:
    """Every generated notebook's path and the text it should hold."""
    sources = sorted(SOURCES.glob("*.md"))
    if not sources:
        raise SystemExit(f"no sources in {SOURCES}")
    out = {}
    for source in sources:
        metadata, cells = parse(source.read_text(encoding="utf-8"), str(source.relative_to(ROOT)))
        for lang in LANGS:
            out[FOLDERS[lang] / f"{source.stem}.ipynb"] = dumps(notebook(metadata, cells, lang))
    return out


def stale() -> list[Path]:
    """The generated notebooks that differ from their source, or are missing."""
    return [path for path, text in rendered().items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        old = stale()
        for path in old:
            print(f"{_name(path)} is not its source's: run "
                  "python scripts/notebooks_doc.py", file=sys.stderr)
        return 1 if old else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path, text in rendered().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {_name(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
