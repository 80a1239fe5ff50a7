"""The one source of the figures the README quotes: docs/results/claims.json, written from a
finished report's results.json, and the claim table of docs/results.md rewritten from it.

    python scripts/results_doc.py report/          # after `attnlab reproduce --out report`
    python scripts/results_doc.py report/ --full full/ --estimate estimate.txt
    python scripts/results_doc.py --check          # exit 1 if the claim table is stale

With ``--full``, the claims of the experiments a full-profile report holds go to
docs/results/claims-full.json and fill the table's "full" column; the others are "not run
here", and ``--estimate`` (the output of ``attnlab reproduce --profile full --estimate
--only THEM``) is kept in that file as what running them would take.

The file holds, per claim, its verdict, the measured figure and the chapter's as the report's
claim summary shows them (``attnlab.report.claim_figures``), with the run's profile, date,
processor, wall time and code revision. The claim table of docs/results.md between its
``results:begin`` and ``results:end`` markers is rendered from that file alone, and
``tests/test_packaging_results.py`` checks that every figure in it is found there. The
report's self-contained ``report.html`` is copied beside it as the sample report.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
FILE = RESULTS / "claims.json"
FULL = RESULTS / "claims-full.json"
SAMPLE = RESULTS / "report.html"
README = ROOT / "docs" / "results.md"  # the page holding the claim table (README links it)
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def collect(report: Path) -> dict[str, Any]:
    """The results file's content from ``report/results.json``."""
    from attnlab.report.claim_figures import claim_figures

    data = json.loads((report / "results.json").read_text(encoding="utf-8"))
    meta = data["meta"]
    machine = meta.get("machine", {})
    claims = []
    for v in data["claims"]:
        figures = claim_figures(v)
        claims.append({"id": v["id"], "text": v["text"], "status": v["status"],
                       "seeds": v.get("seeds", 0) if v.get("trained", True) else None,
                       "measured": figures["measured"], "chapter": figures["chapter"]})
    return {
        "generated_by": "python scripts/results_doc.py REPORT_DIR",
        "generated_at": time.strftime("%Y-%m-%d"),
        "profile": meta.get("profile"),
        "started_at": meta.get("started_at"),
        "finished_at": meta.get("finished_at"),
        "wall_s": meta.get("wall_s"),
        "processor": machine.get("processor"),
        "cpu_count": machine.get("CPU count"),
        "device": machine.get("device"),
        "torch": meta.get("versions", {}).get("torch"),
        "code_revision": meta.get("code_revision"),
        "summary": data["summary"]["claims"],
        "claims": claims,
    }


def collect_full(report: Path, estimate: str | None) -> dict[str, Any]:
    """The full report's results file, with the experiments it holds and the estimate of the
    rest."""
    from attnlab.lab import registry

    results = collect(report)
    data = json.loads((report / "results.json").read_text(encoding="utf-8"))
    ran = sorted(n for n, e in data["experiments"].items() if e.get("status", "ok") == "ok")
    rest = [n for n in registry.EXPERIMENTS if n not in ran]
    results["experiments"] = ran
    results["not_run"] = {"experiments": rest, "estimate": (estimate or "").strip(),
                          "command": f"attnlab reproduce --profile full --only {','.join(rest)}"}
    return results


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _full_cell(claim: dict[str, Any], full: dict[str, Any] | None) -> str:
    if full is None:
        return "not run here"
    found = next((c for c in full["claims"] if c["id"] == claim["id"]), None)
    if found is None:
        return "not run here"
    return f"**{found['status'].upper()}** {_cell(found['measured'])}"


