"""Additive attention: Bahdanau, Cho and Bengio's fix for the one-vector bottleneck.

Dimension legend: ``b`` batch, ``i`` decoder steps (queries), ``j`` source positions,
``d_s`` decoder state width, ``d_h`` encoder state width, ``a`` scoring width.

    e_ij = vᵀ tanh(W s_i + U h_j)                       (Bahdanau et al. 2015, eq. 6 and A.1.2)
    α_ij = exp(e_ij) / Σ_k exp(e_ik)     over the real source positions j
    c_i  = Σ_j α_ij h_j

``s_i`` is the decoder's state (Bahdanau's s_{i-1}, the state *before* step i writes),
``h_j`` the encoder's state at source position j. The score is a one-hidden-layer
network of the pair, not a dot product: queries and keys need not share a width, and
nothing is divided by √d. ``U h_j`` does not depend on the decoder step, so a decoder
projects the source once (``project_keys``) and passes it to every step.

The key-padding mask (b, j), True on real tokens, sets padded scores to ``-inf`` before
the softmax: a padded position gets weight exactly zero, and a source with no real token
gives zero weights and a zero context (never NaN), as the scaled dot-product core does
(``attnlab.nn.attention.stable_softmax``). The NumPy reference with a hand-derived
backward is ``attnlab.reference.additive``. Left out: biases in W and U (the paper has
none), multiple heads, Luong's multiplicative scores, coverage.
"""

from __future__ import annotations

from torch import Tensor, nn

from attnlab.nn.attention import stable_softmax


class AdditiveAttention(nn.Module):
    """``(context, weights) = attn(s, h, key_mask)``: Bahdanau's score, softmax, weighted sum.

    ``W`` (a × d_s), ``U`` (a × d_h) and ``v`` (a) are the paper's W_a, U_a, v_a, stored
    as bias-free ``nn.Linear`` maps (``v.weight`` is (1, a)).
    """

    def __init__(self, d_query: int, d_key: int, d_attn: int) -> None:
        super().__init__()
        self.W = nn.Linear(d_query, d_attn, bias=False)
        self.U = nn.Linear(d_key, d_attn, bias=False)
        self.v = nn.Linear(d_attn, 1, bias=False)

    def project_keys(self, h: Tensor) -> Tensor:
        """``U h`` (b, j, a): the half of the score that is the same at every decoder step."""
        return self.U(h)

    def forward(self, s: Tensor, h: Tensor, key_mask: Tensor | None = None,
                keys: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Context and weights of queries ``s`` over encoder states ``h`` (b, j, d_h).

        ``s`` is (b, i, d_s) for i queries at once, or (b, d_s) for one decoder step
        (then the results lose their i axis: context (b, d_h), weights (b, j)).
        ``keys``: ``project_keys(h)``, when the caller has it already.
        Returns context (b, i, d_h) and weights (b, i, j), rows summing to one over the
        real source positions.
        """
        one_step = s.dim() == 2
        if one_step:
            s = s[:, None, :]  # (b, 1, d_s)
        keys = self.U(h) if keys is None else keys  # (b, j, a)
        hidden = self.W(s)[:, :, None, :] + keys[:, None, :, :]  # (b, i, j, a)
        scores = self.v(hidden.tanh()).squeeze(-1)  # (b, i, j)
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, :], float("-inf"))
        weights = stable_softmax(scores)  # (b, i, j); a fully masked row is all zeros
        context = weights @ h  # (b, i, d_h)
        if one_step:
            return context[:, 0], weights[:, 0]
        return context, weights
