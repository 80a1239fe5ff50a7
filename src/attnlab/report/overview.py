"""What the report says before and beside the experiments' own sections.

- ``contents``: the table of contents, each experiment with its verdict counts, linked to
  its section;
- ``paragraphs``: one short paragraph per experiment, what the chapter says (the
  catalogue's words, no figure in them) and what this run shows (generated from the
  verdicts: how many claims held, which did not, and why an experiment did not run);
- ``claim_table``: the claim summary, one row per claim, short enough for a laptop screen
  (the claim's first clause, its verdict, the figure its rule compares, the chapter's,
  the margin and the seeds; the rule and the chapter's budget are in the experiment's
  section, ``claims_list``).
"""

from __future__ import annotations

from typing import Any

from attnlab.i18n.logs import reason_in
from attnlab.kit import verdict_words as words
from attnlab.kit.envelope import status_of
from attnlab.report.claim_figures import claim_figures
from attnlab.report.page import anchor
from attnlab.report.words import claim_text, counted, has, of, t, title, tn, verdict

SHORT = 84  # characters of a claim's text in the summary table: two lines of its column
SHOWN = ("held", "not held", "inconclusive")


def owner(v: dict[str, Any]) -> str:
    """The experiment a verdict belongs to."""
    return v.get("experiment") or v["id"].split(".")[0]


