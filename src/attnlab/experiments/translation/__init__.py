"""Where attention was born: Bahdanau et al. 2015's experiment, measured (docs/experiments.md,
"Where attention was born").

Bahdanau, Cho and Bengio translated English to French with a recurrent encoder–decoder and
found (their Fig. 2) that without attention, the source squeezed through the encoder's last
state, the translation got worse as the sentence grew; with attention (a weighted sum of all
the encoder's states, the weights computed by the decoder at every word) it held. Here on
the synthetic English → Spanish language of ``attnlab.data.translation`` (gender agreement,
the adjective after its noun, relative clauses putting distance between a subject and the
adjective that agrees with it, gold alignments), three models of one parameter count
(``attnlab.nn.seq2seq.matched_configs``), one budget, trained through the runner
(``attnlab.train.seq2seq_trainer``):

``rnn``          a GRU encoder–decoder whose decoder sees only the encoder's final state;
``bahdanau``     the same with additive attention;
``transformer``  an encoder–decoder of transformer blocks with cross-attention.

Per seed and model, on held-out sentences in bands of source length inside the trained
lengths and past them (``measure.score_band``): token accuracy, sentences exactly right,
the predicate adjective's agreement scored alone, and how often the attention's largest
weight lies on the gold source word; beside them a decoder that never reads the source,
the dependent steps of each model's forward pass (counted with the recurrence
experiment's ``longest_chain``, through its face), and the additive model's weights on one
sentence. The claims and their rules are in ``translation.claims`` (committed before the
first measured verdict).

Parts: ``settings``, ``measure``, ``claims``, ``view`` (table, figure), ``chapter``; this
face plans and analyses and re-exports what tests use (``__all__``); nothing outside the
experiment imports a part. Left out: BLEU, beam search, real language, subword vocabularies.
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.data.translation import TranslationData, translation_dataset
from attnlab.experiments.translation import measure
from attnlab.experiments.translation.chapter import CHAPTER
from attnlab.experiments.translation.claims import CLAIMS
from attnlab.experiments.translation.settings import (
    MODELS,
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    Settings,
)
from attnlab.experiments.translation.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import settings_dict
from attnlab.nn.model_config import Seq2SeqConfig
from attnlab.nn.seq2seq import count_parameters, matched_configs
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig
from attnlab.train.runtime import training_threads

log = logging.getLogger(__name__)


def data_of(s: Settings) -> TranslationData:
    """The training sentences and the held-out bands of ``s``."""
    return translation_dataset(n_train=s.train_pairs, train_band=s.train_band,
                               held_bands=s.bands, n_held=s.held_pairs, seed=s.data_seed)


def model_configs(s: Settings, data: TranslationData) -> dict[str, Seq2SeqConfig]:
    """The three models at the parameter count of the transformer of width ``s.width``."""
    base = Seq2SeqConfig(src_vocab=data.source_vocab.size, tgt_vocab=data.target_vocab.size,
                         d_model=s.width, n_layer=s.layers, n_head=s.heads,
                         bidirectional=s.bidirectional)
    return matched_configs(base, count_parameters(base.replace(arch="transformer")))


def train_config(s: Settings) -> TrainConfig:
    return TrainConfig(steps=s.steps, lr=s.lr, batch_size=s.batch,
                       warmup_steps=max(1, s.steps // 10), decay="cosine", eval_every=0,
                       ckpt_every=0, log_every=max(1, s.steps // 6))


def plan(settings: Settings) -> list[RunSpec]:
    """Per seed, the three models on the same sentences and the same budget."""
    data = data_of(settings)
    specs = []
    for model, cfg in model_configs(settings, data).items():
        run = RunConfig(model=cfg, train=train_config(settings),
                        data=DataConfig(vocab_size=data.target_vocab.size))
        specs += seeded(f"translation {model}", run, settings.seeds, data=data)
    return specs


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """Per model and seed, each band's scores; the blind decoder, the counted steps and one
    sentence's alignment. On the CPU on one thread, as the runs trained: these models' small
    steps gain nothing from a second thread, and on a busy machine the threads' waiting for
    each other made the scoring about 30 times slower (measured: 1 s against 33 s for one
    seed of the model without attention, on two busy cores)."""
    with training_threads(ctx.device.type):
        return _analyse(settings, results, ctx)


def _analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    data = data_of(settings)
    bands = list(data.held)
    cfgs = model_configs(settings, data)
    models: dict[str, Any] = {}
    example = None
    for m in MODELS:
        runs = results.seeds(f"translation {m}")
        per_seed = []
        for seed, run in enumerate(runs):
            model = ctx.trained(run)
            per_seed.append([measure.score_band(model, data.held[b], data, ctx.device)
                             for b in bands])
            if m == "bahdanau" and seed == 0:
                longest = bands[max(measure.inside(bands, data.train_band))]
                example = measure.alignment_example(model.cpu(), data.held[longest][0], data)
        models[m] = {"params": runs[0]["params"], "d_model": cfgs[m].d_model,
                     "held_ppl": [r["held_ppl"] for r in runs],
                     **{k: [[band[k] for band in seed] for seed in per_seed]
                        for k in ("token_acc", "exact", "agreement", "alignment")}}
        if m == "rnn":
            models[m]["alignment"] = None
        log.info("translation: %s, token accuracy per band, seed by seed: %s", m,
                 "; ".join(", ".join(f"{a:.2f}" for a in acc) for acc in models[m]["token_acc"]))
    steps: dict[str, Any] = {"lengths": list(settings.step_lengths)}
    for m in MODELS:
        steps[m] = [measure.dependent_steps(cfgs[m], n) for n in settings.step_lengths]
    return {"settings": settings_dict(settings), "seeds": settings.seeds,
            "bands": [list(b) for b in bands], "train_band": list(data.train_band),
            "n_train": len(data.train), "n_per_band": settings.held_pairs,
            "blind": [measure.blind_baseline(data.train, data.held[b]) for b in bands],
            "models": models, "example": example, "steps": steps}


__all__ = ["CLAIMS", "MODELS", "NAME", "PROFILES", "Settings", "analyse", "data_of", "figure",
           "model_configs", "plan", "table"]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan, analyse=analyse, table=table, figure=figure,
    claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
