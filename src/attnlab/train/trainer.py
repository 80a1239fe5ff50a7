"""The training loop: AdamW on next-token cross-entropy, resumable bit for bit.

Dimension legend: ``B`` batch, ``T`` context (``n_ctx``), ``V`` vocabulary.

One update draws ``B`` random windows from the train split (``sample_batch``),
computes the mean cross-entropy of the next token at every position, and
takes an AdamW step (Loshchilov & Hutter 2019) at the rate of
``attnlab.train.schedule.lr_at``, after optional global-norm clipping
(Pascanu et al. 2013).

Reproducibility. The initial weights come from ``train.seed``; batches from
a sampler generator seeded by ``(seed, rank)``; dropout from the global torch
generator. A checkpoint holds the weights, the AdamW moments, the step and all
three generator states, and the learning rate is a function of the step, so on
the CPU a run interrupted and resumed ends with exactly the same weights as
one never interrupted (tested with ``torch.equal``). On CUDA, kernels are not
guaranteed bitwise deterministic.

Evaluation. Every ``eval_every`` steps and at the end: held-out perplexity
on the *whole* held-out split and training perplexity on a fixed train slice
of the same size (SPEC §2). At width 128 and context 128 the held-out split
(~46k tokens) costs about as much as two training steps, so no subset is used;
``eval_every=0`` evaluates only at the end.

Failure. A non-finite loss stops the run before the update that would have
used it, with ``TrainingDiverged`` naming the step; the checkpoint on disk is
the last one written before it. An interrupted run (Ctrl-C, a killed job)
resumes from its last checkpoint when started again with the same config.
Checkpoints are written every ``ckpt_every`` steps and, in a single process,
also whenever ``CKPT_SECONDS`` of wall time (or 20 times the last write's
duration, if longer) have passed since the last one, so a hard kill (SIGKILL,
a lost machine) loses at most about a minute whatever ``ckpt_every`` is. The
timed checkpoints do not change the result: a resumed run is bitwise the same
wherever it was cut. Under DDP only the step schedule is used (ranks must agree
on when to write); a different config in the same directory is refused. Ctrl-C or
SIGTERM does not cut a step in half: the loop finishes the current update,
writes a checkpoint and stops with ``TrainingInterrupted``, so nothing since
the last periodic checkpoint is lost (a second Ctrl-C stops at once).
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from attnlab.data.dataset import sample_batch
from attnlab.files import write_json
from attnlab.train import distributed as dist_utils
from attnlab.train.checkpoint import (
    b64_to_tensor,
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    tensor_to_b64,
)
from attnlab.train.config import RunConfig, run_hash
from attnlab.train.distributed import DistInfo
from attnlab.train.rundir import (
    RESULT,
    TOKENIZER,
    append_metrics,
    check_same_config,
    read_json,
    run_lock,
    session_record,
    truncate_metrics,
    update_meta,
    write_run_config,
)
from attnlab.train.runtime import (
    Splits,
    autocast,
    build_model,
    cpu_has_bf16,
    evaluate,
    prepare_splits,
    resolve_device,
    resolve_precision,
    reuse_freed_memory,
    weights_sha256,
)
from attnlab.train.schedule import lr_at

log = logging.getLogger(__name__)

CKPT_SECONDS = 60.0  # a single-process run also checkpoints at least this often (wall time)

Progress = Callable[[dict[str, Any]], None]


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the run stopped and kept its last good checkpoint."""


class TrainingInterrupted(KeyboardInterrupt):
    """Stopped by Ctrl-C or SIGTERM at a step boundary, after writing a checkpoint."""


