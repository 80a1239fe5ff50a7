"""The one source of the figures the README and the docs quote: the results files in
docs/results/, written from finished reports, and the pages' generated blocks rendered from
those files alone.

    python scripts/results_doc.py QUICK_REPORT [--full FULL_REPORT] [--estimates DIR]
    python scripts/results_doc.py --check          # exit 1 if a generated block is stale
    python scripts/results_doc.py --render         # the blocks again, from the files as they are

- ``claims.json``: the quick report's claims (verdict, the measured figure and the
  chapter's, as the report's claim summary shows them: ``attnlab.report.claim_figures``),
  each experiment's seeds, runs, times and table, and the run's profile, dates, processor,
  wall time and code revision;
- ``claims-full.json`` (``--full``): the same for a full-profile report of the experiments
  that fit this machine, with the rest named and what running them would take; a report of
  some experiments adds to the full runs recorded before it (its experiments replace theirs,
  each experiment keeps the run that made it, and one whose verdicts were decided by an older
  rule version than its claims have today is dropped to the not-run list); each experiment
  of a full run is shown with the chapter's figures beside its measured ones;
- ``estimates.json`` (``--estimates DIR``): the outputs of ``attnlab reproduce --profile
  full --estimate [--only ...] [--jobs N]`` that ``DIR`` holds as ``full-W.txt`` (the
  whole suite on W workers) and ``not-run.txt`` (the experiments the full report lacks).

The reading of reports into those files is ``scripts/results_collect.py``.
A page's block lies between ``<!-- results:NAME:begin -->`` and ``<!-- results:NAME:end -->``
(``BLOCKS`` says which page holds which); ``tests/test_packaging_results.py`` checks that
every block is its rendering and that every figure in it is found in the results files. The
quick report's ``report.html`` is copied beside them as the sample report.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
FILE = RESULTS / "claims.json"
FULL = RESULTS / "claims-full.json"
ESTIMATES = RESULTS / "estimates.json"
SAMPLE = RESULTS / "report.html"
STATUSES = ("held", "not held", "inconclusive", "skipped", "error")  # as results_collect's
# page -> the blocks it holds
BLOCKS = {
    ROOT / "README.md": ("summary",),
    ROOT / "docs" / "results.md": ("claims", "quick", "full"),
    ROOT / "docs" / "cluster.md": ("estimates",),
    ROOT / "docs" / "es" / "README.md": ("summary_es",),
    ROOT / "docs" / "es" / "resultados.md": ("summary_es", "claims_es"),
    # the sections that speak of a run's figures show that run's, never figures typed by hand
    ROOT / "docs" / "experiments.md": ("extra_round",),
    **{ROOT / "src" / "attnlab" / "experiments" / name / "about.md": (f"claims_{name}",)
       for name in ("agreement", "induction", "icl_gd")},  # their sections (experiments_doc.py)
}
WORKERS = (2, 8, 32, 128)  # the cluster page's sizes
EXPERIMENT_BLOCKS = ("agreement", "induction", "icl_gd")  # claims_NAME: render_experiment


# -- rendering -----------------------------------------------------------------


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES if counts.get(s))


def _where(results: dict[str, Any]) -> str:
    return (f"{results['processor']}, {results['cpu_count']} CPUs, {results['device']}, "
            f"{(results.get('started_at') or '')[:10]}")


def _duration(seconds: float | None) -> str:
    from attnlab.train.progress import format_duration

    return format_duration(seconds) if seconds else "–"


def version(claim: dict[str, Any]) -> str:
    """``v2``: the version of the rule that decided a recorded verdict; ``not recorded`` for
    a verdict of a run made before versions were recorded (none is made up for it)."""
    number = claim.get("version")
    return "not recorded" if number is None else f"v{number}"


def _full_cell(claim: dict[str, Any], full: dict[str, Any] | None) -> str:
    found = next((c for c in (full or {"claims": []})["claims"] if c["id"] == claim["id"]), None)
    if found is None:
        return "not run at full"
    return f"**{found['status'].upper()}** (rule {version(found)}) {_cell(found['measured'])}"


def render_claims(results: dict[str, Any], full: dict[str, Any] | None) -> str:
    lines = [
        f"The claims of one `{results['profile']}` run ({_where(results)}; from "
        "[results/claims.json](results/claims.json); its report: "
        "[results/report.html](results/report.html)), and of the full profile where a "
        "recorded full run has it ([results/claims-full.json](results/claims-full.json)):",
        "",
        "| claim | verdict | rule | measured | the chapter | full |",
        "|---|---|---|---|---|---|",
    ]
    for c in results["claims"]:
        lines.append(f"| {_cell(c['text'])} | **{c['status'].upper()}** | {version(c)} | "
                     f"{_cell(c['measured'])} | {_cell(c['chapter'])} | {_full_cell(c, full)} |")
    lines += [
        "",
        f"{_counts(results['summary'])} of {sum(results['summary'].values())}. Measured: the "
        "figure each claim's rule compares (a ratio is the later model's held-out perplexity "
        "over the earlier one's); the chapter: its published figure for the same quantity († "
        "derived from its text, which states a difference; – none published); full: the "
        "verdict and figure at the chapter's own settings. Rule: the version of the claim's "
        "rule that decided the verdict (each experiment's rules.json, in its folder, holds every "
        "version); not recorded: the run was made before verdicts recorded it.",
    ]
    return "\n".join(lines)


def render_run(results: dict[str, Any], heading: str) -> str:
    """A run's per-experiment summary and every experiment's table from its report."""
    phases = results.get("phases_s") or {}
    lines = [
        f"`attnlab reproduce --profile {results['profile']}` ({_where(results)}, torch "
        f"{results['torch']}, commit `{(results.get('code_revision') or {}).get('commit', '')[:7]}`"
        f"), started {results['started_at']}: **{_duration(results['wall_s'])}** in all "
        f"(training {_duration(phases.get('train'))}, analysis {_duration(phases.get('analyse'))}"
        f", extra seeds {_duration(phases.get('extra seeds'))}); "
        f"{_counts(results['summary'])}.",
        "",
        "| experiment | seeds | training runs (worker time) | analysis | held / not held / "
        "inconclusive |",
        "|---|---:|---|---|---|",
    ]
    for e in results["experiments"]:
        c = e["counts"]
        lines.append(f"| `{e['name']}` | {e['seeds'] or '–'} | {e['runs']} "
                     f"({_duration(e['train_s'])}) | {_duration(e['analysis_s'])} | "
                     f"{c['held']} / {c['not held']} / {c['inconclusive']} |")
    for e in results["experiments"]:
        extra = f" ({e['extra_round']})" if e["extra_round"] else ""
        table = re.sub(r"^#+ (.+)$", r"**\1**", e["table"].strip(), flags=re.M)  # in a section
        lines += ["", f"{heading} `{e['name']}`: {e['title']}{extra}", "", table]
        if e.get("beside") and results.get("profile") == "full":  # the chapter beside it
            lines += ["", re.sub(r"^#+ (.+)$", r"**\1**", e["beside"].strip(), flags=re.M)]
    return "\n".join(lines)


def render_full(full: dict[str, Any] | None, estimates: dict[str, Any] | None) -> str:
    if full is None:
        return "No full-profile run has been recorded."
    rest, lines = full["not_run"], []
    for run in full.get("runs") or [full]:  # each full run with the experiments it holds
        held = [e for e in full["experiments"]
                if (e.get("run") or full)["started_at"] == run["started_at"]]
        counts = {s: sum(e["counts"].get(s, 0) for e in held) for s in STATUSES[:3]}
        lines += [render_run({**run, "experiments": held, "summary": counts}, "####"), ""]
    lines.append(f"Not run at full under today's rules: "
                 f"{', '.join(f'`{n}`' for n in rest['experiments'])}. `{rest['command']}` "
                 "would run them.")
    if estimates and estimates.get("not_run"):
        lines[-1] += (" The estimate of "
                      f"{estimates.get('not_run_measured_at') or estimates.get('measured_at')}"
                      " said:")
        lines += ["", "```", estimates["not_run"], "```"]
    return "\n".join(lines)


def render_estimates(estimates: dict[str, Any] | None) -> str:
    if not estimates or not estimates.get("full"):
        return "No estimate has been recorded yet: run the command on your machine."
    lines = [f"Measured {estimates['measured_at']} ({estimates['generated_by']}):", ""]
    for workers in sorted(estimates["full"], key=int):
        lines += [f"`--jobs {workers}`:", "", "```", estimates["full"][workers], "```", ""]
    return "\n".join(lines).rstrip()


def render_summary(results: dict[str, Any]) -> str:
    counts = results["summary"]
    seeds = [c["seeds"] for c in results["claims"] if c["seeds"]]
    return (f"The last quick run ({_where(results)}) took **{_duration(results['wall_s'])}** "
            f"and decided **{sum(counts.values())} claims over {min(seeds)}–{max(seeds)} seeds: "
            f"{counts['held']} held, {counts['not held']} not held, {counts['inconclusive']} "
            "inconclusive**.")


def _verdict_es(status: str) -> str:
    from attnlab.report.words import verdict

    return verdict(status, "es")


def _version_es(claim: dict[str, Any]) -> str:
    number = claim.get("version")
    return "no registrada" if number is None else f"v{number}"


def render_summary_es(results: dict[str, Any]) -> str:
    from attnlab.report.words import counted

    counts, n = results["summary"], sum(results["summary"].values())
    seeds = [c["seeds"] for c in results["claims"] if c["seeds"]]
    said = ", ".join(f"{counts[s]} {counted(s, 'es', counts[s])}"
                     for s in ("held", "not held", "inconclusive"))
    return (f"La última ejecución del perfil quick ({_where_es(results)}) tardó "
            f"**{_duration(results['wall_s'])}** y decidió **{n} afirmaciones con "
            f"{min(seeds)}–{max(seeds)} semillas: {said}**.")


def _where_es(results: dict[str, Any]) -> str:
    return (f"{results['processor']}, {results['cpu_count']} CPU, {results['device']}, "
            f"{results['started_at'][:10]}")


def render_claims_es(results: dict[str, Any], full: dict[str, Any] | None) -> str:
    """The claims table of ``render_claims`` in the Spanish report's words."""
    at_full = {c["id"]: c for c in (full or {"claims": []})["claims"]}

    def full_cell(claim: dict[str, Any]) -> str:
        found = at_full.get(claim["id"])
        if found is None:
            return "no ejecutada en full"
        words = (found.get("es") or {}).get("measured", found["measured"])
        return f"**{_verdict_es(found['status'])}** (regla {_version_es(found)}) {_cell(words)}"

    lines = ["Las afirmaciones de una ejecución del perfil "
             f"`{results['profile']}` ({_where_es(results)}; de "
             "[claims.json](../results/claims.json); su informe: "
             "[report.html](../results/report.html)), y del perfil full donde una ejecución "
             "full registrada la tiene ([claims-full.json](../results/claims-full.json)):",
             "",
             "| afirmación | veredicto | regla | medido | el capítulo | full |",
             "|---|---|---|---|---|---|"]
    for c in results["claims"]:
        es = c.get("es") or {}
        lines.append(f"| {_cell(es.get('text', c['text']))} | **{_verdict_es(c['status'])}** | "
                     f"{_version_es(c)} | {_cell(es.get('measured', c['measured']))} | "
                     f"{_cell(es.get('chapter', c['chapter']))} | {full_cell(c)} |")
    lines += ["", "Medido: la cifra que compara la regla de cada afirmación (una razón es la "
              "perplejidad de validación del modelo posterior entre la del anterior); el "
              "capítulo: su cifra publicada para la misma magnitud († deducida de su texto, que "
              "da una diferencia; – ninguna publicada); full: el veredicto y la cifra con los "
              "ajustes del propio capítulo. Regla: la versión de la regla de la afirmación que "
              "decidió el veredicto (el rules.json de cada experimento, en su carpeta, guarda "
              "todas); no registrada: la ejecución es anterior a que los veredictos la "
              "registraran."]
    return "\n".join(lines)


