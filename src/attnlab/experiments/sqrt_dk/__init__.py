"""Why divide by √d_k: the variance argument, then training with and without
(docs/experiments.md, "Why divide by √d_k").

Dimension legend: ``d`` (= d_k) query/key width, ``b`` windows, ``t`` positions.

Analytic part (``attnlab.experiments.sqrt_dk.measure``, NumPy, seeded):
Var(q·k) for q, k ~ N(0, I_d) at d = 4 … 1,024 (it is d); one row of 64
scores per d and its effective tokens exp(entropy); over 2,000 random rows the
fraction of "frozen" rows (max weight > 0.99) and the mean trace of the softmax
Jacobian Σ w_j(1 − w_j), each with and without the division.

Training part, scaled (÷√d_k) against unscaled, same seed, same data:
- *default* setting (spec defaults: width 128, context 128, 3,000 steps of batch
  64, pre-norm block with MLP): d_k = 32 is the default block (4 heads of width
  32 + W_o); d_k = 128 is the *same block with one head* (``n_head=1``: one head
  of width 128, W_o kept), so only d_k changes;
- *short* setting (1,500 steps of batch 32): one head (``mixer="head"``) whose
  q/k width is d_k ∈ {32, 256, 1,024} (values keep width 128), with no
  LayerNorm anywhere (``norm="none"``), MLP and learned positions as the defaults.
For each run: held-out perplexity and, on a fixed batch of held-out windows, the
score std (over causally allowed entries), the attention entropy / effective
tokens and the frozen fraction — at initialisation (the run's own seed) and
after training. The gap is ppl(unscaled) / ppl(scaled) − 1.

Initialisation matters: the models use PyTorch's default init (token and
position tables N(0, 1), ``nn.Linear`` Kaiming-uniform, weight variance
1/(3·fan_in)). Without a norm the mixer input has variance ≈ 2 per entry, so
q and k entries have variance ≈ 2/3 and unscaled scores start with std ≈
0.67·√d_k (≈ 21 at d_k = 1,024): the unscaled wide head is frozen from step 0.

Left out: learning-rate retuning per width (one rate for all), QK-norm.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from attnlab.experiments.sqrt_dk import measure as stats
from attnlab.experiments.sqrt_dk.chapter import CHAPTER
from attnlab.kit.claims import (
    CLEAR,
    NEGLIGIBLE,
    Claim,
    Margins,
    Part,
    Records,
    Skip,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import CorpusSettings, train_budget
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig, TrainConfig
from attnlab.train.runtime import build_model

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "sqrt_dk"
NEEDS_CORPUS = True
STATS = ("score_std", "entropy", "eff_tokens", "frozen")


@dataclass(frozen=True)
class Settings(CorpusSettings):
    """The analytic sizes and the two training settings (``CorpusSettings``: width, context,
    rate, data and seeds of both)."""

    dims: tuple[int, ...] = (4, 16, 64, 256, 1024)  # widths d of the analytic part
    n_pairs: int = 20_000  # random (q, k) pairs per width for Var(q·k)
    n_keys: int = 64  # scores per row
    n_rows: int = 2_000  # random rows per width for the frozen fraction and Jacobian
    default_widths: tuple[int, ...] = (32, 128)  # d_k in the default block (n_head = d_model/d_k)
    default_steps: int = 3000  # the spec's default budget
    default_batch: int = 64
    short_widths: tuple[int, ...] = (32, 256, 1024)  # q/k width of the single head, no norm
    short_steps: int = 1500
    short_batch: int = 32
    stats_windows: int = 16  # held-out windows of n_ctx tokens for the attention statistics
    seed: int = 0  # seed of the analytic draws


PROFILES = {
    "full": Settings(),
    "quick": Settings(default_widths=(), short_steps=600, short_batch=4),
    "micro": Settings(dims=(4, 16), n_pairs=500, n_rows=50, d_model=16, n_ctx=16,
                      default_widths=(8,), default_steps=2, default_batch=4,
                      short_widths=(64,), short_steps=2, short_batch=4, stats_windows=2,
                      train_tokens=2_000, seeds=1),
}


# -- configs ---------------------------------------------------------------------


def default_config(s: Settings, d_k: int, scale: bool) -> ModelConfig:
    """The default pre-norm block with heads of width d_k (n_head = d_model / d_k)."""
    if d_k < 1 or s.d_model % d_k:
        raise ValueError(f"default-setting head width {d_k} must divide d_model={s.d_model}")
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       mixer="mha", n_head=s.d_model // d_k, scale=scale)


def short_config(s: Settings, d_k: int, scale: bool) -> ModelConfig:
    """One head with q/k width d_k, no LayerNorm before the projections (or anywhere)."""
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       mixer="head", head_dim=d_k, norm="none", scale=scale)


def _train_config(steps: int, batch: int, lr: float) -> TrainConfig:
    """Subnormal floats flushed to zero (``train.denormals``), in the scaled runs as in the
    unscaled ones: the unscaled head's saturated softmax fills its backward pass with them,
    and on x86 they made its step about 5x slower than the scaled head's, for numbers below
    1.2e-38 against weights near 1e-2."""
    return train_budget(steps, lr, batch, denormals="flush")


def settings_runs(s: Settings) -> list[tuple[str, int, Any, TrainConfig]]:
    """(setting, d_k, config maker, train config) for every trained width."""
    out: list[tuple[str, int, Any, TrainConfig]] = []
    for w in s.default_widths:
        out.append(("default", w, default_config,
                    _train_config(s.default_steps, s.default_batch, s.lr)))
    for w in s.short_widths:
        out.append(("short", w, short_config, _train_config(s.short_steps, s.short_batch, s.lr)))
    return out


# -- running ---------------------------------------------------------------------


def stats_windows(held: np.ndarray, n_windows: int, n_ctx: int) -> torch.Tensor:
    """The fixed batch (b, t) of the first ``n_windows`` held-out windows."""
    n = min(n_windows, len(held) // n_ctx)
    if n < 1:
        raise ValueError(f"the held-out split ({len(held)} tokens) has no window of {n_ctx}")
    return torch.from_numpy(np.asarray(held[: n * n_ctx], dtype=np.int64).reshape(n, n_ctx))


def run_label(setting: str, d_k: int, scale: bool) -> str:
    return f"sqrt_dk {setting} d_k={d_k} scale={scale}"


def plan(settings: Settings) -> list[RunSpec]:
    """Scaled and unscaled runs of every trained width, every seed."""
    s = settings
    data = s.data_config()
    return [spec for setting, d_k, make, tc in settings_runs(s) for scale in (True, False)
            for spec in seeded(run_label(setting, d_k, scale),
                               RunConfig(model=make(s, d_k, scale), train=tc, data=data),
                               s.seeds)]


def _one_width(s: Settings, results: Results, ctx: Context, setting: str, d_k: int, make: Any,
               tc: TrainConfig, idx: torch.Tensor) -> dict:
    row: dict[str, Any] = {"setting": setting, "d_k": d_k}
    for scale in (True, False):
        cfg = make(s, d_k, scale)
        runs = results.seeds(run_label(setting, d_k, scale))
        init = [stats.attention_stats(
            initial_model(cfg, dataclasses.replace(tc, seed=k), ctx.device), idx)
            for k in range(len(runs))]
        after = [stats.attention_stats(ctx.trained(r), idx) for r in runs]
        row["scaled" if scale else "unscaled"] = {
            "held_ppl": [r["held_ppl"] for r in runs],
            "train_ppl": [r["train_ppl"] for r in runs],
            "params": runs[0]["params"],
            "heads": cfg.heads,
            "init": {k: [x[k] for x in init] for k in STATS},
            "after": {k: [x[k] for x in after] for k in STATS},
            "wall_s": [r["wall_s"] for r in runs],
            "run_dirs": [r["run_dir"] for r in runs],
        }
    row["gaps"] = gaps(row)
    row["gap"] = mean_std(row["gaps"])[0]
    log.info("sqrt_dk %s d_k=%d: gap %+.1f%%", setting, d_k, 100 * row["gap"])
    return row


def initial_model(cfg: ModelConfig, tc: TrainConfig, device: Any = "cpu") -> torch.nn.Module:
    """The run's model before its first step: the trainer's own seeded construction."""
    return build_model(RunConfig(model=cfg, train=tc), torch.device(device)).eval()


def gaps(row: dict) -> list[float]:
    """ppl(unscaled) / ppl(scaled) − 1 of held-out perplexity, per seed."""
    return [u / c - 1 for u, c in zip(row["unscaled"]["held_ppl"], row["scaled"]["held_ppl"],
                                      strict=True)]


def analyse(settings: Settings, results: Results, ctx: Context) -> dict:
    """The analytic tables, then every trained run (scaled and unscaled) with its statistics."""
    s = settings
    record: dict[str, Any] = {
        "settings": settings_dict(s),
        "seeds": s.seeds,
        "variance": stats.dot_variance(s.dims, s.n_pairs, s.seed),
        "one_row": stats.one_row(s.dims, s.n_keys, s.seed),
        "frozen": stats.frozen_rows(s.dims, s.n_rows, s.n_keys, s.seed),
        "training": [],
    }
    runs = settings_runs(s)
    if runs:
        held = ctx.token_data(s.vocab_size).held
        idx = stats_windows(held, s.stats_windows, s.n_ctx).to(ctx.device)
        for setting, d_k, make, tc in runs:
            record["training"].append(_one_width(s, results, ctx, setting, d_k, make, tc, idx))
    return record


# -- report ----------------------------------------------------------------------


def table(record: dict) -> str:
    """Three analytic tables and one training table."""
    var = markdown_table(["d", "Var(q·k)", "std", "√d"],
                         [[r["d"], r["var"], r["std"], r["sqrt_d"]] for r in record["variance"]])
    row = markdown_table(
        ["d", "score std", "eff. tokens ÷√d", "eff. tokens raw"],
        [[r["d"], r["score_std"], r["eff_scaled"], r["eff_unscaled"]] for r in record["one_row"]])
    frz = markdown_table(
        ["d", "frozen ÷√d", "frozen raw", "Jacobian trace ÷√d", "Jacobian trace raw"],
        [[r["d"], r["frozen_scaled"], r["frozen_unscaled"], r["jac_scaled"], r["jac_unscaled"]]
         for r in record["frozen"]])
    s = record["settings"]
    n_keys = s["n_keys"]
    parts = [
        f"**Var(q·k), q, k ~ N(0, I_d)** ({s['n_pairs']:,} pairs)\n\n{var}",
        f"**One row of {n_keys} scores** (effective tokens = exp(entropy); at most {n_keys})"
        f"\n\n{row}",
        f"**{s['n_rows']:,} random rows of {n_keys} scores** (frozen: max weight > 0.99)"
        f"\n\n{frz}",
    ]
    if record["training"]:
        parts.append("**Training with (÷√d) and without (raw) the division**\n\n"
                     + _training_table(record))
    return "\n".join(parts)


def _training_table(record: dict) -> str:
    """Perplexities and gap per width; then the attention statistics at init and after."""
    ppl_rows, stat_rows = [], []
    for r in record["training"]:
        sc, un = r["scaled"], r["unscaled"]
        ppl_rows.append([r["setting"], r["d_k"], sc["heads"], fmt_ms(sc["held_ppl"]),
                         fmt_ms(un["held_ppl"]), f"{100 * r['gap']:+.1f}%"])
        for when, words in (("init", "initialisation"), ("after", "after training")):
            cells = [r["setting"], r["d_k"], words]
            for key, digits in (("score_std", 2), ("eff_tokens", 1), ("frozen", 3)):
                cells += [fmt_ms(sc[when][key], digits), fmt_ms(un[when][key], digits)]
            stat_rows.append(cells)
    s = record["settings"]
    default = (
        f" default: {s['default_steps']:,} steps of batch {s['default_batch']}, the default "
        f"pre-norm block with {s['d_model']}/d_k heads of width d_k."
        if any(r["setting"] == "default" for r in record["training"]) else ""
    )
    note = (
        f"\nHeld-out perplexity; gap = ppl raw / ppl ÷√d − 1.{default} short: "
        f"{s['short_steps']:,} steps of batch {s['short_batch']}, one head of q/k width d_k, "
        f"no LayerNorm. {record['seeds']} seed(s).\n"
    )
    stats_note = (
        f"\nOn {s['stats_windows']} held-out windows of {s['n_ctx']} tokens: score std over the "
        f"causally allowed scores (as the model scales them); effective tokens = mean "
        f"exp(entropy) and frozen = fraction of rows with max weight > 0.99, over query "
        f"positions 1..{s['n_ctx'] - 1}.\n"
    )
    header = ["setting", "d_k", "when", "score std ÷√d", "score std raw", "eff. tokens ÷√d",
              "eff. tokens raw", "frozen ÷√d", "frozen raw"]
    return (markdown_table(["setting", "d_k", "heads", "ppl ÷√d", "ppl raw", "gap"], ppl_rows)
            + note + "\n" + markdown_table(header, stat_rows) + stats_note)


def figure(record: dict) -> Figure:
    """Var(q·k) vs d; frozen fraction vs d (random rows, and trained heads); gap vs d_k."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.5, 4))
    axes = fig.subplots(1, 3)
    d = [r["d"] for r in record["variance"]]
    ax = axes[0]
    ax.loglog(d, [r["var"] for r in record["variance"]], "o-", label="measured Var(q·k)")
    ax.loglog(d, d, "k--", lw=1, label="Var = d")
    ax.set(xlabel="d", ylabel="variance", title="Var(q·k) grows like d")
    ax.legend()
    ax = axes[1]
    for key, label in (("frozen_scaled", "random rows ÷√d"),
                       ("frozen_unscaled", "random rows raw")):
        ax.semilogx(d, [r[key] for r in record["frozen"]], "o-", label=label)
    short = [r for r in record["training"] if r["setting"] == "short"]
    for name, marker in (("scaled", "s"), ("unscaled", "^")):
        if short:
            ax.semilogx([r["d_k"] for r in short],
                        [mean_std(r[name]["after"]["frozen"])[0] for r in short], marker + ":",
                        label=f"trained head {'÷√d' if name == 'scaled' else 'raw'}")
    ax.set(xlabel="d (= d_k)", ylabel="fraction of rows with max weight > 0.99",
           title="Frozen softmax rows", ylim=(-0.03, 1.03))
    ax.legend(fontsize=8)
    ax = axes[2]
    for setting in ("default", "short"):
        rows = [r for r in record["training"] if r["setting"] == setting]
        if rows:
            ax.semilogx([r["d_k"] for r in rows], [100 * r["gap"] for r in rows], "o-",
                        label=f"{setting} setting")
    ax.axhline(0, color="k", lw=0.8)
    ax.axhspan(-100 * NEGLIGIBLE, 100 * NEGLIGIBLE, color="0.9",
               label=f"|gap| < {NEGLIGIBLE:.0%}")
    ax.axhline(100 * CLEAR, color="0.5", ls="--", lw=0.8, label=f"gap = {CLEAR:.0%}")
    ax.set(xlabel="head width d_k", ylabel="ppl raw / ppl ÷√d − 1 (%)",
           title="Cost of dropping the division")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# "No difference" and "a large one" are the claims module's NEGLIGIBLE (5%) and CLEAR (10%)
