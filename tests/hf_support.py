"""Tiny random Hugging Face configs of each model family the explorer and ``interp`` read, and
the tiny byte-level tokenizer their folders carry."""

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


def byte_bpe(texts: list[str], special: list[str]) -> Any:
    """A byte-level BPE trained offline on ``texts`` (three times over), vocabulary 300, with
    ``special`` tokens first (ids 0, 1, …): a ``tokenizers.Tokenizer``."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers import models as tok_models

    bpe = Tokenizer(tok_models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts * 3,
        trainers.BpeTrainer(vocab_size=300, special_tokens=special,
                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()),
    )  # fmt: skip
    return bpe
