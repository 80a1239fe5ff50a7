"""The extra-seed round: more seeds, once, where a training claim is inconclusive.

The rule, fixed before any number it acts on was seen (``rule_text`` says it in the
report, word for word):

1. The planned runs are trained, every experiment is analysed and every claim is
   decided (``attnlab.kit.claims``).
2. An experiment gets an *extra round* when at least one *training* claim that needs
   it is **inconclusive** on at least ``MIN_SEEDS`` (3) seeds. Held, not-held,
   skipped and error verdicts never call for one, nor do claims that need no
   training, nor claims decided on fewer than 3 seeds (they stay inconclusive: the
   micro profile, ``--seeds 1`` or ``2``). Nor does a claim that more seeds cannot
   change (``cannot_move``): one whose premise is not held (it cannot be tested at all,
   ``attnlab.kit.claims``), or one whose every undecided part has the same margin on
   every seed (a spread of zero: the mean sits on the threshold and new seeds would add
   the same value again).
3. The round adds ``extra_seeds`` seeds (default ``EXTRA_SEEDS`` = 2: after seeds
   0-2, seeds 3 and 4; none at the quick profile unless asked, ``default_extra_seeds``):
   every run of the experiment's plan with seeds = n + extra, through the runner's cache,
   so seeds 0..n-1 are read, not retrained. The extra runs of all such experiments train
   together on one pool, as the main pass does.
4. Each such experiment is analysed again on all its seeds and **all** its claims
   are decided again on them (those that were held or not held on n seeds too);
   those verdicts are final.
5. One round only: an experiment that had its round never gets another (its
   envelope is reused as is by a rerun with the same ``--extra-seeds``), and a
   round never removes a seed. ``--extra-seeds 0`` turns the round off.

Why one fixed round and not "add seeds until decided": adding seeds only where a
verdict is inconclusive is a second look at the data, and looking again and again
until a verdict appears would let noise decide it. One round of a number of seeds
stated in advance, for the whole experiment, with every claim of it re-decided, is
a bounded second look: it can turn an inconclusive verdict into held or not held,
and it can also turn a held one inconclusive. Left out: a correction of the two
standard errors for that second look (the report states the rule instead).

The round itself is the suite's pipeline run again (``attnlab.suite.Suite``):
plan with more seeds (``with_extra_seeds``: the experiment's settings as the suite
resolved them, grown), train, analyse. This module holds the rule and the notes.

Every trained experiment's envelope says what happened (``extra_round``): whether
the round ran, the seeds before and added, the claims that called for it, and a
one-line ``text`` the report prints in the experiment's section.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from attnlab.errors import UsageError
from attnlab.i18n import text
from attnlab.i18n.logs import Grouped
from attnlab.kit.claims import MIN_SEEDS

EXTRA_SEEDS = 2  # seeds added by the one extra round (3 seeds -> 5)
# The quick profile is the budget a learner runs: its whole wall time is sized for about 25
# minutes on a fast 2-core CPU (a slower one takes longer), and the round takes a large
# share. docs/results.md shows only the last quick run, made without the round; the commits
# that published a run with it (a5628a9) and the next without it (fd70e07) give both wall
# times and say that no verdict changed. Its verdicts are decided on the planned seeds (at
# least 3, a claim's minimum); ``--extra-seeds 2`` adds the round. Every other profile has
# it by default.
PROFILE_EXTRA_SEEDS = {"quick": 0}


def default_extra_seeds(profile: str) -> int:
    """The round's size when none is asked for: 0 at quick, ``EXTRA_SEEDS`` elsewhere.

    >>> default_extra_seeds("quick"), default_extra_seeds("full")
    (0, 2)
    """
    return PROFILE_EXTRA_SEEDS.get(profile, EXTRA_SEEDS)


def off_by_default(extra_seeds: int, profile: str | None) -> bool:
    """No round because ``profile``'s default is none (not because 0 was asked elsewhere)."""
    return extra_seeds == 0 and profile is not None and default_extra_seeds(profile) == 0