# on the gap; each seed's gap compares the scaled and unscaled runs of that seed.

COLLAPSED = 0.5  # "collapses to single tokens": most rows (more than half) frozen
SMALL_WIDTH, LARGE_WIDTHS, COLLAPSE_WIDTH = 32, (256, 1024), 1024


def _rows_at(record: dict, width: int, setting: str | None = None) -> list[dict]:
    rows = [r for r in record["training"]
            if r["d_k"] == width and (setting is None or r["setting"] == setting)]
    if not rows:
        where = f"the {setting} setting" if setting else "any setting"
        raise Skip(f"this profile trains no width {width} in {where}")
    return rows


def _no_difference(records: Records) -> Margins:
    rows = _rows_at(records[NAME], SMALL_WIDTH)
    per_row = [[NEGLIGIBLE - abs(g) for g in r["gaps"]] for r in rows]
    return Margins([min(m) for m in zip(*per_row, strict=True)],
                   {f"gap_{r['setting']}_{r['d_k']}": r["gap"] for r in rows})


def _large(width: int) -> Part:
    def margins(records: Records) -> Margins:
        (row,) = _rows_at(records[NAME], width, "short")
        return Margins([g - CLEAR for g in row["gaps"]], {f"gap_short_{width}": row["gap"]})
    return Part(f"gap > {CLEAR:.0%} at d_k = {width} (short setting)", margins, "gap",
                f"d_k {width}")


