"""Hugging Face GPT-2 → attnlab: the same architecture, weights copied across.

GPT-2 (Radford et al. 2019) stores its linear maps as ``Conv1D`` with weight
(in, out), and q, k, v fused in one ``c_attn`` of width 3c; attnlab keeps
``nn.Linear`` (out, in) with the same fused q|k|v map, so weights are only
transposed. Nothing is downloaded: the caller passes a model object or a local
folder. Left out: GPT-2's cross-attention and the ``scale_attn_by_inverse_layer_idx``
and ``reorder_and_upcast_attn`` options (off in every released GPT-2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig, gpt2_config


def config_from_hf(hf_config: Any) -> ModelConfig:
    """The attnlab config of a ``transformers.GPT2Config``."""
    act = getattr(hf_config, "activation_function", "gelu_new")
    if act not in ("gelu_new", "gelu_pytorch_tanh", "gelu"):
        raise ValueError(f"unsupported GPT-2 activation {act!r}")
    base = gpt2_config(
        vocab_size=hf_config.vocab_size, n_ctx=hf_config.n_positions,
        d_model=hf_config.n_embd, n_layer=hf_config.n_layer, n_head=hf_config.n_head,
    )
    return base.replace(
        norm_eps=hf_config.layer_norm_epsilon,
        gelu="exact" if act == "gelu" else "tanh",
    )


@torch.no_grad()
def from_hf(hf_model: Any) -> LanguageModel:
    """An attnlab ``LanguageModel`` holding the weights of a ``GPT2LMHeadModel``."""
    cfg = config_from_hf(hf_model.config)
    model = LanguageModel(cfg)
    sd = hf_model.state_dict()
    model.tok.weight.copy_(sd["transformer.wte.weight"])
    model.pos.table.weight.copy_(sd["transformer.wpe.weight"])
    for i, block in enumerate(model.blocks):
        p = f"transformer.h.{i}."
        # One fused q|k|v map on both sides: Conv1D (in, out) → Linear (out, in).
        block.mixer.qkv.weight.copy_(sd[p + "attn.c_attn.weight"].T)  # (3c, c)
        block.mixer.qkv.bias.copy_(sd[p + "attn.c_attn.bias"])  # (3c,)
        block.mixer.o.weight.copy_(sd[p + "attn.c_proj.weight"].T)
        block.mixer.o.bias.copy_(sd[p + "attn.c_proj.bias"])
        block.norm1.weight.copy_(sd[p + "ln_1.weight"])
        block.norm1.bias.copy_(sd[p + "ln_1.bias"])
        block.norm2.weight.copy_(sd[p + "ln_2.weight"])
        block.norm2.bias.copy_(sd[p + "ln_2.bias"])
        block.mlp.up.weight.copy_(sd[p + "mlp.c_fc.weight"].T)
        block.mlp.up.bias.copy_(sd[p + "mlp.c_fc.bias"])
        block.mlp.down.weight.copy_(sd[p + "mlp.c_proj.weight"].T)
        block.mlp.down.bias.copy_(sd[p + "mlp.c_proj.bias"])
    model.norm.weight.copy_(sd["transformer.ln_f.weight"])
    model.norm.bias.copy_(sd["transformer.ln_f.bias"])
    return model.eval()


def load_hf_folder(path: str | Path) -> LanguageModel:
    """Convert a GPT-2 saved with ``save_pretrained`` in a local folder (no download)."""
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} holds no config.json: not a Hugging Face model folder")
    try:
        from transformers import GPT2LMHeadModel
    except ImportError as err:  # pragma: no cover - transformers is a test extra
        raise ValueError("reading a Hugging Face folder needs `pip install transformers`") from err
    hf = GPT2LMHeadModel.from_pretrained(str(folder), local_files_only=True)
    return from_hf(hf)
