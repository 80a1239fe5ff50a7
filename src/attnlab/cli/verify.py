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

from attnlab.cli.words import Words, add_lang, lang_of, new_parser, words


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    say = words(lang)
    p = new_parser(sub, "verify", say, help=say("verify.help"),
                   description=say("verify.description"))
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help=say("verify.device"))
    add_lang(p, say)
    p.set_defaults(func=run)


def summary(passed: int, failed: int, skipped: list[tuple[str, str]],
            say: Words | None = None) -> str:
    """The last line of ``verify``: never "all checks passed" while a check was skipped.

    >>> summary(12, 0, [])
    'all checks passed (12)'
    >>> summary(10, 0, [("HF logits", "needs transformers"), ("HF count", "needs transformers")])
    '10 checks passed, 2 skipped (needs transformers)'
    """
    say = say or Words("en")
    reasons: dict[str, list[str]] = {}
    for name, why in skipped:
        reasons.setdefault(why, []).append(name)
    skips = "; ".join(f"{names[0]}: {why}" if len(names) == 1 else why  # rows name them
                      for why, names in reasons.items())
    if failed:
        tail = say("verify.skipped_tail", skipped=len(skipped), why=skips) if skipped else ""
        return say("verify.failed", failed=failed, passed=passed, tail=tail)
    if skipped:
        return say("verify.passed_skipped", passed=passed, skipped=len(skipped), why=skips)
    return say("verify.all_passed", passed=passed)


def run(args: argparse.Namespace) -> int:
    import torch

    from attnlab.errors import UsageError, first_line, install_hint
    from attnlab.train.runtime import resolve_device
    from attnlab.verify import CHECKS

    say = lang_of(args)
    name = getattr(args, "device", "auto")
    if name == "cuda" and not torch.cuda.is_available():  # said in this command's words
        raise UsageError(say("verify.no_cuda"))
    device = resolve_device(name)  # the one place auto becomes cuda or cpu
    passed, failed = 0, 0
    skipped: list[tuple[str, str]] = []
    width = 62
    if device.type == "cuda":
        print(say("verify.device_line", name=torch.cuda.get_device_name(device)))
    print(f"{say('verify.check'):<{width}} {'max |diff|':>11} {say('verify.tol'):>8}  "
          f"{say('verify.result')}")
    for fn in CHECKS:
        try:
            with torch.device(device):  # every tensor and module the check makes
                out = fn()
        except ImportError as err:  # an optional dependency (transformers) is missing
            title = getattr(fn, "title", None) or fn.__name__
            package, extra = getattr(fn, "needs", (None, None))
            reason = say("verify.needs", package=package, hint=install_hint(extra)) \
                if package else first_line(err)
            skipped.append((title, reason))
            print(f"{title:<{width}} {'-':>11} {'-':>8}  {say('verify.skip', reason=reason)}")
            continue
        for row in out if isinstance(out, list) else [out]:
            failed += not row.ok
            passed += row.ok
            print(f"{row.name:<{width}} {row.diff:>11.2e} {row.tol:>8.0e}  "
                  f"{say('verify.ok') if row.ok else say('verify.fail')}")
            sys.stdout.flush()
    print(summary(passed, failed, skipped, say))
    return 1 if failed else 0