def _spread_grows(width: int) -> Part:
    def margins(records: Records) -> Margins:
        (row,) = _rows_at(records[NAME], width, "short")
        un = row["unscaled"]
        ratios = [a / b for a, b in zip(un["after"]["score_std"], un["init"]["score_std"],
                                        strict=True)]
        return Margins([r - 1 for r in ratios],
                       {f"raw_score_std_{width}_init": mean_std(un["init"]["score_std"])[0],
                        f"raw_score_std_{width}_after": mean_std(un["after"]["score_std"])[0]})
    return Part(f"unscaled score std after training / at initialisation > 1 at d_k = {width}",
                margins, "× std", f"spread grows at {width}")


def _collapses(records: Records) -> Margins:
    (row,) = _rows_at(records[NAME], COLLAPSE_WIDTH, "short")
    frozen = row["unscaled"]["after"]["frozen"]
    return Margins([f - COLLAPSED for f in frozen],
                   {f"raw_frozen_{COLLAPSE_WIDTH}_after": mean_std(frozen)[0],
                    f"scaled_frozen_{COLLAPSE_WIDTH}_after":
                        mean_std(row["scaled"]["after"]["frozen"])[0]})


CLAIMS: list[Claim] = [
    claim("sqrt_dk.matters_only_when_wide",
          "The √d_k division makes no difference at width 32 and a large one at 256 and 1,024.",
          NAME,
          Part(f"|gap| < {NEGLIGIBLE:.0%} for every width-32 run (gap = held-out ppl raw / "
               "ppl ÷√d − 1)", _no_difference, "gap", "d_k 32"),
          *(_large(w) for w in LARGE_WIDTHS)),
    claim("sqrt_dk.unscaled_collapses",
          "Without the division the score spread grows during training and attention "
          "collapses to single tokens.",
          NAME,
          *(_spread_grows(w) for w in LARGE_WIDTHS),
          Part(f"unscaled, d_k = {COLLAPSE_WIDTH}: fraction of rows with max weight > 0.99 "
               f"after training > {COLLAPSED:g}", _collapses, "fraction", "collapse")),
]

