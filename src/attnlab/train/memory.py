"""Will a training step fit in memory? A lower bound on its size, checked before building.

``--set model.n_ctx=100000`` or ``--set model.d_model=1099511627776`` used to
end in an allocator's traceback (or, worse, in the kernel's OOM killer taking
the machine's other processes along). ``check_step_memory`` refuses such a
config in one line, with the size, before a tensor is made.

The estimate is a *lower bound*, so that no config that fits is refused:
only the unavoidable parts are counted, in the narrowest dtype the run uses.

- parameters: the token table (V·c), the output layer (V·c unless tied) and
  each block's MLP (2·r·c²) and q/k/v/o maps (4·c², "mha"), each held four
  times in float32 (weights, gradients and AdamW's two moments);
- activations: the logits and their gradient (2·B·t·V) and each block's
  residual stream (2·B·t·c per block), in float32 or bf16.

Left out (so the true need is higher): attention weights, the MLP's hidden
layer, optimizer temporaries, the allocator's caching, the evaluation pass.
The memory it is checked against: ``MemAvailable`` of ``/proc/meminfo`` on
the CPU (nothing is checked where it cannot be read), the GPU's total memory
on CUDA.
"""

from __future__ import annotations

from pathlib import Path

from attnlab.errors import UsageError
from attnlab.train.run_config import RunConfig

__all__ = ["available_bytes", "check_step_memory", "format_bytes", "step_bytes"]


def format_bytes(n: float) -> str:
    """``1.5 GiB`` and the like (binary units, at most three significant figures).

    >>> format_bytes(1536), format_bytes(2**50 * 1.2)
    ('1.5 KiB', '1.2 PiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            if unit == "B":
                return f"{n:.0f} B"
            return f"{n:.3g} {unit}" if n < 1000 else f"{n:,.0f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def step_bytes(cfg: RunConfig) -> tuple[int, int]:
    """A lower bound on (parameter memory, activation memory) of one training step, in bytes.

    >>> from attnlab.train.run_config import load_run_config
    >>> cfg = load_run_config(None, ["model.n_layer=0", "train.precision=fp32"])
    >>> step_bytes(cfg) == (16 * 2 * 1024 * 128, 4 * 64 * 128 * 2 * 1024)
    True
    """
    m, t = cfg.model, cfg.train
    c, vocab = m.d_model, m.vocab_size
    per_block = (2 * m.mlp_ratio * c * c if m.mlp else 0) + (4 * c * c if m.mixer == "mha" else 0)
    params = vocab * c * (1 if m.tie_weights else 2) + m.n_layer * per_block
    width = 4 if t.precision == "fp32" else 2  # bf16 autocast: activations may be half width
    acts = width * t.batch_size * m.n_ctx * (2 * vocab + 2 * c * m.n_layer)
    return 16 * params, acts


def available_bytes(device: str) -> int | None:
    """Memory a run on ``device`` ("cpu" or "cuda") can have, or None where it is unknown."""
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            return None
        return int(torch.cuda.mem_get_info()[1])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_step_memory(cfg: RunConfig, available: int | None = None) -> None:
    """One ``UsageError`` line if a step of ``cfg`` cannot fit in the device's memory."""
    device = cfg.train.device
    available = available_bytes(device) if available is None else available
    if available is None:
        return
    params, acts = step_bytes(cfg)
    if params + acts <= available:
        return
    where = "the GPU has" if device.startswith("cuda") else "this machine has"
    raise UsageError(
        f"a training step needs at least {format_bytes(params + acts)} (parameters with "
        f"their gradients and AdamW state {format_bytes(params)}, activations "
        f"{format_bytes(acts)} for batch {cfg.train.batch_size} × {cfg.model.n_ctx} "
        f"positions) and {where} {format_bytes(available)}: lower model.d_model, "
        "model.n_ctx or train.batch_size"
    )
