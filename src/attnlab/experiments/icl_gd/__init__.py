"""In-context learning as one step of gradient descent (docs/experiments.md, "ICL as
gradient descent"; von Oswald et al. 2023, "Transformers learn in-context by
gradient descent").

Dimension legend: ``b`` tasks, ``n`` context pairs, ``d`` input width, ``D = d + 1``
token width.

A task is a weight vector ``w ~ N(0, I_d)``; its context is ``n`` pairs
``(x_i, y_i = w·x_i)`` with ``x_i ~ U(-1, 1)^d``, and a query ``x_q`` whose
``y_q`` is to be predicted (the paper's setting: d = n = 10). Tokens are
``e_i = (x_i, y_i)`` and the query token is ``(x_q, 0)``.

- *LSA*: one linear self-attention layer (no softmax, one head), the query token
  updated by ``P · Σ_i (V e_i)(K e_i · Q e_q) / n``; its prediction is the y entry of
  the updated query token. Trained with Adam on fresh tasks every step.
- *one step of GD* on the context's loss ``½n⁻¹ Σ (W x_i − y_i)²`` from ``W = 0``
  with step ``η``: ``ŷ = η · n⁻¹ Σ y_i x_i·x_q``; ``η`` is the best step size,
  the least-squares ``η* = E[g y_q] / E[g²]`` (``g = n⁻¹ Σ y_i x_i·x_q``) over
  training tasks.
- *control*: the same LSA trained and evaluated with each context's ``y`` values
  taken from another task (same ``x``, an independent ``w'``), so the context says
  nothing about the query's ``w``.

Measured on held-out tasks: each model's mean squared error, and the agreement of
its predictions with GD's (cosine similarity of the prediction vectors over the
tasks, and relative L2 distance). Trained in this process on the CPU (seconds per
seed), not by the language-model trainer: nothing here predicts tokens.

Left out: several layers (several GD steps), softmax attention, the query token
attending to itself, and non-linear regression.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from attnlab.kit.chapter import Chapter
from attnlab.kit.claims import CLEAR, NEGLIGIBLE, Claim, Margins, Part, Records, claim, with_figures
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import Seeded
from attnlab.kit.tables import fmt_ms, markdown_table, settings_dict
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "icl_gd"
NEEDS_CORPUS = False


@dataclass(frozen=True)
class Settings(Seeded):
    """The task distribution and the training of the layer (``Seeded``: each seed draws
    its own initialisation and tasks)."""

    d: int = 10  # input width (the paper's)
    n: int = 10  # context pairs (the paper's)
    steps: int = 4000  # Adam updates, each on a fresh batch of tasks
    batch_size: int = 256  # tasks per update
    lr: float = 1e-3  # Adam's rate
    init_std: float = 0.05  # the layer's initial weights ~ N(0, init_std²)
    n_eta: int = 50_000  # training tasks that fix GD's best step size
    n_held: int = 4000  # held-out tasks


PROFILES = {
    "full": Settings(steps=20_000, seeds=5),
    "quick": Settings(steps=20_000, seeds=5),  # the full settings: minutes, not hours
    "micro": Settings(steps=20, batch_size=16, n_eta=500, n_held=64, seeds=1),
}

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


def plan(settings: Settings) -> list[RunSpec]:
    """Nothing for the runner: each seed trains in ``analyse`` in seconds."""
    return []


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


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """The seeds side by side on this machine's cores (at most the run's worker count)."""
    from attnlab.running.executors import cpu_cores

    processes = min(settings.seeds, ctx.runner.slots(settings.seeds), cpu_cores())
    per_seed = side_by_side(settings, processes)
    for i, r in enumerate(per_seed):
        log.info("icl_gd seed %d: loss lsa %.4f gd %.4f, cosine %.4f", i, r["loss"]["lsa"],
                 r["loss"]["gd"], r["lsa_vs_gd"]["cosine"])
    return {"settings": settings_dict(settings), "seeds": settings.seeds, "per_seed": per_seed}


def table(record: dict[str, Any]) -> str:
    s, runs = record["settings"], record["per_seed"]
    col = lambda f: fmt_ms([f(r) for r in runs], 4)  # noqa: E731
    rows = [["trained LSA layer", col(lambda r: r["loss"]["lsa"]),
             col(lambda r: r["lsa_vs_gd"]["cosine"]), col(lambda r: r["lsa_vs_gd"]["rel_l2"])],
            ["one GD step, best η", col(lambda r: r["loss"]["gd"]), "1", "0"],
            ["control (context of another task)", col(lambda r: r["loss"]["control"]),
             col(lambda r: r["control_vs_gd"]["cosine"]),
             col(lambda r: r["control_vs_gd"]["rel_l2"])],
            ["predict 0", col(lambda r: r["loss"]["zero"]), "–", "–"]]
    return (f"d = {s['d']}, {s['n']} context pairs, {s['steps']} Adam steps of {s['batch_size']}"
            f" tasks; best step size η = {fmt_ms([r['eta'] for r in runs], 3)}; "
            f"{s['n_held']} held-out tasks; {record['seeds']} seed(s), mean ± std.\n\n"
            + markdown_table(["model", "held-out MSE", "cosine with GD's predictions",
                              "relative L2 to GD's"], rows))


def figure(record: dict[str, Any]) -> Figure:
    """Held-out loss of each model per seed."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.2))
    ax = fig.add_subplot(1, 1, 1)
    names = ("lsa", "gd", "control", "zero")
    for i, r in enumerate(record["per_seed"]):
        ax.bar([j + 0.2 * i for j in range(len(names))], [r["loss"][k] for k in names],
               width=0.2, label=f"seed {i}")
    ax.set_xticks([j + 0.2 for j in range(len(names))],
                  ["LSA", "GD step", "control", "predict 0"])
    ax.set_ylabel("held-out MSE")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _runs(records: Records) -> list[dict]:
    return records[NAME]["per_seed"]


