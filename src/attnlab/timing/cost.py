"""The cost of attention: time and peak memory of one layer against n
(docs/experiments.md, "Cost of attention").

One attention layer — width 512, 8 heads, batch 1, float32, causal, with its
q/k/v/o projections (``nn.Linear``) — is run forward at n = 128 … 16,384 for
three kernels that compute the same function:

``naive``  materialises the (h, n, n) scores (``attnlab.nn.attention``, backend naive);
``sdpa``   ``torch.nn.functional.scaled_dot_product_attention`` (PyTorch's fused kernel);
``memeff`` attnlab's tiled online-softmax attention (``attnlab.nn.memeff``).

Dimension legend: ``b`` batch, ``n`` positions, ``h`` heads, ``d`` head width,
``m`` model width (= h·d).

What is measured, and how:
- *total ms*: the layer's **forward only** (under ``torch.no_grad``), timed as a
  benchmark: after one warm-up forward of every size, ``repeats``
  rounds, each timing every completed (n, kind) once, sizes ascending in one
  round and descending in the next (``time_interleaved``), so a burst of load
  from another process falls on single readings of several sizes, never on
  every reading of one. The figure is the **minimum** over the rounds (load
  only ever adds time); beside it the *spread*, max / min − 1 over the rounds.
  In the sweep this runs in this process, after the memory children, on
  ``threads`` threads; ``measure_time`` alone takes the minimum the same way.
- *proj ms*: the four linear maps alone (q, k, v on the input, o on a tensor of
  the same shape), timed separately, summed; minimum and spread likewise.
- *n×n bytes*: ``4 · h · n²``, the bytes of one float32 n×n score matrix per
  head — what the naive kernel holds at least once.
- *peak memory*: on CPU, in a fresh subprocess per (kind, n): after importing
  torch, building the layer, a tiny warm-up forward (which starts the thread
  pool) and making the input, the child reads its resident set (baseline) and
  its virtual size (VSZ), sets ``RLIMIT_AS = VSZ + mem_limit_bytes`` (torch's
  import alone maps ~0.7 GB of address space, so a bare limit would be
  meaningless), resets the kernel's peak-RSS mark (``/proc/self/clear_refs``),
  runs one forward, and reports ``VmHWM − baseline`` (the peak resident set of
  this process image). Not ``ru_maxrss``: Linux carries the *parent's* resident
  set at fork into an exec'ed child's ``ru_maxrss``, so a child of a large
  process (``reproduce`` after training) would report the parent's size. An
  allocation refused by the limit (``MemoryError``, "can't allocate") or a
  child killed by a signal gives an ``oom`` record and the sweep goes on.
  On CUDA the allocator is asked instead, in this process
  (``max_memory_allocated`` minus the allocation before the forward); a peak
  over the budget also counts as oom, and after every size (a real
  ``torch.cuda.OutOfMemoryError`` included) the tensors are dropped and the
  cache emptied, so one size never inherits another's memory.
- *the cap before allocating*: a kernel that materialises the scores (naive)
  is not run at a size whose ``4·h·n²`` bytes alone reach the budget: it is
  recorded as oom ("refused") without allocating anything, on either device.
- exponents: least-squares slope of log(value) against log(n) over the last
  four completed rows of a kind; for time, of the minima, with beside it the
  *range* of slopes that the spread allows (``exponent_range``: each size's time
  anywhere between its minimum and its maximum over the rounds).

Left out: the backward pass, batch sizes other than one, other dtypes.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from attnlab.errors import one_line
from attnlab.files import write_json
from attnlab.timing.cost_layer import (  # noqa: F401 - the layer and its timing, re-exported
    KINDS,
    AttentionLayer,
    measure_time,
    score_matrix_bytes,
    time_interleaved,
    time_layer,
    timing_summary,
)
from attnlab.timing.cost_layer import check_sizes as _check_sizes
from attnlab.timing.exponents import (  # noqa: F401 - the sweep's fits, re-exported
    MIN_REPEATS,
    exponent_range,
    exponents,
    fit_exponent,
    time_range,
)

log = logging.getLogger(__name__)

MATERIALISES = ("naive",)  # kinds that hold the (h, n, n) scores
DEFAULT_SIZES = tuple(128 * 2**k for k in range(8))  # 128, 256, …, 16,384
GIB = 2**30
_OOM_WORDS = ("can't allocate", "cannot allocate", "out of memory", "memoryerror", "bad_alloc")
# the sweep's line per status: each its own entry of the log catalogue, so that a language
# says the status in its words (attnlab.i18n.logs)
SWEPT = {"ok": "%s n=%d: ok", "oom": "%s n=%d: oom", "timeout": "%s n=%d: timeout",
         "error": "%s n=%d: error"}


def refusal(kind: str, n: int, n_head: int, mem_limit_bytes: int) -> str | None:
    """Why ``kind`` is not run at ``n`` under the budget (its n×n scores alone reach it), or None.

    >>> refusal("naive", 16384, 8, 8 * GIB) is not None, refusal("memeff", 16384, 8, GIB)
    (True, None)
    """
    need = score_matrix_bytes(n, n_head)
    if kind in MATERIALISES and need >= mem_limit_bytes:
        return (f"refused: its n×n scores need {size_text(need)}, the budget is "
                f"{size_text(mem_limit_bytes)}")
    return None


def measure_memory(
    kind: str, n: int, mem_limit_bytes: int = 8 * GIB, repeats: int = 0,
    d_model: int = 512, n_head: int = 8, device: str = "cpu", threads: int | None = None,
    timeout_s: float | None = 3600.0, seed: int = 0,
) -> dict:
    """Peak memory of one forward (and, if ``repeats``, its time) under a memory limit.

    CPU: a fresh subprocess with ``RLIMIT_AS = VSZ + mem_limit_bytes`` (module
    docstring). CUDA: in this process, by the allocator. Returns a record with
    ``status`` "ok", "oom", "timeout" or "error".
    """
    _check_sizes([n], repeats)
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; choose one of {', '.join(KINDS)}")
    if mem_limit_bytes <= 0:
        raise ValueError(f"mem_limit_bytes must be positive, got {mem_limit_bytes}")
    spec = {"kind": kind, "n": n, "d_model": d_model, "n_head": n_head, "device": device,
            "repeats": repeats, "mem_limit_bytes": mem_limit_bytes, "threads": threads,
            "seed": seed}
    why = refusal(kind, n, n_head, mem_limit_bytes)
    if why is not None:
        return {**_blank_record(spec), "status": "oom", "error": why}
    if device.startswith("cuda"):
        return measure_on_allocator(spec, CudaAllocator.of(torch.device(device)))
    return _run_child(spec, timeout_s)


def _run_child(spec: dict, timeout_s: float | None) -> dict:
    record = _blank_record(spec)
    src = str(Path(__file__).resolve().parents[2])  # the folder holding the attnlab package
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH", "")) if p))
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "record.json"
        command = [sys.executable, "-m", "attnlab.timing.cost", json.dumps(spec),
                   str(result)]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            record.update(status="timeout", error=f"no result within {timeout_s} s")
            return record
        wall = time.perf_counter() - start  # the child's torch import included
        if result.exists():
            record.update(json.loads(result.read_text()), wall_seconds=wall)
            return record
    record["wall_seconds"] = wall
    tail = done.stderr.strip().splitlines()[-1:] or [""]
    oom = done.returncode < 0 or any(w in done.stderr.lower() for w in _OOM_WORDS)
    why = f"killed by signal {-done.returncode}" if done.returncode < 0 else tail[0]
    record.update(status="oom" if oom else "error", error=why)
    if not oom:
        log.warning("cost child for %s n=%d failed: %s", spec["kind"], spec["n"], why)
    return record


def _blank_record(spec: dict) -> dict:
    return {"kind": spec["kind"], "n": spec["n"], "d_model": spec["d_model"],
            "n_head": spec["n_head"], "device": spec["device"], "timed": "forward",
            "repeats": spec["repeats"], "threads": spec["threads"],
            "nn_bytes": score_matrix_bytes(spec["n"], spec["n_head"]),
            "mem_limit_bytes": spec["mem_limit_bytes"], "status": "error", "total_ms": None,
            "proj_ms": None, "total_spread": None, "proj_spread": None, "peak_bytes": None,
            "baseline_bytes": None, "limit_bytes": None,
            "error": None, "seconds": None, "wall_seconds": None}


@dataclass(frozen=True)
class CudaAllocator:
    """The calls of PyTorch's CUDA caching allocator a measurement makes (a test passes fakes)."""

    synchronize: Callable[[], None]
    reset_peak: Callable[[], None]
    allocated: Callable[[], int]  # bytes held by tensors now
    peak: Callable[[], int]  # most bytes held since reset_peak
    empty_cache: Callable[[], None]  # give cached blocks back to the driver

    @classmethod
    def of(cls, device: torch.device) -> CudaAllocator:
        return cls(lambda: torch.cuda.synchronize(device),
                   lambda: torch.cuda.reset_peak_memory_stats(device),
                   lambda: torch.cuda.memory_allocated(device),
                   lambda: torch.cuda.max_memory_allocated(device),
                   torch.cuda.empty_cache)


