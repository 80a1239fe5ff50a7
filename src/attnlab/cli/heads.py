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
from attnlab.cli.words import Words, add_lang, lang_of, new_parser, words
from attnlab.errors import Said, UsageError

MARK = 0.5  # a score above this is named as the head's role in the table


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    say = words(lang)
    p = new_parser(sub, "heads", say, help=say("heads.help"),
                   description=say("heads.description"))
    p.add_argument("path", metavar="PATH", help=say("heads.path"))
    p.add_argument("--half", type=whole("--half"), default=None, metavar="N",
                   help=say("heads.half"))
    p.add_argument("--rows", type=whole("--rows"), default=8, metavar="N",
                   help=say("heads.rows"))
    p.add_argument("--seed", type=whole("--seed"), default=0, metavar="S",
                   help=say("heads.seed"))
    p.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"),
                   help=say("heads.device"))
    p.add_argument("--json", action="store_true", help=say("heads.json"))
    add_lang(p, say)
    p.set_defaults(func=run)


def load(path: Path, device: str, say: Words | None = None) -> tuple[Any, str]:
    """The model at ``path`` and what it is, in words."""
    if (path / "checkpoint").is_dir():
        from attnlab.train.runtime import load_trained

        return load_trained(path, device)[1], (say or Words("en"))("heads.attnlab_run")
    import torch

    from attnlab.explorer.sources.hf import load_hf
    from attnlab.train.runtime import resolve_device

    loaded = load_hf(path, torch.device(resolve_device(device)))
    return loaded.model, f"Hugging Face {loaded.model_type}"


def table(scores: Any, what: str, say: Words | None = None) -> str:
    """One line per head: its four scores and the roles above ``MARK``."""
    from attnlab.interp import SCORES

    say = say or Words("en")
    n, t = scores.probe.shape
    lines = [say("heads.probe", what=what, rows=n, half=t // 2),
             f"{say('heads.layer'):>5} {say('heads.head'):>4} "
             + " ".join(f"{s:>9}" for s in SCORES) + f"  {say('heads.role')}"]
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

    say = lang_of(args)
    path = Path(args.path)
    if not path.is_dir():
        raise UsageError(say("heads.no_folder", path=path))
    model, what = load(path, args.device, None if args.json else say)  # JSON: English
    try:  # the context is checked before the probe is drawn
        scores = head_scores(model, half=args.half, rows=args.rows, seed=args.seed)
    except ValueError as err:  # the probe's own check, said in the language where it can be
        template = getattr(err, "template", None)
        raise UsageError("--half: %s", str(err) if template is None else
                         Said(template, *err.values)) from None
    if args.json:
        print(json.dumps({"path": str(path), "model": what, **scores.to_dict()}))
    else:
        print(table(scores, what, say))
    return 0
