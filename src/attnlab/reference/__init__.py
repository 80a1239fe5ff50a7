"""NumPy float64 reference of attention: readable before fast.

- ``softmax``   stable softmax, entropy and effective tokens, causal and padding masks,
                boolean ↔ additive.
- ``attention`` scaled dot-product and multi-head attention.
- ``backward``  hand-written backward of attention and a finite-difference check.
- ``additive``  additive (Bahdanau) attention, forward and hand-written backward.
- ``positions`` sinusoidal encoding, RoPE, ALiBi.
"""

from __future__ import annotations

from attnlab.reference.additive import (
    AdditiveCache,
    AdditiveGrads,
    additive_attention_backward,
    additive_attention_forward,
)
from attnlab.reference.attention import multi_head_attention, scaled_dot_product_attention
from attnlab.reference.backward import (
    AttentionCache,
    attention_backward,
    attention_forward,
    finite_difference_grad,
)
from attnlab.reference.positions import alibi_bias, alibi_slopes, rope, sinusoidal
from attnlab.reference.softmax import (
    additive_mask,
    boolean_mask,
    causal_mask,
    effective_tokens,
    entropy,
    padding_mask,
    softmax,
)

__all__ = [
    "AdditiveCache",
    "AdditiveGrads",
    "additive_attention_backward",
    "additive_attention_forward",
    "AttentionCache",
    "additive_mask",
    "alibi_bias",
    "alibi_slopes",
    "attention_backward",
    "attention_forward",
    "boolean_mask",
    "causal_mask",
    "effective_tokens",
    "entropy",
    "finite_difference_grad",
    "multi_head_attention",
    "padding_mask",
    "rope",
    "scaled_dot_product_attention",
    "sinusoidal",
    "softmax",
]
