"""Two reports of the same profile, one trained in fp32 and one in bf16: the same science?

    python scripts/compare_precision.py FP32_REPORT_DIR BF16_REPORT_DIR

Reads each folder's ``results.json`` (``attnlab reproduce --precision fp32|bf16``) and
prints, as Markdown:

- per claim, its verdict under each precision; the rule: **every verdict equal**;
- per part of a trained claim, its margin over the seeds (mean ± standard error) under
  each precision, and the difference in standard errors of the difference,
  ``|m_bf16 − m_fp32| / √(se_fp32² + se_bf16²)``; the rule: **every trained figure
  within 2 standard errors** of its fp32 value. A part with no spread on either side
  (every seed alike, or one value) must be equal. A part with no margins on either side
  (skipped, error) is listed, not tested;
- both wall times, the processor each ran on and the code revision.

Exit status 0 when both rules hold, 1 when one does not, 2 on bad input. The rule
was written before the first comparison; a precision that breaks it stays off by
default (``attnlab.train.runtime``).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

Z = 2.0  # standard errors of the difference a trained figure may move


def load(folder: str) -> dict[str, Any]:
    path = Path(folder) / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {"meta": data["meta"], "claims": {c["id"]: c for c in data["claims"]}}
    except (OSError, ValueError, KeyError, TypeError) as err:
        print(f"compare_precision: {path} is not a report's results.json ({err}); give two "
              "`attnlab reproduce` output folders", file=sys.stderr)
        raise SystemExit(2) from None


def precision_of(meta: dict[str, Any]) -> str:
    return str(meta.get("machine", {}).get("precision", "fp32"))


def figure(part: dict[str, Any]) -> tuple[float, float] | None:
    """(mean, standard error; 0 for one value or no spread) of a part's margins, or None."""
    margins = part.get("margins")
    if not margins:
        return None
    se = part.get("se")
    return float(part["mean"]), float(se) if se is not None else 0.0


def compare_part(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, bool | None]:
    """The row's figures in words and whether they agree (None: nothing to test)."""
    fa, fb = figure(a), figure(b)
    if fa is None or fb is None:
        return "no margins on one side", None
    (ma, sa), (mb, sb) = fa, fb
    se = math.hypot(sa, sb)
    shown = f"{ma:.4g} ± {sa:.2g} | {mb:.4g} ± {sb:.2g}"
    if se == 0:
        return f"{shown} | no spread", ma == mb
    gap = abs(mb - ma) / se
    return f"{shown} | {gap:.2f}", gap <= Z


def compare(fp32: dict[str, Any], bf16: dict[str, Any]) -> tuple[list[str], bool]:
    lines = ["| claim | part | fp32 | bf16 | margin fp32 (mean ± se) | margin bf16 | "
             "\\|Δ\\| / se of Δ | agree |", "|---|---|---|---|---:|---:|---:|---|"]
    verdicts_equal = figures_within = tested = 0
    ids = list(fp32["claims"])
    missing = sorted(set(ids) ^ set(bf16["claims"]))
    for cid in ids:
        a, b = fp32["claims"][cid], bf16["claims"].get(cid)
        if b is None:
            continue
        same = a["status"] == b["status"]
        verdicts_equal += same
        parts = zip(a.get("parts", []), b.get("parts", []), strict=False)
        rows = list(parts) or [({}, {})]
        for i, (pa, pb) in enumerate(rows):
            words, agree = compare_part(pa, pb) if a.get("trained") else ("untrained", None)
            if agree is not None:
                tested += 1
                figures_within += agree
            mark = {True: "yes", False: "**NO**", None: "–"}[agree]
            head = (f"{cid} | {pa.get('name') or '–'} | {a['status']} | "
                    f"{b['status']}{'' if same else ' **≠**'}") if i == 0 else \
                f" | {pa.get('name') or '–'} | | "
            cells = words.split(" | ") + [""] * 3
            lines.append(f"| {head} | {' | '.join(cells[:3])} | {mark} |")
    both = [c for c in ids if c in bf16["claims"]]
    ok = verdicts_equal == len(both) and figures_within == tested and not missing
    lines += ["", f"verdicts equal: {verdicts_equal} of {len(both)} claims"
              + (f"; in one report only: {', '.join(missing)}" if missing else ""),
              f"trained figures within {Z:g} standard errors of the difference: "
              f"{figures_within} of {tested}"]
    return lines, ok


def wall(meta: dict[str, Any]) -> str:
    seconds = float(meta.get("wall_s", float("nan")))
    machine = meta.get("machine", {})
    rev = meta.get("code_revision", {})
    return (f"{precision_of(meta)}: wall {int(seconds // 60)}m{seconds % 60:02.0f}s on "
            f"{machine.get('processor', '?')} ({machine.get('CPU count', '?')} CPUs), code "
            f"{str(rev.get('commit', '?'))[:7]}{' (dirty)' if rev.get('dirty') else ''}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    fp32, bf16 = load(argv[0]), load(argv[1])
    got = (precision_of(fp32["meta"]), precision_of(bf16["meta"]))
    if got != ("fp32", "bf16"):
        print(f"compare_precision: the reports were trained in {got[0]} and {got[1]}; give "
              "the fp32 report first, then the bf16 one", file=sys.stderr)
        return 2
    if fp32["meta"].get("profile") != bf16["meta"].get("profile"):
        print("compare_precision: the reports are of different profiles", file=sys.stderr)
        return 2
    lines, ok = compare(fp32, bf16)
    print(f"# fp32 and bf16, profile {fp32['meta'].get('profile')}\n")
    print(wall(fp32["meta"]))
    print(wall(bf16["meta"]) + "\n")
    print("\n".join(lines))
    print(f"\nboth rules {'hold' if ok else 'do NOT hold'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
