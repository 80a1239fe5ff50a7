"""``attnlab eval``: train and held-out perplexity of a run's latest checkpoint.

    attnlab eval runs/3f2a9c0d1e4b

The corpus is the one the run was trained on (or ``--corpus``), encoded with
the run's own ``tokenizer.json`` and split 90/10 as in training; perplexity is
measured as in docs/data.md (whole held-out split, a train slice of the same size),
on the device ``--device`` resolves to (CUDA when present). A model whose loss
has exploded has perplexity ``inf``, printed as such. A run that diverged, or
whose weights give NaN, is reported as diverged (exit 1); a damaged run file
is one line naming it (exit 2). The run is only read, under its shared lock:
while a training run holds it, eval says so and waits for nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from attnlab.cli.words import add_lang, lang_of, new_parser, words


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    say = words(lang)
    p = new_parser(sub, "eval", say, help=say("eval.help"), description=say("eval.description"))
    p.add_argument("run_dir", metavar="RUN", help=say("run_dir"))
    p.add_argument("--corpus", metavar="PATH", help=say("eval.corpus"))
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help=say("model_device"))
    p.add_argument("--json", action="store_true", help=say("eval.json"))
    add_lang(p, say)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import math

    import numpy as np

    from attnlab.data.corpus import read_corpus
    from attnlab.data.dataset import split_tokens
    from attnlab.errors import DataError
    from attnlab.train.rundir import TrainingDiverged, read_meta
    from attnlab.train.runtime import evaluate, load_trained, prepare_splits, resolve_precision

    say = lang_of(args)
    run_dir = Path(args.run_dir)
    cfg, model, tokenizer, record = load_trained(run_dir, args.device)
    if tokenizer is None:
        raise DataError(say("no_tokenizer", path=run_dir))
    corpus = args.corpus if args.corpus is not None else cfg.data.corpus
    text = read_corpus(corpus)
    train, held = split_tokens(np.asarray(tokenizer.encode(text), dtype=np.int64))
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    data = SimpleNamespace(train=train, held=held, tokenizer=tokenizer, corpus_sha256=sha)
    try:
        meta = read_meta(run_dir) or {}
    except DataError:  # the note below is all meta.json is read for: evaluate without it
        meta = {}
    if meta.get("corpus_sha256") not in (None, sha):
        print(say("eval.other_text", path=run_dir), file=sys.stderr)
    splits = prepare_splits(cfg, data)
    device = next(model.parameters()).device
    ppl = evaluate(model, splits, cfg.model.n_ctx, batch_size=cfg.train.eval_batch_size,
                   precision=resolve_precision(cfg.train.precision, device))
    if any(math.isnan(v) for v in ppl.values()):  # inf is a perplexity; NaN is not
        raise TrainingDiverged(say("eval.nan", path=run_dir, step=record["step"]))
    result = {"run": str(run_dir), "step": record["step"], "steps": cfg.train.steps, **ppl,
              "eval_tokens": len(splits.held)}
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        unfinished = "" if record["step"] >= cfg.train.steps else say("eval.unfinished")
        print(say("eval.result", path=run_dir, step=record["step"], steps=cfg.train.steps,
                  unfinished=unfinished, train=f"{ppl['train_ppl']:.2f}",
                  held=f"{ppl['held_ppl']:.2f}", tokens=say.count(len(splits.held))))
    return 0
