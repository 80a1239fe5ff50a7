"""Induction heads forming (docs/experiments.md, "Induction heads").

Dimension legend: ``L`` blocks, ``h`` heads per block, ``S`` snapshots.

Attention-only transformers (``ModelConfig(mlp=False)``: pre-norm blocks of four
RoPE heads, width 64) of one and of two blocks, trained by the project's trainer
on streams of random-token rows (vocabulary 32) in each of which one segment of
random length (8 to 16 tokens) occurs twice at random places
(``attnlab.data.repeated``), so no period can be memorised. Following Olsson et
al. (2022, "In-context Learning and Induction Heads") and Elhage et al. (2021), on
held-out rows (``induction.measure``): the loss on the repeated segment against
its first occurrence, and every head's induction (prefix-matching) and
previous-token scores.

Snapshots. The two-block run of each seed keeps its weights after step 1 and after
``steps · i / snapshots`` for every ``i`` (``train.keep_steps``,
``attnlab.train.kept_steps``): one trajectory, trained once, measured at every snapshot.

Ablation. On the final two-block model, each block-1 head in turn is replaced by
its mean output over the held-out rows (``attnlab.nn.trace.ablate``), and the
induction head's score and the in-context benefit are measured again.

Also measured, as figures (no claim): the standard probe of ``attnlab.interp``
on each model, and on the ladder's two-block Tiny Shakespeare model (row 10 of
the ladder's own run specs, so its runs are shared with the ladder).

Left out: MLPs, smeared keys (which let one block form induction heads), natural
text, and the copying (OV) side of the circuit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attnlab.data.repeated import SegmentStream, segment_rows
from attnlab.experiments.induction import measure as im
from attnlab.experiments.induction.chapter import CHAPTER
from attnlab.kit.claims import (
    CLEAR,
    MOST,
    Claim,
    Margins,
    Part,
    Premise,
    Records,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import Seeded
from attnlab.kit.tables import fmt_ms, markdown_table, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "induction"
NEEDS_CORPUS = True  # quick and full also score the ladder's two-block Tiny Shakespeare model
SHORT = 0.2  # "a short stretch of training": one fifth of it at most


@dataclass(frozen=True)
class Settings(Seeded):
    """The language, the two models and the budget."""

    vocab_size: int = 32  # random tokens: few enough to learn the embeddings quickly
    n_ctx: int = 32  # rows of n_ctx + 1 tokens
    min_len: int = 8  # shortest repeated segment
    max_len: int = 16  # longest: the segment fits twice in a row
    d_model: int = 64  # residual width
    n_head: int = 4  # heads per block (width 16 each)
    steps: int = 1200  # AdamW updates of the final models
    snapshots: int = 10  # the two-block model is also trained to steps·i/snapshots
    lr: float = 3e-3  # constant rate (no warmup, no decay: snapshots share one trajectory)
    batch_size: int = 32  # windows per update
    n_train: int = 20_000  # training rows (a stream of n_train · (n_ctx + 1) tokens)
    n_held: int = 256  # held-out rows: the trainer's held split and the measurements
    data_seed: int = 0  # the rows' seed (held-out rows: data_seed + 1)
    ablation: str = "mean"  # zero | mean: what replaces an ablated head's output
    shakespeare: str | None = "quick"  # the ladder profile whose row 10 is scored (None: no)


PROFILES = {
    "full": Settings(seeds=5, shakespeare="full"),
    "quick": Settings(),
    "micro": Settings(d_model=16, steps=8, snapshots=2, batch_size=4, n_train=200, n_held=16,
                      shakespeare=None, seeds=1),
}

def model_config(s: Settings, n_layer: int) -> ModelConfig:
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       n_layer=n_layer, mixer="mha", n_head=s.n_head, position="rope",
                       mlp=False)


def train_config(s: Settings, n_layer: int) -> TrainConfig:
    """The one budget of both models; the two-block run keeps its snapshots' weights."""
    keep = tuple(snapshot_steps(s)[:-1]) if n_layer == 2 else ()
    return TrainConfig(steps=s.steps, lr=s.lr, batch_size=s.batch_size, warmup_steps=0,
                       decay="none", eval_every=0, ckpt_every=0,
                       log_every=max(1, s.steps // 4), keep_steps=keep)


def snapshot_steps(s: Settings) -> list[int]:
    """Step 1 (nearly the initialisation), then ``steps · i / snapshots``."""
    return [1] + [s.steps * i // s.snapshots for i in range(1, s.snapshots + 1)]


def stream(s: Settings) -> SegmentStream:
    return SegmentStream.of(s.vocab_size, s.n_ctx + 1, s.n_train, s.n_held, s.min_len,
                            s.max_len, s.data_seed)


def held_rows(s: Settings) -> Any:
    """The held-out rows (the same as the trainer's held split)."""
    return segment_rows(s.vocab_size, s.n_ctx + 1, s.n_held, s.min_len, s.max_len,
                        s.data_seed + 1)


def _label(n_layer: int) -> str:
    return f"induction {n_layer}L"


def _shakespeare(s: Settings) -> tuple[Any, RunConfig] | None:
    if s.shakespeare is None:
        return None
    from attnlab.experiments import ladder

    ls = ladder.PROFILES[s.shakespeare]
    return ls, RunConfig(model=ladder.row_config(ls, 10), train=ls.train_config(),
                         data=ls.data_config())


def plan(settings: Settings) -> list[RunSpec]:
    """Every snapshot of the two-block model, the one-block model, for every seed; seed 0 of
    the ladder's two-block row, where the profile scores it."""
    s, data = settings, stream(settings)
    data_cfg = DataConfig(vocab_size=s.vocab_size)
    specs = []
    for n_layer in (2, 1):
        cfg = RunConfig(model=model_config(s, n_layer), train=train_config(s, n_layer),
                        data=data_cfg)
        specs += seeded(_label(n_layer), cfg, s.seeds, data=data)
    ladder = _shakespeare(s)
    if ladder is not None:
        from attnlab.experiments.ladder import row_label

        specs += seeded(row_label(10), ladder[1], 1)
    return specs


# -- measuring -------------------------------------------------------------------


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """Per seed: every snapshot's losses and scores, the final ablations and probe scores;
    the one-block model's; the ladder's two-block model's probe scores."""
    from attnlab.interp import head_scores

    s, held = settings, held_rows(settings)
    steps = snapshot_steps(s)
    runs = results.seeds(_label(2))
    two = []
    for run in runs:
        final = ctx.trained(run)
        snaps = [im.measure(ctx.kept(run, step), held) for step in steps[:-1]]
        snaps.append(im.measure(final, held))
        two.append({"snapshots": snaps, "ablation": im.ablations(final, held, s.ablation),
                    "probe": head_scores(final).to_dict()})
    one = []
    for r in results.seeds(_label(1)):
        model = ctx.trained(r)
        one.append({**im.measure(model, held), "probe": head_scores(model).to_dict()})
    record = {"settings": settings_dict(s), "seeds": s.seeds, "steps": steps,
              "window": window(s), "two": two, "one": one,
              "wall_s": [r["wall_s"] for r in runs],
              "params": {"2": runs[0]["params"],
                         "1": results.seeds(_label(1))[0]["params"]}}
    for i, seed in enumerate(two):
        seed["phase"] = im.phase(seed, steps, record["window"])
        log.info("induction seed %d: phase change at step %d", i, seed["phase"]["step"])
    if s.shakespeare is not None:
        from attnlab.experiments.ladder import row_label

        r = results.seeds(row_label(10))[0]
        record["shakespeare"] = {"profile": s.shakespeare, "run_dir": r["run_dir"],
                                 "probe": head_scores(ctx.trained(r)).to_dict()}
    return record


def window(s: Settings) -> int:
    """Snapshot intervals in "a short stretch" (``SHORT`` of training, at least one)."""
    return max(1, int(SHORT * s.snapshots))


# -- report ----------------------------------------------------------------------


def _best(grid: list[list[float]], layer: int) -> float:
    return max(grid[layer])


def table(record: dict[str, Any]) -> str:
    s = record["settings"]
    two, one = record["two"], record["one"]
    rows = []
    for i, seed in enumerate(two):
        p, a = seed["phase"], seed["ablation"]
        final = seed["snapshots"][-1]
        rows.append([i, p["step"], f"{p['start']}–{p['stop']}", f"{p['loss_share']:.2f}",
                     f"{p['score_before']:.2f} → {p['score_after']:.2f}",
                     f"{final['first']:.3f} / {final['repeat']:.3f}",
                     f"{a['per_head'][a['prev_head']]['score']:.2f} / "
                     f"{a['per_head'][a['prev_head']]['benefit']:.2f} (of {a['score']:.2f} / "
                     f"{a['benefit']:.2f})"])
    phase = markdown_table(
        ["seed", "steepest fall ends at step", "window", "share of the fall",
         "induction score across it", "final first / repeat loss",
         "prev-token head ablated: score / benefit"], rows)
    models = markdown_table(
        ["model", "first-occurrence loss", "repeat loss", "best block-1 previous-token score",
         "best last-block induction score"],
        [["two blocks", fmt_ms([t["snapshots"][-1]["first"] for t in two], 3),
          fmt_ms([t["snapshots"][-1]["repeat"] for t in two], 3),
          fmt_ms([_best(t["snapshots"][-1]["previous"], 0) for t in two], 3),
          fmt_ms([_best(t["snapshots"][-1]["induction"], 1) for t in two], 3)],
         ["one block", fmt_ms([o["first"] for o in one], 3),
          fmt_ms([o["repeat"] for o in one], 3),
          fmt_ms([_best(o["previous"], 0) for o in one], 3),
          fmt_ms([_best(o["induction"], 0) for o in one], 3)]])
    text = (f"Attention-only, {s['n_head']} heads per block, width {s['d_model']}, vocabulary "
            f"{s['vocab_size']}, rows of {s['n_ctx'] + 1} with a segment of {s['min_len']}–"
            f"{s['max_len']} tokens repeated; {s['steps']} steps, {s['snapshots']} snapshots; "
            f"{record['seeds']} seed(s), mean ± std, on {s['n_held']} held-out rows.\n\n"
            f"{models}\nThe phase change of each two-block seed (window: {record['window']} "
            f"snapshot intervals; benefit = first − repeat loss):\n\n{phase}")
    if "shakespeare" in record:
        sh = record["shakespeare"]["probe"]
        grid = lambda k: "; ".join(  # noqa: E731 - one line per score
            f"block {i + 1}: " + " ".join(f"{v:.2f}" for v in layer)
            for i, layer in enumerate(sh[k]))
        profile = record["shakespeare"]["profile"]
        text += (f"\nThe ladder's two-block Tiny Shakespeare model ({profile} profile, seed 0)"
                 f" on the standard probe ({sh['probe']['rows']} rows of "
                 f"{sh['probe']['half']} random tokens repeated): induction {grid('induction')}; "
                 f"previous-token {grid('previous')}.\n")
    return text


def figure(record: dict[str, Any]) -> Figure:
    """Per seed: the first and repeat loss and the induction head's score against the step."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    right = ax.twinx()
    steps = record["steps"]
    for i, seed in enumerate(record["two"]):
        snaps, head = seed["snapshots"], seed["ablation"]["ind_head"]
        colour = f"C{i}"
        if seed.get("phase"):  # the window where the repeated-segment loss falls most
            ax.axvspan(seed["phase"]["start"], seed["phase"]["stop"], color=colour, alpha=0.12,
                       label=f"seed {i}: phase window")
        ax.plot(steps, [x["repeat"] for x in snaps], "-o", color=colour, ms=3,
                label=f"seed {i}: repeat loss")
        ax.plot(steps, [x["first"] for x in snaps], ":", color=colour)
        right.plot(steps, [x["induction"][1][head] for x in snaps], "--", color=colour)
    ax.set_xlabel("training step (dotted: first-occurrence loss; dashed: induction score)")
    ax.set_ylabel("loss (nats)")
    right.set_ylabel("induction score of the block-2 head")
    right.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


# -- claims (rules fixed before any verdict; see docs/experiments.md) -------------

# A head "does" a role when most of its weight (MOST, more than half) goes to the role's
# key: chance for a uniform causal row over these 32 positions is about 1/16 on average.


def _two(records: Records) -> list[dict]:
    return records[NAME]["two"]


def _margins(values: list[float], threshold: float, above: bool) -> Margins:
    margins = [v - threshold if above else threshold - v for v in values]
    return Margins(margins, {"mean value": float(np.mean(values)), "threshold": threshold})


def _induction_head(records: Records) -> Margins:
    """Per seed: the highest final induction score of a block-2 head, against MOST."""
    return _margins([max(t["snapshots"][-1]["induction"][1]) for t in _two(records)], MOST,
                    True)


def _previous_head(records: Records) -> Margins:
    """Per seed: the highest final previous-token score of a block-1 head, against MOST."""
    return _margins([max(t["snapshots"][-1]["previous"][0]) for t in _two(records)], MOST,
                    True)


def _one_no_head(records: Records) -> Margins:
    """Per seed: the one-block model's highest induction score, against MOST / 2 ("near the
    threshold": within a factor of two of it)."""
    return _margins([max(o["induction"][0]) for o in records[NAME]["one"]], MOST / 2, False)


def _one_loss_near(records: Records) -> Margins:
    """Per seed: the one-block model's (first − repeat) / first loss, against CLEAR ("near":
    less than a clear relative difference on the claims' one scale)."""
    gaps = [(o["first"] - o["repeat"]) / o["first"] for o in records[NAME]["one"]]
    return _margins(gaps, CLEAR, False)


def _abrupt(records: Records) -> Margins:
    """Per seed: the largest share of the whole rise of the in-context benefit (first −
    repeat loss, from step 1 to the end) within any ``SHORT`` of training, against MOST."""
    return _margins([t["phase"]["loss_share"] for t in _two(records)], MOST, True)


def _coincides(records: Records) -> Margins:
    """Per seed: the share of the final induction head's whole score rise within that same
    window, against MOST."""
    return _margins([t["phase"]["score_share"] for t in _two(records)], MOST, True)


def _head_formed(records: Records) -> Margins:
    """Per seed: the best block-2 head's final induction score, against MOST (the premise of
    the claims about how the head forms and what removing its feed does)."""
    scores = [max(t["snapshots"][-1]["induction"][1]) for t in _two(records)]
    return Margins([s - MOST for s in scores], {"score": float(np.mean(scores)), "bar": MOST})


def head_formed(consequence: str, consequence_es: str) -> Premise:
    """The premise that the two-block model formed an induction head (added as their
    rule version 2, before any verdict under it): a claim about that head's forming or its
    ablation cannot be tested on a model that has none."""
    return Premise(
        f"the best block-2 head's induction score > {MOST:g}", _head_formed,
        "no induction head formed (the best block-2 head's score is {score:.2f}, not above "
        "{bar:g}): " + consequence,
        "no se formó ninguna cabeza de inducción (la mejor cabeza del bloque 2 puntúa "
        "{score:.2f}, no más de {bar:g}): " + consequence_es,
        f"puntuación de inducción de la mejor cabeza del bloque 2 > {MOST:g}")


def _kept(key: str, prev: bool) -> Any:
    """Per seed: with the previous-token head ablated, the fraction of the induction head's
    score (or benefit) left, against MOST ("removes": more than half gone); with another
    block-1 head ablated, the smallest fraction left over those heads, against MOST ("does
    not": more than half kept, whichever other head)."""

    def margins(records: Records) -> Margins:
        left = []
        for t in _two(records):
            a = t["ablation"]
            # no benefit or score to begin with: nothing was there to remove or keep, so
            # the part fails either way (1: "not removed", 0: "not kept")
            fractions = [h[key] / a[key] if a[key] > 0 else float(prev) for h in a["per_head"]
                         if (h["head"] == a["prev_head"]) == prev]
            left.append(min(fractions) if fractions else float("nan"))
        return _margins(left, MOST, not prev)

    return margins


CLAIMS: list[Claim] = [
    claim("induction.two_blocks_form",
          "Two attention-only blocks form an induction head (a block-2 head attends from a "
          "token to the token that followed its earlier occurrence) fed by a block-1 "
          "previous-token head.", NAME,
          Part(f"the best block-2 head's induction score on held-out rows > {MOST:g}",
               _induction_head, "score", "induction head"),
          Part(f"the best block-1 head's previous-token score > {MOST:g}", _previous_head,
               "score", "previous-token head")),
    claim("induction.one_block_does_not",
          "One attention-only block does not form an induction head, and its loss on the "
          "repeated segment stays near the first occurrence's.", NAME,
          Part(f"the one-block model's best induction score < {MOST / 2:g} (half the "
               f"threshold {MOST:g})", _one_no_head, "score", "no induction head"),
          Part(f"(first − repeat loss) / first-occurrence loss < {CLEAR:g}", _one_loss_near,
               "relative loss", "repeat loss near the first")),
    claim("induction.phase_change",
          "The fall of the two-block model's repeated-segment loss is abrupt, a phase change: "
          "most of it happens within a short stretch of training, and that stretch is where "
          "the induction score rises.", NAME,
          Part(f"largest share of the in-context benefit's rise within {SHORT:g} of training "
               f"> {MOST:g}", _abrupt, "share", "abrupt"),
          Part(f"share of the induction head's score rise within that window > {MOST:g}",
               _coincides, "share", "where the induction score rises"),
          premises=[head_formed("there is no rise of a head to time",
                                "no hay subida de una cabeza que cronometrar")],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
    claim("induction.ablation_k_composition",
          "Ablating the previous-token head removes the induction head's score and its "
          "benefit, while ablating another head of block 1 does not (K-composition).", NAME,
          Part(f"score left with the previous-token head mean-ablated < {MOST:g}",
               _kept("score", True), "fraction", "prev-token head: score"),
          Part(f"benefit (first − repeat loss) left with it ablated < {MOST:g}",
               _kept("benefit", True), "fraction", "prev-token head: benefit"),
          Part(f"score left with any other block-1 head ablated > {MOST:g}",
               _kept("score", False), "fraction", "other heads: score"),
          Part(f"benefit left with any other block-1 head ablated > {MOST:g}",
               _kept("benefit", False), "fraction", "other heads: benefit"),
          premises=[head_formed("there is no head whose feed an ablation could remove",
                                "no hay cabeza cuya entrada pueda quitar una ablación")],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
]

FIGURES = {
    "mean value": Quantity("mean over the seeds", "media de las semillas"),
    "threshold": Quantity("threshold", "umbral", kind="threshold"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

__all__ = ["CLAIMS", "NAME", "PROFILES", "SHORT", "Settings", "analyse", "figure",
           "plan", "snapshot_steps", "table"]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
