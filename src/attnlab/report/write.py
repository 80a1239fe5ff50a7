"""Write one report folder: ``report.md``, a self-contained ``report.html``, ``results.json``.

The report is composed once, as Markdown; the HTML page is the same text
rendered by ``markdown-it-py`` (CommonMark with tables, raw HTML off, so a
record's text can never inject markup) with every figure inlined as a base64
PNG ``data:`` URI and the style sheet inline, so the page opens offline,
anywhere, and can be mailed as one file. ``results.json`` holds every
envelope (the experiment records), every claim verdict and the meta.

Nothing here runs an experiment or decides a claim: it renders finished
records (``attnlab.suite`` makes them) and verdicts
(``attnlab.lab.claims`` decides them).

An *envelope* is what ``attnlab.suite.Suite.analyse`` writes
(``attnlab.lab.envelope``). An experiment that did not run is an envelope with ``status``
``"skipped"`` or ``"failed"`` and a one-line ``reason``. Tables and figures
are read from ``<experiments_dir>/<name>/table.md`` and ``figure.png``, where
``run_experiment`` writes them.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
from pathlib import Path
from typing import Any

from attnlab.files import staged
from attnlab.lab.claims import MIN_SEEDS, STATUSES, Z, fmt_margin, render
from attnlab.lab.seeds import rule_text
from attnlab.report import fidelity as chapter_fidelity
from attnlab.report.chapter import BUDGETS
from attnlab.report.claim_figures import claim_figures
from attnlab.report.glance import glance, with_processor

log = logging.getLogger(__name__)

CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2125;
       max-width: 1100px; margin: 2rem auto; padding: 0 1.5rem; }
h1 { border-bottom: 2px solid #1d2125; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #ccd; padding-bottom: .2rem; margin-top: 2.5rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: 13px; }
th, td { border: 1px solid #ccd; padding: .25rem .55rem; }
th { background: #eef0f4; }
tbody tr:nth-child(even) { background: #f8f9fb; }
code { background: #f1f2f4; padding: 0 .25rem; border-radius: 3px; }
pre { background: #f1f2f4; padding: .6rem; overflow-x: auto; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; border: 1px solid #dde; }
figcaption { color: #667; font-size: 13px; }
.missing { color: #a33; }
.held { color: #1a7f37; } .not-held { color: #c62828; } .inconclusive { color: #5b5f97; }
.skipped { color: #8a6d00; } .failed, .error { color: #c62828; }
"""


def status_of(envelope: dict[str, Any]) -> str:
    """``ok`` for a finished experiment, else its ``skipped`` / ``failed`` status."""
    return envelope.get("status", "ok")


def summary(envelopes: dict[str, dict], verdicts: list[dict]) -> dict[str, Any]:
    """Counts of claim verdicts and of experiment outcomes."""
    claims = {s: sum(v["status"] == s for v in verdicts) for s in STATUSES}
    experiments = {s: [n for n, e in envelopes.items() if status_of(e) == s]
                   for s in ("ok", "skipped", "failed")}
    return {"claims": claims, "claims_total": len(verdicts), "experiments": experiments}


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    from attnlab.train.progress import format_duration

    return f"{seconds:.1f} s" if seconds < 60 else format_duration(seconds)


def _settings_text(settings: dict[str, Any] | None) -> str:
    if not settings:
        return "–"
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in settings.items())


def _table_text(name: str, envelope: dict, folder: Path) -> str:
    path = folder / "table.md"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    try:  # re-render from the record when the table file is gone
        from attnlab.lab.registry import load

        return load(name).table(envelope["record"])
    except Exception as err:  # noqa: BLE001 - the report must still be written
        return f"*(table not available: {type(err).__name__}: {err})*\n"


def _verdict_owner(verdict: dict) -> str:
    return verdict.get("experiment") or verdict["id"].split(".")[0]


