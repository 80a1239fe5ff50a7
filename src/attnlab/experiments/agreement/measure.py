"""The measuring of the verb-agreement experiment (``attnlab.experiments.agreement.analyse``
calls these): accuracy against the majority-form baseline, every head's weight per group of
keys, the probe's rows; and the sums over heads that the claims and the table read from the
record (subject + stems, each head's share of the routing).

Dimension legend: ``n`` sentences, ``h`` heads per block, ``t`` query positions, ``s`` key
positions, ``V`` vocabulary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnlab.data.synthetic import VerbAgreementData
from attnlab.experiments.agreement.settings import GROUPS, PROBE
from attnlab.running.context import attention_trace, model_device


def baseline(data: VerbAgreementData) -> float:
    """Accuracy of naming the right verb in the form more frequent in training (clauses 2+)."""
    forms = {}  # id -> True for an -s form
    for w in data.vocab.words:
        if w.endswith("s") and w[:-1] in data.vocab.words:
            forms[data.vocab.id(w)], forms[data.vocab.id(w[:-1])] = True, False
    verbs = [p + 1 for p in data.score_indices[1:]]  # sentence positions of the scored verbs
    train_s = np.mean([forms[i] for i in data.train[:, verbs].ravel()])
    held_s = np.array([forms[i] for i in data.held[:, verbs].ravel()])
    return float(np.mean(held_s == (train_s > 0.5)))


def group_masks(n_clauses: int) -> dict[int, dict[str, np.ndarray]]:
    """Per scored query position (a pronoun), a boolean mask over key positions per group."""
    out = {}
    for c in range(1, n_clauses):
        q = 3 * c  # the pronoun of clause c + 1
        keys = np.arange(q + 1)  # (s,)
        out[q] = {"subject": keys == q,
                  "stems": keys % 3 == 1,
                  "separators": keys % 3 == 2,
                  "other pronouns": (keys % 3 == 0) & (keys != q)}
    return out


@torch.no_grad()
def measure(model: torch.nn.Module, data: VerbAgreementData) -> dict[str, Any]:
    """Top-1 accuracy at the scored verbs of clauses 2+, and every head's group masses there."""
    device = model_device(model)
    rows = torch.from_numpy(data.held[:, :-1]).to(device)  # (n, L-1): inputs
    logits, weights = attention_trace(model, rows)  # (n, t, V), L × (n, h, t, s)
    logits = logits.float().cpu().numpy()
    scored = list(data.score_indices[1:])
    answers = data.held[:, [q + 1 for q in scored]]  # (n, clauses - 1)
    top1 = float(np.mean(logits[:, scored].argmax(-1) == answers))
    masks = group_masks(data.held.shape[1] // 3)
    heads = []
    for b, w in enumerate(weights):
        w = w.float().cpu().numpy()  # (n, h, t, s)
        for h in range(w.shape[1]):
            mass = {g: float(np.mean([w[:, h, q, : q + 1][:, m[g]].sum(-1).mean()
                                      for q, m in masks.items()])) for g in GROUPS}
            heads.append({"block": b + 1, "head": h + 1, **mass})
    return {"top1": top1, "heads": heads}


def probe_rows(model: torch.nn.Module, data: VerbAgreementData) -> list[list[float]]:
    """Every head's attention row at the last word of ``PROBE`` (block-major order)."""
    device = model_device(model)
    ids = torch.tensor([data.vocab.encode(PROBE)], device=device)  # (1, t)
    return [w[0, h, -1].float().cpu().tolist() for w in attention_trace(model, ids)[1]
            for h in range(w.shape[1])]


def subject_and_stems(heads: list[dict]) -> list[float]:
    """Each head's weight on the subject pronoun and the verb stems together."""
    return [h["subject"] + h["stems"] for h in heads]


def probe_subject_and_stems(record: dict[str, Any]) -> tuple[str, float]:
    """On the curriculum's own sentence (seed 0): the head with the most weight at ``he`` on
    ``he`` and both stems (positions 6, 4 and 1), and that weight."""
    tokens = record["probe"]["tokens"]
    keys = [i for i, t in enumerate(tokens) if i == len(tokens) - 1 or i % 3 == 1]
    masses = [sum(row[i] for i in keys) for row in record["probe"]["rows"]]
    best = int(np.argmax(masses))
    n_head = record["settings"]["n_head"]
    return f"block {best // n_head + 1} head {best % n_head + 1}", float(masses[best])


def routing_shares(heads: list[dict]) -> list[float]:
    """Each head's share of all heads' routing mass (weight on the subject and the stems)."""
    routing = subject_and_stems(heads)
    total = sum(routing)
    return [r / total if total > 0 else 0.0 for r in routing]
