"""A question with a right answer: Winograd referents, after Levesque et al. 2012
(docs/experiments.md, "Winograd referents").

Dimension legend: ``n`` sentences, ``h`` heads, ``t`` query positions, ``s``
key positions, ``V`` vocabulary.

    the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .

One position is scored: the word after ``so the`` (``attnlab.data.synthetic``
builds both languages and their held-out splits). Variant A is cheatable (x is
always an animal, y a place, so "the animal if the adjective is animal-ish"
needs no word order); in variant B the held-out pairs are the reverses of
training pairs, so a bag of words has seen the same words with the *other*
answer. Three models, one block = attention sublayer + ×4 GELU MLP, pre-norm,
residual:

``mean``        the uniform causal mean as the mixer (with residual), no positions;
``one block``   four heads of width d/4 with ``W_o``, learned positions;
``two blocks``  the same block twice.

Design decisions, each from exploratory runs on variant B that are not recorded
(their figures are left out here; ``attnlab run winograd`` shows the current ones):

- *The mean has no positions.* With pre-norm, LN(token + position) does not
  split into a token part and a position part, so a mean of those vectors
  carries word order: with learned positions the "mean" model learned the
  training sentences' order and stopped being a bag of words. Without
  positions it is one (on the training sentences it cannot pass 2/3 forced
  choice: the pairs seen in both orders have opposite answers for one bag).
  Its MLP is what lets it memorise: the bare ladder row 4 (token + mean, no
  MLP) stays at chance on held-out sentences.
- *The trainer's random windows.* The trainer draws windows at random
  offsets of the concatenated sentences; it cannot align them to sentences. The
  window is one sentence (``n_ctx`` = 17 inputs), so 4 of 18 windows hold a
  referent with both nouns in view. Against sentence-aligned batches the mean
  memorises far more slowly and one block needs several times the steps; two
  blocks are unaffected. We keep the trainer and pay in steps.
- *Learning rate 1e-2, cosine-decayed to 1e-3* (the corpus default is a
  constant 1e-3): a 40-word language with one hard position; at a constant
  3e-3 the effects need more steps, and at a constant 1e-2 the mean never
  settles into its memorised answers.

Evaluation: held-out sentences from position 0, the logits at the scored
position; forced choice between the two nouns present (chance 50%) and top-1
over the vocabulary. The two-block model's attention at the scored position,
averaged over heads, is read for ``… the animal … the street … too tired …``
and ``… too wet …``.

Is block 1's attention really the same for ``tired`` and ``wet``? Its query at
the scored position is (the same word at the same position), and so is every
key but the adjective's; per head, the weights of the other fourteen tokens
keep their ratios (a test checks it). But each row is renormalised, and a head
may score the adjective's key: its weight on ``tired`` and on ``wet`` can
differ, the freed weight go to another token, and the weights on the two nouns
barely move. The claim is decided on the whole row, as stated; the difference
on the nouns alone is reported beside it (the measured figures of both: the
report's claim table, or docs/results.md).

Left out: other templates, pronoun resolution beyond this one position, and
probing (we read attention weights, not what the values carry).

Parts: ``settings`` (profiles, the probe), ``measure`` (accuracy, attention rows),
``claims``, ``view`` (table, figure), ``chapter``; this face plans and analyses and
re-exports what tests use (``__all__``). Nothing outside the experiment imports a part.
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.data.synthetic import winograd_dataset
from attnlab.experiments.winograd.chapter import CHAPTER
from attnlab.experiments.winograd.claims import CLAIMS
from attnlab.experiments.winograd.measure import (
    accuracies,
    attention_probe,
    attention_rows,
    scored_attention,
    scored_logits,
)
from attnlab.experiments.winograd.settings import (
    MODELS,
    N_CTX,
    NAME,
    NEEDS_CORPUS,
    PROBE,
    PROFILES,
    VARIANTS,
    Settings,
)
from attnlab.experiments.winograd.view import figure, table
from attnlab.i18n.logs import Phrase
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import fmt_ms, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context, SentenceStream
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

log = logging.getLogger(__name__)


def model_config(s: Settings, kind: str, vocab_size: int) -> ModelConfig:
    """The ``ModelConfig`` of ``kind`` (one of ``MODELS``); n_ctx = one sentence's inputs."""
    common = dict(vocab_size=vocab_size, n_ctx=N_CTX, d_model=s.d_model, mlp=True, norm="pre",
                  residual=True)
    if kind == "mean":
        return ModelConfig(**common, n_layer=1, mixer="mean", position="none")
    if kind in ("one block", "two blocks"):
        n_layer = 1 if kind == "one block" else 2
        return ModelConfig(**common, n_layer=n_layer, mixer="mha", n_head=s.n_head,
                           position="learned")
    raise ValueError(f"unknown model {kind!r}; choose one of: {', '.join(MODELS)}")


def train_config(s: Settings, steps: int) -> TrainConfig:
    """AdamW with cosine decay to lr/10, evaluated only at the end, checkpoints every quarter
    (only at the end under 100 steps, where a checkpoint costs more than redoing the run)."""
    return TrainConfig(steps=steps, lr=s.lr, decay="cosine", min_lr_ratio=0.1,
                       batch_size=s.batch_size, eval_every=0,
                       ckpt_every=steps // 4 if steps >= 100 else 0,
                       log_every=max(steps // 20, 1))


def run_label(variant: str, kind: str) -> str:
    return f"winograd {variant} {kind}"


def plan(settings: Settings) -> list[RunSpec]:
    """The three models on both variants, every seed; the sentences are given as token data."""
    s = settings
    specs = []
    for variant in VARIANTS:
        data = winograd_dataset(variant, s.data_seed)
        steps = s.steps_a if variant == "A" else s.steps_b
        for kind in MODELS:
            cfg = RunConfig(model=model_config(s, kind, data.vocab.size),
                            train=train_config(s, steps),
                            data=DataConfig(vocab_size=data.vocab.size))
            specs += seeded(run_label(variant, kind), cfg, s.seeds, data=SentenceStream.of(data))
    return specs


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """Accuracy of every trained model on held-out sentences; the two-block model's probe."""
    s = settings
    variants: dict[str, Any] = {}
    probe: dict[str, Any] = {}
    for variant in VARIANTS:
        data = winograd_dataset(variant, s.data_seed)
        models: dict[str, Any] = {}
        for kind in MODELS:
            runs = results.seeds(run_label(variant, kind))
            trained = [ctx.trained(r) for r in runs]
            scores = [accuracies(m, data) for m in trained]
            log.info("winograd %s %s: held-out forced choice %s", variant, Phrase(kind, NAME),
                     fmt_ms([sc["forced"] for sc in scores], 3))
            models[kind] = {
                "steps": s.steps_a if variant == "A" else s.steps_b,
                "params": runs[0]["params"],
                "wall_s": [r["wall_s"] for r in runs],
                **{k: [sc[k] for sc in scores] for k in scores[0]},
            }
            if variant == "B" and kind == "two blocks":
                probe = attention_probe(trained, data)
        variants[variant] = {
            "n_train": len(data.train), "n_held": len(data.held),
            "held_pairs": len(data.held_pairs), "models": models,
        }
    return {"settings": settings_dict(s), "seeds": s.seeds, "variants": variants,
            "attention": probe}


__all__ = ["CLAIMS", "MODELS", "NAME", "PROBE", "PROFILES", "NEEDS_CORPUS",
           "SentenceStream", "Settings", "accuracies", "analyse", "attention_rows",
           "figure", "model_config", "plan", "run_label", "scored_attention", "scored_logits",
           "table", "train_config"]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
