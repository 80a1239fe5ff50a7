"""``attnlab params``: where the parameters live, for any config."""

from __future__ import annotations

import argparse

from attnlab.nn.model_config import ModelConfig, gpt2_config
from attnlab.train.run_config import model_with_overrides

PRESETS = {"gpt2-small": gpt2_config, "default": ModelConfig}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "params",
        help="per-block parameter breakdown (attention, MLP, norms) for a config",
        description="Count parameters part by part. Start from --preset (default: attnlab's "
        "default model) and change fields with --set key=value (ModelConfig fields).",
    )
    p.add_argument("--preset", choices=sorted(PRESETS), default="default",
                   help="the model to start from: attnlab's default model or GPT-2 small")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a ModelConfig field, e.g. --set d_model=256 --set n_layer=4")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.nn.params import breakdown, breakdown_table, gpt2_formula

    cfg = model_with_overrides(PRESETS[args.preset](), args.overrides)
    print(breakdown_table(cfg))
    if args.preset == "gpt2-small" and not args.overrides:
        formula = gpt2_formula(cfg.d_model, cfg.n_layer, cfg.vocab_size, cfg.n_ctx)
        total = breakdown(cfg).total
        print(f"formula n_layer·(12d²+13d) + V·d + n_ctx·d + 2d = {formula:,}")
        print(f"attnlab model count                              = {total:,}")
    return 0