def _experiment_section(
    index: int, name: str, envelope: dict, verdicts: list[dict], folder: Path, out_dir: Path,
    profile: str | None,
) -> list[str]:
    title = envelope.get("title") or name
    lines = [f"## {index}. {title} (`{name}`)", ""]
    status = status_of(envelope)
    if status != "ok":
        lines += [f"**{status.upper()}**: {envelope.get('reason', 'no reason given')}", ""]
    else:
        reused = " (reused a finished record)" if envelope.get("reused") else ""
        train = (f"training: {envelope['runs']} runs, {_duration(envelope.get('train_s'))} "
                 "of worker time; " if envelope.get("runs") else "")
        lines += [
            f"{train}analysis: {_duration(envelope.get('wall_s'))}{reused}; profile "
            f"`{envelope.get('profile', profile)}`, seeds {envelope.get('seeds') or '–'}; "
            f"settings: `{_settings_text(envelope.get('settings'))}`.",
            "",
        ]
        if envelope.get("extra_round"):  # did the extra-seed round run, and why (not)
            lines += [f"**Seeds:** {envelope['extra_round']['text']}.", ""]
        if envelope.get("profile", profile) == "quick" and envelope.get("quick_changes"):
            lines += [f"**What quick changes:** {envelope['quick_changes']}", ""]
        lines += [_table_text(name, envelope, folder).rstrip(), ""]
        figure = folder / "figure.png"
        rel = Path(os.path.relpath(figure, out_dir)).as_posix()
        lines += [f"![{title}]({rel})" if figure.is_file() else "*(no figure)*", ""]
        beside = chapter_fidelity.compare(name, envelope.get("record") or {})
        if beside:
            lines += [chapter_fidelity.table(beside, envelope.get("profile", profile)), ""]
    if verdicts:
        lines += ["### Claims", "", render(verdicts).rstrip(), ""]
        short = [v for v in verdicts if v["status"] in ("not held", "inconclusive")]
        at = envelope.get("profile", profile)
        if short and at != "full" and name in BUDGETS:
            lines += [f"*{len(short)} of these claims {'is' if len(short) == 1 else 'are'} not "
                      f"held or inconclusive at `{at}`; the chapter's budget was "
                      f"{BUDGETS[name]}.*", ""]
    return lines


def all_comparisons(envelopes: dict[str, dict]) -> list[chapter_fidelity.Comparison]:
    """The chapter beside every finished experiment's record, in report order."""
    return [c for name, e in envelopes.items() if status_of(e) == "ok"
            for c in chapter_fidelity.compare(name, e.get("record") or {})]


