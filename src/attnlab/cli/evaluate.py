"""``attnlab eval``: train and held-out perplexity of a run's latest checkpoint.

    attnlab eval runs/3f2a9c0d1e4b

The corpus is the one the run was trained on (or ``--corpus``), encoded with
the run's own ``tokenizer.json`` and split 90/10 as in training; perplexity is
measured as in SPEC §2 (whole held-out split, a train slice of the same size).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="train and held-out perplexity of a trained run",
        description="Evaluate the latest checkpoint of RUN (a run directory written by "
        "`attnlab train`): perplexity on the whole held-out split and on a train slice "
        "of the same size.",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory (e.g. runs/<hash>)")
    p.add_argument("--corpus", metavar="PATH",
                   help="evaluate on this text instead of the run's corpus")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where to run the model (default: CUDA when present)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from attnlab.data.corpus import read_corpus
    from attnlab.data.dataset import split_tokens
    from attnlab.train.rundir import META, read_json
    from attnlab.train.runtime import evaluate, load_trained, prepare_splits, resolve_precision

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise ValueError(f"run directory not found: {run_dir}")
    cfg, model, tokenizer, record = load_trained(run_dir, args.device)
    if tokenizer is None:
        raise ValueError(f"run {run_dir} has no tokenizer.json: it was trained on data given in "
                         "code, so the command line cannot rebuild its splits")
    corpus = args.corpus if args.corpus is not None else cfg.data.corpus
    text = read_corpus(corpus)
    train, held = split_tokens(np.asarray(tokenizer.encode(text), dtype=np.int64))
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    data = SimpleNamespace(train=train, held=held, tokenizer=tokenizer, corpus_sha256=sha)
    meta = read_json(run_dir / META) if (run_dir / META).is_file() else {}
    if meta.get("corpus_sha256") not in (None, sha):
        print(f"note: evaluating on other text than run {run_dir} was trained on", file=sys.stderr)
    splits = prepare_splits(cfg, data)
    device = next(model.parameters()).device
    ppl = evaluate(model, splits, cfg.model.n_ctx, batch_size=cfg.train.eval_batch_size,
                   precision=resolve_precision(cfg.train.precision, device))
    result = {"run": str(run_dir), "step": record["step"], "steps": cfg.train.steps, **ppl,
              "eval_tokens": len(splits.held)}
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        unfinished = "" if record["step"] >= cfg.train.steps else " (unfinished run)"
        print(f"{run_dir} at step {record['step']}/{cfg.train.steps}{unfinished}: "
              f"train ppl {ppl['train_ppl']:.2f}, held-out ppl {ppl['held_ppl']:.2f} "
              f"over {len(splits.held):,} tokens")
    return 0
