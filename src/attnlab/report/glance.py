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

from attnlab.lab.claims import STATUSES


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


def glance(counts: dict[str, int], total: int, envelopes: dict[str, dict], meta: dict[str, Any],
           fidelity: dict[str, int] | None, duration: str) -> list[str]:
    """Markdown lines: a short table of what a reader needs first."""
    machine = meta.get("machine", {})
    where = ", ".join(str(x) for x in (
        machine.get("processor", "–"), f"{machine.get('CPU count', '?')} CPUs",
        machine.get("device", "")) if x)
    verdicts = ", ".join(f"**{counts[s]} {s}**" for s in STATUSES if counts[s]) or "none"
    rows = [
        "| at a glance | |", "|---|---|",
        f"| claims | {verdicts} (of {total}) |",
        f"| profile | `{meta.get('profile')}` |",
        f"| seeds per trained experiment | {seeds_text(envelopes)} |",
        f"| machine | {where} |",
        f"| wall time | {duration} |",
    ]
    if meta.get("finished_at"):
        rows.append(f"| finished | {meta['finished_at']} |")
    if fidelity is not None:
        rows.append(f"| beside the chapter | {fidelity['within 2%']} of {fidelity['compared']} "
                    f"measured figures within 2% of the chapter's, {fidelity['within 5%']} "
                    "within 5% |")
    elif meta.get("profile") != "full":
        rows.append("| beside the chapter | shown for orientation: this profile's budgets are "
                    "far smaller than the chapter's |")
    return [*rows, ""]


__all__ = ["glance", "processor_name", "seeds_text", "with_processor"]
