"""Why attention replaced recurrence: the chapter's opening argument, measured
(docs/experiments.md, "Why attention replaced recurrence").

Three models at the same width: an Elman RNN (tanh), an LSTM (``attnlab.nn.recurrent``)
and the project's attention block, each as the mixer of the same pre-norm block (mixer
and ×4 MLP sublayers with residuals, LayerNorm, untied output layer). The recurrences
get no position embedding (their order is the recurrence); attention keeps its own.

1. *Gradient reach* on Tiny Shakespeare: the one-block language models of the ladder's
   row 9 (attention: that very row, so its runs are the ladder's, shared through the run
   cache) with the mixer swapped, trained at the ladder's settings. ‖∂ℓ_T/∂x_{T−k}‖ for
   k = 1 … W − 1 over held-out windows, at initialisation and after training, and a
   geometric fit (``recurrence.claims.geometric_fit``).
2. *The long-range case*: the gender-agreement language of ``attnlab.data.gender``
   («la gata que perseguía al ratón estaba muy cansada» with the relative clause grown to
   distance d). Two blocks of each model (one attention block cannot tell the subject from
   the object: both are nouns, told apart only by what precedes them), the recurrences'
   widths chosen so that every model has the attention model's parameter count (within a
   few per cent), one budget for all; forced-choice accuracy at each held-out d. Attention
   places its words with RoPE; beside it the same model with ALiBi (``AGREEMENT_MODELS``:
   the same sentences, parameters and budget), so that a loss past the trained distances
   can be laid on attention or on its position scheme. The training sentences have d from
   8 to 32 and the held-out ones reach 40 and 48, past any training sentence: every
   model's distance claims read the trained range, and what each does beyond it is a claim
   of its own. The budget was chosen (before any verdict under these rules) so that the
   LSTM is right on at least 90% of the held-out sentences at d = 8 on every seed at quick:
   20,000 training sentences, because in exploratory runs (not recorded) on 3,000 the LSTM
   learned the sentences by heart and did not learn the agreement at all.
3. *Sequential work*: for T = 32 … 1,024, the dependent steps of one forward pass counted
   on the autograd graph (``recurrence.measure.dependent_steps``), and the training-step
   time per token of the three one-block models, benchmarked on this CPU (and on the GPU
   when the run's device is CUDA; the GPU row says "not measured" otherwise).
4. *On the ladder*: the LSTM and RNN language models of part 1 beside the ladder's row 9:
   held-out perplexity, parameters and time per step.

The claims and their rules are in ``attnlab.experiments.recurrence.claims`` (committed
before the first measured verdict). Left out: GRUs, gradient clipping, truncated
backpropagation, tuning the recurrences' learning rate apart from attention's.

Parts: ``settings``, ``measure`` (held-out windows, gradient reach, forced choice, counted
steps, the benchmark), ``claims`` (with the geometric fit), ``view`` (table, figure),
``chapter``; this face plans and analyses and re-exports what tests use (``__all__``). Its
public part for code outside the experiments is the record
(``attnlab.kit.registry.load("recurrence")``: its profiles and its ``plan``, whose run
``"agreement attention seed 0"`` the explorer's ``--agreement-distance`` page trains or
reuses); nothing outside the experiment imports a part. The ladder's face is imported for
the language models (``ladder.row_config``, ``ladder.PROFILES``).
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.data.gender import MIN_D, GenderData, baselines, gender_dataset
from attnlab.experiments import ladder
from attnlab.experiments.recurrence import measure
from attnlab.experiments.recurrence.chapter import CHAPTER
from attnlab.experiments.recurrence.claims import CLAIMS, geometric_fit
from attnlab.experiments.recurrence.settings import (
    AGREEMENT_MODELS,
    MODELS,
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    Settings,
)
from attnlab.experiments.recurrence.view import AGREEMENT, LABELS, accuracy_parts, figure, table
from attnlab.i18n.logs import Phrase
from attnlab.kit.per_seed import lm_summary
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import settings_dict
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context, SentenceStream
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

log = logging.getLogger(__name__)


def lm_settings(s: Settings) -> ladder.Settings:
    return ladder.PROFILES[s.ladder_profile]


def lm_config(s: Settings, model: str) -> ModelConfig:
    """Ladder row 9 (one pre-norm block, four heads, MLP), or its mixer swapped for a
    recurrence without positions."""
    row9 = ladder.row_config(lm_settings(s), 9)
    return row9 if model == "attention" else row9.replace(mixer=model, position="none")


def agreement_data(s: Settings) -> GenderData:
    return gender_dataset(s.distances, s.max_d, n_train=s.agree_sentences,
                          per_pair=s.agree_per_pair, seed=s.data_seed)


def agreement_config(s: Settings, model: str, vocab_size: int) -> ModelConfig:
    """Attention at ``agree_width`` with RoPE (``alibi``: the same with ALiBi, which has no
    parameters either); a recurrence at the width whose model has the nearest parameter
    count to attention's."""
    attention = ModelConfig(vocab_size=vocab_size, n_ctx=s.agree_ctx, d_model=s.agree_width,
                            n_layer=s.agree_layers, mixer="mha", n_head=s.agree_heads,
                            position="rope", mlp=True, norm="pre")
    if model == "attention":
        return attention
    if model == "alibi":
        return attention.replace(position="alibi")
    target = _params(attention)
    lo, hi = 1, 4 * s.agree_width
    while lo < hi:  # the smallest width with at least the target's parameters
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if _params(_recurrent(attention, model, mid)) < target else (lo, mid)
    widths = [w for w in (lo - 1, lo) if w >= 1]
    best = min(widths, key=lambda w: abs(_params(_recurrent(attention, model, w)) - target))
    return _recurrent(attention, model, best)


