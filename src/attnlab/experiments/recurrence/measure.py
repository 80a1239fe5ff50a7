"""What "Why attention replaced recurrence" measures, one function per quantity
(docs/experiments.md, "Why attention replaced recurrence").

Dimension legend: ``n`` windows or sentences, ``t`` positions, ``c`` width, ``v`` vocabulary.

- ``gradient_reach``: ‖∂ℓ_T/∂x_{T−k}‖ for k = 1 … W − 1, the norm of the gradient of the
  loss at the last position of a window with respect to the input embedding k positions
  back, averaged over windows. One backward pass for all windows (each window's loss
  depends on its own inputs only), in float64 so that a reach that decays geometrically
  is measured far below float32's smallest number instead of flushed to zero.
- ``forced_choice``: the agreement language's adjective, right form's logit above the
  wrong form's, per distance.
- ``dependent_steps``: the longest chain of operations from the loss back to the input in
  the autograd graph of one training forward pass, counted by walking the graph: the
  operations that must run one after another, whatever the hardware. A recurrence's
  chain passes through every step of its loop; attention's through a fixed number of
  matrix multiplies, whatever T.
- ``benchmark``: the wall time of a whole training step (forward, backward, AdamW update)
  per token, at a fixed number of tokens per step, sizes and models interleaved round by
  round (a benchmark, not one stopwatch reading); every round is kept, the table shows the
  minimum and the spread.

Left out: the Jacobian's singular values (only the norm of one gradient row is measured),
and timing of inference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnlab.nn.model import LanguageModel, next_token_loss
from attnlab.nn.model_config import ModelConfig
from attnlab.timing.rounds import clock, cpu_threads, interleaved_rounds


def held_windows(tokens: np.ndarray, n_ctx: int, count: int) -> torch.Tensor:
    """``count`` windows of ``n_ctx + 1`` tokens, evenly spaced over ``tokens`` (n, t + 1)."""
    span = n_ctx + 1
    last = len(tokens) - span
    if last < 0:
        raise ValueError(f"{len(tokens)} held-out tokens are fewer than one window of {span}")
    starts = np.linspace(0, last, num=min(count, last + 1)).astype(np.int64)
    return torch.from_numpy(np.stack([tokens[s : s + span] for s in starts]).astype(np.int64))


def gradient_reach(model: LanguageModel, windows: torch.Tensor) -> list[float]:
    """Mean over windows of ‖∂ℓ_T/∂x_{T−k}‖, k = 1 … t − 1, for windows (n, t + 1)."""
    model = _copy_float64(model)
    kept: list[torch.Tensor] = []

    def keep(_module: Any, _inputs: Any, out: torch.Tensor) -> None:
        out.retain_grad()
        kept.append(out)

    hook = model.tok.register_forward_hook(keep)
    try:
        idx, target = windows[:, :-1], windows[:, -1]  # (n, t), (n,)
        logits = model(idx)[:, -1]  # (n, v): the prediction at the last position
        torch.nn.functional.cross_entropy(logits, target, reduction="sum").backward()
    finally:
        hook.remove()
    norms = kept[0].grad.norm(dim=-1).mean(0)  # (t,): position T - 1 - k is k back
    t = idx.shape[1]
    return [float(norms[t - 1 - k]) for k in range(1, t)]


def _copy_float64(model: LanguageModel) -> LanguageModel:
    copy = LanguageModel(model.cfg).to(torch.float64)
    copy.load_state_dict({k: v.to(torch.float64) for k, v in model.state_dict().items()})
    return copy.cpu().eval()


@torch.no_grad()
def forced_choice(model: LanguageModel, data: Any, device: Any = "cpu") -> list[float]:
    """Per distance of ``data`` (``attnlab.data.gender.GenderData``), the fraction of items
    whose agreeing form scores above the other form."""
    out = []
    for d in data.distances:
        logits = model(torch.from_numpy(data.items[d]).to(device))[:, -1].float().cpu()  # (n, v)
        rows = torch.arange(logits.shape[0])
        right = logits[rows, torch.from_numpy(data.right[d])]
        wrong = logits[rows, torch.from_numpy(data.wrong[d])]
        out.append(float((right > wrong).float().mean()))
    return out


def dependent_steps(cfg: ModelConfig, t: int) -> int:
    """The longest chain of autograd operations from the loss of one window of ``t`` tokens
    back to the inputs of the model ``cfg`` (counted on the graph, not assumed)."""
    torch.manual_seed(0)
    model = LanguageModel(cfg.replace(n_ctx=max(t, cfg.n_ctx)))
    idx = torch.randint(0, cfg.vocab_size, (1, t + 1))
    loss = next_token_loss(model(idx[:, :-1]), idx[:, 1:])
    return longest_chain(loss.grad_fn)


def longest_chain(root: Any) -> int:
    """Nodes on the longest path from ``root`` through ``next_functions`` (iterative: a
    recurrence's graph is deeper than Python's recursion limit).

    >>> x = torch.ones(2, requires_grad=True)
    >>> longest_chain((x.exp() * 2).sum().grad_fn)  # sum ← mul ← exp ← (leaf)
    4
    """
    depth: dict[Any, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if node in depth:
            continue
        children = [n for n, _ in getattr(node, "next_functions", ()) if n is not None]
        if ready:
            depth[node] = 1 + max((depth[c] for c in children), default=0)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if c not in depth)
    return depth[root]


def benchmark(cfgs: dict[str, ModelConfig], sizes: tuple[int, ...], tokens_per_step: int,
              rounds: int, device: str = "cpu") -> dict[str, Any]:
    """Seconds per token of one training step, per model, per round, per size.

    Every round times each size for each model once, sizes ascending and the models
    interleaved at each size (``attnlab.timing.rounds``); one untimed step per (model,
    size) comes first (allocation, kernel choice). Batch ``max(1, tokens_per_step // T)``.
    On the CPU on one thread (as every run trains).
    """
    def batch(t: int) -> int:
        return max(1, tokens_per_step // t)

    cases = [(m, t) for t in sizes for m in cfgs]  # the order of every round
    with cpu_threads(1, device):
        steps = {(m, t): _step(cfg, t, batch(t), device) for m, cfg in cfgs.items() for t in sizes}
        readings = dict(zip(cases, interleaved_rounds([steps[c] for c in cases], rounds),
                            strict=True))
    return {m: {"rounds": [[readings[m, t][i] / (batch(t) * t) for t in sizes]
                           for i in range(rounds)]} for m in cfgs}


def _step(cfg: ModelConfig, t: int, batch: int, device: str) -> Any:
    torch.manual_seed(0)
    model = LanguageModel(cfg.replace(n_ctx=max(t, cfg.n_ctx))).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(0, cfg.vocab_size, (batch, t + 1), device=device)

    def step() -> float:
        start = clock(device)
        loss = next_token_loss(model(idx[:, :-1]), idx[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return clock(device) - start

    return step