def _loss_matches(records: Records) -> Margins:
    """Per seed: NEGLIGIBLE − |loss(LSA) − loss(GD)| / loss(GD) ("matches": a negligible
    relative difference on the claims' one scale)."""
    gaps = [abs(r["loss"]["lsa"] - r["loss"]["gd"]) / r["loss"]["gd"] for r in _runs(records)]
    return Margins([NEGLIGIBLE - g for g in gaps], {"relative gap": float(np.mean(gaps))})


def _agree(records: Records) -> Margins:
    """Per seed: cosine(ŷ_LSA, ŷ_GD) over held-out tasks − (1 − NEGLIGIBLE) ("agree": the
    same predictions up to a negligible part)."""
    cos = [r["lsa_vs_gd"]["cosine"] for r in _runs(records)]
    rel = [r["lsa_vs_gd"]["rel_l2"] for r in _runs(records)]
    return Margins([c - (1 - NEGLIGIBLE) for c in cos],
                   {"cosine": float(np.mean(cos)), "relative L2": float(np.mean(rel))})


def _control_loss(records: Records) -> Margins:
    """Per seed: |loss(control) − loss(GD)| / loss(GD) − CLEAR ("does not match": a clear
    relative difference)."""
    gaps = [abs(r["loss"]["control"] - r["loss"]["gd"]) / r["loss"]["gd"]
            for r in _runs(records)]
    return Margins([g - CLEAR for g in gaps], {"relative gap": float(np.mean(gaps))})


def _control_cosine(records: Records) -> Margins:
    """Per seed: (1 − CLEAR) − cosine(ŷ_control, ŷ_GD) ("does not agree": short of
    agreement by a clear margin)."""
    cos = [r["control_vs_gd"]["cosine"] for r in _runs(records)]
    return Margins([(1 - CLEAR) - c for c in cos], {"cosine": float(np.mean(cos))})


CLAIMS: list[Claim] = [
    claim("icl_gd.loss_matches",
          "A linear self-attention layer trained on in-context linear regression matches the "
          "loss of one step of gradient descent on the context with the best step size.", NAME,
          Part(f"|held-out MSE of the layer − of one GD step| / GD's < {NEGLIGIBLE:g}",
               _loss_matches, "relative")),
    claim("icl_gd.predictions_agree",
          "On held-out tasks the trained layer's predictions agree with one GD step's.", NAME,
          Part(f"cosine similarity of the two prediction vectors > {1 - NEGLIGIBLE:g}", _agree,
               "cosine")),
    claim("icl_gd.control_does_not",
          "A layer whose context comes from another task (the pairs say nothing about the "
          "query's weights) neither matches GD's loss nor agrees with its predictions.", NAME,
          Part(f"|MSE of the control − of one GD step| / GD's > {CLEAR:g}", _control_loss,
               "relative", "loss differs"),
          Part(f"cosine of its predictions with GD's < {1 - CLEAR:g}", _control_cosine,
               "cosine", "predictions differ")),
]

FIGURES = {
    "relative gap": Quantity("relative gap of the held-out MSE to one GD step's",
                             "diferencia relativa del ECM de validación frente al de un paso "
                             "de descenso de gradiente"),
    "cosine": Quantity("cosine of the prediction vectors with one GD step's",
                       "coseno de los vectores de predicción con los de un paso de "
                       "descenso de gradiente"),
    "relative L2": Quantity("relative L2 distance of the predictions",
                            "distancia L2 relativa de las predicciones"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

__all__ = ["CLAIMS", "NAME", "PROFILES", "Settings", "agreement", "analyse",
           "figure", "gd_signal", "one_seed", "plan", "table", "tasks"]

# -- the chapter's part (attnlab.kit.chapter): no published figure, the budget it runs at
CHAPTER = Chapter(budget="none published: in-context learning as gradient descent is the "
                         "curriculum's, not the chapter's (quick is full: 20,000 steps, 5 seeds)")


EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
