"""The textbook's claims: predicates that yield a signed margin per seed
(docs/experiments.md, "Claims and verdicts").

A claim is written once, next to the experiment whose numbers decide it, as a
``Claim`` in that module's ``CLAIMS`` list. Each of its ``Part``\\ s is a
predicate with a threshold, written as a *margin*: how far past the threshold
the measured value lies, in the part's own unit (a ratio of perplexities, an
accuracy, an exponent), positive when the part holds. A training claim yields
one margin per seed, each computed from runs that share that seed (same
initialisation, same batch order), so the pairing cancels much of the
seed-to-seed noise. Over the seeds (``verdict``):

- **held** when the mean margin is above zero by more than two standard errors;
- **not held** when it is below zero by more than two standard errors;
- **inconclusive** otherwise, and always with fewer than ``MIN_SEEDS`` seeds.

An experiment left with a training claim inconclusive on ``MIN_SEEDS`` or more
seeds gets one extra round of seeds, once, and all its claims are decided again
(``attnlab.kit.extra_seeds`` states that rule).

A claim may declare *premises*: the conditions under which it can be tested at all (the
RNN learned the agreement at the smallest distance, else nothing can fall; an induction
head formed, else there is nothing to ablate). Every premise of the claims is of that kind
(the model learned what the claim is about), so a premise is decided **per seed**: a seed
whose premise margin is at least zero (on every premise; above zero for a ``strict`` one, a
condition written with ">") *learned*, as the premise's words say; a seed that did not is
no evidence either way, its margins are left out of every part, and the verdict names it.
The parts are decided over the learning seeds only, by the rule above. A training claim
with fewer than ``MIN_SEEDS`` learning seeds (of at least ``MIN_SEEDS``) is
**inconclusive** with that reason in words, naming the seeds that did not learn (with
none learning, the premise's own reason), and no extra round of seeds is spent on it; its
parts are then shown over all seeds, for a reader. The verdict records the outcome as
``premise``: ``{"held": true | false | null, "why": ..., "seeds_not_learning": [3],
"learning_seeds": 4}`` (``held`` null: fewer seeds in all than a verdict needs). The
premise's numbers (and the parts' ``numbers``, the seed means a reader sees) are over all
seeds; the margins that decide are the learning seeds'. A claim of one evaluation (no
training) has one seed: it learned or the claim is inconclusive.

A claim that needs no training (a parameter count, an exponent of a timed
sweep, a random-number table) has one evaluation, marked as such: held when
its margin is positive, not held otherwise. A claim of several parts is held
when every part is held, not held when any part is not held, inconclusive
otherwise. A part that cannot apply (``transformers`` is not installed) raises
``Skip`` and the claim is **skipped** with the reason; a predicate that raises
anything else is an **error**, and ``reproduce`` then exits non-zero.

Thresholds. The words of the claims use one scale, stated here once, so the
same word means the same number in every experiment (``NEGLIGIBLE`` <
``CLEAR`` < ``FAR``); the experiments import these and add only thresholds of
their own kind (an exponent, a perplexity ratio at a longer window).

Rule versions. A claim's ``statement`` (its parts' names and rules, thresholds in them, its
premises' rules, what its margins are over) is its rule; ``version`` numbers it, and every
verdict records it (``version``). A rule whose statement changes gets the next version,
committed before its first verdict; its experiment's ``rules.json`` keeps each version's
statement and hash, appended by ``scripts/rule_versions.py`` (which refuses a changed
statement under a version already recorded), and ``tests/test_claims_versions.py`` fails
when a statement and its version part. A verdict read from a record made before versions
were recorded has none, and is shown as such.

Nothing here is hard-coded: change the results and the verdicts change.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnlab.errors import one_line
from attnlab.kit.quantities import Quantity, describe

Records = dict[str, dict]  # experiment name -> its result record

MIN_SEEDS = 3  # a training claim is decided (held / not held) on at least this many seeds
Z = 2.0  # standard errors the mean margin must clear
# The one scale of the claims' words (relative change of a perplexity, or an absolute
# accuracy / attention weight):
NEGLIGIBLE = 0.05  # "no difference", "matches", "hardly matters", "barely", "no better", "same"
CLEAR = 0.10  # "clearly beats", "a large one", "differs"
FAR = 0.20  # "far worse": at least 1.2 times
WELL_ABOVE = 0.20  # "well above" a chance or baseline accuracy: 20 points above it
MOST = 0.5  # "most of its weight": more than half

STATUSES = ("held", "not held", "inconclusive", "skipped", "error")


class Skip(Exception):  # noqa: N818 - a signal, not a failure
    """Raised by a part that cannot apply here; the claim is reported as skipped."""


@dataclass(frozen=True)
class Margins:
    """What a part measured: one signed margin per seed (or one), and the numbers behind it."""

    values: list[float]  # margin per seed, in the part's unit; > 0 where the part holds
    numbers: dict[str, Any] = field(default_factory=dict)  # the deciding numbers (seed means)
    # A one-evaluation part whose measurement's own spread leaves it undecided (a timed
    # exponent whose range straddles its threshold): why, and the part is inconclusive.
    undecided: str = ""


@dataclass(frozen=True)
class Part:
    """One predicate of a claim, as a margin past its threshold."""

    rule: str  # the predicate in words, with its threshold
    margins: Callable[[Records], Margins]  # per-seed margins over the records
    unit: str = ""  # the unit of the margin, shown beside it
    name: str = ""  # a short name when a claim has several parts


@dataclass(frozen=True)
class Premise:
    """A condition under which a claim can be tested at all, decided as a part is."""

    rule: str  # the condition in words, with its threshold
    margins: Callable[[Records], Margins]  # per-seed margins: ≥ 0 where the condition holds
    failed: str  # why the claim cannot be tested, formatted with the margins' numbers
    failed_es: str = ""  # the same in Spanish
    rule_es: str = ""
    # False: the rule says "≥", so a margin of exactly 0 holds; True: it says ">", and 0 fails
    strict: bool = False


@dataclass(frozen=True)
class Claim:
    """A claim of the textbook and the parts that decide it."""

    id: str  # short stable name, e.g. "ladder.mean_worse_than_nothing"
    text: str  # the claim in the textbook's words
    needs: tuple[str, ...]  # experiment names whose records decide it
    parts: tuple[Part, ...]  # every part must hold
    trained: bool = True  # False: one evaluation, no seeds (params, cost, analytic tables)
    premises: tuple[Premise, ...] = ()  # conditions under which the claim can be tested at all
    # what each number its parts return is, for a reader (key pattern -> Quantity)
    figures: Mapping[str, Quantity] = field(default_factory=dict)
    over: str = "seeds"  # what its margins are per: "seeds", or a benchmark's "rounds"
    # The version of its rule (``statement``), recorded with every verdict; it goes up by one
    # whenever the statement changes, and its experiment's rules.json keeps every version.
    version: int = 1

    @property
    def rule(self) -> str:
        """All parts' rules in one line."""
        if len(self.parts) == 1:
            return self.parts[0].rule
        return "; ".join(f"{p.name}: {p.rule}" for p in self.parts)

    @property
    def statement(self) -> str:
        """Everything that decides the verdict, in words: each part's name and rule (its
        threshold in it), each premise's rule, and what the margins are over. A change here
        is a new rule, and ``version`` must change with it."""
        return statement([(p.name, p.rule) for p in self.parts], [p.rule for p in self.premises],
                         self.over if self.trained else "")