def render_experiment(name: str, results: dict[str, Any], full: dict[str, Any] | None) -> str:
    """One experiment's claims in the last quick run, with their measured figures and the
    full profile's verdict where it ran: what a page's section on that experiment quotes."""
    seeds = next((e["seeds"] for e in results["experiments"] if e["name"] == name), None)
    lines = [
        f"In the last `{results['profile']}` run ({_where(results)}, {seeds} seeds; "
        "[results/claims.json](results/claims.json)) and at the full profile where it ran "
        "([results/claims-full.json](results/claims-full.json)):",
        "",
        "| claim | verdict | rule | measured | full |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {_cell(c['text'])} | **{c['status'].upper()}** | {version(c)} | "
              f"{_cell(c['measured'])} | {_full_cell(c, full)} |"
              for c in results["claims"] if c["experiment"] == name]
    lines += ["", "The experiment's whole table: [results.md](results.md); your own run: "
              f"`attnlab run {name} --profile {results['profile']}`."]
    return "\n".join(lines)


def render_extra_round(results: dict[str, Any], full: dict[str, Any] | None) -> str:
    """What the extra round of seeds cost in the recorded runs that had it, and what it added.
    The verdicts before the round are not recorded, so what it changed is not said here."""
    runs = [(results, results["experiments"])]
    for run in (full or {}).get("runs") or ([full] if full else []):
        runs.append((run, [e for e in full["experiments"]
                           if (e.get("run") or full)["started_at"] == run["started_at"]]))
    lines = []
    for run, experiments in runs:
        spent = (run.get("phases_s") or {}).get("extra seeds")
        if not spent:
            continue
        added = [f"`{e['name']}` ({e['extra_round']})" for e in experiments
                 if e.get("extra_round") and not e["extra_round"].startswith("no ")]
        lines.append(f"- the `{run['profile']}` run of {_where(run)}: the round took "
                     f"**{_duration(spent)}** of its **{_duration(run['wall_s'])}**; "
                     f"{'; '.join(added) or 'no experiment'}.")
    if not lines:
        return "No recorded run had the round."
    return "\n".join(["The recorded runs that had the round "
                      "([results/claims-full.json](results/claims-full.json)):", "", *lines])


