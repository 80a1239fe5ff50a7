"""The claims of the verb-agreement experiment, their rules and thresholds (the face's
docstring says each in words). They read the record of ``attnlab.experiments.agreement``:
``top1`` and ``baseline``, and per seed every head's weight per group of keys (``heads``)."""

from __future__ import annotations

from attnlab.experiments.agreement.measure import routing_shares, subject_and_stems
from attnlab.experiments.agreement.settings import NAME
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
from attnlab.kit.tables import mean_std

SHARE = 0.5  # "all of the routing": half or more of all heads' routing mass


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
