"""Measuring the induction experiment (docs/experiments.md, "Induction heads"): in-context
loss and head scores on held-out segment rows, ablation, and the phase change of a curve.

Dimension legend: ``n`` held-out rows, ``L`` blocks, ``h`` heads, ``t`` query positions,
``s`` key positions, ``k`` scored segment tokens (over all rows), ``S`` snapshots.

On held-out rows of ``attnlab.data.repeated.segment_rows`` (a segment of random
length repeated once at random places), with Olsson et al.'s (2022) definitions:

- *first* / *repeat* loss: mean next-token cross-entropy at the segment's tokens
  after its first, in its first occurrence and in its repeat; the in-context loss
  is ``repeat − first`` and the *benefit* ``first − repeat``;
- a head's *induction* (prefix-matching) score: its mean attention from the query
  that predicts the repeat's token ``j`` (the repeat's token ``j − 1``) to the token
  that followed the earlier occurrence of that query's token (the first
  occurrence's token ``j``);
- a head's *previous-token* score: its mean attention from each position to the one
  before (queries ``t ≥ 1``).

The segments' offsets vary row to row, so a head that looks a fixed distance back
cannot score as an induction head here (on the fixed-offset probe of
``attnlab.interp`` it could). Left out: per-token loss curves beyond the segment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnlab.data.repeated import SegmentRows
from attnlab.nn.trace import ablate, head_means


@torch.no_grad()
def measure(model: torch.nn.Module, held: SegmentRows,
            heads: dict[tuple[int, int], str] | None = None,
            means: dict | None = None) -> dict[str, Any]:
    """First and repeat loss, and every head's induction and previous-token score, of
    ``model`` on ``held`` (optionally with ``heads`` ablated, ``attnlab.nn.trace.ablate``)."""
    device = next(model.parameters()).device
    x = torch.from_numpy(held.rows[:, :-1]).to(device)  # (n, t)
    y = torch.from_numpy(held.rows[:, 1:]).to(device)  # (n, t)
    if heads:
        with ablate(model, heads, means):
            trace = model.trace(x)
    else:
        trace = model.trace(x)
    nll = -torch.log_softmax(trace.logits.float(), -1).gather(-1, y[..., None])[..., 0]
    nll = nll.cpu().numpy()  # (n, t)
    row, first, second = held.scored()  # (k,) each: logit positions predicting token j
    t = np.arange(1, x.shape[1])
    induction, previous = [], []
    for w in trace.weights:
        w = w.float().cpu().numpy()  # (n, h, t, s)
        induction.append(w[row, :, second, first + 1].mean(0).tolist())  # (h,)
        previous.append(w[:, :, t, t - 1].mean((0, 2)).tolist())  # (h,)
    return {"first": float(nll[row, first].mean()), "repeat": float(nll[row, second].mean()),
            "induction": induction, "previous": previous}


def benefit(m: dict[str, Any]) -> float:
    """first − repeat loss (nats): how much the repeat is easier than its first occurrence."""
    return m["first"] - m["repeat"]


def ablations(model: torch.nn.Module, held: SegmentRows, how: str = "mean") -> dict[str, Any]:
    """Block 1's previous-token head and block 2's induction head (the highest scores), and
    for each head of block 1, the induction head's score and the benefit with it ablated."""
    plain = measure(model, held)
    prev = int(np.argmax(plain["previous"][0]))
    ind = int(np.argmax(plain["induction"][1]))
    x = torch.from_numpy(held.rows[:, :-1]).to(next(model.parameters()).device)  # (n, t)
    means = head_means(model, x) if how == "mean" else None
    per_head = []
    for h in range(len(plain["previous"][0])):
        cut = measure(model, held, {(0, h): how}, means)
        per_head.append({"head": h, "score": cut["induction"][1][ind], "benefit": benefit(cut)})
    return {"how": how, "prev_head": prev, "ind_head": ind,
            "score": plain["induction"][1][ind], "benefit": benefit(plain), "per_head": per_head}


def abrupt_window(steps: list[int], curve: list[float], width: int) -> tuple[int, float]:
    """The start index ``i`` of the ``width`` snapshot intervals over which ``curve`` rises
    most, and that rise's share of the whole rise (``curve[-1] − curve[0]``; 0 when the
    curve did not rise).

    >>> abrupt_window([0, 1, 2, 3, 4], [0.0, 0.1, 0.9, 1.0, 1.0], 1)
    (1, 0.8)
    """
    rises = [curve[i + width] - curve[i] for i in range(len(curve) - width)]
    i = int(np.argmax(rises))
    total = curve[-1] - curve[0]
    return i, float(rises[i] / total) if total > 0 else 0.0


def window_share(curve: list[float], start: int, width: int) -> float:
    """The share of ``curve``'s whole rise that happens over intervals ``start … start+width``
    (0 when it did not rise)."""
    total = curve[-1] - curve[0]
    return float((curve[start + width] - curve[start]) / total) if total > 0 else 0.0


def phase(record_seed: dict[str, Any], steps: list[int], width: int) -> dict[str, Any]:
    """One seed's phase change: the window where the benefit rises most, its share of the
    whole rise, the steepest interval's end step, and the final induction head's score share
    over that window."""
    snaps = record_seed["snapshots"]
    gain = [benefit(s) for s in snaps]
    layer, head = 1, record_seed["ablation"]["ind_head"]
    score = [s["induction"][layer][head] for s in snaps]
    start, share = abrupt_window(steps, gain, width)
    jumps = np.diff(gain)
    return {"start": steps[start], "stop": steps[start + width], "loss_share": share,
            "score_share": window_share(score, start, width),
            "step": steps[int(np.argmax(jumps)) + 1],
            "score_before": score[start], "score_after": score[start + width],
            "benefit_before": gain[start], "benefit_after": gain[start + width]}
