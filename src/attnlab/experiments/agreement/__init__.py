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
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from attnlab.data.synthetic import VerbAgreementData, verb_agreement_dataset
from attnlab.kit.chapter import Chapter
from attnlab.kit.claims import (
    MOST,
    WELL_ABOVE,
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
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context, SentenceStream, attention_trace, model_device
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "agreement"
NEEDS_CORPUS = False
GROUPS = ("subject", "stems", "separators", "other pronouns")
PROBE = "I work , you work , he"  # the curriculum's sentence, cut at the predicting position
SHARE = 0.5  # "all of the routing": half or more of all heads' routing mass


@dataclass(frozen=True)
class Settings(Seeded):
    """The model and budget of the explorer's agreement probe."""

    d_model: int = 64  # residual width: ample for a 20-word language
    n_layer: int = 2  # blocks
    n_head: int = 4  # heads per block
    n_ctx: int = 18  # two sentences: the trainer draws random windows from the stream
    steps: int = 300  # AdamW updates
    lr: float = 3e-3  # peak rate, cosine-decayed after a warmup
    warmup_steps: int = 30  # linear warmup
    batch_size: int = 32  # windows per update
    n_clauses: int = 3  # clauses per sentence
    data_seed: int = 0  # which sentences are held out


PROFILES = {
    "full": Settings(),
    "quick": Settings(),
    "micro": Settings(d_model=16, steps=4, batch_size=8, seeds=1),
}

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


# -- measuring -------------------------------------------------------------------


def baseline(data: VerbAgreementData) -> float:
    """Accuracy of naming the right verb in the form more frequent in training (clauses 2+)."""
    forms = {}  # id -> True for an -s form
    for w in data.vocab.words:
        if w.endswith("s") and w[:-1] in data.vocab.words:
            forms[data.vocab.id(w)], forms[data.vocab.id(w[:-1])] = True, False
    verbs = [p + 1 for p in data.score_indices[1:]]  # sentence positions of the scored verbs
    train_s = np.mean([forms[i] for i in data.train[:, verbs].ravel()])
    held_s = np.array([forms[i] for i in data.held[:, verbs].ravel()])
    return float(np.mean(held_s == (train_s > 0.5)))


def group_masks(n_clauses: int) -> dict[int, dict[str, np.ndarray]]:
    """Per scored query position (a pronoun), a boolean mask over key positions per group."""
    out = {}
    for c in range(1, n_clauses):
        q = 3 * c  # the pronoun of clause c + 1
        keys = np.arange(q + 1)  # (s,)
        out[q] = {"subject": keys == q,
                  "stems": keys % 3 == 1,
                  "separators": keys % 3 == 2,
                  "other pronouns": (keys % 3 == 0) & (keys != q)}
    return out


@torch.no_grad()
def measure(model: torch.nn.Module, data: VerbAgreementData) -> dict[str, Any]:
    """Top-1 accuracy at the scored verbs of clauses 2+, and every head's group masses there."""
    device = model_device(model)
    rows = torch.from_numpy(data.held[:, :-1]).to(device)  # (n, L-1): inputs
    logits, weights = attention_trace(model, rows)  # (n, t, V), L × (n, h, t, s)
    logits = logits.float().cpu().numpy()
    scored = list(data.score_indices[1:])
    answers = data.held[:, [q + 1 for q in scored]]  # (n, clauses - 1)
    top1 = float(np.mean(logits[:, scored].argmax(-1) == answers))
    masks = group_masks(data.held.shape[1] // 3)
    heads = []
    for b, w in enumerate(weights):
        w = w.float().cpu().numpy()  # (n, h, t, s)
        for h in range(w.shape[1]):
            mass = {g: float(np.mean([w[:, h, q, : q + 1][:, m[g]].sum(-1).mean()
                                      for q, m in masks.items()])) for g in GROUPS}
            heads.append({"block": b + 1, "head": h + 1, **mass})
    return {"top1": top1, "heads": heads}


def probe_rows(model: torch.nn.Module, data: VerbAgreementData) -> list[list[float]]:
    """Every head's attention row at the last word of ``PROBE`` (block-major order)."""
    device = model_device(model)
    ids = torch.tensor([data.vocab.encode(PROBE)], device=device)  # (1, t)
    return [w[0, h, -1].float().cpu().tolist() for w in attention_trace(model, ids)[1]
            for h in range(w.shape[1])]


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


def subject_and_stems(heads: list[dict]) -> list[float]:
    """Each head's weight on the subject pronoun and the verb stems together."""
    return [h["subject"] + h["stems"] for h in heads]


def probe_subject_and_stems(record: dict[str, Any]) -> tuple[str, float]:
    """On the curriculum's own sentence (seed 0): the head with the most weight at ``he`` on
    ``he`` and both stems (positions 6, 4 and 1), and that weight."""
    tokens = record["probe"]["tokens"]
    keys = [i for i, t in enumerate(tokens) if i == len(tokens) - 1 or i % 3 == 1]
    masses = [sum(row[i] for i in keys) for row in record["probe"]["rows"]]
    best = int(np.argmax(masses))
    n_head = record["settings"]["n_head"]
    return f"block {best // n_head + 1} head {best % n_head + 1}", float(masses[best])


def routing_shares(heads: list[dict]) -> list[float]:
    """Each head's share of all heads' routing mass (weight on the subject and the stems)."""
    routing = subject_and_stems(heads)
    total = sum(routing)
    return [r / total if total > 0 else 0.0 for r in routing]


# -- report ----------------------------------------------------------------------


def table(record: dict[str, Any]) -> str:
    s = record["settings"]
    acc = markdown_table(
        ["what", "held-out top-1 (clauses 2+)"],
        [["model", fmt_ms(record["top1"], 3)], ["majority-form baseline",
                                                  f"{record['baseline']:.3f}"]])
    ranked = [sorted(heads, key=lambda h: -h["subject"]) for heads in record["heads"]]
    rows = []
    for k in range(len(ranked[0])):
        first = ranked[0][k]
        rows.append([k + 1, f"block {first['block']} head {first['head']}"]
                    + [fmt_ms([heads[k][g] for heads in ranked], 3) for g in GROUPS])
    heads = markdown_table(["rank by subject weight", "in seed 0"] + list(GROUPS), rows)
    shares = [max(routing_shares(h)) for h in record["heads"]]
    both = [max(subject_and_stems(h)) for h in record["heads"]]
    head, mass = probe_subject_and_stems(record)
    return (
        f"{s['n_layer']} blocks of {s['n_head']} heads, width {s['d_model']}, {s['steps']} "
        f"steps; {record['n_held']} held-out sentences; {record['seeds']} seed(s), mean ± std."
        f"\n\n{acc}\nAttention of the predicting position (the subject pronoun of clauses 2 "
        "and 3) by group of keys, mean over held-out sentences; heads ranked within each seed "
        f"by their weight on the subject:\n\n{heads}\nLargest share of all heads' routing "
        f"mass (subject + stems) held by one head: {fmt_ms(shares, 3)}.\n\n"
        f"Largest weight of one head on the subject and the stems together (the curriculum's "
        f"picture): {fmt_ms(both, 3)}; on “{PROBE} ___” itself (seed 0), {head} puts "
        f"{mass:.3f} of the row at `he` on `he` and both `work`s.\n"
    )


def figure(record: dict[str, Any]) -> Figure:
    """Seed 0: every head's row at `he` in the probe sentence, and its group masses."""
    from matplotlib.figure import Figure

    probe = record["probe"]
    heads = record["heads"][0]
    names = [f"b{h['block']}h{h['head']}" for h in heads]
    fig = Figure(figsize=(11, 0.45 * len(names) + 2))
    left, right = fig.subplots(1, 2, width_ratios=(1.3, 1))
    image = left.imshow(np.asarray(probe["rows"]), vmin=0, vmax=1, cmap="viridis",
                        aspect="auto")
    left.set_xticks(range(len(probe["tokens"])), probe["tokens"])
    left.set_yticks(range(len(names)), names)
    left.set_title(f"attention of `he` in “{PROBE} ___” (seed 0)")
    fig.colorbar(image, ax=left, fraction=0.04)
    start = np.zeros(len(names))
    for g in GROUPS:
        values = np.array([h[g] for h in heads])
        right.barh(range(len(names)), values, left=start, label=g)
        start += values
    right.set_yticks(range(len(names)), names)
    right.invert_yaxis()  # the first head on top, as in the rows on the left
    right.axvline(MOST, color="k", lw=0.8, ls=":")
    right.set_xlim(0, 1)
    right.set_title("weight at the predicting position, held-out mean (seed 0)")
    right.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4)
    fig.tight_layout()
    return fig


# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------


def _accuracy(records: Records) -> Margins:
    rec = records[NAME]
    bar = rec["baseline"] + WELL_ABOVE
    return Margins([a - bar for a in rec["top1"]],
                   {"top1": mean_std(rec["top1"])[0], "baseline": rec["baseline"]})


def learned_premise(consequence: str, consequence_es: str) -> Premise:
    """The premise that the model learned the agreement (the rule of
    ``agreement.predicts_form``; added to the head claims as their rule version 2, before
    any verdict under it): a claim about the heads that route the subject needs a model
    that routes it."""
    return Premise(
        f"held-out top-1 ≥ majority-form baseline + {WELL_ABOVE:g}", _accuracy,
        "the model has not learned the agreement (held-out top-1 {top1:.2f} against a "
        "baseline of {baseline:.2f}): " + consequence,
        "el modelo no ha aprendido la concordancia (top-1 {top1:.2f} frente a una base de "
        "{baseline:.2f}): " + consequence_es,
        f"top-1 ≥ base de la forma mayoritaria + {WELL_ABOVE:g}")


LEARNED = learned_premise("its heads have no agreement to route",
                          "sus cabezas no tienen ninguna concordancia que encaminar")


def _subject_head(records: Records) -> Margins:
    best = [max(h["subject"] for h in heads) for heads in records[NAME]["heads"]]
    return Margins([b - MOST for b in best], {"largest_subject_weight": mean_std(best)[0]})


def _subject_and_stems(records: Records) -> Margins:
    best = [max(subject_and_stems(heads)) for heads in records[NAME]["heads"]]
    return Margins([b - MOST for b in best],
                   {"largest_subject_and_stems_weight": mean_std(best)[0]})


def _partial(records: Records) -> Margins:
    shares = [max(routing_shares(heads)) for heads in records[NAME]["heads"]]
    return Margins([SHARE - s for s in shares], {"largest_routing_share": mean_std(shares)[0]})


CLAIMS: list[Claim] = [
    claim("agreement.predicts_form",
          "A small model trained on the verb-agreement language predicts the agreeing form.",
          NAME, Part(f"held-out top-1 at the verbs of clauses 2+ ≥ majority-form baseline + "
                     f"{WELL_ABOVE:g}", _accuracy, "accuracy")),
    claim("agreement.subject_head",
          "Some head puts most of its weight at the predicting position on the subject "
          "pronoun.", NAME,
          Part(f"largest weight of any head on the subject pronoun > {MOST:g}", _subject_head,
               "weight"), premises=[LEARNED],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
    claim("agreement.subject_and_stems_head",
          "The curriculum's verb-form head: at the position that predicts the verb, some head "
          "puts most of its mass on the subject pronoun and the verb stem together (positions "
          "6 and 4 of `I work , you work , he ___`), with maybe some on the earlier stem.", NAME,
          Part(f"largest weight of any head on the subject pronoun and the verb stems together "
               f"> {MOST:g}", _subject_and_stems, "weight"), premises=[LEARNED],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
    claim("agreement.partial_specialisation",
          "Head specialisation is partial: no single head does all the routing.", NAME,
          Part(f"largest share of all heads' weight on the subject and the stems held by one "
               f"head < {SHARE:g}", _partial, "share"), premises=[LEARNED],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
]

FIGURES = {
    "top1": Quantity("held-out top-1 accuracy at the verbs",
                     "acierto top-1 de validación en los verbos"),
    "baseline": Quantity("majority-form baseline", "base de la forma mayoritaria"),
    "largest_subject_weight": Quantity("largest weight of one head on the subject",
                                       "mayor peso de una cabeza en el sujeto"),
    "largest_subject_and_stems_weight": Quantity(
        "largest weight of one head on the subject and the verb stems",
        "mayor peso de una cabeza en el sujeto y las raíces verbales"),
    "largest_routing_share": Quantity("largest share of the routing held by one head",
                                      "mayor proporción del encaminamiento en una sola cabeza"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

__all__ = ["CLAIMS", "GROUPS", "NAME", "PROFILES", "Settings", "analyse", "baseline",
           "figure", "group_masks", "measure", "plan", "probe_subject_and_stems",
           "subject_and_stems", "table"]

# -- the chapter's part (attnlab.kit.chapter) ------------------------------------------------------
CHAPTER = Chapter(budget="the curriculum's small model (no published figure); quick is full")


EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
