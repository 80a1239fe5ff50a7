"""The settings of "Where the parameters are": its name, GPT-2 small's published count, the
parts of a block, the settings of each profile and what quick changes (the experiment's
other parts import these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

NAME = "params"
NEEDS_CORPUS = False
GPT2_SMALL_TOTAL = 124_439_808  # docs/model.md
PARTS = ("attention", "mlp", "norms")


@dataclass(frozen=True)
class Settings:
    default_width: int = 128  # d_model of attnlab's default model
    default_layers: int = 1  # blocks of the default model
    compare_hf: bool = True  # also count GPT2LMHeadModel(GPT2Config()) if transformers imports


PROFILES = {
    "full": Settings(),
    "quick": Settings(),
    "micro": Settings(compare_hf=False),
}
