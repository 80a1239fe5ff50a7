"""The counting of "Where the parameters are": a model's breakdown part by part (built on
PyTorch's ``meta`` device: shapes, no storage), Hugging Face's GPT-2 small count, and GPT-2's
per-block closed forms."""

from __future__ import annotations

from typing import Any

import torch

from attnlab.experiments.params.settings import PARTS
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.params import breakdown


def count_model(name: str, cfg: ModelConfig) -> dict[str, Any]:
    """The breakdown of ``cfg`` as a JSON record, built on the meta device (no storage)."""
    with torch.device("meta"):
        bd = breakdown(cfg)
    block_total = sum(sum(b.values()) for b in bd.per_block)
    parts = {p: sum(b[p] for b in bd.per_block) for p in PARTS}
    return {
        "name": name,
        "config": cfg.to_dict(),
        "per_block": bd.per_block,
        "embedding": bd.embedding,
        "blocks": block_total,
        "final_norm": bd.final_norm,
        "head": bd.head,
        "total": bd.total,
        "shares": {p: parts[p] / block_total if block_total else 0.0 for p in PARTS},
    }


def hf_gpt2_count() -> tuple[int | None, str]:
    """Parameters of ``GPT2LMHeadModel(GPT2Config())`` (tied matrix once), or None and why."""
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as err:
        return None, f"transformers not importable ({err})"
    with torch.device("meta"):
        model = GPT2LMHeadModel(GPT2Config())
    return sum(p.numel() for p in model.parameters()), "GPT2LMHeadModel(GPT2Config())"


def gpt2_parts_formula(d: int) -> dict[str, int]:
    """GPT-2's per-block closed forms: attention 4d²+4d, MLP 8d²+5d, norms 4d."""
    return {"attention": 4 * d * d + 4 * d, "mlp": 8 * d * d + 5 * d, "norms": 4 * d}