def _recurrent(cfg: ModelConfig, model: str, width: int) -> ModelConfig:
    return cfg.replace(mixer=model, position="none", d_model=width)


def _params(cfg: ModelConfig) -> int:
    return LanguageModel(cfg).num_parameters()


def agreement_train(s: Settings) -> TrainConfig:
    return TrainConfig(steps=s.agree_steps, lr=s.agree_lr, batch_size=s.agree_batch,
                       warmup_steps=max(1, s.agree_steps // 10), decay="cosine", eval_every=0,
                       ckpt_every=0, log_every=max(1, s.agree_steps // 6))


def plan(settings: Settings) -> list[RunSpec]:
    """Per seed: the three language models at the ladder's settings, the four agreement
    models."""
    ls = lm_settings(settings)
    specs = []
    for model in MODELS:
        cfg = RunConfig(model=lm_config(settings, model), train=ls.train_config(),
                        data=ls.data_config())
        specs += seeded(f"lm {model}", cfg, settings.seeds)
    data = agreement_data(settings)
    stream = SentenceStream(train=data.train, held=data.held)
    for model in AGREEMENT_MODELS:
        cfg = RunConfig(model=agreement_config(settings, model, data.vocab.size),
                        train=agreement_train(settings),
                        data=DataConfig(vocab_size=data.vocab.size))
        specs += seeded(f"agreement {model}", cfg, settings.seeds, data=stream)
    return specs


# -- measuring -------------------------------------------------------------------


def _reach(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    from attnlab.train.runtime import build_model

    ls = lm_settings(settings)
    held = ctx.token_data(ls.vocab_size).held
    windows = measure.held_windows(held, ls.n_ctx, settings.reach_windows)
    out: dict[str, Any] = {"window": ls.n_ctx, "windows": int(windows.shape[0])}
    for model in MODELS:
        runs = results.seeds(f"lm {model}")
        trained = [measure.gradient_reach(ctx.trained(r), windows) for r in runs]
        init = []
        for seed in range(len(runs)):
            cfg = RunConfig(model=lm_config(settings, model),
                            train=ls.train_config(seed=seed))
            init.append(measure.gradient_reach(build_model(cfg, "cpu"), windows))
        out[model] = {"trained": trained, "init": init,
                      "fit": [geometric_fit(n) for n in trained],
                      "fit_init": [geometric_fit(n) for n in init]}
        log.info("recurrence: %s, gradient reach's fitted factor per step, seed by seed: %s",
                 Phrase(LABELS[model], NAME),
                 ", ".join(f"{f['rate']:.3g}" for f in out[model]["fit"]))
    return out


def _lm(settings: Settings, results: Results) -> dict[str, Any]:
    ls = lm_settings(settings)
    out = {}
    for model in MODELS:
        runs = results.seeds(f"lm {model}")
        out[model] = {**lm_summary(runs, ("held_ppl", "train_ppl")),
                      "step_s": [r["wall_s"] / ls.steps for r in runs],
                      "tokens_per_s": [r["tokens_per_s"] for r in runs]}
    return out


def _agreement(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    data = agreement_data(settings)
    out: dict[str, Any] = {"distances": list(data.distances), "baselines": baselines(data),
                           "trained_d": [MIN_D, settings.max_d],
                           "n_per_d": int(data.items[data.distances[0]].shape[0]),
                           "train_conflict": data.train_conflict}
    for model in AGREEMENT_MODELS:
        runs = results.seeds(f"agreement {model}")
        out[model] = {"params": runs[0]["params"],
                      "d_model": agreement_config(settings, model, data.vocab.size).d_model,
                      "acc": [measure.forced_choice(ctx.trained(r), data, ctx.device)
                              for r in runs]}
        inside, beyond, seeds = accuracy_parts(out[model]["acc"], out["distances"],
                                               settings.max_d)
        said = Phrase(AGREEMENT[model], NAME)
        if beyond:  # the distances no training sentence has, apart
            log.info("recurrence: %s, agreement accuracy per seed at d = %s | beyond the "
                     "training, %s: %s", said, inside, beyond, seeds)
        else:
            log.info("recurrence: %s, agreement accuracy per seed at d = %s: %s", said, inside,
                     seeds)
    return out


def _sequential(settings: Settings, ctx: Context) -> tuple[dict, dict]:
    from attnlab.train.rundir import trained_on

    cfgs = {m: lm_config(settings, m) for m in MODELS}
    steps: dict[str, Any] = {"T": list(settings.sizes)}
    for m, cfg in cfgs.items():
        steps[m] = [measure.dependent_steps(cfg, t) for t in settings.sizes]
    timing: dict[str, Any] = {"T": list(settings.sizes), "device": "cpu",
                              "tokens_per_step": settings.tokens_per_step, **trained_on("cpu")}
    timing.update(measure.benchmark(cfgs, settings.sizes, settings.tokens_per_step,
                                    settings.rounds))
    gpu = None
    if str(ctx.device).startswith("cuda"):
        gpu = {"T": list(settings.sizes), "device": str(ctx.device), **trained_on(str(ctx.device)),
               **measure.benchmark(cfgs, settings.sizes, settings.tokens_per_step,
                                   settings.rounds, str(ctx.device))}
    timing["gpu"] = gpu
    return steps, timing


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """Reach, agreement accuracy per d, counted steps and the benchmark, the LM rows."""
    steps, timing = _sequential(settings, ctx)
    return {"settings": settings_dict(settings), "seeds": settings.seeds,
            "lm": _lm(settings, results), "reach": _reach(settings, results, ctx),
            "agreement": _agreement(settings, results, ctx), "steps": steps, "timing": timing}


__all__ = ["AGREEMENT_MODELS", "CLAIMS", "MODELS", "NAME", "PROFILES", "Settings",
           "agreement_config", "agreement_data", "analyse", "figure", "lm_config", "plan", "table"]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
