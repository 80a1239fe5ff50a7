"""The measuring of the Winograd experiment (``attnlab.experiments.winograd.analyse`` calls
these): the logits at the scored position, forced-choice and top-1 accuracy, and the
attention rows of the probe sentences.

Dimension legend: ``n`` sentences, ``h`` heads, ``t`` query positions, ``s``
key positions, ``V`` vocabulary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnlab.data.synthetic import (
    Vocab,
    WinogradData,
    forced_choice_accuracy,
    top1_accuracy,
)
from attnlab.errors import UsageError
from attnlab.experiments.winograd.settings import NOUN_POSITIONS, PROBE, PROBE_ADJECTIVES
from attnlab.running.context import model_device


def scored_logits(model: torch.nn.Module, rows: np.ndarray, score_index: int) -> np.ndarray:
    """Logits (n, V) at ``score_index`` for sentences ``rows`` (n, L) read from position 0."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or not 0 <= score_index < rows.shape[1] - 1:
        raise ValueError(f"need rows (n, L) and 0 <= score_index < L - 1, got {rows.shape}")
    device = model_device(model)
    x = torch.from_numpy(rows[:, : score_index + 1].astype(np.int64)).to(device)  # (n, i + 1)
    with torch.no_grad():
        return model(x)[:, score_index].float().cpu().numpy()  # (n, V)


def accuracies(model: torch.nn.Module, data: WinogradData) -> dict[str, float]:
    """Held-out forced choice and top-1, and forced choice on the training sentences."""
    held = scored_logits(model, data.held, data.score_index)
    train = scored_logits(model, data.train, data.score_index)
    train_candidates = data.train[:, [1, 6]]  # sentence positions of x and y
    return {
        "forced": forced_choice_accuracy(held, data.candidates, data.answer),
        "top1": top1_accuracy(held, data.answer),
        "train_forced": forced_choice_accuracy(
            train, train_candidates, data.train[:, data.ref_index]),
    }


def attention_rows(model: torch.nn.Module, vocab: Vocab, sentence: str) -> dict[str, Any]:
    """Every block's attention weights for ``sentence``: tokens, and per block a list of
    heads, each a (t, t) list of rows (``None`` for a block without weights)."""
    ids = vocab.encode(sentence)
    if not ids:
        raise UsageError("the sentence is empty")
    limit = model.cfg.n_ctx
    if len(ids) > limit:
        raise UsageError(f"the sentence has {len(ids)} words; this model reads at most {limit}")
    with torch.no_grad():
        weights = model.trace(torch.tensor([ids], device=model_device(model))).weights
    # weights: [(1, h, t, t)] per block
    return {
        "tokens": sentence.split(),
        "blocks": [None if w is None else w[0].float().cpu().tolist() for w in weights],
    }


def scored_attention(model: torch.nn.Module, vocab: Vocab, sentence: str) -> list[list[float]]:
    """Per block, the last position's attention row averaged over heads (length t)."""
    rows = attention_rows(model, vocab, sentence)
    return [np.asarray(b)[:, -1, :].mean(axis=0).tolist() for b in rows["blocks"]]  # (h,t,t)→(t,)


def attention_probe(models: list[torch.nn.Module], data: WinogradData) -> dict[str, Any]:
    """The two-block model's head-averaged attention at the scored position, per seed."""
    vocab = data.vocab
    sentences = {adj: PROBE.format(adj=adj) for adj in PROBE_ADJECTIVES}
    per_seed = {adj: [scored_attention(m, vocab, text) for m in models]
                for adj, text in sentences.items()}  # adj -> seed -> block -> (t,)
    n_block = len(per_seed["tired"][0])
    blocks = []
    for b in range(n_block):
        rows = {adj: np.array([seed[b] for seed in per_seed[adj]]) for adj in sentences}
        diff = np.abs(rows["tired"] - rows["wet"])  # (seeds, t)
        blocks.append({**{adj: r.mean(axis=0).tolist() for adj, r in rows.items()},
                       "max_abs_diff": diff.max(axis=1).tolist(),
                       "noun_abs_diff": diff[:, NOUN_POSITIONS].max(axis=1).tolist()})
    animal, street = vocab.id("animal"), vocab.id("street")
    answer_prob = {}
    for adj, text in sentences.items():
        probs = []
        for m in models:
            x = torch.tensor([vocab.encode(text)], device=model_device(m))  # (1, 15)
            with torch.no_grad():
                probs.append(torch.softmax(m(x)[0, -1].float(), -1).cpu())  # (V,), last = scored
        answer_prob[adj] = {"animal": float(np.mean([float(p[animal]) for p in probs])),
                            "street": float(np.mean([float(p[street]) for p in probs]))}
    return {
        "model": "two blocks", "variant": "B",
        "sentences": sentences, "tokens": PROBE.split(),
        "pair_held_out": ("animal", "street") in data.held_pairs,
        "blocks": blocks, "answer_prob": answer_prob,
    }