def measure_on_allocator(spec: dict, alloc: CudaAllocator) -> dict:
    """One measurement in this process, peak memory by the allocator; memory freed after it
    whatever happens (an out-of-memory error included)."""
    record = _blank_record(spec)
    start = time.perf_counter()
    device = torch.device(spec["device"])
    layer = x = None
    try:
        torch.manual_seed(spec["seed"])
        layer = AttentionLayer(spec["kind"], spec["d_model"], spec["n_head"]).to(device)
        with torch.no_grad():
            layer(torch.randn(1, 16, spec["d_model"], device=device))  # kernels, workspaces
        x = torch.randn(1, spec["n"], spec["d_model"], device=device)  # (b, n, m)
        alloc.synchronize()
        alloc.reset_peak()
        record["baseline_bytes"] = alloc.allocated()
        with torch.no_grad():
            layer(x)
        alloc.synchronize()
        _judge(record, spec, alloc.peak() - record["baseline_bytes"], layer, x)
    except (MemoryError, RuntimeError) as error:  # torch.OutOfMemoryError is a RuntimeError
        _oom(record, error)
    finally:
        del layer, x
        gc.collect()
        alloc.empty_cache()
    record["seconds"] = time.perf_counter() - start
    return record


def _run_measurement(spec: dict) -> dict:
    """Body of one CPU measurement, in the child process, under its address-space limit."""
    record = _blank_record(spec)
    start = time.perf_counter()
    if spec["threads"]:
        torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    layer = AttentionLayer(spec["kind"], spec["d_model"], spec["n_head"])
    with torch.no_grad():
        layer(torch.randn(1, 16, spec["d_model"]))  # starts the thread pool
    x = torch.randn(1, spec["n"], spec["d_model"])  # (b, n, m)
    try:
        _reset_peak_rss()
        record["baseline_bytes"] = _proc_status_bytes("VmRSS")
        record["limit_bytes"] = _proc_status_bytes("VmSize") + spec["mem_limit_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (record["limit_bytes"],) * 2)
        with torch.no_grad():
            layer(x)
        _judge(record, spec, _proc_status_bytes("VmHWM") - record["baseline_bytes"], layer, x)
    except (MemoryError, RuntimeError) as error:
        _oom(record, error)
    record["seconds"] = time.perf_counter() - start
    return record


def _judge(record: dict, spec: dict, peak: int, layer: AttentionLayer, x: Tensor) -> None:
    """Record the peak; over the budget is oom, else time the layer if asked."""
    record["peak_bytes"] = peak
    if peak > spec["mem_limit_bytes"]:
        record.update(status="oom", error=f"peak {peak} bytes over the budget")
        return
    record["status"] = "ok"
    if spec["repeats"]:
        record.update(time_layer(layer, x, spec["repeats"], warm_up=False))


def _oom(record: dict, error: BaseException) -> None:
    message = f"{type(error).__name__}: {error}"
    if not any(w in message.lower() for w in _OOM_WORDS):
        raise error
    record.update(status="oom", error=one_line(error)[:300], peak_bytes=None)


def _reset_peak_rss() -> None:
    """Set this process's peak-RSS mark (VmHWM) to its current RSS, where the kernel allows."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:  # not permitted here: VmHWM then also counts the import and warm-up
        pass


def _proc_status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024  # reported in kB
    raise RuntimeError(f"/proc/self/status has no {field}")


def sweep(
    kinds: Sequence[str] = KINDS, sizes: Sequence[int] = DEFAULT_SIZES,
    mem_limit_bytes: int = 8 * GIB, repeats: int = 3, *, d_model: int = 512, n_head: int = 8,
    device: str = "cpu", threads: int | None = 1, skip_after_oom: bool = True,
) -> list[dict]:
    """One record per (kind, n), sizes ascending, with ratios to the row above.

    ``threads`` is torch's intra-op thread count in each child (None: torch's
    default). One thread is the default because on a small shared machine
    several threads contend with other work and timings scatter by 10×.

    With ``skip_after_oom`` a size larger than one that ran out of memory is
    recorded as oom without being run (it cannot fit either).
    """
    sizes = sorted(sizes)
    _check_sizes(sizes, repeats)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown attention kinds {unknown}; choose from {', '.join(KINDS)}")
    records = []
    for kind in kinds:  # peak memory: one fresh measurement per (kind, n), nothing timed
        above: dict | None = None
        for n in sizes:
            if skip_after_oom and above is not None and above["status"] == "oom":
                record = _blank_record({"kind": kind, "n": n, "d_model": d_model,
                                        "n_head": n_head, "device": device, "repeats": repeats,
                                        "threads": threads, "mem_limit_bytes": mem_limit_bytes})
                record.update(status="oom", error=f"not run: n={above['n']} already ran out")
            else:
                record = measure_memory(kind, n, mem_limit_bytes, 0, d_model, n_head,
                                        device, threads)
                record["repeats"] = repeats
            log.info(SWEPT[record["status"]], kind, n)
            records.append(record)
            above = record
    time_interleaved(records, repeats, d_model=d_model, n_head=n_head, device=device,
                     threads=threads)  # time: a benchmark over every size at once
    for kind in kinds:
        rows = [r for r in records if r["kind"] == kind]
        for above, record in zip([None, *rows[:-1]], rows, strict=True):
            record["time_ratio"] = _ratio(record, above, "total_ms")
            record["mem_ratio"] = _ratio(record, above, "peak_bytes")
    return records


def _ratio(record: dict, above: dict | None, key: str) -> float | None:
    if above is None or not record.get(key) or not above.get(key):
        return None
    return record[key] / above[key]


def size_text(nbytes: float | None) -> str:
    """``1.5 GiB``, ``12.0 MiB`` … for a byte count (``–`` for None)."""
    if nbytes is None:
        return "–"
    for unit, scale in (("GiB", GIB), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes:.0f} B"


def _child_main(argv: Sequence[str]) -> int:
    """Entry of the measuring subprocess (``python -m attnlab.timing.cost``)."""
    spec, out = json.loads(argv[0]), Path(argv[1])
    write_json(out, _run_measurement(spec), fsync=False)  # a temporary hand-over file
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
