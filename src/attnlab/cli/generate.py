"""``attnlab generate``: sample text from a trained run.

    attnlab generate runs/3f2a9c0d1e4b --prompt "ROMEO:" --tokens 100 --top-k 40 --seed 1

Decodes with the model's KV cache by default; ``--no-cache`` recomputes the
whole context each step (and slides a window past the learned positions).
``--temperature 0`` is greedy decoding. The same seed gives the same text.
The model runs on the device ``--device`` resolves to (CUDA when present),
loaded under the run's shared lock; a run that diverged is reported as such.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from attnlab.cli.words import add_lang, lang_of, new_parser, words


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    from attnlab.bounds import temperature, whole

    say = words(lang)
    p = new_parser(sub, "generate", say, help=say("generate.help"),
                   description=say("generate.description"))
    p.add_argument("run_dir", metavar="RUN", help=say("run_dir"))
    p.add_argument("--prompt", required=True, help=say("generate.prompt"))
    p.add_argument("--tokens", type=whole("--tokens"), default=100, metavar="N",
                   help=say("generate.tokens"))
    p.add_argument("--temperature", type=temperature, default=1.0, metavar="T",
                   help=say("generate.temperature"))
    p.add_argument("--top-k", type=whole("--top-k"), default=None, metavar="K",
                   help=say("generate.top_k"))
    p.add_argument("--seed", type=whole("--seed"), default=0, metavar="S",
                   help=say("generate.seed"))
    p.add_argument("--no-cache", action="store_true", help=say("generate.no_cache"))
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help=say("model_device"))
    add_lang(p, say)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import math

    import torch

    from attnlab.bounds import check_text
    from attnlab.errors import DataError, UsageError
    from attnlab.train.runtime import load_trained

    say = lang_of(args)
    run_dir = Path(args.run_dir)
    check_text(args.prompt, "--prompt", "prompt")
    if not args.prompt:
        raise UsageError("--prompt must not be empty: the model needs a first token")
    if args.tokens < 0:
        raise UsageError("--tokens must be >= 0, got %s", args.tokens)
    if not 0 <= args.temperature < math.inf:  # nan fails both comparisons
        raise UsageError("--temperature must be a finite number >= 0 (0 is greedy), got %s",
                         args.temperature)
    if args.top_k is not None and args.top_k < 1:
        raise UsageError("--top-k (top_k) must be >= 1, got %s", args.top_k)
    cfg, model, tokenizer, _ = load_trained(run_dir, args.device)
    if tokenizer is None:
        raise DataError("run %s has no tokenizer.json (trained on data given in code, or the "
                        "file was deleted), so its text cannot be encoded: resuming the run with "
                        "`attnlab train` and its config writes it again", run_dir)
    if args.top_k is not None and args.top_k > cfg.model.vocab_size:
        raise UsageError("--top-k %s exceeds the model's vocabulary of %s tokens", args.top_k,
                         cfg.model.vocab_size)
    ids = tokenizer.encode(args.prompt)
    use_cache = not args.no_cache
    total = len(ids) + args.tokens
    if use_cache and cfg.model.position == "learned" and total > cfg.model.pos_rows:
        raise UsageError("prompt (%s tokens) + --tokens %s exceeds the model's %s learned "
                         "positions; ask for fewer or pass --no-cache", len(ids), args.tokens,
                         cfg.model.pos_rows)
    device = next(model.parameters()).device
    idx = torch.tensor([ids], dtype=torch.long, device=device)  # (1, T)
    sofar = list(ids)  # what is generated, token by token: printed if Ctrl-C stops it

    def fed(_model: object, inputs: tuple) -> None:  # each step's input ends with a new token
        if fed.calls:
            sofar.append(int(inputs[0][0, -1]))
        fed.calls += 1

    fed.calls = 0
    hook = model.register_forward_pre_hook(fed)
    try:
        out = model.generate(idx, args.tokens, temperature=args.temperature, top_k=args.top_k,
                             seed=args.seed, use_cache=use_cache)  # (1, T + new)
    except KeyboardInterrupt:
        print(tokenizer.decode(sofar), flush=True)
        raise KeyboardInterrupt(say("generate.interrupted", done=len(sofar) - len(ids),
                                    tokens=args.tokens)) from None
    finally:
        hook.remove()
    print(tokenizer.decode(out[0].tolist()))
    return 0