FIGURES = {
    "gap_{setting}_{d_k}": Quantity(
        "held-out perplexity unscaled ÷ scaled − 1, d_k = {d_k} ({setting} setting)",
        "perplejidad de validación sin escalar ÷ escalada − 1, d_k = {d_k} (ajuste {setting})",
        kind="percent"),
    "raw_score_std_{w}_init": Quantity("unscaled score spread (std) at initialisation, d_k = {w}",
                                       "dispersión (desviación típica) de las puntuaciones sin "
                                       "escalar al inicio, d_k = {w}"),
    "raw_score_std_{w}_after": Quantity("unscaled score spread (std) after training, d_k = {w}",
                                        "dispersión (desviación típica) de las puntuaciones sin "
                                        "escalar tras el entrenamiento, d_k = {w}"),
    "raw_frozen_{w}_after": Quantity("rows frozen on one token (max weight > 0.99), unscaled, "
                                     "d_k = {w}", "filas congeladas en un token (peso máximo > "
                                     "0.99), sin escalar, d_k = {w}", kind="percent"),
    "scaled_frozen_{w}_after": Quantity("rows frozen on one token, scaled, d_k = {w}",
                                        "filas congeladas en un token, escalada, d_k = {w}",
                                        kind="percent"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PROFILES", "Settings",
    "analyse", "default_config", "figure", "gaps", "plan", "settings_runs", "short_config",
    "stats_windows", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