def off_rule(extra_seeds: int, profile: str | None, lang: str) -> str:
    """The rule paragraph of a report with no round (``extra_seeds`` 0), in ``lang``."""
    key = "rule.extra_default_off" if off_by_default(extra_seeds, profile) else "rule.extra_off"
    return text("report", key, lang, profile=profile, n=EXTRA_SEEDS)


def resolve_extra_seeds(extra_seeds: int | None, profile: str) -> int:
    """``extra_seeds`` as given (checked), or the profile's default when None."""
    if extra_seeds is None:
        return default_extra_seeds(profile)
    check_extra_seeds(extra_seeds)
    return extra_seeds


def with_extra_seeds(settings: Any, extra_seeds: int) -> Any:
    """An experiment's ``settings`` (of one that trains) with ``extra_seeds`` more seeds: the
    settings of its extra round, derived here only.

    >>> from attnlab.kit.settings import Seeded
    >>> with_extra_seeds(Seeded(seeds=3), 2)
    Seeded(seeds=5)
    """
    return dataclasses.replace(settings, seeds=settings.seeds + extra_seeds)


def check_extra_seeds(extra_seeds: int) -> None:
    """A UsageError unless ``extra_seeds`` is a whole number in [0, 1000]."""
    if not isinstance(extra_seeds, int) or isinstance(extra_seeds, bool) \
            or not 0 <= extra_seeds <= 1000:
        raise UsageError("--extra-seeds must be a whole number in [0, %s] (0 turns the extra "
                         "round off), got %r", Grouped(1000), extra_seeds)


def rule_text(extra_seeds: int, profile: str | None = None) -> str:
    """The rule in one paragraph, as the report states it."""
    if extra_seeds == 0:
        return off_rule(extra_seeds, profile, "en")
    return (
        f"**Extra seeds** (one round, fixed in advance): after every claim is decided, each "
        f"experiment with a training claim that is inconclusive on at least {MIN_SEEDS} seeds "
        f"trains every run of its plan with {extra_seeds} more seed(s), once; it is then "
        f"analysed again and all its claims are decided again on all its seeds, and those "
        f"verdicts are final. Held, not-held, skipped, error and untrained claims never call "
        f"for a round, nor does a claim whose premise failed (it cannot be tested at all) or "
        f"whose undecided parts have the same margin on every seed (more seeds cannot change "
        f"it); a claim decided on fewer than {MIN_SEEDS} seeds stays inconclusive; a "
        f"round never removes a seed and never repeats."
    )


def triggers(verdicts: Iterable[dict], candidates: Iterable[str]) -> dict[str, list[str]]:
    """Experiment name -> ids of the claims that call for its extra round (rule, point 2),
    for the ``candidates`` (finished experiments that train and had no round yet).

    >>> v = {"id": "x.a", "status": "inconclusive", "trained": True, "seeds": 3, "needs": ["x"]}
    >>> triggers([v, {**v, "id": "x.b", "seeds": 2}, {**v, "id": "x.c", "status": "held"}],
    ...          ["x"])
    {'x': ['x.a']}
    """
    eligible = set(candidates)
    due: dict[str, list[str]] = {}
    for v in verdicts:
        if not (v.get("trained", True) and v.get("status") == "inconclusive"
                and v.get("seeds", 0) >= MIN_SEEDS) or cannot_move(v):
            continue
        for name in v.get("needs") or [v.get("experiment")]:
            if name in eligible:
                due.setdefault(name, []).append(v["id"])
    return due