def statement(parts: Sequence[tuple[str, str]], premises: Sequence[str], over: str) -> str:
    """A rule's statement from its parts ((name, rule) pairs), its premises' rules and what
    its margins are over ("" for one evaluation, no training).

    >>> print(statement([("", "x > 1")], ["learned"], "seeds"))
    part: x > 1
    premise: learned
    premises per seed: a seed failing one is not counted; under 3 counted seeds: inconclusive
    decided over seeds
    """
    lines = [f"part{' ' + name if name else ''}: {rule}" for name, rule in parts]
    lines += [f"premise: {rule}" for rule in premises]
    if premises and over == "seeds":
        lines.append(f"premises per seed: a seed failing one is not counted; under {MIN_SEEDS} "
                     f"counted seeds: inconclusive")
    lines.append(f"decided over {over}" if over else "decided on one evaluation")
    return "\n".join(lines)


def claim(cid: str, text: str, needs: str | tuple[str, ...], *parts: Part,
          trained: bool = True, premises: Sequence[Premise] = (),
          figures: Mapping[str, Quantity] | None = None, over: str = "seeds",
          version: int = 1) -> Claim:
    """A ``Claim`` with ``needs`` given as one name or several."""
    return Claim(cid, text, (needs,) if isinstance(needs, str) else needs, parts, trained,
                 tuple(premises), dict(figures or {}), over, version)


