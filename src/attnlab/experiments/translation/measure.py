"""What "Where attention was born" measures, one function per quantity (docs/experiments.md,
"Where attention was born").

Dimension legend: ``b`` sentences, ``s`` source positions, ``t`` target positions, ``v``
target vocabulary, ``L`` decoder layers, ``h`` heads.

Per held-out band of source lengths (``score_band``), on one trained model:

- ``token_acc``: the fraction of target words (and the final eos) whose most likely word,
  given the source and the reference words before it (teacher-forced), is the reference
  word: how well each word is translated, whatever the sentence's length;
- ``exact``: the fraction of sentences whose greedy translation (each word the decoder's
  most likely, fed back) is the reference, eos included: what Bahdanau et al.'s BLEU
  measured more leniently;
- ``agreement``: the predicate adjective alone (``Pair.agreement``: the word whose gender
  comes from the subject noun, past every relative clause), forced choice between its two
  forms (``cansada`` against ``cansado``), teacher-forced;
- ``alignment``: the fraction of target words with a gold source word (``Pair.alignment``)
  whose attention weights are largest on it: the additive model's one row per word, and
  for the transformer the best (layer, head) of its cross-attention (None for the model
  without attention).

``blind_baseline``: the token accuracy of a decoder that never reads the source, the most
frequent next word after each word in the training translations (a bigram): what a model
gets from the Spanish alone. ``dependent_steps``: the longest chain of autograd operations
in one training forward pass at a source and target of ``n`` words, counted on the graph
(the recurrence experiment's ``longest_chain``).

Left out: BLEU, beam search, attention rollout over the transformer's layers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from attnlab.data.translation import EOS, PAD, Pair, encode_batch
from attnlab.experiments import recurrence
from attnlab.nn.seq2seq import build_seq2seq, greedy_decode, seq2seq_loss

Band = tuple[int, int]


def inside(bands: Sequence[Sequence[int]], train_band: Sequence[int]) -> list[int]:
    """The indices of the bands that lie inside the training lengths.

    >>> inside([(5, 7), (8, 10), (11, 14), (15, 20)], (5, 14))
    [0, 1, 2]
    """
    lo, hi = train_band
    return [i for i, (a, b) in enumerate(bands) if lo <= a and b <= hi]


def _tensors(pairs: Sequence[Pair], data: Any, device: Any) -> tuple[torch.Tensor, ...]:
    b = encode_batch(list(pairs), data.source_vocab, data.target_vocab)
    return tuple(torch.from_numpy(np.asarray(a)).to(device)
                 for a in (b.src, b.src_lengths, b.tgt_in, b.tgt_out))


def _other_form(word: str) -> str:
    """The adjective's form of the other gender (``cansada`` -> ``cansado``)."""
    return word[:-1] + ("o" if word.endswith("a") else "a")


def _aligned(weights: torch.Tensor, pairs: Sequence[Pair]) -> tuple[int, int]:
    """(right, counted): target words with a gold source word whose weights (b, t, s) are
    largest there."""
    right = counted = 0
    top = weights.argmax(-1)  # (b, t)
    for row, pair in enumerate(pairs):
        for k, j in enumerate(pair.alignment):
            if j is not None:
                counted += 1
                right += int(top[row, k]) == j
    return right, counted


