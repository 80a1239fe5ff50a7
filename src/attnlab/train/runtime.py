"""Device, precision, data and model set-up shared by training, evaluation and generation.

A run uses CUDA when present and the CPU otherwise (``device="auto"``). On
CUDA the default precision is bf16 autocast (Micikevicius et al. 2018 for mixed
precision; bf16 needs no loss scaling); on the CPU it is fp32, and
``precision="bf16"`` turns on CPU autocast. Under autocast the weights and the
optimizer stay fp32; matmuls run in bf16; the loss is computed in fp32.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.data.perplexity import perplexity, train_eval_slice
from attnlab.errors import DataError, Said, UsageError
from attnlab.nn.attention import resolve_backend
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig, Seq2SeqConfig
from attnlab.train.checkpoint import check_finite, find_checkpoint, load_checkpoint
from attnlab.train.run_config import RunConfig
from attnlab.train.rundir import (
    TOKENIZER,
    TrainingDiverged,
    read_diverged,
    read_run_config,
    reader_lock,
)

log = logging.getLogger(__name__)

# Threads of every CPU training run, on every path (the runner in order, its worker processes,
# a retry, `attnlab train`): a CPU matmul sums in an order that depends on how many threads
# split it, so another count changes the last bits of the weights.
CPU_THREADS = 1


@contextlib.contextmanager
def training_threads(device: str, threads: int = CPU_THREADS) -> Iterator[None]:
    """Within the block, torch uses ``threads`` threads when ``device`` is the CPU (the
    caller's count is restored after); on CUDA the count is left alone."""
    if device != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def denormal_mode(device: torch.device, mode: str) -> Iterator[None]:
    """Within the block, a CPU run with ``mode="flush"`` (``train.denormals``) treats floats
    below 1.2e-38 as zero; ``keep`` (and any CUDA run) leaves IEEE arithmetic as it is.

    Why: on x86 an operation on such a subnormal number takes many times longer than on a
    normal one, and a saturated softmax (scores without the √d_k division at d_k = 1,024)
    fills the backward pass with them: a training step of that head ran 5.4x slower than
    with them flushed (113 ms against 21 ms, the scaled head's time). The flag is the calling
    thread's: the trainer's CPU runs use one thread (``CPU_THREADS``), which it then covers
    whole; with ``--threads`` above 1 the other threads may keep them. Restored to
    ``keep`` after the block (attnlab sets it nowhere else)."""
    if mode != "flush" or device.type != "cpu":
        yield
        return
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def resolve_device(name: str) -> torch.device:
    """``auto`` → CUDA when available, else CPU; ``cuda`` without a GPU is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("train.device=cuda but no CUDA device is available (use auto or cpu)")
    return torch.device(name)


def resolve_precision(precision: str, device: torch.device) -> str:
    """``auto`` → ``bf16`` on CUDA, ``fp32`` on CPU."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    return precision


def resolve_run(cfg: RunConfig) -> RunConfig:
    """``cfg`` with ``train.device``, ``train.precision`` and ``model.backend`` resolved
    on this machine.

    ``auto`` becomes what the run will really use (``cuda``/``cpu``, ``bf16``/``fp32``,
    the attention kernel ``KERNEL_TABLE`` gives that device and precision), so the run
    hash, and with it the run directory, names the device, precision and kernel: a run
    started in fp32 on the CPU is never resumed in bf16 on a GPU.

    >>> resolve_run(RunConfig()).train.precision in ("fp32", "bf16")
    True
    """
    return resolve_on(cfg, resolve_device(cfg.train.device).type)


def resolve_on(cfg: RunConfig, device: str) -> RunConfig:
    """``cfg`` on the device type ``device`` (``cpu``/``cuda``, already resolved, perhaps
    for another machine: a cluster's), with its precision and attention kernel resolved."""
    precision = resolve_precision(cfg.train.precision, torch.device(device))
    train = dataclasses.replace(cfg.train, device=device, precision=precision)
    model = cfg.model.replace(backend=resolve_backend(cfg.model.backend, device, precision))
    return cfg.replace(model=model, train=train)


# What bf16 autocast costs on a CPU without bf16 units (docs/benchmarks.md); a Said, so an
# error that gives it is said whole in the command's language.
BF16_SLOWDOWN = Said("about 0.06x fp32's speed at width 128, measured on an AVX2-only AMD EPYC")


def check_precision(precision: str, device: str) -> None:
    """A bf16 run asked for on a CPU without bf16 units is one ``UsageError`` line: there
    autocast converts around fp32 arithmetic and trains many times slower."""
    if precision == "bf16" and device == "cpu" and cpu_has_bf16() is False:
        raise UsageError("--precision bf16: this CPU has no bf16 units (AVX512-BF16, AMX), "
                         "where bf16 trains at %s; use --precision fp32", BF16_SLOWDOWN)


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


def model_of(model_cfg: ModelConfig | Seq2SeqConfig) -> torch.nn.Module:
    """The module a run's model config builds: a ``LanguageModel``, or for a
    ``Seq2SeqConfig`` the encoder–decoder its ``arch`` names (``attnlab.nn.seq2seq``)."""
    if isinstance(model_cfg, Seq2SeqConfig):
        from attnlab.nn.seq2seq import build_seq2seq

        return build_seq2seq(model_cfg)
    return LanguageModel(model_cfg)


def build_model(cfg: RunConfig, device: torch.device) -> LanguageModel:
    """The model of ``cfg``, initialised from ``cfg.train.seed`` (same seed, same weights)."""
    torch.manual_seed(cfg.train.seed)
    return model_of(cfg.model).to(device)


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
            raise UsageError("data.train_tokens=%s exceeds the %s training tokens", n,
                             len(train))
        train = train[:n]
    if len(train) < cfg.model.n_ctx + 1:
        raise UsageError("%s training tokens are too few for windows of model.n_ctx=%s + 1",
                         len(train), cfg.model.n_ctx)
    if len(held) < 2:
        raise UsageError("the held-out split has %s tokens; need at least 2", len(held))
    tokenizer = getattr(data, "tokenizer", None)
    top = max(int(train.max()), int(held.max()), getattr(tokenizer, "vocab_size", 0) - 1)
    if top >= cfg.model.vocab_size:
        raise UsageError("the data uses token ids up to %s but model.vocab_size=%s; set "
                         "model.vocab_size=%s", top, cfg.model.vocab_size, top + 1)
    return Splits(train, held, tokenizer, getattr(data, "corpus_sha256", None))


def evaluate(
    model: torch.nn.Module,
    splits: Splits,
    n_ctx: int,
    *,
    batch_size: int = 64,
    precision: str = "fp32",
) -> dict[str, float]:
    """Train and held-out perplexity (docs/data.md): the whole held-out split, and a fixed
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
    run_dir: Path, device: str = "auto"
) -> tuple[RunConfig, LanguageModel, Any, dict[str, Any]]:
    """The config, the model with its latest checkpoint's weights, the run's tokenizer
    (None if the run has none) and the checkpoint's state record.

    The model is built and loaded on ``device`` (``auto``: CUDA when present), so
    evaluation and generation run wholly there. Reading takes the run's shared
    lock and repairs nothing, so it cannot race a training run mid-save (it is
    refused in one line while one trains). A run that diverged is a
    ``TrainingDiverged`` (its last checkpoint is not a trained model); damaged
    files are a ``DataError`` naming them.
    """
    run_dir = Path(run_dir)
    target = resolve_device(device)
    cfg = read_run_config(run_dir)
    with reader_lock(run_dir):
        diverged = read_diverged(run_dir)
        if diverged is not None:
            raise TrainingDiverged("run %s diverged: %s", run_dir, diverged["message"])
        ckpt = find_checkpoint(run_dir, repair=False)
        if ckpt is None:
            raise DataError("run %s has no checkpoint yet (train it first)", run_dir)
        with target:  # parameters are created on the device, not copied there
            model = model_of(cfg.model)
        record = load_checkpoint(ckpt, model)
        check_finite(model, ckpt)
        tokenizer = None
        if (run_dir / TOKENIZER).exists():
            from attnlab.data.tokenizer import BPETokenizer

            tokenizer = BPETokenizer.load(run_dir / TOKENIZER)
    model.eval()
    return cfg, model, tokenizer, record