def with_figures(claims: Sequence[Claim], figures: Mapping[str, Quantity]) -> list[Claim]:
    """``claims`` with ``figures`` (key pattern -> Quantity) naming the numbers their parts
    return; a claim's own figures come first."""
    return [dataclasses.replace(c, figures={**c.figures, **{k: q for k, q in figures.items()
                                                             if k not in c.figures}})
            for c in claims]


def per_seed(fn: Callable[..., float], *series: Sequence[float]) -> list[float]:
    """``[fn(a_s, b_s, ...) for each seed s]`` over equally long per-seed lists.

    >>> per_seed(lambda a, b: b / a - 1, [2.0, 4.0], [3.0, 4.0])
    [0.5, 0.0]
    """
    lengths = {len(s) for s in series}
    if len(lengths) != 1:
        raise ValueError(f"per-seed lists differ in length: {sorted(lengths)}")
    return [float(fn(*values)) for values in zip(*series, strict=True)]


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (std / √n; nan for fewer than two values)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = sum(values) / n
    if n == 1:
        return mean, math.nan
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def part_verdict(values: Sequence[float], trained: bool) -> tuple[str, str]:
    """(status, why) for one part's margins; see the module docstring for the rule.

    >>> part_verdict([0.3, 0.31, 0.29], True)[0], part_verdict([0.3, -0.3, 0.1], True)[0]
    ('held', 'inconclusive')
    """
    if not values or any(not math.isfinite(v) for v in values):
        return "error", f"margins must be finite numbers, got {list(values)}"
    if not trained:
        return ("held" if values[0] > 0 else "not held"), "one evaluation (no training)"
    mean, se = mean_se(values)
    if len(values) < MIN_SEEDS:
        return "inconclusive", f"{len(values)} seed(s): a verdict needs at least {MIN_SEEDS}"
    if mean > Z * se and mean > 0:
        return "held", f"mean margin above zero by more than {Z:g} standard errors"
    if mean < -Z * se and mean < 0:
        return "not held", f"mean margin below zero by more than {Z:g} standard errors"
    return "inconclusive", f"mean margin within {Z:g} standard errors of zero"


def combine(statuses: Sequence[str]) -> str:
    """A claim's status from its parts': any not held → not held; any inconclusive → inconclusive.

    >>> combine(["held", "inconclusive"]), combine(["inconclusive", "not held"])
    ('inconclusive', 'not held')
    """
    for status in ("error", "skipped", "not held", "inconclusive"):
        if status in statuses:
            return status
    return "held"


