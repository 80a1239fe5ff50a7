"""``attnlab heads``: what every head does, on the standard probe of repeated random tokens.

    attnlab heads runs/3f2a9c0d1e4b            # a run of `attnlab train` (or of the lab)
    attnlab heads models/gpt2-tiny --json      # a Hugging Face folder the explorer reads

Per layer and head: previous-token, induction (prefix-matching), duplicate-token
and first-token ("sink") scores (``attnlab.interp.scores`` defines them, after
Olsson et al. 2022), on ``--rows`` rows of ``--half`` random tokens of the model's
own vocabulary repeated once, drawn with ``--seed``. A folder holding a
``checkpoint/`` is read as an attnlab run; any other as a Hugging Face folder
(``attnlab.explorer.sources.hf.load_hf``: GPT-2, GPT-Neo, OPT, the Llama family).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from attnlab.bounds import whole
from attnlab.errors import UsageError

MARK = 0.5  # a score above this is named as the head's role in the table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "heads",
        help="previous-token, induction, duplicate and sink scores of every head",
        description="Score every head of PATH (an attnlab run directory or a Hugging Face "
        "model folder) on repeated random tokens: previous-token, induction (prefix "
        "matching), duplicate-token and first-token (sink) attention.",
    )
    p.add_argument("path", metavar="PATH", help="a run directory or a Hugging Face folder")
    p.add_argument("--half", type=whole("--half"), default=None, metavar="N",
                   help="random tokens before the repeat (default: 25, or half the context; "
                   "2 to half the model's context)")
    p.add_argument("--rows", type=whole("--rows"), default=8, metavar="N",
                   help="probe sequences (default 8; 1 to 1,024)")
    p.add_argument("--seed", type=whole("--seed"), default=0, metavar="S",
                   help="the probe's seed (default 0; 0 to 4,294,967,295)")
    p.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"),
                   help="where to run the model (default: cpu)")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(func=run)


def load(path: Path, device: str) -> tuple[Any, str]:
    """The model at ``path`` and what it is, in words."""
    if (path / "checkpoint").is_dir():
        from attnlab.train.runtime import load_trained

        return load_trained(path, device)[1], "attnlab run"
    import torch

    from attnlab.explorer.sources.hf import load_hf
    from attnlab.train.runtime import resolve_device

    loaded = load_hf(path, torch.device(resolve_device(device)))
    return loaded.model, f"Hugging Face {loaded.model_type}"


def table(scores: Any, what: str) -> str:
    """One line per head: its four scores and the roles above ``MARK``."""
    from attnlab.interp import SCORES

    n, t = scores.probe.shape
    lines = [f"{what}: {n} probe rows of {t // 2} random tokens repeated once",
             f"{'layer':>5} {'head':>4} " + " ".join(f"{s:>9}" for s in SCORES) + "  role"]
    n_layer, n_head = scores.scores[SCORES[0]].shape
    for layer in range(n_layer):
        for head in range(n_head):
            values = [float(scores.scores[s][layer, head]) for s in SCORES]
            roles = ", ".join(s for s, v in zip(SCORES, values, strict=True) if v > MARK)
            lines.append(f"{layer:>5} {head:>4} " + " ".join(f"{v:>9.3f}" for v in values)
                         + f"  {roles or '-'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from attnlab.interp import head_scores

    path = Path(args.path)
    if not path.is_dir():
        raise UsageError(f"no folder at {path}")
    model, what = load(path, args.device)
    try:  # the context is checked before the probe is drawn
        scores = head_scores(model, half=args.half, rows=args.rows, seed=args.seed)
    except ValueError as err:
        raise UsageError(f"--half: {err}") from None
    if args.json:
        print(json.dumps({"path": str(path), "model": what, **scores.to_dict()}))
    else:
        print(table(scores, what))
    return 0
