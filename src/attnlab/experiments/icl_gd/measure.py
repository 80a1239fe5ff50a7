"""The measuring of the in-context regression experiment (``attnlab.experiments.icl_gd.analyse``
calls these): the tasks, the linear self-attention layer and its training, one GD step with
the best step size, and each seed's held-out losses and agreement, seeds side by side.

Dimension legend: ``b`` tasks, ``n`` context pairs, ``d`` input width, ``D = d + 1``
token width.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

import numpy as np
import torch

from attnlab.experiments.icl_gd.settings import Settings


def tasks(s: Settings, count: int, gen: torch.Generator, other: bool = False
          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``count`` tasks: context tokens E (b, n, D), query x_q (b, d), target y_q (b,), and
    the w (b, d) behind them; ``other``: the context's y from an independent w'."""
    w = torch.randn(count, s.d, generator=gen)  # (b, d)
    x = torch.rand(count, s.n + 1, s.d, generator=gen) * 2 - 1  # (b, n + 1, d)
    y = torch.einsum("bnd,bd->bn", x, w)  # (b, n + 1)
    if other:
        y_ctx = torch.einsum("bnd,bd->bn", x[:, :-1], torch.randn(count, s.d, generator=gen))
    else:
        y_ctx = y[:, :-1]
    tokens = torch.cat([x[:, :-1], y_ctx[..., None]], dim=-1)  # (b, n, D)
    return tokens, x[:, -1], y[:, -1], w


class LinearSelfAttention(torch.nn.Module):
    """One head of linear attention updating the query token; the prediction is its y."""

    def __init__(self, d: int, init_std: float) -> None:
        super().__init__()
        width = d + 1
        self.q, self.k, self.v, self.p = (
            torch.nn.Parameter(torch.randn(width, width) * init_std) for _ in range(4))

    def forward(self, tokens: torch.Tensor, x_q: torch.Tensor) -> torch.Tensor:
        """ŷ (b,) from context tokens (b, n, D) and queries x_q (b, d)."""
        e_q = torch.cat([x_q, torch.zeros_like(x_q[:, :1])], dim=-1)  # (b, D): y entry 0
        keys = tokens @ self.k.T  # (b, n, D)
        values = tokens @ self.v.T  # (b, n, D)
        query = e_q @ self.q.T  # (b, D)
        scores = torch.einsum("bnD,bD->bn", keys, query) / tokens.shape[1]  # (b, n): no softmax
        update = torch.einsum("bn,bnD->bD", scores, values) @ self.p.T  # (b, D)
        return update[:, -1]  # the y entry of e_q + update (it starts at 0)


def gd_signal(tokens: torch.Tensor, x_q: torch.Tensor) -> torch.Tensor:
    """g = n⁻¹ Σ y_i x_i·x_q (b,): one GD step from W = 0 predicts η · g."""
    x, y = tokens[..., :-1], tokens[..., -1]  # (b, n, d), (b, n)
    return torch.einsum("bn,bnd,bd->b", y, x, x_q) / tokens.shape[1]


def train_lsa(s: Settings, seed: int, other: bool) -> LinearSelfAttention:
    """The layer after ``s.steps`` Adam updates on fresh tasks (seeded by ``seed``)."""
    torch.manual_seed(seed)
    model = LinearSelfAttention(s.d, s.init_std)
    gen = torch.Generator().manual_seed(10_000 + seed)
    opt = torch.optim.Adam(model.parameters(), lr=s.lr)
    for _ in range(s.steps):
        tokens, x_q, y_q, _ = tasks(s, s.batch_size, gen, other)
        loss = 0.5 * ((model(tokens, x_q) - y_q) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


def agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Cosine similarity and relative L2 distance ‖a − b‖ / ‖b‖ of two prediction vectors."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0
    return {"cosine": cos, "rel_l2": float(np.linalg.norm(a - b) / nb) if nb > 0 else np.inf}


@torch.no_grad()
def one_seed(s: Settings, seed: int) -> dict[str, Any]:
    """Train the layer and its control; measure both and GD on the same held-out tasks."""
    t0 = time.perf_counter()
    eta_gen = torch.Generator().manual_seed(20_000 + seed)
    tokens, x_q, y_q, _ = tasks(s, s.n_eta, eta_gen)
    g = gd_signal(tokens, x_q)
    eta = float((g * y_q).sum() / (g * g).sum())  # least-squares best step size
    with torch.enable_grad():
        lsa, control = train_lsa(s, seed, False), train_lsa(s, seed, True)
    held_gen = torch.Generator().manual_seed(30_000 + seed)
    tokens, x_q, y_q, _ = tasks(s, s.n_held, held_gen)
    w_other = torch.randn(s.n_held, s.d, generator=held_gen)  # (b, d): another task each
    y_other = torch.einsum("bnd,bd->bn", tokens[..., :-1], w_other)  # (b, n)
    other = torch.cat([tokens[..., :-1], y_other[..., None]], dim=-1)  # (b, n, D)
    gd = (eta * gd_signal(tokens, x_q)).numpy()
    pred = lsa(tokens, x_q).numpy()
    ctrl = control(other, x_q).numpy()
    y = y_q.numpy()
    mse = lambda p: float(np.mean((p - y) ** 2))  # noqa: E731
    return {"eta": eta, "loss": {"lsa": mse(pred), "gd": mse(gd), "control": mse(ctrl),
                                 "zero": mse(np.zeros_like(y))},
            "lsa_vs_gd": agreement(pred, gd), "control_vs_gd": agreement(ctrl, gd),
            "wall_s": time.perf_counter() - t0}


def _one_thread_seed(s: Settings, seed: int) -> dict[str, Any]:
    """``one_seed`` with torch on one thread, as every seed runs, side by side or not."""
    from attnlab.train.runtime import training_threads

    with training_threads("cpu", 1):
        return one_seed(s, seed)


def side_by_side(settings: Settings, processes: int) -> list[dict[str, Any]]:
    """Every seed's ``one_seed``, in ``processes`` fresh processes (1: here, in order); the
    seeds are independent, so the numbers do not depend on how many ran at once."""
    seeds = range(settings.seeds)
    if processes <= 1:
        return [_one_thread_seed(settings, seed) for seed in seeds]
    with mp.get_context("spawn").Pool(processes) as pool:
        return pool.starmap(_one_thread_seed, [(settings, seed) for seed in seeds])
