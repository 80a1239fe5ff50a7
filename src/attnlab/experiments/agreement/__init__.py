"""Verb agreement (docs/experiments.md, "Agreement"; the curriculum's seed
``I work , you work , he ___``).

Dimension legend: ``n`` sentences, ``L`` blocks, ``h`` heads per block, ``t``
query positions, ``s`` key positions, ``V`` vocabulary.

The verb-agreement language (``attnlab.data.synthetic``): clauses
``{pronoun} {verb}`` joined by commas, one verb per sentence, three clauses;
after ``he``, ``she`` or ``it`` the verb takes its ``-s`` form. A small model
(the explorer's agreement probe: two pre-norm blocks of four heads, width 64,
RoPE, 300 AdamW steps on random two-sentence windows) is trained for every
seed, then read on the held-out sentences (never seen in training):

- *accuracy*: top-1 over the vocabulary at the positions that predict the verbs
  of clauses 2 and 3 (the first clause's verb cannot be known: any of eight).
  The *majority-form baseline* is the accuracy of always naming the right verb
  in the form more frequent in training (the base form: four of seven
  pronouns), so beating it means getting the *form* right, not just the verb;
- *attention at the predicting position*: in a causal model the verb of clause
  c is predicted at its pronoun, so the query is the subject pronoun itself.
  Per head, the weight of that row on four groups of keys that together make
  up the row: the subject pronoun (the query's own position), the verb stems
  (the earlier verbs, which carry the stem), the separators (``,``) and the
  other pronouns; averaged over held-out sentences and clauses 2 and 3.

Claims, with their rules fixed before any model was trained:

- "the model predicts the agreeing verb form": top-1 accuracy ≥ baseline +
  ``WELL_ABOVE`` (20 points, the "well above" of every claim);
- "some head puts most of its weight on the subject pronoun": the largest
  subject mass of any head > ``MOST`` (one half);
- the curriculum's own claim, "an ideal verb-form head puts most of its mass
  on the subject pronoun and the verb stem together, with maybe some on the
  earlier stem" (positions 6 and 4, and 1, of ``I work , you work , he ___``):
  the largest subject + stems mass of any head > ``MOST`` (one half). The
  claim above narrows this to the subject alone, which in a causal model is
  the predicting position itself; both are decided, side by side;
- "no single head does all of the routing" (partial specialisation): the
  routing mass of a head is its weight on what the prediction needs, the
  subject and the stems; no head carries half or more of the routing mass of
  all heads together (largest share < ``SHARE``). A head that did all of the
  routing would carry more of it than every other head together.

Left out: ablations (what a head *does*, not where it looks), other templates,
and plural subjects with nouns.

Parts: ``settings``, ``measure`` (accuracy, group masses, the probe's rows), ``claims``,
``view`` (table, figure), ``chapter``; this face plans and analyses and re-exports what
tests use (``__all__``). Its ``measure`` is the function that measures a model, not the
part of that name. Nothing outside the experiment imports a part.
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.data.synthetic import VerbAgreementData, verb_agreement_dataset
from attnlab.experiments.agreement.chapter import CHAPTER
from attnlab.experiments.agreement.claims import CLAIMS, SHARE, learned_premise
from attnlab.experiments.agreement.measure import (
    baseline,
    group_masks,
    measure,
    probe_rows,
    probe_subject_and_stems,
    routing_shares,
    subject_and_stems,
)
from attnlab.experiments.agreement.settings import (
    GROUPS,
    NAME,
    NEEDS_CORPUS,
    PROBE,
    PROFILES,
    Settings,
)
from attnlab.experiments.agreement.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import fmt_ms, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context, SentenceStream
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

log = logging.getLogger(__name__)


def model_config(s: Settings, vocab_size: int) -> ModelConfig:
    return ModelConfig(vocab_size=vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       n_layer=s.n_layer, mixer="mha", n_head=s.n_head, position="rope")


def train_config(s: Settings) -> TrainConfig:
    return TrainConfig(steps=s.steps, lr=s.lr, batch_size=s.batch_size,
                       warmup_steps=s.warmup_steps, decay="cosine", eval_every=0,
                       ckpt_every=0, log_every=max(1, s.steps // 6))


def dataset(s: Settings) -> VerbAgreementData:
    return verb_agreement_dataset(seed=s.data_seed, n_clauses=s.n_clauses)


def plan(settings: Settings) -> list[RunSpec]:
    """One model, every seed."""
    data = dataset(settings)
    cfg = RunConfig(model=model_config(settings, data.vocab.size), train=train_config(settings),
                    data=DataConfig(vocab_size=data.vocab.size))
    return seeded("agreement", cfg, settings.seeds, data=SentenceStream.of(data))


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """Accuracy, the baseline, per-head group masses for every seed; the probe's rows."""
    data = dataset(settings)
    runs = results.seeds("agreement")
    per_seed = []
    for i, r in enumerate(runs):
        model = ctx.trained(r)
        m = measure(model, data)
        if i == 0:
            m["probe"] = probe_rows(model, data)
        per_seed.append(m)
    record = {"settings": settings_dict(settings), "seeds": settings.seeds,
              "baseline": baseline(data), "n_held": len(data.held),
              "params": runs[0]["params"], "wall_s": [r["wall_s"] for r in runs],
              "top1": [m["top1"] for m in per_seed], "heads": [m["heads"] for m in per_seed],
              "probe": {"tokens": PROBE.split(), "rows": per_seed[0]["probe"]}}
    log.info("agreement: top-1 %s against a baseline of %.3f", fmt_ms(record["top1"], 3),
             record["baseline"])
    return record


__all__ = [
    "CLAIMS", "GROUPS", "NAME", "NEEDS_CORPUS", "PROBE", "PROFILES", "SHARE", "Settings",
    "analyse", "baseline", "dataset", "figure", "group_masks", "learned_premise", "measure",
    "model_config", "plan", "probe_rows", "probe_subject_and_stems", "routing_shares",
    "subject_and_stems", "table", "train_config"
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