def decide(c: Claim, records: Records) -> dict[str, Any]:
    """The verdict of one claim: status, why, and per part its margins and numbers; with
    premises, the parts are decided over the seeds that learned (``decide_premises``)."""
    out: dict[str, Any] = {"id": c.id, "text": c.text, "rule": c.rule, "version": c.version,
                           "trained": c.trained, "needs": list(c.needs), "over": c.over,
                           "parts": []}
    missing = [n for n in c.needs if n not in records]
    if missing:
        return {**out, "status": "skipped", "why": f"no record of {', '.join(missing)}"}
    premise = decide_premises(c, records) if c.premises else None
    # the seeds whose margins count: the learning ones, unless none learned (then the parts
    # are shown over all seeds, and the claim is inconclusive whatever they say)
    counted = premise.get("counted") if premise else None
    statuses, reasons = [], []
    for part in c.parts:
        row: dict[str, Any] = {"name": part.name, "rule": part.rule, "unit": part.unit}
        try:
            m = part.margins(records)
            values = list(m.values)
            if counted is not None:
                if len(values) != premise["seeds"]:
                    raise ValueError(f"the part gives {len(values)} margins and the premise "
                                     f"{premise['seeds']}: they must be per seed alike")
                values = [values[i] for i in counted]
            status, why = ("inconclusive", m.undecided) if m.undecided else \
                part_verdict(values, c.trained)
            mean, se = mean_se(values)
            row.update(margins=values, mean=mean, numbers=m.numbers,
                       figures=describe(c.figures, m.numbers),  # labels for a reader
                       se=se if math.isfinite(se) else None)  # None: one value (JSON has no NaN)
        except Skip as err:
            status, why = "skipped", str(err)
        except Exception as err:  # noqa: BLE001 - a broken predicate is an error verdict
            status, why = "error", one_line(err)
        row.update(status=status, why=why)
        out["parts"].append(row)
        statuses.append(status)
        if status != "held":
            reasons.append(f"{part.name + ': ' if part.name else ''}{why}")
    status = combine(statuses)
    seeds = [len(p["margins"]) for p in out["parts"] if "margins" in p]
    why = "; ".join(reasons) if reasons else out["parts"][0]["why"]
    if premise is not None:
        premise.pop("counted", None)
        out["premise"] = premise
        if premise["status"] in ("error", "skipped"):
            status, why = premise["status"], premise["why"]
        elif premise["held"] is False and status in ("held", "not held", "inconclusive"):
            status, why = "inconclusive", premise["why"]
        elif premise["held"] is None and premise["why"] and status != "error":
            status, why = "inconclusive", premise["why"]
    return {**out, "status": status, "why": why, "seeds": max(seeds, default=0)}


def seed_list(seeds: Sequence[int], lang: str = "en") -> str:
    """``seed 3`` or ``seeds 1 and 3`` (``semilla 3``, ``semillas 1 y 3``).

    >>> seed_list([3]), seed_list([0, 1, 3]), seed_list([1, 3], "es")
    ('seed 3', 'seeds 0, 1 and 3', 'semillas 1 y 3')
    """
    one, many, and_ = ("seed", "seeds", "and") if lang == "en" else ("semilla", "semillas", "y")
    if len(seeds) == 1:
        return f"{one} {seeds[0]}"
    return f"{many} {', '.join(str(s) for s in seeds[:-1])} {and_} {seeds[-1]}"


