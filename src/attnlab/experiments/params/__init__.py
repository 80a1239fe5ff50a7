"""Where the parameters are: a per-block breakdown and GPT-2 small's count
(docs/experiments.md, "Where the parameters are").

Two models are counted part by part with ``attnlab.nn.params.breakdown``:
attnlab's default model (width 128, one block, four heads, BPE-1024) and GPT-2
small (Radford et al. 2019: d = 768, 12 blocks, V = 50,257, n_ctx = 1,024).
Per GPT-2 block the closed form is attention 4d² + 4d, MLP 8d² + 5d and two
LayerNorms 4d, together 12d² + 13d, so the MLP holds two thirds of a block.
The whole of GPT-2 small is

    n_layer·(12d² + 13d) + V·d + n_ctx·d + 2d = 124,439,808

(tied output layer), which must equal the count of our model built from
``gpt2_config()`` and, when ``transformers`` is importable, the count of
``GPT2LMHeadModel(GPT2Config())``. Both big models are built on PyTorch's
``meta`` device, which gives every tensor a shape and no storage, so counting
124M parameters allocates nothing.

Nothing is trained: every profile counts the same models. ``micro`` only
skips the Hugging Face model (importing ``transformers`` takes seconds; the
GPT-2 parity tests cover it).
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.experiments.params.chapter import CHAPTER
from attnlab.experiments.params.claims import CLAIMS
from attnlab.experiments.params.measure import count_model, gpt2_parts_formula, hf_gpt2_count
from attnlab.experiments.params.settings import (
    GPT2_SMALL_TOTAL,
    NAME,
    NEEDS_CORPUS,
    PARTS,
    PROFILES,
    Settings,
)
from attnlab.experiments.params.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.nn.model_config import ModelConfig, gpt2_config
from attnlab.nn.params import gpt2_formula
from attnlab.running.runner import Results, RunSpec

log = logging.getLogger(__name__)


def plan(settings: Settings) -> list[RunSpec]:
    """Nothing to train: counting is analytic."""
    return []


def analyse(settings: Settings, results: Results | None = None, ctx: Any = None) -> dict[str, Any]:
    """Count both models part by part, and GPT-2 small three ways."""
    default = ModelConfig(d_model=settings.default_width, n_layer=settings.default_layers)
    gpt2 = gpt2_config()
    d, n_layer, vocab, n_ctx = gpt2.d_model, gpt2.n_layer, gpt2.vocab_size, gpt2.n_ctx
    models = [count_model("default", default), count_model("GPT-2 small", gpt2)]
    hf, hf_note = hf_gpt2_count() if settings.compare_hf else (None, "not counted in this profile")
    return {
        "models": models,
        "gpt2": {
            "d": d, "n_layer": n_layer, "vocab": vocab, "n_ctx": n_ctx,
            "block_formula": 12 * d * d + 13 * d,
            "parts_formula": gpt2_parts_formula(d),
            "formula": gpt2_formula(d, n_layer, vocab, n_ctx),
            "ours": models[1]["total"],
            "hf": hf,
            "hf_note": hf_note,
            "expected": GPT2_SMALL_TOTAL,
        },
    }


__all__ = [
    "CLAIMS", "GPT2_SMALL_TOTAL", "NAME", "NEEDS_CORPUS", "PARTS", "PROFILES", "Settings",
    "analyse", "count_model", "figure", "gpt2_parts_formula", "hf_gpt2_count", "plan", "table"
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
