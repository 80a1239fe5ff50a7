"""Every string attnlab says, with the languages it has: one line per ``domain.key``, its
languages and its owner (``shared``: the files of ``attnlab/i18n``; ``experiment NAME``: that
experiment's ``words.json``; plugins' experiments included).

    .venv/bin/python scripts/words.py                # list them all
    .venv/bin/python scripts/words.py claims report  # only these domains
    .venv/bin/python scripts/words.py --check        # exit 1 naming each key that lacks a
                                                     # language (the tests' check_complete)

The exercises' words join the catalogue when the labs load them; this script lists what the
shared files and every experiment's words hold.
"""

from __future__ import annotations

import argparse
import sys

from attnlab import i18n
from attnlab.kit import registry


def rows(domains: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(``domain.key``, its languages, its owner) of every entry, every experiment's words
    owned first."""
    registry.own_all_words()
    out = []
    for domain in domains or i18n.domains():
        owner = {key: who for who, entries in i18n.owners(domain).items() for key in entries}
        for key, entry in i18n.catalogue(domain).items():
            langs = " ".join(lang for lang in i18n.LANGS if entry.get(lang))
            out.append((f"{domain}.{key}", langs or "-", owner.get(key, "shared")))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("domains", nargs="*", help="only these domains (default: every one)")
    ap.add_argument("--check", action="store_true",
                    help="list nothing; exit 1 naming each key that lacks a language")
    args = ap.parse_args(argv)
    registry.own_all_words()  # the domains only experiments' words hold (claims) included
    unknown = sorted(set(args.domains) - set(i18n.domains()))
    if unknown:
        ap.error(f"unknown domain(s) {', '.join(unknown)}; choose from: "
                 f"{', '.join(i18n.domains())}")
    if args.check:
        problems = [p for p in i18n.check_complete()
                    if not args.domains or p.split(".")[0] in args.domains]
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    for key, langs, owner in rows(args.domains):
        print(f"{key}\t{langs}\t{owner}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
