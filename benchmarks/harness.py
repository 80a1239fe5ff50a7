"""What the benchmark scripts share: the machine they ran on, interleaved timing, HF's GPT-2.

Timing on a shared machine. Other work on the same cores slows whichever
side happens to be running, so two sides are never timed one after the
other: ``interleaved`` runs rounds A, B, A, B, … and keeps every round's time;
the best round of each side is the figure (the round least disturbed), and
the spread (median, worst) is printed beside it so a disturbed run shows.
On a GPU every round ends with a synchronisation (``sync``), so a round's time
is the work it queued, not the time to queue it.

Hugging Face's GPT-2 is built offline from a ``GPT2Config`` at the sizes of an
attnlab ``ModelConfig`` (``hf_gpt2``): no download, dropout off, everything
else at Hugging Face's defaults (its attention kernel, its tanh GELU, tied
embeddings, biases on every map).
"""

from __future__ import annotations

import functools
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlab.nn.model_config import ModelConfig

# The flags that decide fp32 and bf16 speed on x86 and Arm, in the order printed.
SPEED_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "bf16", "sve")


def processor(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """One line naming the processor, its speed-relevant flags, the threads and the load.

    >>> "threads" in processor()
    True
    """
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                name = value.strip()
            elif key.strip() in ("flags", "Features"):
                flags.update(value.split())
    except OSError:
        pass
    shown = [f for f in SPEED_FLAGS if f in flags]
    bf16 = bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (f"processor: {name}; flags: {' '.join(shown) or 'none of ' + ','.join(SPEED_FLAGS)}; "
            f"bf16 instructions: {'yes' if bf16 else 'no'}; {os.cpu_count()} CPUs; torch "
            f"{torch.__version__}, {torch.get_num_threads()} threads; load average {load}")


@dataclass(frozen=True)
class Timing:
    """Seconds per call of each round of one side."""

    rounds: list[float]

    @property
    def best(self) -> float:
        return min(self.rounds)

    @property
    def median(self) -> float:
        return statistics.median(self.rounds)

    @property
    def worst(self) -> float:
        return max(self.rounds)


def synchronizer(device: torch.device) -> Callable[[], None]:
    """What waits for ``device``'s queued work: ``torch.cuda.synchronize`` on a GPU, nothing
    on the CPU (whose work is done when the call returns)."""
    if device.type == "cuda":
        return functools.partial(torch.cuda.synchronize, device)
    return lambda: None


def device_line(device: torch.device) -> str:
    """One line naming the GPU a benchmark runs on ('' on the CPU: ``processor`` says it)."""
    if device.type != "cuda":
        return ""
    p = torch.cuda.get_device_properties(device)
    return (f"GPU: {p.name}, {p.total_memory / 2**30:.0f} GiB, {p.multi_processor_count} SMs; "
            f"CUDA {torch.version.cuda}; TF32 matmul {torch.backends.cuda.matmul.allow_tf32}")


def interleaved(
    sides: dict[str, Callable[[], Any]], rounds: int, calls: int = 1, warmup: int = 1,
    sync: Callable[[], None] = lambda: None,
) -> dict[str, Timing]:
    """Time each side in alternating rounds of ``calls`` calls; seconds per call per round
    (each round closed by ``sync``, see the module docstring)."""
    for fn in sides.values():
        for _ in range(warmup):
            fn()
    sync()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            times[name].append((time.perf_counter() - t0) / calls)
    return {name: Timing(t) for name, t in times.items()}


def spread(timing: Timing, work: float, unit: str) -> str:
    """``work`` per second at the best round, and at the median and worst rounds."""
    return (f"{work / timing.best:,.0f} {unit} (median {work / timing.median:,.0f}, worst "
            f"{work / timing.worst:,.0f}; {len(timing.rounds)} rounds)")


def verdict(ratio: float, target: float) -> str:
    return f"target >= {target}x: {'met' if ratio >= target else 'NOT met'}"


def hf_gpt2(cfg: ModelConfig, n_positions: int | None = None) -> Any:
    """A randomly initialised Hugging Face ``GPT2LMHeadModel`` at ``cfg``'s sizes.

    Same width, heads, blocks, vocabulary and context (``n_positions``, default
    ``cfg.pos_rows``); dropout off as in attnlab's default; every other setting is
    Hugging Face's own default. No token ids are special (so generation never stops
    early on an end-of-text token).
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=cfg.vocab_size, n_positions=n_positions or cfg.pos_rows, n_embd=cfg.d_model,
        n_layer=cfg.n_layer, n_head=cfg.n_head, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=None, eos_token_id=None,
    )
    return GPT2LMHeadModel(config)


def hf_sizes(hf_model: Any) -> dict[str, Any]:
    """The sizes of a ``GPT2LMHeadModel`` under attnlab's ``ModelConfig`` names."""
    c = hf_model.config
    return {"vocab_size": c.vocab_size, "pos_rows": c.n_positions, "d_model": c.n_embd,
            "n_layer": c.n_layer, "n_head": c.n_head,
            "dropout": max(c.resid_pdrop, c.embd_pdrop, c.attn_pdrop)}


def attnlab_sizes(cfg: ModelConfig) -> dict[str, Any]:
    """``hf_sizes``'s fields of an attnlab config: the two must be equal to compare."""
    return {"vocab_size": cfg.vocab_size, "pos_rows": cfg.pos_rows, "d_model": cfg.d_model,
            "n_layer": cfg.n_layer, "n_head": cfg.n_head, "dropout": cfg.dropout}
