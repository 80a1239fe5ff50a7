"""Tiny random Hugging Face configs of each model family the explorer and ``interp`` read."""

from __future__ import annotations

from typing import Any


def tiny_configs(transformers: Any, vocab: int, **common: Any) -> dict[str, Any]:
    """gpt2, gpt_neo, opt, llama and mistral at width 32, two layers, four heads; ``common``
    adds to every config (e.g. ``initializer_range``)."""
    t = transformers
    common = {"vocab_size": vocab, "bos_token_id": 0, "eos_token_id": 0, **common}
    return {
        "gpt2": t.GPT2Config(n_positions=32, n_embd=32, n_layer=2, n_head=4, **common),
        "gpt_neo": t.GPTNeoConfig(max_position_embeddings=32, hidden_size=32, num_layers=2,
                                  num_heads=4, attention_types=[[["global", "local"], 1]],
                                  window_size=4, **common),
        "opt": t.OPTConfig(max_position_embeddings=32, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, ffn_dim=64, word_embed_proj_dim=32,
                           pad_token_id=1, **common),
        "llama": t.LlamaConfig(max_position_embeddings=32, hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=2,
                               intermediate_size=64, **common),
        "mistral": t.MistralConfig(max_position_embeddings=32, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2,
                                   intermediate_size=64, sliding_window=5, **common),
    }  # fmt: skip
