"""docs/experiments.md's section per experiment, assembled from the experiments' folders.

Each experiment's folder owns its section of the page: ``src/attnlab/experiments/NAME/about.md``
(a ``## Heading`` and its text; links are relative to docs/, where the section is read). The
page holds them, in the registry's order, between ``<!-- experiments:begin -->`` and
``<!-- experiments:end -->``; the rest of the page (the introduction, the claims and verdicts,
the profiles, the report) is written in the page itself.

    python scripts/experiments_doc.py           # write the sections into the page
    python scripts/experiments_doc.py --check   # exit 1 if the page's sections are stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "experiments.md"
FOLDERS = ROOT / "src" / "attnlab" / "experiments"
BEGIN, END = "<!-- experiments:begin -->", "<!-- experiments:end -->"
NOTE = re.compile(r"\A<!--.*?-->\n+", re.S)  # the about file's own note on where it is read


def about(name: str) -> Path:
    return FOLDERS / name / "about.md"


def sections() -> str:
    """Every experiment's section, in the registry's order, without their notes."""
    from attnlab.kit.registry import EXPERIMENTS

    missing = [name for name in EXPERIMENTS if not about(name).is_file()]
    if missing:
        raise SystemExit(f"no about.md in the folder of: {', '.join(missing)}")
    parts = [NOTE.sub("", about(name).read_text(encoding="utf-8")).strip("\n")
             for name in EXPERIMENTS]
    return "\n\n".join(parts)


def assembled(page: str) -> str:
    """``page`` with its experiments' sections as the folders have them."""
    start, end = page.index(BEGIN), page.index(END)
    return page[:start] + f"{BEGIN}\n{sections()}\n{END}" + page[end + len(END):]


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    if argv == ["--check"]:
        if assembled(page) != page:
            print("docs/experiments.md is not its experiments' about.md files: run "
                  "python scripts/experiments_doc.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    PAGE.write_text(assembled(page), encoding="utf-8")
    print("wrote docs/experiments.md's sections from the experiments' folders")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