def short(text: str, limit: int = SHORT) -> str:
    """A claim's first clause, at most ``limit`` characters (cut at a word, with "…").

    >>> short("Var(q·k) grows like d: the rows freeze.", 30)
    'Var(q·k) grows like d…'
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    for stop in (": ", "; ", " — ", " ("):
        cut = text.find(stop)
        if 20 <= cut <= limit:
            return text[:cut].rstrip(",.") + "…"
    return text[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "…"


def tally(verdicts: list[dict[str, Any]]) -> dict[str, int]:
    out = {s: sum(v["status"] == s for v in verdicts) for s in SHOWN}
    out["other"] = len(verdicts) - sum(out.values())
    return out


def contents(envelopes: dict[str, dict], verdicts: list[dict], lang: str) -> list[str]:
    """Markdown: the contents table, one row per experiment with its verdict counts."""
    head = [t("contents.experiment", lang), *(counted(s, lang) for s in SHOWN),
            t("contents.other", lang)]
    rows = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|---:|"]
    for i, (name, env) in enumerate(envelopes.items(), 1):
        c = tally([v for v in verdicts if owner(v) == name])
        link = f"[{i}. {title(name, env, lang)}](#{anchor(i)})"
        cells = [str(c[s]) if c[s] else "·" for s in (*SHOWN, "other")]
        rows.append("| " + " | ".join([link.replace("|", "\\|"), *cells]) + " |")
    return [f"## {t('contents.heading', lang)}", "", *rows, ""]


def _premise(v: dict[str, Any], lang: str) -> str:
    """`` (its premise failed: reason)`` for a verdict that could not be tested, `` (not
    counted: seed 3 …)`` for one decided without the seeds that did not learn, else ""."""
    premise = v.get("premise") or {}
    if premise.get("held") is False:
        return " " + t("run.premise", lang, why=words.why(v, lang))
    if note := words.not_counted(v, lang):  # decided, without the seeds that did not learn
        return f" ({note})"
    return ""


LISTED = 3  # claims named per outcome in a paragraph; the rest are counted


def _named(v: dict[str, Any], lang: str) -> str:
    return f"«{short(claim_text(v, lang), 70).rstrip('.')}»{_premise(v, lang)}"


def _run_shows(name: str, env: dict, own: list[dict], lang: str) -> str:
    """What this run shows for one experiment: the counts, the claims not held, and those
    inconclusive when few (or when their premise failed), each named by its first words."""
    status = status_of(env)
    if status != "ok":
        return t(f"run.{status}", lang, reason=reason_in(env, lang))
    if not own:
        return t("run.no_claims", lang)
    c = tally(own)
    text = t("run.counts", lang, total=tn("run.total", len(own), lang),
             **{k: tn(f"run.{k}", c[s], lang) for k, s in (
                 ("held", "held"), ("not_held", "not held"), ("inconclusive", "inconclusive"))})
    for s in ("not held", "inconclusive"):
        these = [v for v in own if v["status"] == s]
        if s == "inconclusive" and len(these) > LISTED:  # many: only those that could not be
            these = [v for v in these if (v.get("premise") or {}).get("held") is False]
        if not these:
            continue
        named = "; ".join(_named(v, lang) for v in these[:LISTED])
        if len(these) > LISTED:
            named += " " + t("run.more", lang, n=len(these) - LISTED)
        text += " " + tn(f"run.which.{s}", len(these), lang, claims=named)
    return text


def paragraphs(envelopes: dict[str, dict], verdicts: list[dict], lang: str) -> list[str]:
    """Markdown: per experiment, what the chapter says and what this run shows."""
    lines = [f"## {t('overview.heading', lang)}", ""]
    for i, (name, env) in enumerate(envelopes.items(), 1):
        own = [v for v in verdicts if owner(v) == name]
        says = t(f"chapter.{name}", lang) if has(f"chapter.{of(name)}") else ""
        lead = f"**[{i}. {title(name, env, lang)}](#{anchor(i)}).**"
        said = f" {t('overview.chapter', lang)} {says}" if says else ""
        lines += [f"{lead}{said} {t('overview.run', lang)} {_run_shows(name, env, own, lang)}",
                  ""]
    return lines


def _margin(v: dict[str, Any], lang: str) -> str:
    parts = v.get("parts", [])
    if len(parts) == 1:
        return words.margin_text(parts[0], lang)
    return "; ".join(f"{words.part_name(v, p, lang)}: {words.margin_text(p, lang)}"
                     for p in parts) or "–"


def claim_table(verdicts: list[dict], envelopes: dict[str, dict], lang: str) -> str:
    """Markdown: the claim summary (see the module docstring) and its note."""
    numbers = {name: i for i, name in enumerate(envelopes, 1)}
    head = [t(f"claims.col.{k}", lang) for k in ("n", "claim", "verdict", "measured",
                                                   "chapter", "margin", "decided")]
    rows = ["| " + " | ".join(head) + " |", "|---:|---|---|---|---|---|---:|"]
    for v in verdicts:
        figures = claim_figures(v, lang)
        n = numbers.get(owner(v))
        where = f"[{n}](#{anchor(n)})" if n else owner(v)
        cells = [where, short(claim_text(v, lang)), f"**{verdict(v['status'], lang)}**",
                 figures["measured"], figures["chapter"], _margin(v, lang),
                 words.evaluations(v, lang)]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join([*rows, "", t("claims.note", lang)])


def claims_list(verdicts: list[dict], lang: str) -> str:
    """Markdown: one item per claim, in full, with its rule's version, its reason, and the
    rule and margin per part."""
    lines = []
    for v in verdicts:
        lines += [f"- **{verdict(v['status'], lang)}** — {claim_text(v, lang)}  ",
                  f"  {words.version(v, lang)}; {words.evaluations(v, lang)}; "
                  f"{words.why(v, lang)}  "]
        if note := words.not_counted(v, lang):  # the seeds that did not learn, by name
            lines.append(f"  {note}  ")
        for p in v.get("parts", []):
            name = words.part_name(v, p, lang)
            measured = words.measured_text(p, lang)
            lines.append(f"  {name + ': ' if name else ''}"
                         + (f"{measured}; " if measured != "–" else "")
                         + f"{words.margin_text(p, lang)} — {t('claims.rule', lang)} "
                         f"{words.part_rule(v, p, lang)}  ")
        lines[-1] = lines[-1].rstrip()
    return "\n".join(lines) + "\n"


__all__ = ["claim_table", "claims_list", "contents", "owner", "paragraphs", "short", "tally"]
