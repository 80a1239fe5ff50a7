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

Parts: ``settings``, ``measure`` (in-context loss, head scores, ablation, the phase change),
``claims``, ``view`` (table, figure), ``chapter``; this face plans and analyses and
re-exports what tests use (``__all__``). Its public part for code outside the experiments
is the record (``attnlab.kit.registry.load("induction")``: its profiles and its ``plan``,
whose run ``"induction 2L seed 0"`` the explorer's ``--induction`` page trains or reuses);
nothing outside the experiment imports a part. The ladder's face is imported for its row
10 (``ladder.row_config``, ``ladder.row_label``, ``ladder.PROFILES``).
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.data.repeated import SegmentStream, segment_rows
from attnlab.experiments.induction import measure as im
from attnlab.experiments.induction.chapter import CHAPTER
from attnlab.experiments.induction.claims import CLAIMS, head_formed
from attnlab.experiments.induction.settings import (
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    SHORT,
    Settings,
)
from attnlab.experiments.induction.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

log = logging.getLogger(__name__)


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


__all__ = ["CLAIMS", "NAME", "NEEDS_CORPUS", "PROFILES", "SHORT", "Settings",
           "analyse", "figure", "head_formed", "held_rows", "model_config", "plan",
           "snapshot_steps", "stream", "table", "train_config", "window"]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
