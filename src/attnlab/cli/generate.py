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


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.bounds import temperature, whole

    p = sub.add_parser(
        "generate",
        help="sample text from a trained run",
        description="Continue --prompt with the latest checkpoint of RUN, sampling with "
        "temperature and top-k from a fixed seed. Prints the prompt and its continuation.",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory (e.g. runs/<hash>)")
    p.add_argument("--prompt", required=True, help="text to continue (not empty)")
    p.add_argument("--tokens", type=whole("--tokens"), default=100, metavar="N",
                   help="new tokens to generate (default 100; 0 to 100,000)")
    p.add_argument("--temperature", type=temperature, default=1.0, metavar="T",
                   help="divide the logits by T, in [0.01, 100]; 0 is greedy (default 1.0)")
    p.add_argument("--top-k", type=whole("--top-k"), default=None, metavar="K",
                   help="sample among the K most likely tokens only")
    p.add_argument("--seed", type=whole("--seed"), default=0, metavar="S",
                   help="seed of the sampler (default 0; 0 to 2**32 - 1)")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute the whole context every step instead of using the KV cache")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where to run the model (default: CUDA when present)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import math

    import torch

    from attnlab.bounds import check_text
    from attnlab.errors import DataError, UsageError
    from attnlab.train.runtime import load_trained

    run_dir = Path(args.run_dir)
    check_text(args.prompt, "--prompt", "prompt")
    if not args.prompt:
        raise UsageError("--prompt must not be empty: the model needs a first token")
    if args.tokens < 0:
        raise UsageError(f"--tokens must be >= 0, got {args.tokens}")
    if not 0 <= args.temperature < math.inf:  # nan fails both comparisons
        raise UsageError(f"--temperature must be a finite number >= 0 (0 is greedy), "
                         f"got {args.temperature}")
    if args.top_k is not None and args.top_k < 1:
        raise UsageError(f"--top-k (top_k) must be >= 1, got {args.top_k}")
    cfg, model, tokenizer, _ = load_trained(run_dir, args.device)
    if tokenizer is None:
        raise DataError(f"run {run_dir} has no tokenizer.json (trained on data given in code, "
                        "or the file was deleted), so text cannot be encoded: resuming the run "
                        "with `attnlab train` and its config writes it again")
    if args.top_k is not None and args.top_k > cfg.model.vocab_size:
        raise UsageError(f"--top-k {args.top_k} exceeds the model's vocabulary of "
                         f"{cfg.model.vocab_size} tokens")
    ids = tokenizer.encode(args.prompt)
    use_cache = not args.no_cache
    total = len(ids) + args.tokens
    if use_cache and cfg.model.position == "learned" and total > cfg.model.pos_rows:
        raise UsageError(
            f"prompt ({len(ids)} tokens) + --tokens {args.tokens} exceeds the model's "
            f"{cfg.model.pos_rows} learned positions; ask for fewer or pass --no-cache"
        )
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
        raise KeyboardInterrupt(f"interrupted after {len(sofar) - len(ids)} of {args.tokens} "
                                "new tokens (the text so far is above)") from None
    finally:
        hook.remove()
    print(tokenizer.decode(out[0].tolist()))
    return 0
