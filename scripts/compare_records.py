"""Two runs of ``attnlab reproduce`` compared: every experiment's record and every trained
run's weights, value by value and byte by byte.

    python scripts/compare_records.py OUT_A WORK_A OUT_B WORK_B   # exit 1 where they differ

What a run measures of the clock or the machine (wall times, throughput, timed exponents,
memory in bytes and their ratios) and the run folders' paths are left out and counted; every
other value of each ``<out>/<name>/result.json`` record must be equal, and the two ``--work``
folders must hold the same run keys with the same ``checkpoint/*.safetensors`` bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MEASURED = re.compile(r"wall_s|tokens_per_s|run_dir|_ms\b|\bms\b|_time|time_|seconds|"
                      r"per_token|^\.exponents\.|\.device$|timing|step_s|_bytes|spread|"
                      r"mem_ratio")


def flat(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) of a JSON value: ``.cells.pre/warmup[0].held_ppl`` and its number."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flat(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from flat(item, f"{path}[{i}]")
    else:
        yield path, value


def weights(work: Path) -> dict[str, str]:
    return {p.relative_to(work).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in work.glob("*/checkpoint/*.safetensors")}


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    out_a, work_a, out_b, work_b = map(Path, argv)
    bad = 0
    for path in sorted(out_a.glob("*/result.json")):
        name, other = path.parent.name, out_b / path.parent.name / "result.json"
        if not other.is_file():
            print(f"{name}: no record in {out_b}")
            bad += 1
            continue
        a = dict(flat(json.loads(path.read_text(encoding="utf-8")).get("record")))
        b = dict(flat(json.loads(other.read_text(encoding="utf-8")).get("record")))
        left = [k for k in a if MEASURED.search(k)]
        differ = [k for k in sorted(set(a) | set(b)) if not MEASURED.search(k)
                  and a.get(k, ...) != b.get(k, ...)]
        print(f"{name}: " + (f"DIFFERS at {', '.join(differ[:5])}" if differ
                             else f"{len(a) - len(left)} values identical")
              + f" ({len(left)} measured of the clock or machine, left out)")
        bad += bool(differ)
    wa, wb = weights(work_a), weights(work_b)
    print(f"run folders: {len(wa)} and {len(wb)}; the same keys: {set(wa) == set(wb)}; "
          f"the same weights, byte for byte: {wa == wb}")
    return 1 if bad or wa != wb else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
