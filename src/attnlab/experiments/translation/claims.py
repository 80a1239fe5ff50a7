"""The claims of "Where attention was born", their rules and thresholds (docs/experiments.md,
"Where attention was born").

Written and committed before any measured verdict of them existed, and never moved since;
each threshold is a word of the claim put on the claims module's one scale (``CLEAR``,
``WELL_ABOVE``, ``MOST``), with its reason beside it. They read the record of
``attnlab.experiments.translation``:

``bands``       the held-out bands of source lengths, ascending, ``[lo, hi]`` each;
``train_band``  ``[lo, hi]``, the source lengths of the training sentences: a band inside
                it is "within the trained lengths", one past its end "beyond";
``blind``       per band, the token accuracy of a decoder that never reads the source;
``models``      per model (``rnn``, ``bahdanau``, ``transformer``): ``token_acc`` (per seed,
                per band: teacher-forced accuracy of each target word) and, for the two with
                attention, ``alignment`` (per seed, per band: the fraction of target words
                whose largest attention weight is on their gold source word).

The quality the claims read is the per-word accuracy, not whole sentences right: a sentence
of more words has more chances to fail even for a model that translates every word equally
well, so a per-sentence measure falls with length for any model, and only a per-word one
can hold. Margins pair models that share a seed (the same data, the same batches).
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.experiments.translation.measure import inside
from attnlab.experiments.translation.settings import NAME
from attnlab.kit.claims import (
    CLEAR,
    MOST,
    WELL_ABOVE,
    Claim,
    Margins,
    Part,
    Premise,
    Records,
    Skip,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity
from attnlab.kit.tables import mean_std

# "Falls with source length": the model's token accuracy at the longest band inside the
# trained lengths is at least CLEAR (10 points) below its accuracy at the shortest band.
# "Holds": less than CLEAR below it. "Beyond the trained lengths ... falls clearly": the
# accuracy at the longest band past them is at least CLEAR below the accuracy at the longest
# band inside them.
FALL = CLEAR
# "Matches the gold alignment": the largest weight is on the gold source word for most
# (more than half: MOST) of the target words, over the bands inside the trained lengths
# (chance, for a sentence of n words, is about 1/n).
ALIGNED = MOST
# Premise: a claim about how a model's accuracy changes with length can be tested only on a
# model that learned to translate where it is easiest, at the shortest band: its token
# accuracy there "well above" (WELL_ABOVE, 20 points) the accuracy of a decoder that never
# reads the source (``blind``).
LEARNED_OVER_BLIND = WELL_ABOVE

LABEL = {"rnn": "the model without attention", "bahdanau": "the additive-attention model",
         "transformer": "the transformer"}
LABEL_ES = {"rnn": "el modelo sin atención", "bahdanau": "el modelo de atención aditiva",
            "transformer": "el transformer"}


def _record(records: Records) -> dict:
    return records[NAME]


def _acc(records: Records, model: str) -> list[list[float]]:
    return _record(records)["models"][model]["token_acc"]


def longest_inside(records: Records) -> int:
    """The index of the longest band inside the trained lengths."""
    rec = _record(records)
    return max(inside(rec["bands"], rec["train_band"]))


def _drop(model: str, sign: float, start: Callable[[Records], int],
          end: Callable[[Records], int], key: str) -> Callable[[Records], Margins]:
    """Per seed: sign · (accuracy at band ``start`` − accuracy at band ``end`` − FALL), so a
    fall of at least FALL is a positive margin for sign +1 and a negative one for −1."""

    def margins(records: Records) -> Margins:
        acc, a, b = _acc(records, model), start(records), end(records)
        return Margins([sign * (x[a] - x[b] - FALL) for x in acc],
                       {f"{model}_acc_{key[0]}": mean_std([x[a] for x in acc])[0],
                        f"{model}_acc_{key[1]}": mean_std([x[b] for x in acc])[0]})

    return margins


def _shortest(records: Records) -> int:
    return 0


def _longest(records: Records) -> int:
    return len(_record(records)["bands"]) - 1


def _longest_beyond(records: Records) -> int:
    """The index of the longest band, which must lie beyond the trained lengths: a record
    whose every band is inside them has nothing to say past them (skipped, not "not held")."""
    rec, last = _record(records), _longest(records)
    if last in inside(rec["bands"], rec["train_band"]):
        raise Skip("no length band lies beyond the trained lengths")
    return last


def _aligned(records: Records) -> Margins:
    rec = _record(records)
    within = inside(rec["bands"], rec["train_band"])
    per_seed = [sum(a[i] for i in within) / len(within)
                for a in rec["models"]["bahdanau"]["alignment"]]
    return Margins([a - ALIGNED for a in per_seed], {"alignment": mean_std(per_seed)[0]})


def _learned(model: str) -> Callable[[Records], Margins]:
    """Per seed: the model's accuracy at the shortest band, less the blind decoder's + 0.2."""

    def margins(records: Records) -> Margins:
        acc, blind = _acc(records, model), _record(records)["blind"][0]
        bar = blind + LEARNED_OVER_BLIND
        return Margins([a[0] - bar for a in acc],
                       {"band": "–".join(map(str, _record(records)["bands"][0])),
                        "acc": mean_std([a[0] for a in acc])[0], "blind": blind, "bar": bar})

    return margins


def learned_premise(model: str) -> Premise:
    """The premise that ``model`` learned to translate at the shortest band."""
    who, who_es = LABEL[model], LABEL_ES[model]
    return Premise(
        f"{who}'s token accuracy at the shortest band ≥ the blind decoder's + "
        f"{LEARNED_OVER_BLIND:g}",
        _learned(model),
        f"{who} has not learned to translate even the shortest sentences ({{band}} words: "
        f"token accuracy {{acc:.2f}}, a decoder that never reads the source {{blind:.2f}}, "
        f"learning needs {{bar:.2f}}): how its accuracy changes with length says nothing",
        f"{who_es} no ha aprendido a traducir ni las frases más cortas ({{band}} palabras: "
        f"acierto por palabra {{acc:.2f}}, un decodificador que nunca lee el origen "
        f"{{blind:.2f}}, aprender exige {{bar:.2f}}): cómo cambia su acierto con la longitud "
        f"no dice nada",
        f"acierto por palabra de {who_es} en la banda más corta ≥ el del decodificador "
        f"ciego + {LEARNED_OVER_BLIND:g}")


CLAIMS: list[Claim] = [
    claim("translation.rnn_falls",
          "Without attention, translation gets worse as the source grows, within the lengths "
          "the model trained on: the whole source must pass through one vector.", NAME,
          Part(f"token accuracy(shortest band) − token accuracy(longest band inside the "
               f"trained lengths) ≥ {FALL:g}",
               _drop("rnn", 1.0, _shortest, longest_inside, ("shortest", "longest_trained")),
               "accuracy"),
          premises=[learned_premise("rnn")]),
    claim("translation.attention_holds",
          "With attention, translation holds as the source grows, within the lengths the "
          "model trained on: the additive model and the transformer alike.", NAME,
          Part(f"additive model: token accuracy(shortest band) − token accuracy(longest band "
               f"inside the trained lengths) < {FALL:g}",
               _drop("bahdanau", -1.0, _shortest, longest_inside,
                     ("shortest", "longest_trained")), "accuracy", "additive"),
          Part(f"transformer: token accuracy(shortest band) − token accuracy(longest band "
               f"inside the trained lengths) < {FALL:g}",
               _drop("transformer", -1.0, _shortest, longest_inside,
                     ("shortest", "longest_trained")), "accuracy", "transformer"),
          premises=[learned_premise("bahdanau"), learned_premise("transformer")]),
    claim("translation.additive_alignment",
          "The additive model's attention finds the alignment: for most target words its "
          "largest weight is on the source word the word translates.", NAME,
          Part(f"fraction of target words whose largest weight is on the gold source word, "
               f"over the bands inside the trained lengths > {ALIGNED:g}", _aligned,
               "fraction"),
          premises=[learned_premise("bahdanau")]),
    claim("translation.attention_beyond_trained",
          "Attention does not carry a model past the lengths it trained on: beyond them, "
          "each attention model's accuracy falls clearly below its accuracy at the longest "
          "trained lengths.", NAME,
          Part(f"additive model: token accuracy(longest band inside the trained lengths) − "
               f"token accuracy(longest band beyond them) ≥ {FALL:g}",
               _drop("bahdanau", 1.0, longest_inside, _longest_beyond,
                     ("longest_trained", "longest")),
               "accuracy", "additive"),
          Part(f"transformer: token accuracy(longest band inside the trained lengths) − "
               f"token accuracy(longest band beyond them) ≥ {FALL:g}",
               _drop("transformer", 1.0, longest_inside, _longest_beyond,
                     ("longest_trained", "longest")), "accuracy", "transformer"),
          premises=[learned_premise("bahdanau"), learned_premise("transformer")]),
]

# the three models as the claims' numbers name them (English, Spanish)
MODEL_WORDS = {"rnn": ("the GRU without attention", "la GRU sin atención"),
               "bahdanau": ("the additive model", "el modelo aditivo"),
               "transformer": ("the transformer", "el transformer")}
FIGURES = {
    "alignment": Quantity("fraction of target words whose largest weight is on the gold "
                          "source word (additive model)",
                          "fracción de palabras de destino cuyo mayor peso está en la palabra "
                          "de origen correcta (modelo aditivo)"),
    **{f"{m}_acc_{band}": Quantity(f"token accuracy at {what}, {en}", f"acierto por palabra "
                                   f"en {que}, {es}")
       for m, (en, es) in MODEL_WORDS.items()
       for band, what, que in (
           ("shortest", "the shortest band", "la banda más corta"),
           ("longest_trained", "the longest band inside the trained lengths",
            "la banda más larga dentro de las longitudes entrenadas"),
           ("longest", "the longest band (beyond the trained lengths)",
            "la banda más larga (más allá de las longitudes entrenadas)"))},
}
CLAIMS = with_figures(CLAIMS, FIGURES)