def render(results: dict[str, Any], full: dict[str, Any] | None = None) -> str:
    """The claim table's block between the markers, from the results files only."""
    from attnlab.train.progress import format_duration

    date = (results.get("started_at") or "")[:10]
    counts = results["summary"]
    held = ", ".join(f"{counts.get(s, 0)} {s}" for s in
                     ("held", "not held", "inconclusive", "skipped", "error") if counts.get(s))
    wall = results.get("wall_s")
    lines = [
        BEGIN,
        f"The claims of one `{results['profile']}` run ({results['processor']}, "
        f"{results['cpu_count']} CPUs, {results['device']}, {date}; from "
        "[results/claims.json](results/claims.json), which "
        "`python scripts/results_doc.py REPORT_DIR` writes from a finished report; its "
        "report: [results/report.html](results/report.html)):",
        "",
        "| claim | verdict | measured | the chapter | full |",
        "|---|---|---|---|---|",
    ]
    for c in results["claims"]:
        lines.append(f"| {_cell(c['text'])} | **{c['status'].upper()}** | "
                     f"{_cell(c['measured'])} | {_cell(c['chapter'])} | {_full_cell(c, full)} |")
    lines += [
        "",
        f"{held} of {sum(counts.values())}; the run took "
        f"{format_duration(wall) if wall else '–'}. Measured: the figure each claim's rule "
        "compares (a ratio is the later model's held-out perplexity over the earlier one's); "
        "the chapter: its published figure for the same quantity († derived from its text, "
        "which states a difference; – none published).",
    ]
    lines += _full_lines(full)
    return "\n".join([*lines, END])


def _full_lines(full: dict[str, Any] | None) -> list[str]:
    from attnlab.train.progress import format_duration

    if full is None:
        return ["", "Full: no experiment has been run at the full profile here."]
    counts = full["summary"]
    held = ", ".join(f"{counts.get(s, 0)} {s}" for s in
                     ("held", "not held", "inconclusive", "skipped", "error") if counts.get(s))
    rest = full["not_run"]
    lines = [
        "",
        f"Full: the chapter's own settings for {', '.join(f'`{n}`' for n in full['experiments'])}"
        f" ({full['processor']}, {full['cpu_count']} CPUs, {full['device']}, "
        f"{(full.get('started_at') or '')[:10]}; from "
        "[results/claims-full.json](results/claims-full.json)): "
        f"{held} of {sum(counts.values())}, in {format_duration(full['wall_s'])}. "
        f"Not run here: {', '.join(f'`{n}`' for n in rest['experiments'])}; "
        f"`{rest['command']}` would run them.",
    ]
    if rest["estimate"]:
        lines += ["", "```", rest["estimate"], "```"]
    return lines


def read_full() -> dict[str, Any] | None:
    """docs/results/claims-full.json, or None before any full run."""
    return json.loads(FULL.read_text(encoding="utf-8")) if FULL.is_file() else None


def readme_block(text: str) -> str:
    """The page's current block, markers included."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def main(argv: list[str]) -> int:
    readme = README.read_text(encoding="utf-8")
    if argv == ["--check"]:
        results = json.loads(FILE.read_text(encoding="utf-8"))
        if readme_block(readme) != render(results, read_full()):
            print("docs/results.md's claim table is stale: run python scripts/results_doc.py "
                  "REPORT_DIR", file=sys.stderr)
            return 1
        return 0
    options = dict(zip(argv[1::2], argv[2::2], strict=False))
    if not argv or len(argv) % 2 != 1 or set(options) - {"--full", "--estimate"}:
        print(__doc__, file=sys.stderr)
        return 2
    report = Path(argv[0])
    results = collect(report)
    RESULTS.mkdir(parents=True, exist_ok=True)
    FILE.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if "--full" in options:
        estimate = options.get("--estimate")
        full = collect_full(Path(options["--full"]),
                            Path(estimate).read_text(encoding="utf-8") if estimate else None)
        FULL.write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.copyfile(report / "report.html", SAMPLE)
    README.write_text(readme.replace(readme_block(readme), render(results, read_full())),
                      encoding="utf-8")
    print(f"wrote {FILE.relative_to(ROOT)}, {SAMPLE.relative_to(ROOT)} and docs/results.md's table "
          f"({results['profile']} run of {results['started_at']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
