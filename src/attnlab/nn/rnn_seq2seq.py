"""The recurrent encoder–decoder, without attention and with Bahdanau's.

Dimension legend: ``b`` batch, ``s`` source positions, ``t`` target positions, ``e`` word
vector width, ``d`` GRU state width, ``d_h`` encoder state width (d, or 2d both ways),
``a`` scoring width, ``v`` target vocabulary.

Both models share every part but one; ``cfg.arch`` picks the context the decoder reads at
step i:

``rnn``       c_i = h_last, the encoder's final state, the same at every step: the whole
              source in one vector (Cho et al. 2014's encoder–decoder, which feeds that
              vector to every step; Sutskever et al. 2014 only start from it);
``bahdanau``  c_i = Σ_j α_ij h_j with α_i = softmax_j(vᵀ tanh(W s_{i-1} + U h_j)), a
              weighted sum of *all* the encoder's states with weights the decoder computes
              itself (Bahdanau et al. 2015; ``attnlab.nn.additive``).

Then, in both:

    h_1 … h_s = GRU_enc(E_src x)                       (both directions: [→h_j ; ←h_j])
    s_0 = tanh(W_init h_last)                          (Bahdanau et al., A.2.2)
    s_i = GRUCell([E_tgt y_{i-1} ; c_i], s_{i-1})
    logits_i = W_out [s_i ; c_i] + b_out

so the two differ by the attention's W, U and v alone, and a comparison of them is a
comparison of the bottleneck. The encoder is ``torch.nn.GRU`` over a packed batch, so a
padded source gives the same states and the same last state as the source alone; h_last
is the state after the last real word (both ways: the forward one after word s, the
backward one after word 1). The decoder is a loop over target positions, one dependent
step each, as in ``attnlab.nn.recurrent``. Targets are teacher-forced: ``tgt_in`` is bos
followed by the target shifted right.

Left out: LSTM cells, several recurrent layers, Bahdanau's maxout deep output, input
feeding (Luong et al. 2015), dropout, beam search, a source of length 0 (the packed
encoder refuses it).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnlab.nn.additive import AdditiveAttention
from attnlab.nn.cross import padding_mask
from attnlab.nn.model_config import Seq2SeqConfig


class RecurrentEncoderDecoder(nn.Module):
    """GRU encoder and GRU decoder; additive attention when ``cfg.arch == "bahdanau"``."""

    def __init__(self, cfg: Seq2SeqConfig) -> None:
        super().__init__()
        if cfg.arch not in ("rnn", "bahdanau"):
            raise ValueError(f"RecurrentEncoderDecoder needs arch 'rnn' or 'bahdanau', "
                             f"got {cfg.arch!r}")
        self.cfg = cfg
        e, d = cfg.embed_width, cfg.d_model
        d_h = 2 * d if cfg.bidirectional else d
        self.src_tok, self.tgt_tok = nn.Embedding(cfg.src_vocab, e), nn.Embedding(cfg.tgt_vocab, e)
        self.encoder = nn.GRU(e, d, batch_first=True, bidirectional=cfg.bidirectional)
        self.bridge = nn.Linear(d_h, d)  # W_init: s_0 from the last encoder state
        self.attention = (AdditiveAttention(d, d_h, cfg.attn_width) if cfg.arch == "bahdanau"
                          else None)
        self.cell = nn.GRUCell(e + d_h, d)
        self.head = nn.Linear(d + d_h, cfg.tgt_vocab)

    def encode(self, src: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Encoder states (b, s, d_h) (zeros past each length), the last state (b, d_h) and
        the key mask (b, s) of source ids (b, s) with lengths (b,), each at least 1."""
        if src_lengths.numel() and int(src_lengths.min()) < 1:
            raise ValueError("every source needs at least one token (the recurrent encoder "
                             f"packs them), got lengths {src_lengths.tolist()}")
        key_mask = padding_mask(src_lengths, src.shape[1])
        packed = pack_padded_sequence(self.src_tok(src), src_lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        out, last = self.encoder(packed)  # last: (directions, b, d)
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return states, torch.cat(list(last), dim=-1), key_mask  # (b, s, d_h), (b, d_h)

    def decode(self, tgt_in: Tensor, states: Tensor, last: Tensor,
               key_mask: Tensor) -> tuple[Tensor, Tensor | None]:
        """Logits (b, t, v) and, with attention, its weights (b, t, s): one row per step."""
        s = torch.tanh(self.bridge(last))  # s_0 (b, d)
        keys = self.attention.project_keys(states) if self.attention is not None else None
        outputs, weights = [], []
        for word in self.tgt_tok(tgt_in).unbind(1):  # (b, e): step i waits for step i - 1
            if self.attention is None:
                context = last  # (b, d_h): the one vector, at every step
            else:
                context, alpha = self.attention(s, states, key_mask, keys)  # (b, d_h), (b, s)
                weights.append(alpha)
            s = self.cell(torch.cat([word, context], dim=-1), s)  # s_i (b, d)
            outputs.append(torch.cat([s, context], dim=-1))  # (b, d + d_h)
        logits = self.head(torch.stack(outputs, dim=1))  # (b, t, v)
        return logits, torch.stack(weights, dim=1) if weights else None

    def forward(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
        """Logits (b, t, v): source ids (b, s) with lengths (b,), target input ids (b, t)."""
        states, last, key_mask = self.encode(src, src_lengths)
        return self.decode(tgt_in, states, last, key_mask)[0]

    def attention_weights(self, src: Tensor, src_lengths: Tensor,
                          tgt_in: Tensor) -> Tensor | None:
        """Bahdanau's alignment (b, t, s), one row per decoder step (zero on padded source
        positions); ``None`` without attention, which has no weights over the source."""
        states, last, key_mask = self.encode(src, src_lengths)
        return self.decode(tgt_in, states, last, key_mask)[1]