@torch.no_grad()
def score_band(model: Any, pairs: Sequence[Pair], data: Any, device: Any = "cpu",
               batch: int = 64) -> dict[str, float | None]:
    """``token_acc``, ``exact``, ``agreement`` and ``alignment`` of ``model`` on ``pairs``
    (see the module docstring), ``data`` giving the vocabularies."""
    arch = model.cfg.arch
    vocab = data.target_vocab
    words = right_words = exact = agree_n = agree_right = 0
    align = np.zeros(2) if arch == "bahdanau" else None
    heads: np.ndarray | None = None  # transformer: (right, counted) per (layer, head)
    for start in range(0, len(pairs), batch):
        chunk = pairs[start:start + batch]
        src, lengths, tgt_in, tgt_out = _tensors(chunk, data, device)
        if arch == "rnn":
            logits, weights = model(src, lengths, tgt_in), None  # (b, t, v)
        elif arch == "bahdanau":
            logits, weights = model.decode(tgt_in, *model.encode(src, lengths))  # (b, t, s)
        else:
            memory, key_mask = model.encode(src, lengths)
            logits, per_layer = model.decode(tgt_in, memory, key_mask, need_weights=True)
            weights = torch.stack(per_layer)  # (L, b, h, t, s)
        logits = logits.float()
        real = tgt_out != PAD
        words += int(real.sum())
        right_words += int(((logits.argmax(-1) == tgt_out) & real).sum())
        written = greedy_decode(model, src, lengths, 1, EOS, tgt_out.shape[1])
        for row, pair in enumerate(chunk):
            want = [*vocab.encode(" ".join(pair.target)), EOS]
            got = written[row].tolist()[: len(want)]
            exact += got == want
            for k, _ in pair.agreement:
                good, bad = vocab.id(pair.target[k]), vocab.id(_other_form(pair.target[k]))
                agree_right += bool(logits[row, k, good] > logits[row, k, bad])
                agree_n += 1
        if arch == "bahdanau":
            align += _aligned(weights, chunk)
        elif arch == "transformer":
            n_layer, _, n_head = weights.shape[:3]
            counts = np.array([[_aligned(weights[i, :, h], chunk) for h in range(n_head)]
                               for i in range(n_layer)], dtype=float)  # (L, h, 2)
            heads = counts if heads is None else heads + counts
    if heads is not None:
        align = heads[..., 0].max() / heads[..., 1].max()  # the best (layer, head)
    elif align is not None:
        align = align[0] / align[1]
    return {"token_acc": right_words / words, "exact": exact / len(pairs),
            "agreement": agree_right / agree_n if agree_n else None,
            "alignment": None if align is None else float(align)}


def blind_baseline(train: Sequence[Pair], pairs: Sequence[Pair]) -> float:
    """Teacher-forced token accuracy on ``pairs`` of the most frequent next target word after
    each word in the ``train`` translations (eos after the last; bos before the first).

    >>> from attnlab.data.translation import translate
    >>> p = translate("the girl was tired .")
    >>> blind_baseline([p], [p])
    1.0
    """
    follows: dict[str, Counter] = defaultdict(Counter)
    for pair in train:
        seq = ["<bos>", *pair.target, "<eos>"]
        for a, b in zip(seq, seq[1:], strict=False):
            follows[a][b] += 1
    guess = {a: c.most_common(1)[0][0] for a, c in follows.items()}
    right = total = 0
    for pair in pairs:
        seq = ["<bos>", *pair.target, "<eos>"]
        for a, b in zip(seq, seq[1:], strict=False):
            right += guess.get(a) == b
            total += 1
    return right / total


def alignment_example(model: Any, pair: Pair, data: Any) -> dict[str, Any]:
    """The additive model's weights (target words × source words) on one sentence, with
    the words and the gold alignment."""
    src, lengths, tgt_in, _ = _tensors([pair], data, "cpu")
    with torch.no_grad():
        weights = model.attention_weights(src, lengths, tgt_in)[0]  # (t, s)
    n_t, n_s = len(pair.target), len(pair.source)
    return {"source": list(pair.source), "target": list(pair.target),
            "gold": list(pair.alignment),
            "weights": [[round(float(w), 4) for w in row[:n_s]] for row in weights[:n_t]]}


def dependent_steps(cfg: Any, n: int) -> int:
    """The longest chain of autograd operations from the loss of one pair with ``n`` source
    and ``n`` target words back to the inputs, for the model of ``cfg``."""
    torch.manual_seed(0)
    model = build_seq2seq(cfg)
    src = torch.randint(3, cfg.src_vocab, (1, n))
    tgt = torch.randint(3, cfg.tgt_vocab, (1, n + 1))
    logits = model(src, torch.tensor([n]), tgt[:, :-1])
    return recurrence.measure.longest_chain(seq2seq_loss(logits, tgt[:, 1:], PAD).grad_fn)