def compose(
    envelopes: dict[str, dict], verdicts: list[dict], meta: dict[str, Any], out_dir: Path,
    experiments_dir: Path,
) -> str:
    """The whole report as Markdown."""
    s = summary(envelopes, verdicts)
    c = s["claims"]
    profile = meta.get("profile")
    counts = ", ".join(f"{c[k]} {k}" for k in STATUSES)
    fid = chapter_fidelity.fidelity(all_comparisons(envelopes)) if profile == "full" else None
    lines = [
        f"# attnlab report — profile `{profile}`",
        "",
        *glance(c, s["claims_total"], envelopes, meta, fid, _duration(meta.get("wall_s"))),
        f"**Claims: {counts}** (of {s['claims_total']}). Experiments: "
        f"{len(s['experiments']['ok'])} finished, {len(s['experiments']['skipped'])} skipped, "
        f"{len(s['experiments']['failed'])} failed. Total wall time: "
        f"{_duration(meta.get('wall_s'))}.",
        "",
    ]
    if verdicts:
        rule = VERDICT_RULE
        if meta.get("extra_seeds") is not None:
            rule += " " + rule_text(meta["extra_seeds"])
        budgets = profile != "full"
        if budgets:
            rule += (f" At the `{profile}` profile, a claim not held or inconclusive says the "
                     "chapter's budget beside it: the budgets differ, so such a verdict may say "
                     "the budget is too small to show the effect, not that the chapter is wrong.")
        lines += ["## Claim summary", "", rule, "", claim_table(verdicts, budgets=budgets), ""]
    not_run = [n for n, e in envelopes.items() if status_of(e) != "ok"]
    if not_run:
        lines += ["## Skipped and failed experiments", ""]
        lines += [f"- `{n}` **{status_of(envelopes[n])}**: {envelopes[n].get('reason', '')}"
                  for n in not_run]
        lines.append("")
    lines += ["## Profile and settings", ""]
    extra = "" if meta.get("extra_seeds") is None else f", extra seeds {meta['extra_seeds']}"
    lines += [f"Profile `{profile}`, seeds {meta.get('seeds', '–')}{extra}, corpus: "
              f"{meta.get('corpus_status', meta.get('corpus') or 'default search order')}.", ""]
    rows = ["| experiment | status | wall time | settings |", "|---|---|---:|---|"]
    for n, e in envelopes.items():
        settings = _settings_text(e.get("settings")).replace("|", "\\|")
        rows.append(f"| {n} | {status_of(e)} | {_duration(e.get('wall_s'))} | `{settings}` |")
    lines += [*rows, ""]
    for i, (name, envelope) in enumerate(envelopes.items(), 1):
        own = [v for v in verdicts if _verdict_owner(v) == name]
        lines += _experiment_section(i, name, envelope, own, experiments_dir / name, out_dir,
                                     profile)
    others = [v for v in verdicts if _verdict_owner(v) not in envelopes]
    if others:
        lines += ["## Other claims", "", render(others).rstrip(), ""]
    lines += _machine_section(meta)
    return "\n".join(lines).rstrip() + "\n"


VERDICT_RULE = (
    f"Each claim's predicate gives a signed margin per seed (how far past its threshold, in "
    f"its own unit; each seed compares runs trained with that seed). **Held**: the mean "
    f"margin is above zero by more than {Z:g} standard errors; **not held**: below zero by "
    f"more than {Z:g}; otherwise **inconclusive**, and always with fewer than {MIN_SEEDS} "
    f"seeds. Claims that need no training are one evaluation (held when the margin is "
    f"positive). A claim of several parts is held when every part is. **Error**: the "
    f"predicate raised (the suite then fails)."
)


def claim_table(verdicts: list[dict], *, budgets: bool = False) -> str:
    """Markdown: claim, verdict, the figure its rule compares and the chapter's figure for
    it (``report.claim_figures``), mean margin ± standard error, seeds, rule, experiment;
    with ``budgets``, the chapter's budget beside each claim not held or inconclusive."""
    rows = ["| claim | verdict | measured | the chapter | margin (mean ± SE) | seeds | rule "
            "| experiment |" + (" the chapter's budget |" if budgets else ""),
            "|---|---|---|---|---|---:|---|---|" + ("---|" if budgets else "")]
    for v in verdicts:
        parts = v.get("parts", [])
        if len(parts) == 1:
            margin = fmt_margin(parts[0])
        else:
            margin = "; ".join(f"{p['name']}: {fmt_margin(p)}" for p in parts) or "–"
        seeds = "1 evaluation" if not v.get("trained", True) else str(v.get("seeds", 0))
        figures = claim_figures(v)
        cells = [v["text"], f"**{v['status'].upper()}**", figures["measured"],
                 figures["chapter"], margin, seeds, v.get("rule", ""), _verdict_owner(v)]
        if budgets:
            short = v["status"] in ("not held", "inconclusive")
            cells.append(BUDGETS.get(_verdict_owner(v), "–") if short else "")
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    rows += ["", "Measured: the figure the rule compares, from the same records as the verdict "
             "(a ratio is the later model's held-out perplexity over the earlier one's, or as "
             "the rule says). The chapter: its published figure for the same quantity; † "
             "derived from its text, which states a difference; – none published."]
    return "\n".join(rows)


