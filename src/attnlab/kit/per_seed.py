"""What experiments write alike, written once: a trained model's numbers per seed for its
record, a claim part on a ratio of two per-seed numbers, and claim ids under the
experiment's name.

The settings every experiment that trains shares, and the corpus runs' training budget,
are in ``attnlab.kit.settings``; the chapter part's kit is ``attnlab.kit.chapter``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnlab.kit.claims import Claim, Margins, Part, Records, claim, per_seed
from attnlab.kit.tables import mean_std

LM_NUMBERS = ("train_ppl", "held_ppl", "wall_s", "tokens_per_s")  # a run's record, per seed


def lm_summary(runs: Sequence[dict], numbers: Sequence[str] = LM_NUMBERS) -> dict[str, Any]:
    """A language model trained once per seed, as an experiment's record keeps it: its
    parameter count (every seed's is the same), then each of ``numbers`` of the runs'
    records as one list in seed order (``runs``: ``Results.seeds(label)``).

    >>> lm_summary([{"params": 9, "held_ppl": 40.0}, {"params": 9, "held_ppl": 42.0}],
    ...            ("held_ppl",))
    {'params': 9, 'held_ppl': [40.0, 42.0]}
    """
    return {"params": runs[0]["params"], **{k: [r[k] for r in runs] for k in numbers}}


def run_numbers(run: dict, numbers: Sequence[str]) -> dict[str, Any]:
    """``numbers`` of one run's record, each None where the run diverged (a spec that
    ``may_diverge``: its record holds no perplexities), and whether it did."""
    diverged = bool(run.get("diverged"))
    return {**{k: None if diverged else run[k] for k in numbers}, "diverged": diverged}


@dataclass(frozen=True)
class Ratio:
    """What a ratio part reads from the records: per seed, the numerator and denominator
    (runs that share a seed), and the numbers shown beside the verdict."""

    num: list[float]  # per seed, in seed order
    den: list[float]  # per seed, paired with num
    numbers: dict[str, float] = field(default_factory=dict)  # shown before the mean ratio
    key: str = "ratio"  # the mean ratio's name among them


def ratio_part(rule: str, read: Callable[[Records], Ratio], margin: Callable[[float], float],
               name: str = "", unit: str = "× ppl") -> Part:
    """A claim's part on num / den per seed (``read`` gives them): each seed's margin is
    ``margin(ratio)`` (``lambda r: r - (1 + FAR)`` for "far worse"), and the mean ratio is
    shown under ``Ratio.key``.

    >>> part = ratio_part("a / b ≥ 2", lambda records: Ratio([3.0, 2.0], [1.0, 1.0]),
    ...                   lambda r: r - 2)
    >>> part.margins({}).values, part.margins({}).numbers
    ([1.0, 0.0], {'ratio': 2.5})
    """
    def margins(records: Records) -> Margins:
        r = read(records)
        ratios = per_seed(lambda x, y: x / y, r.num, r.den)
        return Margins([margin(x) for x in ratios], {**r.numbers, r.key: mean_std(ratios)[0]})
    return Part(rule, margins, unit, name)


def claim_for(name: str) -> Callable[..., Claim]:
    """``claim`` for the experiment ``name``: the id under ``name.``, its record needed.

    >>> claim_for("ladder")("head_beats_mean", "One head beats the mean.").id
    'ladder.head_beats_mean'
    """
    def make(cid: str, text: str, *parts: Part, **options: Any) -> Claim:
        return claim(f"{name}.{cid}", text, name, *parts, **options)
    return make
