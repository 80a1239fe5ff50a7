"""The claims of "Position", their rules and thresholds (docs/experiments.md, "Claims and
verdicts"), and how they read the record of ``attnlab.experiments.position``: per scheme and
seed, held-out perplexity at each evaluation length, and the permutation checks."""

from __future__ import annotations

from typing import Any

from attnlab.experiments.position.settings import NAME
from attnlab.kit.claims import Claim, Margins, Part, Records, Skip, per_seed, with_figures
from attnlab.kit.per_seed import Ratio, claim_for, ratio_part
from attnlab.kit.quantities import Quantity
from attnlab.kit.tables import mean_std

# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# One scale for the words, on r(n) = ppl at n / ppl at the trained length, per seed:
# "gets better": r < 1; "degrades gently": 1 < r(4×) ≤ GENTLE; "fails to extrapolate": r(4×) >
# GENTLE (the complement of gentle, so no ratio is both); "falls off a cliff": already at 2×,
# r(2×) > GENTLE (worse at twice the length than a gentle scheme is at four times).

GENTLE = 1.5  # the most a gentle degradation may cost at 4× the trained length


def _lengths(records: Records) -> tuple[dict, int, int, int]:
    rec = records[NAME]
    s = rec["settings"]
    longer = sorted(n for n in s["eval_lengths"] if n > s["n_ctx"])
    if not longer:
        raise ValueError("the position record has no evaluation length beyond the trained one")
    return rec, s["n_ctx"], longer[0], longer[-1]


def _seeds(rec: dict, scheme: str, n: int) -> list[float]:
    for r in rec["rows"]:
        if r["scheme"] == scheme:
            return r["ppl"][str(n)]
    raise Skip(f"this profile trains no {scheme} model")


def _ratio_part(scheme: str, which: str, margin: Any, rule: str, name: str = "") -> Part:
    """A part on scheme's per-seed ratio ``which``: "mid" = r(2×), "far" = r(4×),
    "step" = ppl(4×) / ppl(2×)."""
    def read(records: Records) -> Ratio:
        rec, t, mid, far = _lengths(records)
        num, den = {"mid": (mid, t), "far": (far, t), "step": (far, mid)}[which]
        a, b = _seeds(rec, scheme, num), _seeds(rec, scheme, den)
        numbers = {f"{scheme}_ppl_{n}": mean_std(_seeds(rec, scheme, n))[0] for n in (t, mid, far)}
        return Ratio(a, b, numbers, f"ratio_{num}_over_{den}")
    return ratio_part(rule, read, margin, name)


def _learned_best(records: Records) -> Margins:
    rec, t, _, _ = _lengths(records)
    others = [r["scheme"] for r in rec["rows"] if r["scheme"] not in ("learned", "none")]
    if not others:
        raise ValueError("no other position scheme to compare learned with")
    learned = _seeds(rec, "learned", t)
    best_other = [min(v) for v in zip(*(_seeds(rec, x, t) for x in others), strict=True)]
    return Margins(per_seed(lambda b, lr: b / lr - 1, best_other, learned),
                   {f"learned_ppl_{t}": mean_std(learned)[0],
                    f"best_other_ppl_{t}": mean_std(best_other)[0]})


EQUIVARIANT = 1e-5  # float32 rounding: below this counts as equal
BROKEN = 1e-3  # above this counts as broken


def _perm_plain(records: Records) -> Margins:
    cases = records[NAME]["permutation"]
    plain = [c["max_diff"] for c in cases if c["position"] == "none" and not c["causal"]]
    if not plain:
        raise ValueError("the record has no permutation case without positions and mask")
    return Margins([EQUIVARIANT - max(plain)], {"none": max(plain)})


def _perm_broken(records: Records) -> Margins:
    cases = records[NAME]["permutation"]
    ev = {f"{c['position']}{'_causal' if c['causal'] else ''}": c["max_diff"] for c in cases
          if c["position"] != "none" or c["causal"]}
    if not ev:
        raise ValueError("the record has no permutation case with a mask or positions")
    return Margins([min(ev.values()) - BROKEN], ev)


_claim = claim_for(NAME)


CLAIMS: list[Claim] = [
    _claim("learned_cliff",
           "Learned absolute positions are best at the trained length and fall off a cliff "
           "beyond it.",
           Part("learned ppl at the trained length < the lowest of the other position schemes "
                "(not none) with the same seed", _learned_best, "× ppl", "best"),
           _ratio_part("learned", "mid", lambda r: r - GENTLE,
                       f"learned ppl at 2× the length / ppl at it > {GENTLE:g}", "cliff")),
    _claim("sinusoidal_fails",
           "Sinusoids also fail to extrapolate.",
           _ratio_part("sinusoidal", "far", lambda r: r - GENTLE,
                       f"sinusoidal ppl at 4× the trained length / ppl at it > {GENTLE:g}")),
    _claim("rope_gentle",
           "RoPE degrades gently.",
           _ratio_part("rope", "far", lambda r: r - 1,
                       "RoPE ppl at 4× the trained length / ppl at it > 1", "degrades"),
           _ratio_part("rope", "far", lambda r: GENTLE - r,
                       f"RoPE ppl at 4× the trained length / ppl at it ≤ {GENTLE:g}", "gently")),
    _claim("alibi_improves",
           "ALiBi gets better as the window grows.",
           _ratio_part("alibi", "mid", lambda r: 1 - r, "ALiBi ppl at 2× / at the trained "
                       "length < 1", "at 2×"),
           _ratio_part("alibi", "step", lambda r: 1 - r, "ALiBi ppl at 4× / at 2× < 1",
                       "at 4×")),
    _claim("permutation_equivariance",
           "Without positions, permuting the input permutes the output of self-attention.",
           Part(f"max |f(Px) − P f(x)| < {EQUIVARIANT:g} without positions or mask",
                _perm_plain, "max difference", "equivariant"),
           Part(f"max |f(Px) − P f(x)| > {BROKEN:g} with the causal mask and with each position "
                "scheme", _perm_broken, "max difference", "broken otherwise"),
           trained=False),
]

FIGURES = {
    "ratio_{a}_over_{b}": Quantity("perplexity at {a} tokens ÷ at {b}",
                                   "perplejidad a {a} tokens ÷ a {b}", kind="ratio"),
    "best_other_ppl_{n}": Quantity("best held-out perplexity of the other schemes at {n} tokens",
                                   "mejor perplejidad de validación de los otros esquemas a {n} "
                                   "tokens"),
    "{scheme}_ppl_{n}": Quantity("held-out perplexity with {scheme} at {n} tokens",
                                 "perplejidad de validación con {scheme} a {n} tokens"),
    "none": Quantity("largest |f(Px) − P f(x)|, no positions and no mask",
                     "mayor |f(Px) − P f(x)|, sin posiciones ni máscara"),
    "{scheme}_causal": Quantity("largest |f(Px) − P f(x)|, {scheme} with the causal mask",
                                "mayor |f(Px) − P f(x)|, {scheme} con la máscara causal"),
    "{scheme}": Quantity("largest |f(Px) − P f(x)|, {scheme}", "mayor |f(Px) − P f(x)|, {scheme}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
