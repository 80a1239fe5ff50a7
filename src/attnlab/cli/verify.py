"""``attnlab verify``: the equivalence checks (docs/model.md), one row each.

A check whose optional dependency is missing (``transformers``, the ``hf``
extra, for the two Hugging Face GPT-2 rows) is skipped, its row named in words
with what to install, and counted in the summary: the last line says "all
checks passed" only when every check ran and passed. Every other check runs
(the GPT-2 parameter formula against attnlab's count needs nothing optional).
Exit codes: 0 when no check failed (the summary says how many were skipped,
and why), 1 when a check failed. ``--device`` chooses where the checks
run (``auto``: CUDA when present).
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify",
        help="check the implementation against PyTorch, NumPy and Hugging Face GPT-2",
        description="Run every equivalence check (NumPy reference, PyTorch model, PyTorch's "
        "own attention, Hugging Face GPT-2) and print its max |diff| and tolerance. Exit 1 if "
        "any fails; 0 otherwise. A check whose optional dependency "
        "is missing is skipped and counted in the last line.",
    )
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the checks run (default: CUDA when present)")
    p.set_defaults(func=run)


def summary(passed: int, failed: int, skipped: list[tuple[str, str]]) -> str:
    """The last line of ``verify``: never "all checks passed" while a check was skipped.

    >>> summary(12, 0, [])
    'all checks passed (12)'
    >>> summary(10, 0, [("HF logits", "needs transformers"), ("HF count", "needs transformers")])
    '10 checks passed, 2 skipped (needs transformers)'
    """
    reasons: dict[str, list[str]] = {}
    for name, why in skipped:
        reasons.setdefault(why, []).append(name)
    skips = "; ".join(f"{names[0]}: {why}" if len(names) == 1 else why  # rows name them
                      for why, names in reasons.items())
    if failed:
        tail = f", {len(skipped)} skipped ({skips})" if skipped else ""
        return f"{failed} check(s) FAILED, {passed} passed{tail}"
    if skipped:
        return f"{passed} checks passed, {len(skipped)} skipped ({skips})"
    return f"all checks passed ({passed})"


def run(args: argparse.Namespace) -> int:
    import torch

    from attnlab.errors import UsageError, first_line, install_hint
    from attnlab.train.runtime import resolve_device
    from attnlab.verify import CHECKS

    name = getattr(args, "device", "auto")
    if name == "cuda" and not torch.cuda.is_available():  # said in this command's words
        raise UsageError("--device cuda: no CUDA device is available (use auto or cpu)")
    device = resolve_device(name)  # the one place auto becomes cuda or cpu
    passed, failed = 0, 0
    skipped: list[tuple[str, str]] = []
    width = 62
    if device.type == "cuda":
        print(f"device: {torch.cuda.get_device_name(device)}")
    print(f"{'check':<{width}} {'max |diff|':>11} {'tol':>8}  result")
    for fn in CHECKS:
        try:
            with torch.device(device):  # every tensor and module the check makes
                out = fn()
        except ImportError as err:  # an optional dependency (transformers) is missing
            title = getattr(fn, "title", None) or fn.__name__
            package, extra = getattr(fn, "needs", (None, None))
            reason = f"needs {package}: {install_hint(extra)}" if package else first_line(err)
            skipped.append((title, reason))
            print(f"{title:<{width}} {'-':>11} {'-':>8}  SKIP ({reason})")
            continue
        for row in out if isinstance(out, list) else [out]:
            failed += not row.ok
            passed += row.ok
            print(f"{row.name:<{width}} {row.diff:>11.2e} {row.tol:>8.0e}  "
                  f"{'ok' if row.ok else 'FAIL'}")
            sys.stdout.flush()
    print(summary(passed, failed, skipped))
    return 1 if failed else 0
