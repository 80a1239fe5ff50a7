"""The results files' content, read from finished reports: ``collect`` (a quick or full
report's claims, experiments, run and machine), ``collect_full`` (full runs of different
experiments and days added up, an experiment kept only while its verdicts were decided by
today's rule versions) and ``collect_estimates`` (the estimate outputs of a folder, each part
dated). ``scripts/results_doc.py`` writes them to docs/results/ and renders the pages' blocks
from them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

STATUSES = ("held", "not held", "inconclusive", "skipped", "error")


def collect(report: Path) -> dict[str, Any]:
    """The results file's content from ``report/results.json`` and its experiments' tables."""
    from attnlab.report import fidelity
    from attnlab.report.claim_figures import claim_figures
    from attnlab.report.words import claim_text

    data = json.loads((report / "results.json").read_text(encoding="utf-8"))
    meta = data["meta"]
    machine = meta.get("machine", {})
    claims = []
    for v in data["claims"]:
        figures = claim_figures(v)
        spanish = claim_figures(v, "es")
        claims.append({"id": v["id"], "text": v["text"], "status": v["status"],
                       # None: a report made before rule versions were recorded
                       "version": v.get("version"),
                       "experiment": v.get("experiment"),
                       "seeds": v.get("seeds", 0) if v.get("trained", True) else None,
                       "measured": figures["measured"], "chapter": figures["chapter"],
                       # each part's numbers under the claim's own keys (the report's words
                       # are made from them; tests rebuild the claim's cells from them)
                       "numbers": {p.get("name", ""): p.get("numbers", {})
                                   for p in v.get("parts", [])},
                       # the same cells in Spanish, as the Spanish report words them
                       "es": {"text": claim_text(v, "es"), "measured": spanish["measured"],
                              "chapter": spanish["chapter"]}})
    experiments = []
    for name, env in data["experiments"].items():
        if env.get("status", "ok") != "ok":
            continue
        table = report / name / "table.md"
        counts = {s: sum(1 for c in claims if c["experiment"] == name and c["status"] == s)
                  for s in STATUSES[:3]}
        experiments.append({
            "name": name, "title": env.get("title"), "seeds": env.get("seeds"),
            "runs": env.get("runs"), "train_s": env.get("train_s"),
            "analysis_s": env.get("wall_s"), "counts": counts,
            "extra_round": (env.get("extra_round") or {}).get("text"),
            "table": table.read_text(encoding="utf-8") if table.is_file() else "",
            # the chapter's figures beside the measured ones, as the report shows them
            "beside": fidelity.table(fidelity.compare(name, env.get("record") or {}),
                                     meta.get("profile")),
        })
    return {
        "generated_by": "python scripts/results_doc.py REPORT_DIR",
        "generated_at": time.strftime("%Y-%m-%d"),
        "profile": meta.get("profile"),
        "started_at": meta.get("started_at"),
        "finished_at": meta.get("finished_at"),
        "wall_s": meta.get("wall_s"),
        "phases_s": meta.get("phases_s"),
        "processor": machine.get("processor"),
        "cpu_count": machine.get("CPU count"),
        "device": machine.get("device"),
        "torch": meta.get("versions", {}).get("torch"),
        "code_revision": meta.get("code_revision"),
        "summary": data["summary"]["claims"],
        "experiments": experiments,
        "claims": claims,
    }


RUN_KEYS = ("profile", "started_at", "finished_at", "wall_s", "phases_s", "processor",
            "cpu_count", "device", "torch", "code_revision")  # what says which run it was


def collect_full(report: Path, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The full report's results file, and the experiments it does not hold. The
    experiments of ``previous`` (the full results already written) that this report does not
    hold are kept, each with the run that made it (``run``), so that full runs of different
    experiments, on different days, add up; ``runs`` lists those runs."""
    from attnlab.kit import registry

    results = collect(report)
    header = {k: results.get(k) for k in RUN_KEYS}
    for e in results["experiments"]:
        e["run"] = header
    ran = [e["name"] for e in results["experiments"]]
    if previous is not None:
        earlier = {k: previous.get(k) for k in RUN_KEYS}
        kept = [e for e in previous["experiments"] if e["name"] not in ran
                and under_todays_rules(e["name"], previous["claims"])]
        results["experiments"] += [{**e, "run": e.get("run", earlier)} for e in kept]
        names = {e["name"] for e in kept}
        results["claims"] += [c for c in previous["claims"] if c.get("experiment") in names]
        order = {n: i for i, n in enumerate(registry.EXPERIMENTS)}
        results["experiments"].sort(key=lambda e: order.get(e["name"], len(order)))
        ran = [e["name"] for e in results["experiments"]]
    results["summary"] = {s: sum(1 for c in results["claims"] if c["status"] == s)
                          for s in STATUSES}
    results["runs"] = list({e["run"]["started_at"]: e["run"]
                            for e in results["experiments"]}.values())
    rest = [n for n in registry.EXPERIMENTS if n not in ran]
    results["not_run"] = {"experiments": rest,
                          "command": f"attnlab reproduce --profile full --only {','.join(rest)}"}
    return results


def under_todays_rules(name: str, claims: list[dict[str, Any]]) -> bool:
    """Whether every recorded verdict of experiment ``name`` was decided by the rule version
    its claim has today. An older full run's verdicts (or one made before versions were
    recorded) are not kept beside today's: the experiment is listed as not run at full."""
    from attnlab.kit import registry

    today = {c.id: c.version for c in registry.load(name).claims}
    return all(c.get("version") == today.get(c["id"]) for c in claims
               if c.get("experiment") == name)


def collect_estimates(folder: Path, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The estimate outputs ``folder`` holds (``full-W.txt``, ``not-run.txt``), each part with
    the date it was measured; a part ``folder`` lacks keeps ``previous``' (and its date)."""
    today = time.strftime("%Y-%m-%d")
    previous = previous or {}
    full = {path.stem.removeprefix("full-"): path.read_text(encoding="utf-8").strip()
            for path in sorted(folder.glob("full-*.txt"))}
    not_run = folder / "not-run.txt"
    out = {"generated_by": "attnlab reproduce --profile full --estimate [--jobs W] "
           "[--only ...] in the quick run's cache, checked against its finished runs",
           "measured_at": today if full else previous.get("measured_at"),
           "full": full or previous.get("full", {})}
    if not_run.is_file():
        out.update(not_run=not_run.read_text(encoding="utf-8").strip(), not_run_measured_at=today)
    else:
        out.update(not_run=previous.get("not_run", ""),
                   not_run_measured_at=previous.get("not_run_measured_at",
                                                    previous.get("measured_at")))
    return out
