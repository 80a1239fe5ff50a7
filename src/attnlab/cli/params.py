"""``attnlab params``: where the parameters live, for any config."""

from __future__ import annotations

import argparse

from attnlab.cli.words import Words, add_lang, lang_of, new_parser, words
from attnlab.nn.model_config import ModelConfig, gpt2_config
from attnlab.train.run_config import model_with_overrides

PRESETS = {"gpt2-small": gpt2_config, "default": ModelConfig}


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    say = words(lang)
    p = new_parser(sub, "params", say, help=say("params.help"),
                   description=say("params.description"))
    p.add_argument("--preset", choices=sorted(PRESETS), default="default",
                   help=say("params.preset"))
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help=say("params.set"))
    add_lang(p, say)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.nn.params import breakdown, breakdown_table, gpt2_formula

    cfg = model_with_overrides(PRESETS[args.preset](), args.overrides)
    say = lang_of(args)
    print(_table(breakdown_table(cfg), say.lang))
    if args.preset == "gpt2-small" and not args.overrides:
        formula = gpt2_formula(cfg.d_model, cfg.n_layer, cfg.vocab_size, cfg.n_ctx)
        total = breakdown(cfg).total
        print(say("params.formula", value=say.count(formula)))
        print(say("params.count", value=say.count(total)))
    return 0


def _table(table: str, lang: str) -> str:
    """``breakdown_table``'s Markdown in ``lang``: its words as the report's tables say them
    (the ``params`` experiment's table, ``attnlab.report.table_words``), its numbers in the
    language's convention."""
    if lang == "en":
        return table
    from attnlab.report.table_words import speak
    from attnlab.report.words import numbers

    english, own = Words("en")("params.mlp_share"), Words(lang)("params.mlp_share")
    return numbers(speak("params", table.replace(english, own), lang), lang)
