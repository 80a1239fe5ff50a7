"""``attnlab params``: where the parameters live, for any config."""

from __future__ import annotations

import argparse

from attnlab.nn.config import ModelConfig, gpt2_config

PRESETS = {"gpt2-small": gpt2_config, "default": ModelConfig}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "params",
        help="per-block parameter breakdown (attention, MLP, norms) for a config",
        description="Count parameters part by part. Start from --preset (default: attnlab's "
        "default model) and change fields with --set key=value (ModelConfig fields).",
    )
    p.add_argument("--preset", choices=sorted(PRESETS), default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a ModelConfig field, e.g. --set d_model=256 --set n_layer=4")
    p.set_defaults(func=run)


def parse_model_overrides(base: ModelConfig, overrides: list[str]) -> ModelConfig:
    """Apply ``key=value`` strings to a ModelConfig, typed by the field's default."""
    import dataclasses

    fields = {f.name: f for f in dataclasses.fields(ModelConfig)}
    changes: dict[str, object] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.removeprefix("model.")
        if not sep:
            raise ValueError(f"override {item!r} is not KEY=VALUE")
        if key not in fields:
            raise ValueError(f"unknown model field {key!r}; known: {', '.join(sorted(fields))}")
        changes[key] = _parse_value(key, raw, getattr(base, key))
    return base.replace(**changes)


def _parse_value(key: str, raw: str, current: object) -> object:
    if raw.lower() == "none":
        return None
    if isinstance(current, bool):
        if raw.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{key} takes true or false, got {raw!r}")
        return raw.lower() in ("true", "1")
    try:
        if isinstance(current, int) or current is None and raw.lstrip("-").isdigit():
            return int(raw)
        if isinstance(current, float):
            return float(raw)
    except ValueError:
        raise ValueError(f"{key} takes a number, got {raw!r}") from None
    return raw


def run(args: argparse.Namespace) -> int:
    from attnlab.nn.params import breakdown, breakdown_table, gpt2_formula

    cfg = parse_model_overrides(PRESETS[args.preset](), args.overrides)
    print(breakdown_table(cfg))
    if args.preset == "gpt2-small" and not args.overrides:
        formula = gpt2_formula(cfg.d_model, cfg.n_layer, cfg.vocab_size, cfg.n_ctx)
        total = breakdown(cfg).total
        print(f"formula n_layer·(12d²+13d) + V·d + n_ctx·d + 2d = {formula:,}")
        print(f"attnlab model count                              = {total:,}")
    return 0
