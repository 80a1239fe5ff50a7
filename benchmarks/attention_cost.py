"""Cost of attention: naive vs SDPA vs attnlab's memory-efficient kernel
(docs/experiments.md, "Cost of attention").

Runs ``attnlab.timing.cost.sweep`` and prints the Markdown table with the
fitted log-log exponents of every kind side by side, then the goals below
(printed, not asserted: this is a measurement, not a test):

- memeff's peak-memory exponent over the last four sizes is <= 1.2;
- at n = 16,384 memeff runs within the memory limit where naive does not
  (the naive scores alone are 8 heads × 16384² × 4 bytes = 8 GiB);
- with --long, memeff also completes at n = 65,536.

    python -m benchmarks.attention_cost --sizes 128,256,512 --repeats 1
"""

from __future__ import annotations

import argparse
import logging
import time

from attnlab.files import atomic_path, write_json
from attnlab.timing import cost as cost
from attnlab.timing.cost_view import sweep_figure, sweep_table


def _ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part]
    except ValueError as error:
        message = f"expected comma-separated integers, got {text!r}"
        raise argparse.ArgumentTypeError(message) from error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_ints, default=list(cost.DEFAULT_SIZES),
                        help="comma-separated n values (default 128,…,16384)")
    parser.add_argument("--kinds", default=",".join(cost.KINDS),
                        help="comma-separated kinds among naive, sdpa, memeff")
    parser.add_argument("--mem-limit-gib", type=float, default=8.0,
                        help="memory budget per measurement above the child's baseline (GiB)")
    parser.add_argument("--repeats", type=int, default=3, help="timed forwards per size")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads per measurement (0: torch's default)")
    parser.add_argument("--device", default="cpu",
                        help="cpu (a subprocess per size) or cuda (the allocator's peak)")
    parser.add_argument("--long", action="store_true", help="also run memeff at n = 65,536")
    parser.add_argument("--json", help="write the records to this JSON file")
    parser.add_argument("--figure", help="write the time/memory figure to this PNG file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    kinds = [k for k in args.kinds.split(",") if k]
    limit = int(args.mem_limit_gib * cost.GIB)
    threads = args.threads or None
    start = time.perf_counter()
    records = cost.sweep(kinds, args.sizes, limit, args.repeats, device=args.device,
                         threads=threads)
    if args.long and "memeff" in kinds:
        records += cost.sweep(["memeff"], [65536], limit, args.repeats, device=args.device,
                              threads=threads)
        records.sort(key=lambda r: (kinds.index(r["kind"]), r["n"]))
    elapsed = time.perf_counter() - start

    print(sweep_table(records))
    print("| kind | time exponent | memory exponent |")
    print("|---|---:|---:|")
    for kind, exps in cost.exponents(records).items():
        cells = ["–" if v is None else f"{v:.2f}" for v in (exps["time"], exps["memory"])]
        print(f"| {kind} | {cells[0]} | {cells[1]} |")
    print()
    for r in records:
        if r["n"] == max(args.sizes) or r["n"] == 65536:
            print(f"{r['kind']} n={r['n']}: {r['status']}, measured in "
                  f"{r['wall_seconds'] or 0:.1f} s (subprocess, import included)")
    print(f"whole run: {elapsed:.0f} s, limit {args.mem_limit_gib:g} GiB, threads {threads}")
    _print_goals(records, args.mem_limit_gib)
    if args.json:
        write_json(args.json, records)
    if args.figure:
        with atomic_path(args.figure) as tmp:
            sweep_figure(records).savefig(tmp, dpi=120, format="png")
        print(f"figure: {args.figure}")
    return 0


def _print_goals(records: list[dict], limit_gib: float) -> None:
    def status(kind: str, n: int) -> str | None:
        return next((r["status"] for r in records if r["kind"] == kind and r["n"] == n), None)

    memory = cost.exponents(records).get("memeff", {}).get("memory")
    if memory is not None:
        print(f"goal: memeff memory exponent <= 1.2: {memory:.2f} -> "
              f"{'met' if memory <= 1.2 else 'NOT met'}")
    if status("memeff", 16384) and status("naive", 16384):
        met = status("memeff", 16384) == "ok" and status("naive", 16384) == "oom"
        print(f"goal: at n=16384 memeff fits {limit_gib:g} GiB and naive does not: "
              f"memeff {status('memeff', 16384)}, naive {status('naive', 16384)} -> "
              f"{'met' if met else 'NOT met'}")
    if status("memeff", 65536):
        print(f"goal: memeff completes at n=65536: {status('memeff', 65536)}")


if __name__ == "__main__":
    raise SystemExit(main())
