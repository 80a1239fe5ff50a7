"""The claims of "Why attention replaced recurrence", their rules and thresholds
(docs/experiments.md, "Why attention replaced recurrence").

Written and committed before any measured verdict of them existed, and never
moved since; each threshold is a word of the claim put on the claims module's one
scale (``NEGLIGIBLE`` < ``CLEAR`` < ``FAR``, ``WELL_ABOVE``), with its reason
beside it. They read the record of ``attnlab.experiments.recurrence``:

``reach``      ``window`` W and per model (``rnn``, ``lstm``, ``attention``)
               ``trained`` / ``init``: per seed, ‖∂ℓ_T/∂x_{T−k}‖ for k = 1 … W − 1
               (held-out mean);
``agreement``  ``distances`` (ascending), ``trained_d`` (the least and greatest distance
               of the training sentences; a held-out distance may lie beyond it) and
               per model (``rnn``, ``lstm``, ``attention`` with RoPE, ``alibi``: the same
               attention with ALiBi) ``acc``: per seed, the forced-choice accuracy at
               each distance;
``steps``      ``T`` (ascending) and per model the dependent steps counted at each T;
``timing``     ``T`` and per model ``rounds``: per round of the interleaved benchmark,
               the training-step time per token at each T (seconds).

Margins pair models that share a seed (same data order, same held-out windows);
the benchmark pairs models timed in the same round.

One distance rule for every model: a claim about how a model's agreement changes with d
(attention's "does not matter", the RNN's fall, the LSTM's hold) reads the held-out
distances inside the trained range only, the same ones for each model; what a model does
at the distances beyond every training sentence is a claim of its own, stated as that,
under one bar (``HOLDS``) for every model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attnlab.experiments.recurrence.margins import (
    CHANCE,
    HOLDS,
    attention_distance_free,
    edge_premise,
    either_holds,
    holds_beyond,
    holds_nowhere_beyond,
    learned_premise,
    lstm_holds_longer,
    rnn_at_chance,
    rnn_falls,
)
from attnlab.experiments.recurrence.settings import NAME
from attnlab.kit.claims import (
    CLEAR,
    NEGLIGIBLE,
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
from attnlab.timing.exponents import line_fit, loglog_exponent

# Gradient reach. "Decays geometrically": the reach falls by a constant factor r per step.
# Fitted as ln‖g_k‖ = a + k·ln r by least squares over k = 1 … W − 1. The RNN's decay must be
# a real one, at least CLEAR (10%) lost per step (r ≤ 0.9, over a window of 128 more than five
# decades), and geometric in shape: the straight line in k fits ln‖g_k‖ better than a power
# law (a straight line in ln k) does.
RNN_MAX_RATE = 1 - CLEAR
# "Attention's shows no geometric decay over the window": the fitted geometric decay, carried
# over the whole window, loses less than one decade (a factor of ten) between k = 1 and
# k = W − 1; a recurrence at the RNN's bound loses more than five.
ATTENTION_MAX_DECADES = 1.0
# Dependent steps. "Grow with T": the exponent of steps against T (log-log least squares over
# T = 32 … 1024) is at least 1 − CLEAR for each recurrence (one step per token, T of them, up to
# a constant); "do not": attention's exponent is at most NEGLIGIBLE.
GROWS = 1 - CLEAR
FLAT = NEGLIGIBLE


def geometric_fit(norms: Sequence[float]) -> dict[str, float]:
    """Fit ln‖g_k‖ = a + k·ln r over k = 1 … len(norms): the rate r per step, the decades lost
    over the window by that fit, and R² of the geometric line and of a power law (ln k).

    >>> fit = geometric_fit([0.5 ** k for k in range(1, 9)])
    >>> round(fit["rate"], 6), round(fit["r2_geometric"], 6), fit["r2_geometric"] > fit["r2_power"]
    (0.5, 1.0, True)
    """
    y = np.log(np.maximum(np.asarray(norms, dtype=np.float64), 1e-300))
    k = np.arange(1, len(y) + 1, dtype=np.float64)
    slope, r2 = line_fit(k, y)
    _, r2_power = line_fit(np.log(k), y)
    return {"rate": math.exp(slope), "decades": slope * (len(y) - 1) / math.log(10),
            "r2_geometric": r2, "r2_power": r2_power}


def _fits(records: Records, model: str) -> list[dict[str, float]]:
    return [geometric_fit(n) for n in records[NAME]["reach"][model]["trained"]]


def _rnn_rate(records: Records) -> Margins:
    rates = [f["rate"] for f in _fits(records, "rnn")]
    return Margins([RNN_MAX_RATE - r for r in rates], {"rnn_rate": mean_std(rates)[0]})


def _rnn_shape(records: Records) -> Margins:
    fits = _fits(records, "rnn")
    return Margins([f["r2_geometric"] - f["r2_power"] for f in fits],
                   {"r2_geometric": mean_std([f["r2_geometric"] for f in fits])[0],
                    "r2_power": mean_std([f["r2_power"] for f in fits])[0]})


def _lstm_slower(records: Records) -> Margins:
    rnn = [f["rate"] for f in _fits(records, "rnn")]
    lstm = [f["rate"] for f in _fits(records, "lstm")]
    return Margins([b - a for a, b in zip(rnn, lstm, strict=True)],
                   {"rnn_rate": mean_std(rnn)[0], "lstm_rate": mean_std(lstm)[0]})


def _attention_flat_reach(records: Records) -> Margins:
    decades = [f["decades"] for f in _fits(records, "attention")]
    return Margins([ATTENTION_MAX_DECADES + d for d in decades],
                   {"attention_rate": mean_std([f["rate"] for f in _fits(records, "attention")])[0],
                    "attention_decades_over_window": mean_std(decades)[0]})


def _steps_exponents(records: Records) -> dict[str, float]:
    steps = records[NAME]["steps"]
    return {m: loglog_exponent(steps["T"], steps[m]) for m in ("rnn", "lstm", "attention")}


def _recurrence_grows(records: Records) -> Margins:
    e = _steps_exponents(records)
    return Margins([min(e["rnn"], e["lstm"]) - GROWS],
                   {"rnn_exponent": e["rnn"], "lstm_exponent": e["lstm"]})


def _attention_constant(records: Records) -> Margins:
    e = _steps_exponents(records)
    return Margins([FLAT - e["attention"]], {"attention_exponent": e["attention"]})


def _attention_cheaper(records: Records) -> Margins:
    timing = records[NAME]["timing"]
    lstm, attention = timing["lstm"]["rounds"], timing["attention"]["rounds"]
    margins = [min(math.log(a / b) for a, b in zip(rl, ra, strict=True))
               for rl, ra in zip(lstm, attention, strict=True)]
    ratios = [min(lstm_t) / min(att_t) for lstm_t, att_t in
              zip(zip(*lstm, strict=True), zip(*attention, strict=True), strict=True)]
    return Margins(margins, {"smallest_min_ratio_lstm_over_attention": min(ratios),
                             "largest_min_ratio_lstm_over_attention": max(ratios)})


CLAIMS: list[Claim] = [
    claim("recurrence.rnn_reach_geometric",
          "The RNN's gradient reach ‖∂ℓ_T/∂x_{T−k}‖ decays geometrically with k.", NAME,
          Part(f"fitted per-step factor r ≤ {RNN_MAX_RATE:g} (trained, held-out windows)",
               _rnn_rate, "per step", "rate"),
          Part("R² of ln‖g_k‖ linear in k above R² of ln‖g_k‖ linear in ln k (geometric, "
               "not a power law)", _rnn_shape, "R²", "shape")),
    claim("recurrence.lstm_reach_slower",
          "The LSTM's gradient reach decays more slowly than the RNN's.", NAME,
          Part("fitted per-step factor r of the LSTM above the RNN's (same seed)", _lstm_slower,
               "per step")),
    claim("recurrence.attention_reach_flat",
          "Attention's gradient reach shows no geometric decay over the window.", NAME,
          Part(f"the fitted geometric decay over the whole window loses less than "
               f"{ATTENTION_MAX_DECADES:g} decade", _attention_flat_reach, "decades")),
    claim("recurrence.attention_distance_free",
          "Attention's agreement accuracy at the largest distance it trained on is not clearly "
          "below its accuracy at the smallest (\"the distance does not matter\").", NAME,
          Part(f"accuracy(smallest d) − accuracy(largest trained d) < {CLEAR:g}",
               attention_distance_free, "accuracy"),
          premises=[learned_premise("attention", "attention", "la atención",
                                    "a distance cannot matter to a model that never learned "
                                    "the agreement",
                                    "la distancia no puede importar a un modelo que nunca "
                                    "aprendió la concordancia")],
          version=4),  # v2: the premise (abfd38c); v3: the largest trained d (f662472);
    # v4: the premise per seed
    claim("recurrence.rnn_falls_to_chance",
          "The RNN's agreement accuracy falls toward chance as d grows (over the distances it "
          "trained on).", NAME,
          Part(f"accuracy(smallest d) − accuracy(largest trained d) ≥ {CLEAR:g}", rnn_falls,
               "accuracy", "falls"),
          Part(f"accuracy(largest trained d) ≤ chance + {CLEAR:g} = {CHANCE + CLEAR:g}",
               rnn_at_chance, "accuracy", "to chance"),
          premises=[learned_premise("rnn", "the RNN", "la RNN",
                                    "it is at chance already, so there is nothing to fall from",
                                    "ya está en el azar, así que no hay nada desde donde "
                                    "caer")],
          version=4),  # v2: the premise (abfd38c); v3: the premise per seed; v4: trained d
    claim("recurrence.lstm_holds_longer",
          "The LSTM holds the agreement to longer distances than the RNN (over the distances "
          "they trained on).", NAME,
          Part(f"largest trained d up to which accuracy ≥ {HOLDS:g} at every distance: LSTM's "
               "> RNN's (same seed)", lstm_holds_longer, "words"),
          premises=[Premise(
              f"the RNN's or the LSTM's accuracy at the smallest d ≥ {HOLDS:g}", either_holds,
              "neither model holds the agreement even at the smallest distance, d = {d} "
              "(accuracy: RNN {rnn:.2f}, LSTM {lstm:.2f}; holding needs {bar:g}): there is no "
              "distance to compare",
              "ninguno de los dos modelos mantiene la concordancia ni a la distancia más "
              "corta, d = {d} (acierto: RNN {rnn:.2f}, LSTM {lstm:.2f}; mantenerla exige "
              "{bar:g}): no hay distancia que comparar",
              f"acierto de la RNN o de la LSTM a la d más corta ≥ {HOLDS:g}")],
          version=4),  # v2: the premise (abfd38c); v3: the premise per seed; v4: trained d
    claim("recurrence.attention_stops_at_training",
          "Attention with RoPE (its position scheme here) does not carry the agreement past the "
          "distances it trained on: beyond them it holds it at no distance.", NAME,
          Part(f"accuracy < {HOLDS:g} at every held-out d beyond the trained range",
               holds_nowhere_beyond("attention"), "accuracy"),
          premises=[edge_premise("attention", "attention", "la atención")]),
    claim("recurrence.lstm_holds_past_training",
          "The LSTM carries the agreement past the distances it trained on: beyond them it "
          "holds it at every distance.", NAME,
          Part(f"accuracy ≥ {HOLDS:g} at every held-out d beyond the trained range",
               holds_beyond("lstm"), "accuracy"),
          premises=[edge_premise("lstm", "the LSTM", "la LSTM")]),
    claim("recurrence.alibi_holds_past_training",
          "With ALiBi in place of RoPE (the same attention model otherwise: the same sentences, "
          "parameters and budget), attention carries the agreement past the distances it "
          "trained on: beyond them it holds it at every distance.", NAME,
          Part(f"accuracy ≥ {HOLDS:g} at every held-out d beyond the trained range",
               holds_beyond("alibi"), "accuracy"),
          premises=[edge_premise("alibi", "the ALiBi attention", "la atención con ALiBi")]),
    claim("recurrence.sequential_steps",
          "The recurrence's dependent sequential steps grow with T; attention's do not.", NAME,
          Part(f"exponent of counted steps against T ≥ {GROWS:g} for the RNN and the LSTM",
               _recurrence_grows, "exponent", "recurrences"),
          Part(f"exponent of attention's counted steps against T ≤ {FLAT:g}",
               _attention_constant, "exponent", "attention"),
          trained=False),
    claim("recurrence.attention_step_cheaper_here",
          "On the machine that made this report, a training step of attention costs less time "
          "per token than the LSTM's at every T from 32 to 1,024: its expensive step is a "
          "matrix multiply, the LSTM's is T small steps in a row (a CPU of few cores is the "
          "weak case for the parallelism argument, which needs many cores to spread "
          "attention's T×T matrix multiplies over).", NAME,
          Part("ln(LSTM time per token / attention time per token) > 0 at every T, per round "
               "of the interleaved benchmark (decided over rounds as over seeds)",
               _attention_cheaper, "ln ratio"), over="rounds"),
]

FIGURES = {
    "r2_geometric": Quantity("R² of the geometric fit (ln‖g_k‖ linear in k)",
                             "R² del ajuste geométrico (ln‖g_k‖ lineal en k)"),
    "r2_power": Quantity("R² of a power law (linear in ln k)",
                         "R² de una ley de potencia (lineal en ln k)"),
    "attention_decades_over_window": Quantity(
        "decades attention's fitted decay loses over the window",
        "órdenes de magnitud que pierde en la ventana el decaimiento ajustado de la atención"),
    "acc_smallest_d": Quantity("accuracy at the smallest distance",
                               "acierto a la distancia más corta"),
    # read by the RNN's claim up to its rule version 3: labels the verdicts recorded under it
    "acc_largest_d": Quantity("accuracy at the largest distance",
                              "acierto a la distancia más larga"),
    "acc_largest_trained_d": Quantity("accuracy at the largest distance of the training "
                                      "sentences",
                                      "acierto a la mayor distancia de las frases de "
                                      "entrenamiento"),
    "acc_lowest_beyond": Quantity("lowest accuracy at the distances beyond the training",
                                  "menor acierto a las distancias más allá del entrenamiento"),
    "acc_highest_beyond": Quantity("highest accuracy at the distances beyond the training",
                                   "mayor acierto a las distancias más allá del "
                                   "entrenamiento"),
    "smallest_min_ratio_lstm_over_attention": Quantity(
        "LSTM ÷ attention time per token, smallest over T",
        "tiempo por token de la LSTM ÷ de la atención, el menor sobre T"),
    "largest_min_ratio_lstm_over_attention": Quantity(
        "LSTM ÷ attention time per token, largest over T",
        "tiempo por token de la LSTM ÷ de la atención, el mayor sobre T"),
    "{m}_rate": Quantity("fitted gradient factor per step, {m}",
                         "factor por paso ajustado del gradiente, {m}"),
    "{m}_holds_to_d": Quantity("largest distance {m} holds the agreement to",
                               "mayor distancia a la que {m} mantiene la concordancia",
                               "words", "palabras"),
    "{m}_exponent": Quantity("exponent of the dependent steps against T, {m}",
                             "exponente de los pasos dependientes frente a T, {m}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