def cannot_move(verdict: dict) -> str:
    """Why more seeds cannot change an inconclusive ``verdict`` ("" when they can): its
    premise is not held, or every undecided part has one margin on every seed.

    >>> cannot_move({"status": "inconclusive", "parts": [
    ...     {"status": "inconclusive", "margins": [0.0, 0.0, 0.0]}]})
    "every seed's margin is the same (0): more seeds cannot change it"
    """
    if verdict.get("status") != "inconclusive":
        return ""
    premise = verdict.get("premise") or {}
    if premise.get("held") is False:
        return f"it cannot be tested: {premise.get('why', 'its premise failed')}"
    undecided = [p for p in verdict.get("parts") or [] if p.get("status") == "inconclusive"]
    margins = [p.get("margins") or [] for p in undecided]
    if undecided and all(len(m) >= MIN_SEEDS and len(set(m)) == 1 for m in margins):
        values = ", ".join(f"{m[0]:g}" for m in margins)
        return f"every seed's margin is the same ({values}): more seeds cannot change it"
    return ""


def held_back(verdicts: Iterable[dict], name: str) -> list[str]:
    """``claim id: why`` for each inconclusive training claim of experiment ``name`` that
    more seeds cannot change (``cannot_move``)."""
    return [f"{v['id']}: {why}" for v in verdicts
            if name in (v.get("needs") or [v.get("experiment")]) and v.get("trained", True)
            and (why := cannot_move(v))]


def seed_range(first: int, count: int) -> str:
    """``seed 3`` or ``seeds 3-4``."""
    return f"seed {first}" if count == 1 else f"seeds {first}-{first + count - 1}"


def ran_note(before: int, extra_seeds: int, because: list[str]) -> dict[str, Any]:
    """``extra_round`` of an experiment that had its round."""
    were = "was" if len(because) == 1 else "were"
    return {"ran": True, "extra_seeds": extra_seeds, "seeds_before": before,
            "seeds_added": list(range(before, before + extra_seeds)), "because": list(because),
            "text": f"extra round: {seed_range(before, extra_seeds)} added because "
                    f"{', '.join(because)} {were} inconclusive on {before} seeds"}


def skipped_note(seeds: int, extra_seeds: int, unmoved: list[str] | None = None,
                 profile: str | None = None, calling: list[str] | None = None
                 ) -> dict[str, Any]:
    """``extra_round`` of an experiment that did not get one, with the reason (``unmoved``:
    its inconclusive claims that more seeds cannot change, ``held_back``; ``profile``: the
    profile, whose default may be no round; ``calling``: the claims that would have called
    for one, said when the round is off).

    >>> skipped_note(3, 0, profile="quick", calling=["x.a"])["text"].endswith(
    ...     "(--extra-seeds 2); x.a is inconclusive on 3 seeds and would call for one")
    True
    """
    by_default = off_by_default(extra_seeds, profile)
    if seeds < MIN_SEEDS:
        why = (f"{seeds} seed(s), fewer than {MIN_SEEDS}: its training claims stay "
               "inconclusive")
    elif by_default:
        why = f"none at the {profile} profile unless asked (--extra-seeds {EXTRA_SEEDS})"
    elif extra_seeds == 0:
        why = "turned off (--extra-seeds 0)"
    elif unmoved:
        why = "more seeds cannot change its inconclusive claims (" + "; ".join(unmoved) + ")"
    else:
        why = f"no training claim was inconclusive on {seeds} seeds"
    would = list(calling or []) if extra_seeds == 0 and seeds >= MIN_SEEDS else []
    if would:
        are = "is" if len(would) == 1 else "are"
        why += f"; {', '.join(would)} {are} inconclusive on {seeds} seeds and would call for one"
    note = {"ran": False, "extra_seeds": extra_seeds, "seeds_before": seeds,
            "text": f"no extra round: {why}"}
    if by_default:
        note["profile_default"] = profile
    if would:
        note["would_call"] = would
    return {**note, "unmoved": list(unmoved)} if unmoved else note


def grown(envelopes: dict[str, dict]) -> dict[str, list[str]]:
    """Experiment -> the claim ids that called for its extra round, for every envelope that
    had one (in this run or an earlier one)."""
    return {name: list(env["extra_round"].get("because", []))
            for name, env in envelopes.items() if (env.get("extra_round") or {}).get("ran")}
