"""Device, precision, data and model set-up shared by training, evaluation and generation.

A run uses CUDA when present and the CPU otherwise (``device="auto"``). On
CUDA the default precision is bf16 autocast (Micikevicius et al. 2018 for mixed
precision; bf16 needs no loss scaling); on the CPU it is fp32, and
``precision="bf16"`` turns on CPU autocast. Under autocast the weights and the
optimizer stay fp32; matmuls run in bf16; the loss is computed in fp32.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import hashlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.data.perplexity import perplexity, train_eval_slice
from attnlab.nn.model import LanguageModel
from attnlab.train.checkpoint import find_checkpoint, load_checkpoint
from attnlab.train.config import RunConfig
from attnlab.train.rundir import TOKENIZER, read_run_config

log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters, from glibc's <malloc.h>


def reuse_freed_memory() -> bool:
    """Make glibc's malloc keep freed memory for reuse; True if it took effect.

    A CPU training step allocates and frees the same large tensors every step:
    at the defaults the logits and their gradient are 8,192 × 1,024 floats
    (32 MiB) each. glibc serves a block that large with fresh ``mmap`` pages and
    unmaps it on ``free``, so every step the kernel faults in and zeroes those
    pages again. Measured on this project's 2-core CPU (default model, sdpa, 1
    thread): a step took 471-501 ms with glibc's defaults and 405-407 ms with this;
    two blocks 781-794 ms and 633-637 ms.

    With ``M_MMAP_MAX = 0`` large blocks come from the heap instead, and a 1 GiB
    ``M_TRIM_THRESHOLD`` keeps freed heap pages mapped, so the next step reuses
    them. The cost: the process holds on to its peak memory until it exits.
    Process-wide and not undone (as an ``LD_PRELOAD`` of jemalloc or tcmalloc would
    be). Does nothing, and returns False, off glibc (macOS, musl).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    done = mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, 1 << 30) == 1
    log.debug("malloc keeps freed memory for reuse: %s", done)
    return done


def resolve_device(name: str) -> torch.device:
    """``auto`` → CUDA when available, else CPU; ``cuda`` without a GPU is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("train.device=cuda but no CUDA device is available")
    return torch.device(name)


def resolve_precision(precision: str, device: torch.device) -> str:
    """``auto`` → ``bf16`` on CUDA, ``fp32`` on CPU."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    return precision


def resolve_run(cfg: RunConfig) -> RunConfig:
    """``cfg`` with ``train.device`` and ``train.precision`` resolved on this machine.

    ``auto`` becomes what the run will really use (``cuda``/``cpu``, ``bf16``/``fp32``),
    so the run hash, and with it the run directory, names the device and precision:
    a run started in fp32 on the CPU is never resumed in bf16 on a GPU.

    >>> resolve_run(RunConfig()).train.precision in ("fp32", "bf16")
    True
    """
    device = resolve_device(cfg.train.device)
    precision = resolve_precision(cfg.train.precision, device)
    train = dataclasses.replace(cfg.train, device=device.type, precision=precision)
    return cfg.replace(train=train)


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool | None:
    """Whether this CPU has bf16 matrix instructions (x86 AVX512-BF16 or AMX-BF16, Arm
    BF16); None where ``cpuinfo`` cannot be read (not Linux).

    Without them CPU autocast converts to bf16 and back around fp32 arithmetic:
    measured on an AVX2-only AMD EPYC, 0.05-0.14x the fp32 speed.
    """
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    flags = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """The autocast context for ``precision`` (a no-op for fp32)."""
    if precision == "bf16":
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def weights_sha256(model: torch.nn.Module) -> str:
    """sha256 over the names and bytes of every tensor of the state dict (sorted by name)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def build_model(cfg: RunConfig, device: torch.device) -> LanguageModel:
    """The model of ``cfg``, initialised from ``cfg.train.seed`` (same seed, same weights)."""
    torch.manual_seed(cfg.train.seed)
    return LanguageModel(cfg.model).to(device)


@dataclass(frozen=True)
class Splits:
    """The token arrays a run trains and evaluates on."""

    train: np.ndarray  # (N_train,) token ids the batches are drawn from
    held: np.ndarray  # (N_held,) held-out token ids
    tokenizer: Any  # encode/decode/save, or None for data given without one
    corpus_sha256: str | None  # what text the tokens came from


def prepare_splits(cfg: RunConfig, data: Any | None = None) -> Splits:
    """Load the corpus of ``cfg.data`` (or use ``data``: any object with ``train`` and
    ``held`` arrays) and check the tokens fit the model."""
    if data is None:
        from attnlab.data.dataset import load_token_data

        data = load_token_data(cfg.data.corpus, cfg.data.vocab_size)
    train = np.asarray(data.train, dtype=np.int64)
    held = np.asarray(data.held, dtype=np.int64)
    n = cfg.data.train_tokens
    if n is not None:
        if n > len(train):
            raise ValueError(f"data.train_tokens={n} exceeds the {len(train)} training tokens")
        train = train[:n]
    if len(train) < cfg.model.n_ctx + 1:
        raise ValueError(
            f"{len(train)} training tokens are too few for windows of model.n_ctx="
            f"{cfg.model.n_ctx} + 1"
        )
    if len(held) < 2:
        raise ValueError(f"the held-out split has {len(held)} tokens; need at least 2")
    tokenizer = getattr(data, "tokenizer", None)
    top = max(int(train.max()), int(held.max()), getattr(tokenizer, "vocab_size", 0) - 1)
    if top >= cfg.model.vocab_size:
        raise ValueError(
            f"the data uses token ids up to {top} but model.vocab_size={cfg.model.vocab_size}; "
            f"set model.vocab_size={top + 1}"
        )
    return Splits(train, held, tokenizer, getattr(data, "corpus_sha256", None))


def evaluate(
    model: torch.nn.Module,
    splits: Splits,
    n_ctx: int,
    *,
    batch_size: int = 64,
    precision: str = "fp32",
) -> dict[str, float]:
    """Train and held-out perplexity (SPEC §2): the whole held-out split, and a fixed
    slice of the train split of the same size, in non-overlapping windows."""
    device = next(model.parameters()).device
    amp = autocast(device, precision)

    def logits_fn(x: torch.Tensor) -> torch.Tensor:
        with amp:
            return model(x)

    was_training = model.training
    model.eval()
    try:
        held = perplexity(logits_fn, splits.held, n_ctx, batch_size, device)
        size = min(len(splits.held), len(splits.train))
        train_slice = train_eval_slice(splits.train, size)
        train = perplexity(logits_fn, train_slice, n_ctx, batch_size, device)
    finally:
        model.train(was_training)
    return {"train_ppl": train, "held_ppl": held}


def load_trained(
    run_dir: Path, device: str = "cpu"
) -> tuple[RunConfig, LanguageModel, Any, dict[str, Any]]:
    """The config, the model with its latest checkpoint's weights, the run's tokenizer
    (None if the run has none) and the checkpoint's state record."""
    run_dir = Path(run_dir)
    cfg = read_run_config(run_dir)
    ckpt = find_checkpoint(run_dir)
    if ckpt is None:
        raise ValueError(f"run {run_dir} has no checkpoint yet (train it first)")
    model = LanguageModel(cfg.model).to(resolve_device(device))
    record = load_checkpoint(ckpt, model)
    model.eval()
    tokenizer = None
    if (run_dir / TOKENIZER).is_file():
        from attnlab.data.tokenizer import BPETokenizer

        tokenizer = BPETokenizer.load(run_dir / TOKENIZER)
    return cfg, model, tokenizer, record