@contextmanager
def _stop_requests(enabled: bool) -> Iterator[dict[str, int | None]]:
    """Turn SIGINT/SIGTERM into a flag the loop checks between steps.

    Only in the main thread of a single process (under DDP every rank would have
    to stop at the same step; there the signal keeps its default effect). A
    second signal restores the default handlers and interrupts at once.
    """
    flag: dict[str, int | None] = {"signal": None}
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield flag
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in signals}

    def handler(signum: int, frame: object) -> None:
        if flag["signal"] is not None:
            for s, h in previous.items():
                signal.signal(s, h)
            raise KeyboardInterrupt
        flag["signal"] = signum
        log.warning("stop requested: finishing this step and writing a checkpoint")

    for s in signals:
        signal.signal(s, handler)
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def train(
    cfg: RunConfig,
    run_dir: Path,
    *,
    data: Any | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train ``cfg`` in ``run_dir`` (resuming from its checkpoint) and return the result.

    ``data`` overrides ``cfg.data`` with any object holding ``train`` and
    ``held`` token arrays (and optionally ``tokenizer``, ``corpus_sha256``).
    ``progress`` receives one dict per log and eval line (rank 0 only). A run
    that has already finished returns its stored ``result.json``.
    """
    run_dir = Path(run_dir)
    device = resolve_device(cfg.train.device)
    if device.type == "cpu":
        reuse_freed_memory()  # every step's large tensors come back without page faults
    info = dist_utils.setup(device.type)
    try:
        if info.enabled and device.type == "cuda":
            device = torch.device("cuda", info.local_rank)
        if info.is_main:
            run_dir.mkdir(parents=True, exist_ok=True)
        dist_utils.barrier(info)
        # The caller's random state is left as it was: seeding here is the run's business.
        cuda = [device.index or 0] if device.type == "cuda" else []
        with run_lock(run_dir) if info.is_main else nullcontext(), torch.random.fork_rng(cuda):
            check_same_config(run_dir, cfg)
            if (run_dir / RESULT).is_file():
                log.info("run %s has already finished", run_dir)
                return read_json(run_dir / RESULT)
            return _Run(cfg, run_dir, data, progress, device, info).run()
    finally:
        dist_utils.teardown(info)


class _Run:
    """State of one training session (a fresh start or a resumption)."""

    def __init__(
        self,
        cfg: RunConfig,
        run_dir: Path,
        data: Any | None,
        progress: Progress | None,
        device: torch.device,
        info: DistInfo,
    ) -> None:
        self.cfg, self.run_dir, self.device, self.info = cfg, run_dir, device, info
        self.progress = progress if info.is_main else None
        self.tc = cfg.train
        self.precision = resolve_precision(self.tc.precision, device)
        if device.type == "cpu" and self.precision == "bf16" and cpu_has_bf16() is False:
            log.warning("this CPU has no bf16 instructions (avx512_bf16, amx_bf16): bf16 "
                        "autocast will train several times slower than fp32")
        if not info.is_main:  # rank 0 first: it trains and caches the tokenizer once
            dist_utils.barrier(info)
        self.splits: Splits = prepare_splits(cfg, data)
        if info.is_main:
            dist_utils.barrier(info)
        self.model = build_model(cfg, device)
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=self.tc.lr, betas=self.tc.betas, eps=self.tc.eps,
            weight_decay=self.tc.weight_decay,
        )
        self.sampler = torch.Generator().manual_seed(
            dist_utils.sampler_seed(self.tc.seed, info.rank)
        )
        self.step = 0
        self.last_loss = float("nan")
        self.wall_before = 0.0  # seconds spent in earlier sessions
        self.tokens_per_s = 0.0
        self.last_ckpt_step: int | None = None
        self.next_timed_ckpt = time.perf_counter() + CKPT_SECONDS  # single process only

    # -- set-up ---------------------------------------------------------------

    def _resume(self) -> None:
        ckpt = find_checkpoint(self.run_dir) if self.info.is_main else None
        dist_utils.barrier(self.info)  # rank 0 has repaired an interrupted save
        if ckpt is None and not (self.run_dir / "checkpoint" / "state.json").is_file():
            return
        record = load_checkpoint(self.run_dir / "checkpoint", self.model, self.optimizer)
        if record.get("run_hash") != run_hash(self.cfg):
            raise ValueError(f"checkpoint in {self.run_dir} belongs to another config")
        rng = record["rng"]
        if len(rng) != self.info.world_size:
            raise ValueError(
                f"checkpoint was written by {len(rng)} processes, this run has "
                f"{self.info.world_size}; resume with the same number"
            )
        mine = rng[self.info.rank]
        torch.set_rng_state(b64_to_tensor(mine["torch"]))
        self.sampler.set_state(b64_to_tensor(mine["sampler"]))
        if mine.get("cuda") is not None and self.device.type == "cuda":
            torch.cuda.set_rng_state(b64_to_tensor(mine["cuda"]), self.device)
        self.step = self.last_ckpt_step = record["step"]
        self.last_loss = record["last_loss"]
        self.wall_before = record["wall_s"]
        self.tokens_per_s = record["tokens_per_s"]
        log.info("resuming %s from step %d", self.run_dir, self.step)

    def _write_run_files(self) -> None:
        write_run_config(self.run_dir, self.cfg)
        session = session_record(str(self.device), self.precision, self.info.world_size, self.step)
        extra = {"corpus_sha256": self.splits.corpus_sha256, "params": self.params}
        update_meta(self.run_dir, self.cfg, session, extra)
        save = getattr(self.splits.tokenizer, "save", None)
        if save is not None and not (self.run_dir / TOKENIZER).is_file():
            save(self.run_dir / TOKENIZER)
        truncate_metrics(self.run_dir, self.step)

    @property
    def params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    # -- the loop -------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        self._resume()
        if self.info.is_main:
            self._write_run_files()
        net: torch.nn.Module = self.model
        if self.info.enabled:
            ids = [self.device.index] if self.device.type == "cuda" else None
            net = DistributedDataParallel(self.model, device_ids=ids)
        tc, m = self.tc, self.cfg.model
        amp = autocast(self.device, self.precision)
        tokens_per_step = tc.batch_size * m.n_ctx * self.info.world_size
        session_start, session_first = time.perf_counter(), self.step
        self.model.train()
        with _stop_requests(not self.info.enabled) as stop:
            self._loop(net, amp, tokens_per_step, session_start, session_first, stop)
        return self._finish(self.wall_before + time.perf_counter() - session_start)

    def _loop(
        self,
        net: torch.nn.Module,
        amp: Any,
        tokens_per_step: int,
        session_start: float,
        session_first: int,
        stop: dict[str, int | None],
    ) -> None:
        tc, m = self.tc, self.cfg.model
        train_s, window = 0.0, []
        while self.step < tc.steps:
            t0 = time.perf_counter()
            lr = lr_at(self.step, tc)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            x, y = sample_batch(self.splits.train, tc.batch_size, m.n_ctx, self.sampler)
            x, y = x.to(self.device), y.to(self.device)  # (B, T) each
            with amp:
                logits = net(x)  # (B, T, V)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
            loss_value = float(dist_utils.mean_across(loss.detach(), self.info))
            if not math.isfinite(loss_value):
                self._diverged(loss_value)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = None
            if tc.grad_clip is not None:
                grad_norm = float(torch.nn.utils.clip_grad_norm_(net.parameters(), tc.grad_clip))
            self.optimizer.step()
            self.step += 1
            self.last_loss = loss_value
            window.append(loss_value)
            train_s += time.perf_counter() - t0
            self.tokens_per_s = tokens_per_step * (self.step - session_first) / train_s
            wall = self.wall_before + time.perf_counter() - session_start
            timed = not self.info.enabled and time.perf_counter() >= self.next_timed_ckpt
            if (tc.ckpt_every and self.step % tc.ckpt_every == 0) or self.step == tc.steps or timed:
                self._checkpoint(wall)
            if tc.eval_every and self.step % tc.eval_every == 0 and self.step < tc.steps:
                self._emit({"kind": "eval", "step": self.step, **self._evaluate()})
            if self.step % tc.log_every == 0 or self.step == tc.steps:
                eta = (tc.steps - self.step) * train_s / (self.step - session_first)
                record = {
                    "kind": "train", "step": self.step, "loss": sum(window) / len(window),
                    "lr": lr, "tokens_per_s": self.tokens_per_s, "elapsed_s": wall,
                    "eta_s": eta,
                }
                if grad_norm is not None:
                    record["grad_norm"] = grad_norm
                self._emit(record)
                window = []
            if stop["signal"] is not None:
                if self.last_ckpt_step != self.step:
                    self._checkpoint(wall)
                raise TrainingInterrupted(
                    f"interrupted at step {self.step} of {tc.steps}; checkpoint written to "
                    f"{self.run_dir / 'checkpoint'}: run the same command again to resume"
                )

    def _evaluate(self) -> dict[str, float]:
        return evaluate(
            self.model, self.splits, self.cfg.model.n_ctx,
            batch_size=self.tc.eval_batch_size, precision=self.precision,
        )

    def _emit(self, record: dict[str, Any]) -> None:
        record = {**record, "steps": self.tc.steps}
        if self.info.is_main:
            append_metrics(self.run_dir, record)
            if self.progress is not None:
                self.progress(record)

    def _checkpoint(self, wall: float) -> None:
        started = time.perf_counter()
        rng = {
            "torch": tensor_to_b64(torch.get_rng_state()),
            "sampler": tensor_to_b64(self.sampler.get_state()),
            "cuda": (
                tensor_to_b64(torch.cuda.get_rng_state(self.device))
                if self.device.type == "cuda" else None
            ),
        }
        states = dist_utils.gather(rng, self.info)
        if self.info.is_main:
            save_checkpoint(self.run_dir, self.model, self.optimizer, {
                "step": self.step,
                "run_hash": run_hash(self.cfg),
                "config": self.cfg.to_dict(),
                "rng": states,
                "last_loss": self.last_loss,
                "wall_s": wall,
                "tokens_per_s": self.tokens_per_s,
            })
        self.last_ckpt_step = self.step
        now = time.perf_counter()
        self.next_timed_ckpt = now + max(CKPT_SECONDS, 20 * (now - started))

    def _diverged(self, value: float) -> None:
        step = self.step + 1
        if self.info.is_main:
            append_metrics(self.run_dir, {"kind": "diverged", "step": step, "loss": str(value)})
        kept = (
            f"the last good checkpoint (step {self.last_ckpt_step}) is kept in "
            f"{self.run_dir / 'checkpoint'}"
            if self.last_ckpt_step is not None else "no checkpoint had been written yet"
        )
        raise TrainingDiverged(
            f"non-finite loss ({value}) at step {step} of {self.tc.steps}; training stopped and "
            f"{kept}. Try a lower train.lr, train.warmup_steps or train.grad_clip."
        )

    def _finish(self, wall: float) -> dict[str, Any]:
        ppl = self._evaluate()
        result = {
            "run_hash": run_hash(self.cfg),
            "steps": self.step,
            "final_loss": self.last_loss,
            **ppl,
            "eval_tokens": len(self.splits.held),
            "tokens_per_s": self.tokens_per_s,
            "tokens_seen": self.step * self.tc.batch_size * self.cfg.model.n_ctx
            * self.info.world_size,
            "wall_s": wall,
            "params": self.params,
            "weights_sha256": weights_sha256(self.model),
            "device": str(self.device),
            "precision": self.precision,
            "world_size": self.info.world_size,
        }
        self._emit({"kind": "eval", "step": self.step, **ppl})
        if self.info.is_main:
            write_json(self.run_dir / RESULT, result)
        dist_utils.barrier(self.info)
        return result
