"""``attnlab verify``: the equivalence checks of SPEC §1, one row each."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify",
        help="check the implementation against PyTorch, NumPy and Hugging Face GPT-2",
        description="Run every equivalence check of the spec (§1) and print its max |diff| "
        "and tolerance; exit 1 if any fails.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.verify import CHECKS

    failed = 0
    width = 62
    print(f"{'check':<{width}} {'max |diff|':>11} {'tol':>8}  result")
    for fn in CHECKS:
        try:
            out = fn()
        except ImportError as err:  # an optional dependency (transformers) is missing
            print(f"{fn.__name__:<{width}} {'-':>11} {'-':>8}  SKIP ({err})")
            continue
        for row in out if isinstance(out, list) else [out]:
            failed += not row.ok
            print(f"{row.name:<{width}} {row.diff:>11.2e} {row.tol:>8.0e}  "
                  f"{'ok' if row.ok else 'FAIL'}")
            sys.stdout.flush()
    print("all checks passed" if not failed else f"{failed} check(s) FAILED")
    return 1 if failed else 0