def render(name: str, results: dict[str, Any], full: dict[str, Any] | None,
           estimates: dict[str, Any] | None) -> str:
    """The block ``name``, markers included, from the results files only."""
    body = {"claims": lambda: render_claims(results, full),
            "quick": lambda: render_run(results, "####"),
            "full": lambda: render_full(full, estimates),
            "estimates": lambda: render_estimates(estimates),
            "summary": lambda: render_summary(results),
            "summary_es": lambda: render_summary_es(results),
            "claims_es": lambda: render_claims_es(results, full),
            "extra_round": lambda: render_extra_round(results, full),
            **{f"claims_{n}": (lambda n=n: render_experiment(n, results, full))
               for n in EXPERIMENT_BLOCKS}}[name]()
    return f"<!-- results:{name}:begin -->\n{body}\n<!-- results:{name}:end -->"


def block(text: str, name: str) -> str:
    """The page's current block ``name``, markers included."""
    found = re.search(rf"<!-- results:{name}:begin -->.*?<!-- results:{name}:end -->", text,
                      re.S)
    if found is None:
        raise KeyError(f"no results:{name} block")
    return found.group(0)


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def read_all() -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]:
    """claims.json, claims-full.json and estimates.json (None where not written yet)."""
    return json.loads(FILE.read_text(encoding="utf-8")), _read(FULL), _read(ESTIMATES)


