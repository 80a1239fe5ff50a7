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
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch

from attnlab.data.synthetic import (
    Vocab,
    WinogradData,
    forced_choice_accuracy,
    top1_accuracy,
    winograd_dataset,
)
from attnlab.errors import UsageError
from attnlab.experiments.winograd.chapter import CHAPTER
from attnlab.experiments.winograd.settings import (
    MODELS,
    N_CTX,
    NAME,
    NEEDS_CORPUS,
    NOUN_POSITIONS,
    PROBE,
    PROBE_ADJECTIVES,
    PROFILES,
    VARIANTS,
    Settings,
)
from attnlab.experiments.winograd.view import figure, table
from attnlab.kit.claims import (
    CLEAR,
    NEGLIGIBLE,
    WELL_ABOVE,
    Claim,
    Margins,
    Part,
    Records,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import fmt_ms, mean_std, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context, SentenceStream, model_device
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


def scored_logits(model: torch.nn.Module, rows: np.ndarray, score_index: int) -> np.ndarray:
    """Logits (n, V) at ``score_index`` for sentences ``rows`` (n, L) read from position 0."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or not 0 <= score_index < rows.shape[1] - 1:
        raise ValueError(f"need rows (n, L) and 0 <= score_index < L - 1, got {rows.shape}")
    device = model_device(model)
    x = torch.from_numpy(rows[:, : score_index + 1].astype(np.int64)).to(device)  # (n, i + 1)
    with torch.no_grad():
        return model(x)[:, score_index].float().cpu().numpy()  # (n, V)


def accuracies(model: torch.nn.Module, data: WinogradData) -> dict[str, float]:
    """Held-out forced choice and top-1, and forced choice on the training sentences."""
    held = scored_logits(model, data.held, data.score_index)
    train = scored_logits(model, data.train, data.score_index)
    train_candidates = data.train[:, [1, 6]]  # sentence positions of x and y
    return {
        "forced": forced_choice_accuracy(held, data.candidates, data.answer),
        "top1": top1_accuracy(held, data.answer),
        "train_forced": forced_choice_accuracy(
            train, train_candidates, data.train[:, data.ref_index]),
    }


def attention_rows(model: torch.nn.Module, vocab: Vocab, sentence: str) -> dict[str, Any]:
    """Every block's attention weights for ``sentence``: tokens, and per block a list of
    heads, each a (t, t) list of rows (``None`` for a block without weights)."""
    ids = vocab.encode(sentence)
    if not ids:
        raise UsageError("the sentence is empty")
    limit = model.cfg.n_ctx
    if len(ids) > limit:
        raise UsageError(f"the sentence has {len(ids)} words; this model reads at most {limit}")
    with torch.no_grad():
        weights = model.trace(torch.tensor([ids], device=model_device(model))).weights
    # weights: [(1, h, t, t)] per block
    return {
        "tokens": sentence.split(),
        "blocks": [None if w is None else w[0].float().cpu().tolist() for w in weights],
    }


def scored_attention(model: torch.nn.Module, vocab: Vocab, sentence: str) -> list[list[float]]:
    """Per block, the last position's attention row averaged over heads (length t)."""
    rows = attention_rows(model, vocab, sentence)
    return [np.asarray(b)[:, -1, :].mean(axis=0).tolist() for b in rows["blocks"]]  # (h,t,t)→(t,)


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
            log.info("winograd %s %s: held-out forced choice %s", variant, kind,
                     fmt_ms([sc["forced"] for sc in scores], 3))
            models[kind] = {
                "steps": s.steps_a if variant == "A" else s.steps_b,
                "params": runs[0]["params"],
                "wall_s": [r["wall_s"] for r in runs],
                **{k: [sc[k] for sc in scores] for k in scores[0]},
            }
            if variant == "B" and kind == "two blocks":
                probe = _probe(trained, data)
        variants[variant] = {
            "n_train": len(data.train), "n_held": len(data.held),
            "held_pairs": len(data.held_pairs), "models": models,
        }
    return {"settings": settings_dict(s), "seeds": s.seeds, "variants": variants,
            "attention": probe}


def _probe(models: list[torch.nn.Module], data: WinogradData) -> dict[str, Any]:
    """The two-block model's head-averaged attention at the scored position, per seed."""
    vocab = data.vocab
    sentences = {adj: PROBE.format(adj=adj) for adj in PROBE_ADJECTIVES}
    per_seed = {adj: [scored_attention(m, vocab, text) for m in models]
                for adj, text in sentences.items()}  # adj -> seed -> block -> (t,)
    n_block = len(per_seed["tired"][0])
    blocks = []
    for b in range(n_block):
        rows = {adj: np.array([seed[b] for seed in per_seed[adj]]) for adj in sentences}
        diff = np.abs(rows["tired"] - rows["wet"])  # (seeds, t)
        blocks.append({**{adj: r.mean(axis=0).tolist() for adj, r in rows.items()},
                       "max_abs_diff": diff.max(axis=1).tolist(),
                       "noun_abs_diff": diff[:, NOUN_POSITIONS].max(axis=1).tolist()})
    animal, street = vocab.id("animal"), vocab.id("street")
    answer_prob = {}
    for adj, text in sentences.items():
        probs = []
        for m in models:
            x = torch.tensor([vocab.encode(text)], device=model_device(m))  # (1, 15)
            with torch.no_grad():
                probs.append(torch.softmax(m(x)[0, -1].float(), -1).cpu())  # (V,), last = scored
        answer_prob[adj] = {"animal": float(np.mean([float(p[animal]) for p in probs])),
                            "street": float(np.mean([float(p[street]) for p in probs]))}
    return {
        "model": "two blocks", "variant": "B",
        "sentences": sentences, "tokens": PROBE.split(),
        "pair_held_out": ("animal", "street") in data.held_pairs,
        "blocks": blocks, "answer_prob": answer_prob,
    }


# ---------------------------------------------------------------- claims


# Thresholds: "as well as" is within NEGLIGIBLE (5 points) of accuracy, "well above chance"
# WELL_ABOVE (20 points) above 0.5; "same" and "differs" are NEGLIGIBLE and CLEAR in attention
# weight. "Below chance" keeps a 10-point allowance: the held-out set is fixed (120 (pair,
# role) units, sampling noise ~0.05), a noise that seeds do not average away.
BELOW_CHANCE = 0.40  # "below chance": held-out forced choice under this
NEAR_PERFECT = 0.95  # "near perfect": above this
LEARNT = 0.90  # variant A's mean must also answer (not be equal to failing transformers)


def _forced(records: Records, variant: str, kind: str) -> list[float]:
    return records[NAME]["variants"][variant]["models"][kind]["forced"]


def _acc_part(variant: str, kind: str, margin: Any, rule: str, name: str) -> Part:
    def margins(records: Records) -> Margins:
        acc = _forced(records, variant, kind)
        return Margins([margin(a) for a in acc], {f"{kind}_{variant}": mean_std(acc)[0]})
    return Part(rule, margins, "accuracy", name)


def _mean_as_well(records: Records) -> Margins:
    mean, one, two = (_forced(records, "A", k) for k in MODELS)
    per = [m - max(o, t) + NEGLIGIBLE for m, o, t in zip(mean, one, two, strict=True)]
    return Margins(per, {"mean_A": mean_std(mean)[0], "one_block_A": mean_std(one)[0],
                         "two_blocks_A": mean_std(two)[0]})


def _attention_part(block: int, margin: Any, rule: str) -> Part:
    def margins(records: Records) -> Margins:
        blk = records[NAME]["attention"]["blocks"][block]
        noun = blk.get("noun_abs_diff")
        return Margins([margin(d) for d in blk["max_abs_diff"]],
                       {f"block{block + 1}_max_abs_diff": mean_std(blk["max_abs_diff"])[0],
                        f"block{block + 1}_noun_diff": None if noun is None else
                        mean_std(noun)[0]})
    return Part(rule, margins, "weight")


CLAIMS: list[Claim] = [
    claim("winograd.variant_a_mean_suffices",
          "Variant A: the uniform mean answers as well as a transformer", NAME,
          Part(f"held-out forced choice of the mean ≥ the better transformer (one or two "
               f"blocks, same seed) − {NEGLIGIBLE:g}", _mean_as_well, "accuracy", "as well"),
          _acc_part("A", "mean", lambda a: a - LEARNT, f"mean's forced choice ≥ {LEARNT:g}",
                    "answers")),
    claim("winograd.variant_b_needs_order",
          "Variant B: the mean is below chance, one block is well above it, two blocks "
          "near perfect", NAME,
          _acc_part("B", "mean", lambda a: BELOW_CHANCE - a,
                    f"mean's held-out forced choice < {BELOW_CHANCE:g}", "mean"),
          _acc_part("B", "one block", lambda a: a - (0.5 + WELL_ABOVE),
                    f"one block's > {0.5 + WELL_ABOVE:g}", "one block"),
          _acc_part("B", "two blocks", lambda a: a - NEAR_PERFECT,
                    f"two blocks' > {NEAR_PERFECT:g}", "two blocks")),
    claim("winograd.block1_attention_same",
          "Block 1's attention at the scored position is the same for `tired` and `wet`", NAME,
          _attention_part(0, lambda d: NEGLIGIBLE - d,
                          "two-block model, variant B: max over all 15 tokens of |row(tired) − "
                          f"row(wet)| of the head-averaged block-1 row < {NEGLIGIBLE:g} (the "
                          "largest difference on the two nouns alone is shown beside it)")),
    claim("winograd.block2_attention_differs",
          "Block 2's attention at the scored position differs between `tired` and `wet`", NAME,
          _attention_part(1, lambda d: d - CLEAR,
                          f"the same difference for block 2 > {CLEAR:g}")),
]

FIGURES = {
    "block{b}_max_abs_diff": Quantity(
        "largest difference of the block-{b} attention row between `tired` and `wet`",
        "mayor diferencia de la fila de atención del bloque {b} entre `tired` y `wet`"),
    "block{b}_noun_diff": Quantity("largest difference on the two nouns",
                                   "mayor diferencia en los dos sustantivos"),
    "{model}_{variant}": Quantity("held-out forced-choice accuracy of {model}, variant {variant}",
                                  "acierto de elección forzada de {model}, variante {variant}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