def decide_premises(c: Claim, records: Records) -> dict[str, Any]:
    """The outcome of a claim's premises, per seed: ``seeds_not_learning`` (the seeds, from
    0, whose margin is below zero on some premise, or zero on a strict one),
    ``learning_seeds`` (how many are),
    ``held`` True (at least ``MIN_SEEDS`` learned; one, for a claim of one evaluation), False
    (fewer, of at least as many seeds: the claim cannot be tested) or None (fewer seeds in
    all than a verdict needs), ``why`` and ``why_es`` in words, and per premise its rule,
    margins (every seed's), numbers and the seeds that failed it. ``counted`` (removed by
    ``decide``) lists the seeds whose part margins count."""
    from attnlab import i18n

    rows: list[dict[str, Any]] = []
    for premise in c.premises:
        row: dict[str, Any] = {"rule": premise.rule, "rule_es": premise.rule_es}
        try:
            m = premise.margins(records)
            values = list(m.values)
            if not values or any(not math.isfinite(v) for v in values):
                raise ValueError(f"margins must be finite numbers, got {values}")
            mean, se = mean_se(values)
            row.update(margins=values, mean=mean, numbers=m.numbers,
                       se=se if math.isfinite(se) else None,
                       seeds_failing=[i for i, v in enumerate(values)
                                      if v < 0 or (premise.strict and v == 0)],
                       why=premise.failed.format(**m.numbers),
                       why_es=(premise.failed_es or premise.failed).format(**m.numbers),
                       status="measured")
        except Skip as err:
            row.update(status="skipped", why=str(err))
        except Exception as err:  # noqa: BLE001 - a broken premise is an error verdict
            row.update(status="error", why=one_line(err))
        rows.append(row)
    for status in ("error", "skipped"):
        if first := next((r for r in rows if r["status"] == status), None):
            return {"held": None, "status": status, "why": first["why"],
                    "why_es": first["why"], "checks": rows}
    lengths = {len(r["margins"]) for r in rows}
    if len(lengths) != 1:
        why = f"the premises give different numbers of seeds: {sorted(lengths)}"
        return {"held": None, "status": "error", "why": why, "why_es": why, "checks": rows}
    (n,) = lengths
    failing = sorted({i for r in rows for i in r["seeds_failing"]})
    learning = [i for i in range(n) if i not in failing]
    need = MIN_SEEDS if c.trained else 1
    out = {"seeds_not_learning": failing, "learning_seeds": len(learning), "seeds": n,
           "checks": rows}
    if not learning:  # none learned: the premise's own reason, parts shown over all seeds
        first = next(r for r in rows if r["seeds_failing"])
        return {**out, "held": False, "status": "not held", "why": first["why"],
                "why_es": first["why_es"], "counted": None}
    rules = [r for r in rows if r["seeds_failing"]]
    fields = {"k": len(learning), "n": n, "need": need,
              "rule": "; ".join(r["rule"] for r in rules)}
    why, why_es = "", ""
    if failing:
        why = i18n.text("report", "premise.few_learning" if len(learning) < need else
                        "premise.not_counted", "en", seeds=seed_list(failing, "en"), **fields)
        why_es = i18n.text("report", "premise.few_learning" if len(learning) < need else
                           "premise.not_counted", "es", seeds=seed_list(failing, "es"),
                           **{**fields, "rule": "; ".join(r["rule_es"] or r["rule"]
                                                         for r in rules)})
    if len(learning) >= need:
        held: bool | None = True
        why_claim, why_claim_es = "", ""  # the parts' reason is the verdict's
    else:
        held = False if n >= need else None
        why_claim, why_claim_es = why, why_es
    return {**out, "held": held, "status": {True: "held", False: "not held"}.get(held,
                                                                                  "inconclusive"),
            "why": why_claim, "why_es": why_claim_es, "not_counted": why,
            "not_counted_es": why_es, "counted": learning}


def evaluate(records: Records, claims: list[Claim]) -> list[dict[str, Any]]:
    """Verdicts of ``claims`` in order (see ``decide``)."""
    return [decide(c, records) for c in claims]


def fmt_margin(part: dict[str, Any], lang: str = "en") -> str:
    """The margin as a reader reads it (``attnlab.kit.verdict_words.margin_text``)."""
    from attnlab.kit.verdict_words import margin_text

    return margin_text(part, lang)


def render(verdicts: list[dict[str, Any]], lang: str = "en") -> str:
    """Markdown: one item per claim with its verdict, its rule's version, how many seeds, why,
    and per part its name, what it measured, its margin and its rule, in ``lang``."""
    from attnlab.kit import verdict_words as w

    lines = []
    for v in verdicts:
        lines.append(f"- **{w.status(v, lang)}** — {w.claim_text(v, lang)}  ")
        lines.append(f"  {w.version(v, lang)}; {w.evaluations(v, lang)}; {w.why(v, lang)}  ")
        if note := w.not_counted(v, lang):  # the seeds that did not learn, by name
            lines.append(f"  {note}  ")
        for p in v.get("parts", []):
            name = w.part_name(v, p, lang)
            lines.append(f"  {name + ': ' if name else ''}{w.measured_text(p, lang)}; "
                         f"{w.margin_text(p, lang)} — {w.part_rule(v, p, lang)}  ")
        lines[-1] = lines[-1].rstrip()
    return "\n".join(lines) + "\n"
