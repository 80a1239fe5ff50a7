"""The report's first screen: verdict counts, profile, seeds, machine, wall time.

A reader opening a report wants to know before anything else what was decided
and where: how many claims held, at which profile and seeds, on which
processor (its name: ``platform.processor()`` is empty on most Linux systems,
so ``/proc/cpuinfo``'s "model name" stands in), and how long it took; and,
at the full profile, how close the measured figures came to the chapter's.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from attnlab.kit.claims import STATUSES
from attnlab.report.words import counted, t, tn


def processor_name(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The processor's name: ``platform.processor()``, else cpuinfo's "model name", else "–".

    >>> isinstance(processor_name(), str)
    True
    """
    name = platform.processor()
    if name and name not in (platform.machine(), "unknown"):
        return name
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return name or "–"


def with_processor(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with the processor named, when it says "–" and was made on this platform."""
    machine = dict(meta.get("machine") or {})
    if machine.get("processor", "named") not in ("", "–"):  # named, or no machine recorded
        return meta
    if machine.get("platform", platform.platform()) != platform.platform():
        return meta  # another machine's report: do not name this one's processor
    return {**meta, "machine": {**machine, "processor": processor_name()}}


def seeds_text(envelopes: dict[str, dict]) -> str:
    """The seeds the trained experiments ended with: ``3`` or ``3–5``."""
    seeds = sorted({e["seeds"] for e in envelopes.values() if isinstance(e.get("seeds"), int)})
    if not seeds:
        return "–"
    return str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}–{seeds[-1]}"


def machine_text(machine: dict[str, Any], lang: str = "en") -> str:
    """The processor, its cores, where runs trained and in what arithmetic:
    ``AMD EPYC, 2 cores, CPU, bf16`` (fp32, the usual, is not said).

    >>> machine_text({"processor": "AMD EPYC", "CPU count": 2, "device": "cpu"})
    'AMD EPYC, 2 cores, CPU'
    >>> machine_text({"processor": "Xeon", "device": "cpu", "precision": "bf16"})
    'Xeon, CPU, bf16'
    """
    cores = machine.get("CPU count")
    device = str(machine.get("device") or "")
    if device == "cpu":
        device = "CPU"
    elif device.startswith("cuda"):
        device = "CUDA" + device[4:]
    parts = [str(machine.get("processor") or "").strip("–"),
             t("glance.cores", lang, n=cores) if cores else "", device,
             "bf16" if machine.get("precision") == "bf16" else ""]
    return ", ".join(p for p in parts if p)


def glance(summary: dict[str, Any], envelopes: dict[str, dict], meta: dict[str, Any],
           fidelity: dict[str, int] | None, duration: str, lang: str = "en") -> list[str]:
    """Markdown lines: a short table of what a reader needs first (the claims' counts are
    printed here, once)."""
    counts, total = summary["claims"], summary["claims_total"]
    verdicts = ", ".join(f"**{counts[s]} {counted(s, lang, counts[s])}**" for s in STATUSES
                         if counts[s]) or t("glance.none", lang)
    ran = summary["experiments"]
    rows = [
        f"| {t('glance.heading', lang)} | |", "|---|---|",
        f"| {t('glance.claims', lang)} | {t('glance.of', lang, verdicts=verdicts, total=total)} |",
        f"| {t('glance.experiments', lang)} | " + t(
            "glance.experiments_counts", lang, **{k: tn(f"glance.{k}", len(ran[k]), lang)
                                                  for k in ("ok", "skipped", "failed")}) + " |",
        f"| {t('glance.profile', lang)} | `{meta.get('profile')}` |",
        f"| {t('glance.seeds', lang)} | {seeds_text(envelopes)} |",
        f"| {t('glance.machine', lang)} | {machine_text(meta.get('machine', {}), lang)} |",
        f"| {t('glance.wall_time', lang)} | {duration} |",
    ]
    if meta.get("finished_at"):
        rows.append(f"| {t('glance.finished', lang)} | {meta['finished_at']} |")
    if fidelity is not None:
        rows.append(f"| {t('glance.beside', lang)} | " + t(
            "glance.fidelity", lang, within2=fidelity["within 2%"], compared=fidelity["compared"],
            within5=fidelity["within 5%"]) + " |")
    elif meta.get("profile") != "full":
        rows.append(f"| {t('glance.beside', lang)} | {t('glance.orientation', lang)} |")
    return [*rows, ""]


__all__ = ["glance", "machine_text", "processor_name", "seeds_text", "with_processor"]
