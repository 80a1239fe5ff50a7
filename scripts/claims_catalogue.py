"""Write ``src/attnlab/i18n/claims.json``: every claim's text, part names and rules in English
(from the claims themselves) beside their Spanish words (from the catalogue as it stands, or
``--spanish FILE``, a Python file defining ``ES``: claim id -> (text, {part: (name, rule)})).

    .venv/bin/python scripts/claims_catalogue.py [--spanish FILE]

``tests/test_claims_spanish.py`` fails when the English of the catalogue no longer matches the
claims (a claim reworded, added or removed): run this script then and give the new Spanish.
"""

from __future__ import annotations

import argparse
import json
import runpy
from pathlib import Path

from attnlab.kit import registry

FILE = Path(__file__).resolve().parents[1] / "src" / "attnlab" / "i18n" / "claims.json"


def english() -> dict[str, str]:
    """Catalogue key -> English text, from the claims of every experiment."""
    out = {}
    for name in registry.EXPERIMENTS:
        for c in registry.load(name).claims:
            out[c.id] = c.text
            for p in c.parts:
                if p.name:
                    out[f"{c.id}/{p.name}/name"] = p.name
                out[f"{c.id}/{p.name}/rule"] = p.rule
    return out


def spanish_from(es: dict) -> dict[str, str]:
    out = {}
    for cid, (text, parts) in es.items():
        out[cid] = text
        for part, (name, rule) in parts.items():
            if part:
                out[f"{cid}/{part}/name"] = name
            out[f"{cid}/{part}/rule"] = rule
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spanish", type=Path, help="a Python file defining ES")
    args = ap.parse_args()
    old = json.loads(FILE.read_text(encoding="utf-8")) if FILE.is_file() else {}
    spanish = {k: v.get("es", "") for k, v in old.items()}
    if args.spanish:
        spanish.update(spanish_from(runpy.run_path(str(args.spanish))["ES"]))
    entries = {k: {"en": en, "es": spanish.get(k, "")} for k, en in english().items()}
    FILE.write_text(json.dumps(entries, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    missing = [k for k, v in entries.items() if not v["es"]]
    print(f"{FILE}: {len(entries)} entries" + (f", {len(missing)} without Spanish: "
                                                 f"{', '.join(missing)}" if missing else ""))


if __name__ == "__main__":
    main()
