"""Write one report folder: ``report.md``, a self-contained ``report.html``, ``results.json``.

The report is composed once, as Markdown, in the reader's language (English or
Spanish, ``attnlab.report.words``); the HTML page is the same text rendered by
``markdown-it-py`` (``attnlab.report.page``: raw HTML off, so a record's text can
never inject markup) with every figure inlined as a base64 PNG ``data:`` URI and the
style sheet inline, so the page opens offline, anywhere, and can be mailed as one
file. It opens with what a reader needs first (``glance``), a table of contents with
each experiment's verdict counts and one paragraph per experiment
(``attnlab.report.overview``), then the claim summary, the settings and the
experiments' sections. ``results.json`` holds every
envelope (the experiment records), every claim verdict and the meta.

Nothing here runs an experiment or decides a claim: it renders finished
records (``attnlab.suite`` makes them) and verdicts
(``attnlab.kit.claims`` decides them).

An *envelope* is what ``attnlab.suite.Suite.analyse`` writes
(``attnlab.kit.envelope``). An experiment that did not run is an envelope with ``status``
``"skipped"`` or ``"failed"`` and a one-line ``reason``. Tables and figures
are read from ``<experiments_dir>/<name>/table.md`` and ``figure.png``, where
``run_experiment`` writes them; a table, written in English, is shown in the page's language
(``attnlab.report.table_words``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from attnlab.files import staged
from attnlab.i18n.logs import reason_in, stored
from attnlab.kit.claims import MIN_SEEDS, STATUSES, Z
from attnlab.kit.envelope import status_of
from attnlab.kit.extra_seeds import EXTRA_SEEDS, off_rule, rule_text
from attnlab.kit.verdict_words import quick_changes
from attnlab.report import fidelity as chapter_fidelity
from attnlab.report import overview
from attnlab.report.claim_figures import claim_figures
from attnlab.report.figures import caption, figure_path, relative
from attnlab.report.glance import glance, with_processor
from attnlab.report.page import CSS, data_uri, to_html, to_page
from attnlab.report.provenance import ORIGINAL
from attnlab.report.table_words import speak
from attnlab.report.words import (
    budget,
    claim_text,
    duration,
    has,
    numbers,
    of,
    resolve_lang,
    t,
    title,
    tn,
)

log = logging.getLogger(__name__)

REPORT_FILES = {"markdown": "report.md", "html": "report.html", "json": "results.json"}  # by key


def summary(envelopes: dict[str, dict], verdicts: list[dict]) -> dict[str, Any]:
    """Counts of claim verdicts and of experiment outcomes."""
    claims = {s: sum(v["status"] == s for v in verdicts) for s in STATUSES}
    experiments = {s: [n for n, e in envelopes.items() if status_of(e) == s]
                   for s in ("ok", "skipped", "failed")}
    return {"claims": claims, "claims_total": len(verdicts), "experiments": experiments}


def _settings_text(settings: dict[str, Any] | None) -> str:
    if not settings:
        return "–"
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in settings.items())


def _table_text(name: str, envelope: dict, folder: Path, lang: str = "en") -> str:
    """The experiment's own table (its ``table.md``, else made again from the record), in
    ``lang`` (``attnlab.report.table_words``)."""
    path = folder / "table.md"
    if path.is_file():
        return speak(name, path.read_text(encoding="utf-8"), lang)
    try:  # re-render from the record when the table file is gone
        from attnlab.kit.registry import load

        return speak(name, load(name).table(envelope["record"]), lang)
    except Exception as err:  # noqa: BLE001 - the report must still be written
        return f"*(table not available: {type(err).__name__}: {err})*\n"


_verdict_owner = overview.owner


def total_s(envelope: dict[str, Any]) -> float | None:
    """Training (the runs' own time, summed) plus analysis of one experiment, in seconds."""
    parts = [envelope.get(k) for k in ("train_s", "wall_s")]
    known = [x for x in parts if isinstance(x, int | float)]
    return sum(known) if known else None


def _experiment_section(
    index: int, name: str, envelope: dict, verdicts: list[dict], folder: Path, out_dir: Path,
    profile: str | None, lang: str,
) -> list[str]:
    shown = title(name, envelope, lang)
    lines = [f"## {index}. {shown} (`{name}`)", ""]
    status = status_of(envelope)
    at = envelope.get("profile", profile)
    if status != "ok":
        lines += [f"**{t(f'verdict.{status}', lang)}**: "
                  f"{reason_in(envelope, lang) or t('section.no_reason', lang)}", ""]
    else:
        runs = envelope.get("runs")
        train = t("section.training", lang, runs=runs,
                  time=duration(envelope.get("train_s"))) if runs else ""
        reused = t("section.reused", lang) if envelope.get("reused") else ""
        lines += [t("section.line", lang, training=train,
                    analysis=duration(envelope.get("wall_s")), reused=reused, profile=at,
                    seeds=envelope.get("seeds") or "–",
                    settings=_settings_text(envelope.get("settings"))), ""]
        if envelope.get("extra_round"):  # did the extra-seed round run, and why (not)
            lines += [f"**{t('section.seeds', lang)}** "
                      f"{round_text(envelope['extra_round'], lang)}.", ""]
        changes = quick_changes(name, lang, envelope.get("quick_changes") or "")
        if at == "quick" and changes:
            lines += [f"**{t('section.quick_changes', lang)}** {changes}", ""]
        lines += [_table_text(name, envelope, folder, lang).rstrip(), ""]
        figure = figure_path(name, envelope, folder, out_dir, lang)
        if figure is None:
            lines += [f"*{t('section.no_figure', lang)}*", ""]
        else:
            lines += [f"![{shown}]({relative(figure, out_dir)})", ""]
            if caption(name, lang):
                lines += [f"*{caption(name, lang)}*", ""]
        beside = chapter_fidelity.compare(name, envelope.get("record") or {})
        if beside:
            lines += [chapter_fidelity.table(beside, at, lang), ""]
    if verdicts:
        lines += [f"### {t('section.claims', lang)}", "", overview.claims_list(verdicts, lang)
                  .rstrip(), ""]
        short = [v for v in verdicts if v["status"] in ("not held", "inconclusive")]
        if short and at != "full" and budget(name, "en"):
            key = "section.budget.only" if len(verdicts) == 1 else "section.budget"
            note = tn(key, len(short), lang, total=len(verdicts), profile=at,
                      budget=budget(name, lang))
            lines += [f"*{note}*", ""]
    return lines


def round_text(note: dict[str, Any], lang: str) -> str:
    """An experiment's extra-seed round (``attnlab.kit.extra_seeds``), ran or not and why, in
    ``lang``: the note's own text in English, else said again from its fields."""
    if lang == "en" or "seeds_before" not in note:
        return note.get("text", "")
    before, extra = note["seeds_before"], note.get("extra_seeds", 0)
    if note.get("ran"):
        seeds = t("round.range", lang, first=before, last=before + extra - 1)
        return t("round.ran", lang, seeds=seeds, because=", ".join(note.get("because", [])),
                 before=before)
    if before < MIN_SEEDS:
        return t("round.few", lang, n=before, need=MIN_SEEDS)
    if extra == 0:
        off = t("round.default_off", lang, profile=note["profile_default"], n=EXTRA_SEEDS) \
            if note.get("profile_default") else t("round.off", lang)
        would = note.get("would_call") or []
        return off + (t("round.would", lang, which=", ".join(would), n=before) if would else "")
    if note.get("unmoved"):
        return t("round.unmoved", lang, which="; ".join(note["unmoved"]))
    return t("round.none", lang, n=before)


def all_comparisons(envelopes: dict[str, dict]) -> list[chapter_fidelity.Comparison]:
    """The chapter beside every finished experiment's record, in report order."""
    return [c for name, e in envelopes.items() if status_of(e) == "ok"
            for c in chapter_fidelity.compare(name, e.get("record") or {})]


def verdict_rule(lang: str, extra_seeds: int | None = None, profile: str | None = None) -> str:
    """How a verdict is decided, in words (and the extra-seed rule, and the budgets' note)."""
    rule = t("rule.verdict", lang, z=f"{Z:g}", min_seeds=MIN_SEEDS)
    if extra_seeds is not None:
        rule += " " + (off_rule(extra_seeds, profile, lang) if extra_seeds == 0 else
                       rule_text(extra_seeds) if lang == "en" else
                       t("rule.extra", lang, n=extra_seeds))
    if profile != "full":
        rule += " " + t("rule.budgets", lang, profile=profile)
    return rule


def settings_table(envelopes: dict[str, dict], lang: str) -> list[str]:
    """Markdown: per experiment its status, training and analysis time, and settings."""
    head = [t(f"settings.col.{k}", lang) for k in ("experiment", "status", "training",
                                                   "analysis", "total", "settings")]
    rows = ["| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---|"]
    for n, e in envelopes.items():
        settings = _settings_text(e.get("settings")).replace("|", "\\|")
        train = duration(e.get("train_s")) if e.get("runs") else "–"
        rows.append(f"| {n} | {t(f'status.{status_of(e)}', lang)} | {train} | "
                    f"{duration(e.get('wall_s'))} | {duration(total_s(e))} | `{settings}` |")
    return [*rows, "", t("settings.note", lang), ""]


def compose(
    envelopes: dict[str, dict], verdicts: list[dict], meta: dict[str, Any], out_dir: Path,
    experiments_dir: Path, lang: str = "en",
) -> str:
    """The whole report as Markdown, in ``lang``."""
    for name in envelopes:
        of(name)  # each experiment's words in the catalogue before any is said
    s = summary(envelopes, verdicts)
    profile = meta.get("profile")
    fid = chapter_fidelity.fidelity(all_comparisons(envelopes)) if profile == "full" else None
    ran = {**meta, **run_times(meta)}  # a re-render shows the original run's time and place
    lines = [f"# {t('title', lang, profile=profile)}", "",
             *glance(s, envelopes, ran, fid, wall_text(meta, envelopes, lang), lang)]
    lines += overview.contents(envelopes, verdicts, lang)
    lines += overview.paragraphs(envelopes, verdicts, lang)
    if verdicts:
        lines += [f"## {t('claims.heading', lang)}", "",
                  verdict_rule(lang, meta.get("extra_seeds"), profile), "",
                  overview.claim_table(verdicts, envelopes, lang), ""]
    not_run = [n for n, e in envelopes.items() if status_of(e) != "ok"]
    if not_run:
        lines += [f"## {t('not_run.heading', lang)}", ""]
        lines += [f"- `{n}` **{t(f'status.{status_of(envelopes[n])}', lang)}**: "
                  f"{reason_in(envelopes[n], lang)}" for n in not_run]
        lines.append("")
    lines += [f"## {t('settings.heading', lang)}", ""]
    extra = "" if meta.get("extra_seeds") is None else \
        t("settings.extra", lang, n=meta["extra_seeds"])
    corpus = stored(meta, "corpus_status", lang) or meta.get("corpus") or \
        t("settings.corpus_default", lang)
    seeds = meta.get("seeds", "–")
    if seeds == "the profile's":  # what collect_meta records when --seeds is not given
        seeds = t("settings.profile_seeds", lang)
    lines += [t("settings.line", lang, profile=profile, seeds=seeds,
                extra=extra, corpus=corpus), ""]
    lines += settings_table(envelopes, lang)
    for i, (name, envelope) in enumerate(envelopes.items(), 1):
        own = [v for v in verdicts if _verdict_owner(v) == name]
        lines += _experiment_section(i, name, envelope, own, experiments_dir / name, out_dir,
                                     profile, lang)
    others = [v for v in verdicts if _verdict_owner(v) not in envelopes]
    if others:
        lines += [f"## {t('others.heading', lang)}", "", overview.claims_list(others, lang)
                  .rstrip(), ""]
    lines += _machine_section(meta, lang, wall_text(meta, envelopes, lang))
    return numbers("\n".join(lines).rstrip() + "\n", lang)


VERDICT_RULE = verdict_rule("en")  # the English rule, without the extra-seed sentence


def claim_table(verdicts: list[dict], *, budgets: bool = False) -> str:
    """The English claim summary (``overview.claim_table``); ``budgets`` is kept for callers
    of the older table: the budgets are now in each experiment's section."""
    return overview.claim_table(verdicts, {}, "en")


def run_times(meta: dict[str, Any]) -> dict[str, Any]:
    """The times and machine of the run a report shows: its own, or for a re-render
    (``meta["report_only"]``) the original run's as recorded ({} when not)."""
    if not meta.get("report_only"):
        return {k: meta[k] for k in ORIGINAL if k in meta}
    return {"started_at": None, "finished_at": None, "phases_s": {},
            **(meta.get("original_run") or {})}


def wall_text(meta: dict[str, Any], envelopes: dict[str, dict], lang: str) -> str:
    """The wall time a report states. A re-render trained nothing: it gives the original
    run's wall time and says it re-rendered; where that is not recorded, the experiments'
    own recorded time summed (never its own few seconds)."""
    if not meta.get("report_only"):
        return duration(meta.get("wall_s"))
    original = meta.get("original_run") or {}
    at = meta.get("finished_at", "–")
    if isinstance(original.get("wall_s"), int | float):
        return t("wall.rerendered", lang, wall=duration(original["wall_s"]), at=at)
    known = [x for x in map(total_s, envelopes.values()) if x is not None]
    return t("wall.unknown", lang, work=duration(sum(known)) if known else "–", at=at)


def _machine_value(key: str, value: Any, lang: str) -> Any:
    """A machine row's value in the page's language where it is attnlab's own words.

    >>> _machine_value("training workers", "2 worker processes", "es")
    '2 procesos de trabajo'
    """
    if key == "training workers" and isinstance(value, str):
        if value == "this process":
            return t("machine.this_process", lang)
        n, _, rest = value.partition(" ")
        if n.isdigit() and rest == "worker processes":
            return t("machine.workers_n", lang, n=n)
    return value


def _machine_section(meta: dict[str, Any], lang: str = "en", wall: str | None = None
                     ) -> list[str]:
    ran = run_times(meta)
    machine = ran.get("machine") or meta.get("machine", {})
    rev = ran.get("code_revision") or meta.get("code_revision", {})
    rows = [f"| {t('machine.col.what', lang)} | {t('machine.col.value', lang)} |", "|---|---|"]
    for key, value in machine.items():
        label = t(f"machine.{key}", lang) if has(f"machine.{key}") else key
        rows.append(f"| {label} | {_machine_value(key, value, lang)} |")
    for key, value in meta.get("versions", {}).items():
        rows.append(f"| {t('machine.version', lang, name=key)} | {value} |")
    dirty = t("machine.dirty", lang) if rev.get("dirty") else ""
    commit = f"`{rev['commit']}`{dirty}" if rev.get("commit") else \
        t("machine.installed", lang, version=rev.get("version", "?"))
    rows.append(f"| {t('machine.revision', lang)} | {commit} |")
    if meta.get("report_only"):  # when, and by which code, the records were re-rendered
        now = meta.get("code_revision", {}).get("commit") or "?"
        rows.append(f"| {t('machine.rerendered', lang)} | "
                    f"{meta.get('finished_at', '–')}, `{now}` |")
    for key in ("started_at", "finished_at"):
        if ran.get(key):
            rows.append(f"| {t(f'machine.{key}', lang)} | {ran[key]} |")
    for key, value in (ran.get("phases_s") or {}).items():
        label = t(f"machine.phase.{key}", lang) if has(f"machine.phase.{key}") else key
        rows.append(f"| {label} | {duration(value)} |")
    wall = wall if wall is not None else duration(meta.get("wall_s"))
    rows.append(f"| {t('glance.wall_time', lang)} | {wall} |")
    return [f"## {t('machine.heading', lang)}", "", *rows, ""]


def write_report(
    envelopes: dict[str, dict],
    verdicts: list[dict],
    out_dir: str | Path,
    meta: dict[str, Any],
    *,
    experiments_dir: str | Path | None = None,
    lang: str | None = None,
) -> dict[str, Path]:
    """Write report.md, report.html and results.json into ``out_dir``; returns their paths.

    ``experiments_dir`` is where ``run_experiment`` put ``<name>/table.md`` and
    ``<name>/figure.png`` (default: ``out_dir``). ``lang`` is the language of report.md
    and report.html (None: ``ATTNLAB_LANG``, then the locale, then English); results.json
    is the same in every language.
    """
    lang = resolve_lang(lang or None)
    out_dir = Path(out_dir)
    experiments_dir = Path(experiments_dir) if experiments_dir is not None else out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = with_processor(meta)
    markdown = compose(envelopes, verdicts, meta, out_dir, experiments_dir, lang)
    paths = {key: out_dir / name for key, name in REPORT_FILES.items()}
    results = {
        "meta": meta,
        "summary": summary(envelopes, verdicts),
        "claims": verdicts,
        "claim_figures": {v["id"]: claim_figures(v) for v in verdicts},  # as the summary shows
        "experiments": envelopes,
    }
    texts = {
        "markdown": markdown,
        "html": to_page(markdown, t("title", lang, profile=meta.get("profile", "")), out_dir,
                        lang),
        "json": json.dumps(results, indent=2, default=str) + "\n",
    }
    with staged(out_dir) as stage:  # all three files are renamed in together, or none is
        for key, path in paths.items():
            stage.write_text(path.name, texts[key])
    log.info("report written to %s", paths["html"])
    return paths


__all__ = ["CSS", "REPORT_FILES", "all_comparisons", "claim_table", "claim_text", "compose",
           "data_uri", "run_times", "status_of", "summary", "to_html", "to_page", "total_s",
           "verdict_rule", "wall_text", "write_report"]
