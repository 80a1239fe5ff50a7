"""The ladder: from a mean to a transformer block, one measured step at a time
(docs/experiments.md, "The ladder").

Ten models, each a ``ModelConfig`` that changes one thing from the row above,
all trained with the same budget on Tiny Shakespeare (BPE-1024); every row ends
in an untied linear layer with bias to the vocabulary:

 1. no context: embedding → linear (the fifteen-line bigram model);
 2. the uniform causal mean of the embeddings *replaces* each token;
 3. + learned absolute positions, added before the mean (kept in every later row);
 4. + residual: token + mean of its context;
 5. one learned attention head (q, k, v of width d) instead of the mean;
 6. four heads of width d/4 + ``W_o`` with bias (d² + d more parameters);
 7. side row: row 5's head *replacing* its input (no residual) — compared with row 5;
 8. row 6 + the ×4 GELU MLP with its residual;
 9. + LayerNorm, pre-norm, before each sublayer and at the end (3 · 2d parameters);
10. two blocks.

Per row: parameters, train and held-out perplexity (docs/data.md; mean ± std over
seeds), and the change from the row above (row 7's "above" is row 5, row 8's is
row 6). The claims (docs/experiments.md, "Claims and verdicts") these numbers
decide are in ``CLAIMS``.

Left out: dropout and weight tying (both off in every row), learning-rate
schedules (constant AdamW rate), and any tuning per row — one budget for all.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attnlab.experiments.ladder.chapter import CHAPTER
from attnlab.kit.claims import CLEAR, NEGLIGIBLE, Claim, Part, Records, with_figures
from attnlab.kit.per_seed import Ratio, claim_for, lm_summary, ratio_part
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import OneBudget
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "ladder"
NEEDS_CORPUS = True


@dataclass(frozen=True)
class Settings(OneBudget):
    """Width (also the single head's), context and the one training budget every row gets
    (``OneBudget``: steps per row, a constant rate), and the overfitting pair."""

    # The overfitting claim (row 10 vs row 9) needs many passes over the data. None: rows 9
    # and 10 of the ladder decide it (the spec's setting); a number: rows 9 and 10 are also
    # trained on only the first ``overfit_tokens`` training tokens for ``overfit_steps``.
    overfit_tokens: int | None = None
    overfit_steps: int = 800  # steps of that extra pair (batch and rate as above)


PROFILES = {
    "full": Settings(),
    "quick": Settings(steps=400, batch_size=4, overfit_tokens=20_000, overfit_steps=500),
    "micro": Settings(d_model=16, n_ctx=32, steps=3, batch_size=4, train_tokens=2_000,
                      overfit_tokens=1_000, overfit_steps=2, eval_batch_size=1024, seeds=1),
}

# Row number -> (the row it changes, what it changes, words for the table).
LADDER: dict[int, tuple[int | None, dict[str, Any], str]] = {
    1: (None, {}, "no context: embedding → linear"),
    2: (1, {"mixer": "mean", "residual": False}, "uniform causal mean replacing the token"),
    3: (2, {"position": "learned"}, "+ learned positions before the mean"),
    4: (3, {"residual": True}, "+ residual (token + mean)"),
    5: (4, {"mixer": "head"}, "one head (width {d}) instead of the mean"),
    6: (5, {"mixer": "mha", "n_head": 4}, "four heads of width {h} + W_o"),
    7: (5, {"residual": False}, "side row: row 5's head replacing (no residual)"),
    8: (6, {"mlp": True}, "+ MLP (×4, GELU) with its residual"),
    9: (8, {"norm": "pre"}, "+ LayerNorm, pre-norm (and at the end)"),
    10: (9, {"n_layer": 2}, "two blocks"),
}
ROWS = tuple(LADDER)


def base_config(s: Settings) -> ModelConfig:
    """Row 1: embedding → linear to the vocabulary (untied, with bias); nothing in between."""
    return ModelConfig(
        vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model, n_layer=1, mixer="none",
        n_head=4, position="none", mlp=False, norm="none", residual=True, dropout=0.0,
        tie_weights=False, lm_head_bias=True,
    )


def row_config(s: Settings, row: int) -> ModelConfig:
    """The model of ``row`` (1..10): its parent's config with the row's changes."""
    if row not in LADDER:
        raise ValueError(f"the ladder has rows 1..{len(LADDER)}, got {row}")
    parent, changes, _ = LADDER[row]
    cfg = base_config(s) if parent is None else row_config(s, parent)
    return cfg.replace(**changes)


def row_name(s: Settings, row: int) -> str:
    return LADDER[row][2].format(d=s.d_model, h=s.d_model // 4)


def row_label(row: int, small: bool = False) -> str:
    return f"ladder row {row}" + (" (small data)" if small else "")


def plan(settings: Settings) -> list[RunSpec]:
    """Every row for every seed, and the small-data pair of rows 9 and 10 if the profile has it."""
    s, small = settings, overfit_settings(settings)
    specs = []
    for profile, rows, is_small in ((s, ROWS, False), (small, (9, 10), True)):
        if profile is None:
            continue
        data = profile.data_config()
        for row in rows:
            cfg = RunConfig(model=row_config(profile, row), train=profile.train_config(), data=data)
            specs += seeded(row_label(row, is_small), cfg, s.seeds)
    return specs


def _row_record(s: Settings, results: Results, row: int, small: bool = False) -> dict:
    runs = results.seeds(row_label(row, small))
    out = {
        "row": row,
        "above": LADDER[row][0],
        "name": row_name(s, row),
        "config": row_config(s, row).to_dict(),
        **lm_summary(runs),
        "run_dirs": [r["run_dir"] for r in runs],
    }
    log.info("ladder row %d: held-out perplexity %s", row, fmt_ms(out["held_ppl"]))
    return out


def overfit_settings(s: Settings) -> Settings | None:
    """The settings of the extra row 9 / row 10 pair, or None when the ladder decides."""
    if s.overfit_tokens is None:
        return None
    return dataclasses.replace(s, train_tokens=s.overfit_tokens, steps=s.overfit_steps,
                               overfit_tokens=None)


def analyse(settings: Settings, results: Results, ctx: Context | None = None) -> dict:
    """Per-seed numbers of every row, so tables can show mean ± std and claims pair seeds."""
    small = overfit_settings(settings)
    record: dict[str, Any] = {
        "settings": settings_dict(settings), "seeds": settings.seeds,
        "rows": [_row_record(settings, results, row) for row in ROWS], "overfit": None,
    }
    if small is not None:
        record["overfit"] = {
            "train_tokens": small.train_tokens, "steps": small.steps,
            "rows": [_row_record(small, results, row, small=True) for row in (9, 10)],
        }
    return record


# -- reading a record -----------------------------------------------------------


def _rows(record: dict) -> dict[int, dict]:
    return {r["row"]: r for r in record["rows"]}


def _mean(record: dict, row: int, key: str) -> float:
    return mean_std(_rows(record)[row][key])[0]


def table(record: dict) -> str:
    """Params, perplexities and the change from the row above (named in its own column)."""
    rows = _rows(record)
    header = ["row", "model", "params", "Δ params", "train ppl", "held-out ppl", "vs row",
              "Δ held-out", "× held-out"]
    out = []
    for n, r in rows.items():
        above = rows.get(r["above"]) if r["above"] is not None else None
        if above is None:
            vs, dparams, dheld, ratio = "—", "—", "—", "—"
        else:
            h, h_above = mean_std(r["held_ppl"])[0], mean_std(above["held_ppl"])[0]
            vs = str(r["above"])
            dparams = f"{r['params'] - above['params']:+,}"
            dheld, ratio = f"{h - h_above:+.2f}", f"{h / h_above:.3f}"
        out.append([n, r["name"], r["params"], dparams, fmt_ms(r["train_ppl"]),
                    fmt_ms(r["held_ppl"]), vs, dheld, ratio])
    s = record["settings"]
    data = "all" if s["train_tokens"] is None else f"the first {s['train_tokens']:,}"
    note = (
        f"\nWidth {s['d_model']}, context {s['n_ctx']}, {s['steps']:,} AdamW steps at lr "
        f"{s['lr']:g}, batch {s['batch_size']}, on {data} training tokens; "
        f"{record['seeds']} seed(s), mean ± std. \"vs row\" is the row each change is measured "
        "against: the row above, except row 7 (a side row, against row 5) and row 8 "
        "(against row 6).\n"
    )
    text = markdown_table(header, out) + note
    pair = record.get("overfit")
    if pair:
        text += (
            f"\nOverfitting check: rows 9 and 10 trained again on only the first "
            f"{pair['train_tokens']:,} training tokens for {pair['steps']:,} steps (same batch "
            "and rate); this pair decides the claim that two blocks overfit.\n\n"
        )
        text += markdown_table(
            ["row", "model", "params", "train ppl", "held-out ppl"],
            [[r["row"], r["name"], r["params"], fmt_ms(r["train_ppl"]), fmt_ms(r["held_ppl"])]
             for r in pair["rows"]],
        )
    return text


def figure(record: dict) -> Figure:
    """Train and held-out perplexity per row (bars, log y, std as error bars)."""
    from matplotlib.figure import Figure

    rows = list(record["rows"])
    labels = [str(r["row"]) for r in rows]
    pair = record.get("overfit")
    if pair:  # the small-data check, drawn after the ladder and starred
        rows += pair["rows"]
        labels += [f"{r['row']}*" for r in pair["rows"]]
    x = list(range(len(rows)))
    fig = Figure(figsize=(9, 4.5))
    ax = fig.subplots()
    for offset, key, label in ((-0.2, "train_ppl", "train"), (0.2, "held_ppl", "held-out")):
        stats = [mean_std(r[key]) for r in rows]
        ax.bar([i + offset for i in x], [m for m, _ in stats], width=0.4, label=label,
               yerr=[sd for _, sd in stats], capsize=3)
    ax.set_yscale("log")
    ax.set_xticks(x, labels)
    xlabel = "ladder row (7 is a side row: row 5's head without residual)"
    if pair:
        xlabel += f"\n9*, 10*: on {pair['train_tokens']:,} training tokens"
    ax.set_xlabel(xlabel)
    ax.set_ylabel("perplexity (log scale)")
    ax.set_title("The ladder: perplexity per row")
    ax.legend()
    fig.tight_layout()
    return fig


# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# Each margin compares rows trained with the same seed. "Several times worse" is at least
# twice; "barely", "no better" and "clearly" are the claims module's NEGLIGIBLE and CLEAR.

SEVERAL = 2.0  # "several times worse": at least this ratio


def _ppl(records: Records, row: int, key: str = "held_ppl", small: bool = False) -> list[float]:
    rec = records[NAME]
    source = rec["overfit"] if small and rec.get("overfit") else rec
    return _rows(source)[row][key]


def _ratio_part(top: int, bottom: int, margin: Any, rule: str, name: str = "",
                key: str = "held_ppl", small: bool = False) -> Part:
    """A part on ratio = ppl(row ``top``) / ppl(row ``bottom``) per seed."""
    def read(records: Records) -> Ratio:
        a, b = _ppl(records, top, key, small), _ppl(records, bottom, key, small)
        what = key.split("_")[0]
        return Ratio(a, b, {f"{what}_row{top}": mean_std(a)[0],
                            f"{what}_row{bottom}": mean_std(b)[0]},
                     f"ratio_{top}_over_{bottom}")
    return ratio_part(rule, read, margin, name)


_claim = claim_for(NAME)


def _small_rule(rule: str) -> str:
    return rule + " (on the small-data pair where the profile trains one)"


CLAIMS: list[Claim] = [
    _claim("mean_worse_than_nothing",
           "The uniform mean replacing the token is several times worse than no context.",
           _ratio_part(2, 1, lambda r: r - SEVERAL, f"held-out ppl row 2 / row 1 ≥ {SEVERAL:g}")),
    _claim("positions_barely_help",
           "Learned positions before the mean barely help.",
           _ratio_part(3, 2, lambda r: NEGLIGIBLE - abs(r - 1),
                       f"|held-out ppl row 3 / row 2 − 1| ≤ {NEGLIGIBLE:g}")),
    _claim("residual_mean_no_better",
           "The mean with a residual is no better than no context.",
           _ratio_part(4, 1, lambda r: r - (1 - NEGLIGIBLE),
                       f"held-out ppl row 4 / row 1 ≥ {1 - NEGLIGIBLE:g}")),
    _claim("head_beats_mean",
           "One learned head clearly beats the mean.",
           _ratio_part(5, 4, lambda r: (1 - CLEAR) - r,
                       f"held-out ppl row 5 / row 4 ≤ {1 - CLEAR:g}")),
    _claim("four_heads_beat_one",
           "Four heads beat one head.",
           _ratio_part(6, 5, lambda r: 1 - r, "held-out ppl row 6 / row 5 < 1")),
    _claim("replacing_worse",
           "The head replacing the token is worse than the head added to it.",
           _ratio_part(7, 5, lambda r: r - 1, "held-out ppl row 7 / row 5 > 1")),
    _claim("mlp_and_norm_help",
           "The MLP and LayerNorm each help.",
           _ratio_part(8, 6, lambda r: 1 - r, "held-out ppl row 8 / row 6 < 1", "MLP"),
           _ratio_part(9, 8, lambda r: 1 - r, "held-out ppl row 9 / row 8 < 1", "LayerNorm")),
    _claim("two_blocks_overfit",
           "Two blocks fit the training text better and the held-out text worse than one.",
           _ratio_part(10, 9, lambda r: 1 - r, _small_rule("train ppl row 10 / row 9 < 1"),
                       "train", key="train_ppl", small=True),
           _ratio_part(10, 9, lambda r: r - 1, _small_rule("held-out ppl row 10 / row 9 > 1"),
                       "held-out", small=True)),
]

FIGURES = {
    "ratio_{a}_over_{b}": Quantity("perplexity, row {a} ÷ row {b}",
                                   "perplejidad, fila {a} ÷ fila {b}", kind="ratio"),
    "{what}_row{n}": Quantity("{what} perplexity, row {n}", "perplejidad {what}, fila {n}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

__all__ = [
    "CLAIMS", "LADDER", "NAME", "NEEDS_CORPUS", "PROFILES", "ROWS", "Settings",
    "analyse", "base_config", "figure", "plan", "row_config", "row_name", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