def stale() -> list[str]:
    """The blocks whose page text is not their rendering."""
    files = read_all()
    return [f"{page.relative_to(ROOT)}:{name}" for page, names in BLOCKS.items()
            for name in names
            if block(page.read_text(encoding="utf-8"), name) != render(name, *files)]


def _write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def publish_sample(report: Path) -> None:
    """The quick report's page as the sample, with the corpus named by its file alone: the
    folder it was read from is the machine's, not the reader's."""
    page = (report / "report.html").read_text(encoding="utf-8")
    corpus = json.loads((report / "results.json").read_text(encoding="utf-8"))["meta"].get(
        "corpus_status", "")
    path = corpus.strip("`")
    if "/" in path:
        page = page.replace(path, Path(path).name)
    SAMPLE.write_text(page, encoding="utf-8")


def _script(name: str) -> Any:
    """Another script of scripts/, loaded by its path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        if bad := stale():
            print(f"stale generated blocks: {', '.join(bad)}; run python scripts/results_doc.py "
                  "REPORT_DIR", file=sys.stderr)
            return 1
        return 0
    options = dict(zip(argv[1::2], argv[2::2], strict=False))
    if not argv or len(argv) % 2 != 1 or set(options) - {"--full", "--estimates"}:
        print(__doc__, file=sys.stderr)
        return 2
    if argv != ["--render"]:  # --render: the blocks alone, after their rendering changed
        report = Path(argv[0])
        reading = _script("results_collect")
        RESULTS.mkdir(parents=True, exist_ok=True)
        _write(FILE, reading.collect(report))
        if "--full" in options:
            _write(FULL, reading.collect_full(Path(options["--full"]), _read(FULL)))
        if "--estimates" in options:
            _write(ESTIMATES, reading.collect_estimates(Path(options["--estimates"]),
                                                        _read(ESTIMATES)))
        publish_sample(report)
    files = read_all()
    for page, names in BLOCKS.items():
        text = page.read_text(encoding="utf-8")
        for name in names:
            text = text.replace(block(text, name), render(name, *files))
        page.write_text(text, encoding="utf-8")
    _script("experiments_doc").main([])  # the experiments' sections into docs/experiments.md
    print(f"wrote the results files and the generated blocks of "
          f"{', '.join(str(p.relative_to(ROOT)) for p in BLOCKS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
