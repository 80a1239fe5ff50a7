"""Where the parameters live: a per-block breakdown and GPT-2's closed form.

Per GPT-2 block of width d: attention 4d² + 4d (q, k, v, o with biases), MLP
8d² + 5d (d → 4d → d with biases), two LayerNorms 4d — in all 12d² + 13d, of
which the MLP is two thirds. The model adds V·d token embeddings, n_ctx·d
positions and a final LayerNorm (2d); a tied output layer adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig


def gpt2_formula(d: int, n_layer: int, vocab: int, n_ctx: int) -> int:
    """n_layer·(12d² + 13d) + V·d + n_ctx·d + 2d (tied output layer).

    >>> gpt2_formula(768, 12, 50257, 1024)
    124439808
    """
    return n_layer * (12 * d * d + 13 * d) + vocab * d + n_ctx * d + 2 * d


@dataclass(frozen=True)
class Breakdown:
    """Parameter counts of one model, by part."""

    embedding: int  # token table (+ learned positions)
    per_block: list[dict[str, int]]  # attention / mlp / norms of each block
    final_norm: int
    head: int  # output layer (0 when tied to the embedding)
    total: int

    @property
    def mlp_share(self) -> float:
        """MLP parameters / all block parameters (two thirds for GPT-2)."""
        blocks = sum(sum(b.values()) for b in self.per_block)
        return sum(b["mlp"] for b in self.per_block) / blocks if blocks else 0.0


def _count(module: nn.Module | None) -> int:
    return sum(p.numel() for p in module.parameters()) if module is not None else 0


def breakdown(cfg: ModelConfig) -> Breakdown:
    """Count the parameters of the model built from ``cfg``, part by part."""
    model = LanguageModel(cfg)
    per_block = [
        {
            "attention": _count(b.mixer),
            "mlp": _count(b.mlp),
            "norms": _count(b.norm1) + _count(b.norm2),
        }
        for b in model.blocks
    ]
    head = 0 if cfg.tie_weights else _count(model.head)
    if cfg.tie_weights and model.head.bias is not None:
        head = model.head.bias.numel()
    return Breakdown(
        embedding=_count(model.tok) + _count(model.pos),
        per_block=per_block,
        final_norm=_count(model.norm),
        head=head,
        total=model.num_parameters(),
    )


MIXER_NAMES = {"rnn": "RNN (recurrence)", "lstm": "LSTM (recurrence)", "mean": "mean",
               "none": "mixer (none)"}


def mixer_name(cfg: ModelConfig) -> str:
    """What the ``attention`` part of a block holds: attention, or the mixer in its place."""
    return MIXER_NAMES.get(cfg.mixer, "attention")


def breakdown_table(cfg: ModelConfig) -> str:
    """Markdown table of ``breakdown(cfg)`` (its mixer column named after ``cfg.mixer``)."""
    bd = breakdown(cfg)
    lines = [f"| part | {mixer_name(cfg)} | MLP | norms | total |", "|---|---:|---:|---:|---:|"]
    for i, b in enumerate(bd.per_block):
        lines.append(
            f"| block {i + 1} | {b['attention']:,} | {b['mlp']:,} | {b['norms']:,} | "
            f"{sum(b.values()):,} |"
        )
    lines += [
        f"| embeddings | | | | {bd.embedding:,} |",
        f"| final norm | | | | {bd.final_norm:,} |",
        f"| output layer{' (tied)' if cfg.tie_weights else ''} | | | | {bd.head:,} |",
        f"| **total** | | | | **{bd.total:,}** |",
    ]
    return "\n".join(lines) + f"\n\nMLP share of block parameters: {bd.mlp_share:.1%}\n"