def _machine_section(meta: dict[str, Any]) -> list[str]:
    machine = meta.get("machine", {})
    rev = meta.get("code_revision", {})
    rows = ["| what | value |", "|---|---|"]
    for key, value in machine.items():
        rows.append(f"| {key} | {value} |")
    for key, value in meta.get("versions", {}).items():
        rows.append(f"| {key} version | {value} |")
    dirty = {True: " (with uncommitted changes)", False: "", None: ""}[rev.get("dirty")]
    commit = f"`{rev['commit']}`{dirty}" if rev.get("commit") else \
        f"attnlab {rev.get('version', '?')}, an installed package (no git commit)"
    rows.append(f"| code revision | {commit} |")
    for key in ("started_at", "finished_at"):
        if key in meta:
            rows.append(f"| {key.replace('_', ' ')} | {meta[key]} |")
    for key, value in meta.get("phases_s", {}).items():
        rows.append(f"| {key} phase | {_duration(value)} |")
    rows.append(f"| total wall time | {_duration(meta.get('wall_s'))} |")
    return ["## Machine, versions and code", "", *rows, ""]


def data_uri(path: Path) -> str:
    """``data:image/png;base64,…`` of a PNG file."""
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def to_html(markdown: str, image_src: Any = None) -> str:
    """The HTML body of ``markdown`` (CommonMark + tables, raw HTML off); each image's
    ``src`` is passed through ``image_src`` (None: a "figure not available" line)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        path = token.attrGet("src") or ""
        src = image_src(path) if image_src is not None else None
        alt = html.escape(token.content)
        if src is None:
            return f'<span class="missing">figure not available: {html.escape(path)}</span>'
        return f'<img src="{html.escape(src)}" alt="{alt}">'

    md.add_render_rule("image", image)
    return md.render(markdown)


def to_page(markdown: str, title: str, base: Path) -> str:
    """A self-contained HTML page: inline CSS, figures as data URIs, no external reference."""
    def image_src(rel: str) -> str | None:
        path = (base / rel).resolve()
        return data_uri(path) if path.suffix.lower() == ".png" and path.is_file() else None

    body = to_html(markdown, image_src)
    for status in reversed(STATUSES + ("failed",)):  # colour the verdicts ("not held" first)
        word = status.upper()
        cls = status.replace(" ", "-")
        body = body.replace(f"<strong>{word}</strong>", f'<strong class="{cls}">{word}</strong>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}</body>\n</html>\n"
    )


def write_report(
    envelopes: dict[str, dict],
    verdicts: list[dict],
    out_dir: str | Path,
    meta: dict[str, Any],
    *,
    experiments_dir: str | Path | None = None,
) -> dict[str, Path]:
    """Write report.md, report.html and results.json into ``out_dir``; returns their paths.

    ``experiments_dir`` is where ``run_experiment`` put ``<name>/table.md`` and
    ``<name>/figure.png`` (default: ``out_dir``).
    """
    out_dir = Path(out_dir)
    experiments_dir = Path(experiments_dir) if experiments_dir is not None else out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = with_processor(meta)
    markdown = compose(envelopes, verdicts, meta, out_dir, experiments_dir)
    paths = {
        "markdown": out_dir / "report.md",
        "html": out_dir / "report.html",
        "json": out_dir / "results.json",
    }
    title = f"attnlab report — {meta.get('profile', '')}"
    results = {
        "meta": meta,
        "summary": summary(envelopes, verdicts),
        "claims": verdicts,
        "claim_figures": {v["id"]: claim_figures(v) for v in verdicts},  # as the summary shows
        "experiments": envelopes,
    }
    texts = {
        "markdown": markdown,
        "html": to_page(markdown, title, out_dir),
        "json": json.dumps(results, indent=2, default=str) + "\n",
    }
    with staged(out_dir) as stage:  # all three files are renamed in together, or none is
        for key, path in paths.items():
            stage.write_text(path.name, texts[key])
    log.info("report written to %s", paths["html"])
    return paths
