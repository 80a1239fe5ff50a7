"""The training loop: AdamW on next-token cross-entropy, resumable bit for bit.

Dimension legend: ``B`` batch, ``T`` context (``n_ctx``), ``V`` vocabulary.

One update draws ``B`` random windows from the train split (``sample_batch``),
computes the mean cross-entropy of the next token at every position
(``attnlab.nn.model.next_token_loss``, on ``net(x)`` so that DDP sees the forward), and
takes an AdamW step (Loshchilov & Hutter 2019) at the rate of
``attnlab.train.schedule.lr_at``, after optional global-norm clipping
(Pascanu et al. 2013).

Reproducibility. The initial weights come from ``train.seed``; batches from
a sampler generator seeded by ``(seed, rank)``; dropout from the global torch
generator. A checkpoint holds the weights, the AdamW moments, the step and all
three generator states (``attnlab.train.generators``), and the learning rate is
a function of the step, so on the CPU a run interrupted and resumed ends with
exactly the same weights as one never interrupted (tested with ``torch.equal``).
On CUDA, kernels are not guaranteed bitwise deterministic.

Evaluation. Every ``eval_every`` steps and at the end: held-out perplexity
on the *whole* held-out split and training perplexity on a fixed train slice
of the same size (docs/data.md). At width 128 and context 128 the held-out split
(~46k tokens) costs about as much as two training steps, so no subset is used;
``eval_every=0`` evaluates only at the end.

Device and precision. ``train`` resolves ``train.device`` and
``train.precision`` first (``resolve_run``: ``auto`` becomes ``cpu``/``cuda``
and ``fp32``/``bf16``), and the run hash, ``config.json`` and the checkpoint
record the resolved values: a run started in fp32 on the CPU is refused, in
one line, rather than resumed in bf16 on a GPU.

Divergence. A NaN or infinite loss, or a finite one whose mean over the last
50 steps exceeds 3·ln V (``attnlab.train.divergence`` says why that bound),
stops the run before the update that would have used it; so does, at the end and
whatever the window, a last loss or perplexity not finite or past it: ``TrainingDiverged``
names the step and ``diverged.json`` records it. ``eval`` and ``generate`` of
such a run say that it diverged; ``train`` again says so at once (delete
``diverged.json`` to try again).

Checkpoints. Every ``ckpt_every`` steps and, in a single process, whenever
``CKPT_SECONDS`` of wall time (or 20 times the last write's duration) have
passed, so a hard kill loses at most about a minute whatever ``ckpt_every``
is; under DDP only the step schedule (ranks must agree). A due checkpoint is
written after the next forward pass, once the loss of its weights is known:
only if it is within the bound, so the checkpoint a diverged run keeps is a
good one (one on Ctrl-C is written at once; the final one once the end-of-run
evaluation has measured it within the bound). None of this changes the result:
a resumed run is bitwise the same wherever it was cut. Ctrl-C or SIGTERM does
not cut a step in half: the loop finishes the update, writes a checkpoint and
stops with ``TrainingInterrupted`` (a second Ctrl-C stops at once; at the last
step the run just finishes).

Other models. ``_Run`` is one session of next-token training; a session that draws other
batches subclasses it and changes only what it trains on (``_prepare``, ``vocab_size``,
``_batch_loss``, ``_evaluate``, ``_sizes``): ``attnlab.train.seq2seq_trainer`` trains an
encoder–decoder on translation pairs that way, with this loop, these checkpoints and this
resumption.

Kept weights. After each step of ``train.keep_steps`` the weights alone are also written
to ``<run>/kept/`` (``attnlab.train.kept_steps``): snapshots of one trajectory for measuring.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from attnlab.data.dataset import sample_batch
from attnlab.errors import DataError, Said
from attnlab.files import write_json
from attnlab.nn.model import next_token_loss
from attnlab.train import distributed as dist_utils
from attnlab.train import generators
from attnlab.train.checkpoint import (
    STATE,
    find_checkpoint,
    load_checkpoint,
    remove_stale,
    save_checkpoint,
    trainer_state,
)
from attnlab.train.distributed import DistInfo
from attnlab.train.divergence import LossGuard, diverged, record_divergence
from attnlab.train.kept_steps import save_kept
from attnlab.train.progress import Progress
from attnlab.train.run_config import RunConfig, run_hash
from attnlab.train.rundir import (
    DIVERGED,
    RESULT,
    TOKENIZER,
    TrainingDiverged,
    append_metrics,
    check_same_config,
    read_diverged,
    read_meta,
    read_result,
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
    denormal_mode,
    evaluate,
    prepare_splits,
    resolve_device,
    resolve_run,
    weights_sha256,
)
from attnlab.train.schedule import lr_at
from attnlab.train.signals import stop_requests
from attnlab.train.speed import make_optimizer, maybe_compile

__all__ = ["CKPT_SECONDS", "TrainingDiverged", "TrainingInterrupted", "train"]

log = logging.getLogger(__name__)

CKPT_SECONDS = 60.0  # a single-process run also checkpoints at least this often (wall time)

class TrainingInterrupted(KeyboardInterrupt):
    """Stopped by Ctrl-C or SIGTERM at a step boundary, after writing a checkpoint."""


def train(
    cfg: RunConfig,
    run_dir: Path,
    *,
    data: Any | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int], None] | None = None,
    session: type[_Run] | None = None,
) -> dict[str, Any]:
    """Train ``cfg`` in ``run_dir`` (resuming from its checkpoint) and return the result.

    ``cfg`` is resolved first (``resolve_run``), so the run records the device
    and precision it really uses. ``data`` overrides ``cfg.data`` with any
    object holding ``train`` and ``held`` token arrays (and optionally
    ``tokenizer``, ``corpus_sha256``). ``progress`` receives one dict per log
    and eval line (rank 0 only); ``on_start(step)`` is called once the run's
    files are checked, before anything is written (rank 0 only), with the step
    it starts from. A run that has already finished returns its
    stored ``result.json``; one that diverged raises ``TrainingDiverged`` again.
    ``session`` is the class of the training session (None: ``_Run``, next-token training
    of a language model; ``attnlab.train.seq2seq_trainer`` gives its own).
    """
    run_dir = Path(run_dir)
    cfg = resolve_run(cfg)
    device = resolve_device(cfg.train.device)
    check_same_config(run_dir, cfg)  # also refuses a run directory that is a file
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
            if (run_dir / RESULT).exists():
                log.info("run %s has already finished", run_dir)
                return read_result(run_dir)
            stored = read_diverged(run_dir)
            if stored is not None:
                raise TrainingDiverged("%s (recorded in %s; delete it to try again)",
                                       stored["message"], run_dir / DIVERGED)
            with denormal_mode(device, cfg.train.denormals):
                return (session or _Run)(cfg, run_dir, data, progress, device,
                                         info).run(on_start)
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
        self.precision = cfg.train.precision  # resolved: fp32 or bf16
        if device.type == "cpu" and self.precision == "bf16" and cpu_has_bf16() is False:
            log.warning("this CPU has no bf16 instructions (avx512_bf16, amx_bf16): bf16 "
                        "autocast will train several times slower than fp32")
        if not info.is_main:  # rank 0 first: it trains and caches the tokenizer once
            dist_utils.barrier(info)
        self.splits: Any = self._prepare(data)
        if info.is_main:
            dist_utils.barrier(info)
        self.model = build_model(cfg, device)
        self.optimizer = make_optimizer(self.model, self.tc)  # fused AdamW (train/speed.py)
        self.sampler = torch.Generator().manual_seed(
            dist_utils.sampler_seed(self.tc.seed, info.rank)
        )
        self.guard = LossGuard(self.vocab_size)
        self.step = 0
        self.last_loss = float("nan")
        self.wall_before = 0.0  # seconds spent in earlier sessions
        self.tokens_per_s = 0.0
        self.last_ckpt_step: int | None = None
        self.final: dict[str, Any] | None = None  # the last step's checkpoint, once measured
        self.next_timed_ckpt = time.perf_counter() + CKPT_SECONDS  # single process only

    # -- what a session trains on (a subclass changes these: seq2seq_trainer) ----

    def _prepare(self, data: Any | None) -> Splits:
        """The token data of the run."""
        return prepare_splits(self.cfg, data)

    @property
    def vocab_size(self) -> int:
        """The vocabulary the loss is over (the divergence bound is 3·ln of it)."""
        return self.cfg.model.vocab_size

    def _batch_loss(self, net: torch.nn.Module, amp: Any) -> tuple[torch.Tensor, int]:
        """The loss of the next batch, drawn with ``self.sampler``, and the tokens it holds."""
        m = self.cfg.model
        x, y = sample_batch(self.splits.train, self.tc.batch_size, m.n_ctx, self.sampler)
        x, y = x.to(self.device), y.to(self.device)  # (B, T) each
        with amp:
            logits = net(x)  # (B, T, V): through net, so DDP's hooks see the forward
        loss = next_token_loss(logits, y)  # the single call site of the training loss
        return loss, self.tc.batch_size * m.n_ctx * self.info.world_size

    def _evaluate(self) -> dict[str, float]:
        return evaluate(
            self.model, self.splits, self.cfg.model.n_ctx,
            batch_size=self.tc.eval_batch_size, precision=self.precision,
        )

    def _sizes(self) -> dict[str, int]:
        """The result's counts of what was evaluated and seen."""
        return {"eval_tokens": len(self.splits.held),
                "tokens_seen": self.step * self.tc.batch_size * self.cfg.model.n_ctx
                * self.info.world_size}

    # -- set-up ---------------------------------------------------------------

    def _resume(self) -> None:
        ckpt = find_checkpoint(self.run_dir) if self.info.is_main else None
        dist_utils.barrier(self.info)  # rank 0 has repaired an interrupted save
        if ckpt is None and not (self.run_dir / "checkpoint" / STATE).is_file():
            return
        ckpt = self.run_dir / "checkpoint"
        record = load_checkpoint(ckpt, self.model, self.optimizer)
        if self.info.is_main:
            remove_stale(self.run_dir)
        mine = trainer_state(ckpt, record, run_hash(self.cfg), self.info.world_size,
                             self.info.rank)
        generators.restore(mine, self.sampler, self.device, ckpt)
        self.step = self.last_ckpt_step = record["step"]
        self.last_loss, self.wall_before = mine["last_loss"], mine["wall_s"]
        self.tokens_per_s = mine["tokens_per_s"]
        self.guard = LossGuard(self.vocab_size, recent=mine["recent_losses"])
        log.info("resuming %s from step %d", self.run_dir, self.step)

    def _check_run_files(self) -> None:
        """Refuse damaged run files before anything is written (rank 0)."""
        read_meta(self.run_dir)
        path = self.run_dir / TOKENIZER
        fingerprint = getattr(self.splits.tokenizer, "fingerprint", None)
        if fingerprint is not None and path.exists():
            from attnlab.data.tokenizer import BPETokenizer

            if BPETokenizer.load(path).fingerprint != fingerprint:
                raise DataError("%s is not the tokenizer of this run's corpus (replaced?); "
                                "delete it and it is written again", path)

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

    def run(self, on_start: Callable[[int], None] | None = None) -> dict[str, Any]:
        self._resume()
        if self.info.is_main:
            self._check_run_files()
            if on_start is not None:
                on_start(self.step)
            self._write_run_files()
        net: torch.nn.Module = self.model
        if self.info.enabled:
            ids = [self.device.index] if self.device.type == "cuda" else None
            net = DistributedDataParallel(self.model, device_ids=ids)
        # Compiled (CUDA only) for the training forward; checkpoints and evaluation keep
        # self.model, whose state-dict keys the compiled wrapper would prefix.
        net = maybe_compile(net, self.device, self.tc.compile)
        amp = autocast(self.device, self.precision)
        session_start, session_first = time.perf_counter(), self.step
        self.model.train()
        with stop_requests(not self.info.enabled) as stop:
            self._loop(net, amp, session_start, session_first, stop)
        return self._finish(self.wall_before + time.perf_counter() - session_start)

    def _loop(
        self,
        net: torch.nn.Module,
        amp: Any,
        session_start: float,
        session_first: int,
        stop: dict[str, int | None],
    ) -> None:
        tc = self.tc
        cuda = self.device.type == "cuda"
        keep = set(tc.keep_steps)
        train_s, tokens, window = 0.0, 0, []
        pending: dict[str, Any] | None = None  # a checkpoint waiting for its weights' loss
        while self.step < tc.steps:
            t0 = time.perf_counter()
            lr = lr_at(self.step, tc)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            loss, step_tokens = self._batch_loss(net, amp)
            loss_value = float(dist_utils.mean_across(loss.detach(), self.info))
            reason = self.guard.check(loss_value)  # the same on every rank: the mean loss
            if reason is not None:
                self._diverged(reason, loss_value)
            if pending is not None and not self.guard.over_bound():
                self._write(pending)  # these weights' loss is within bound: a good checkpoint
            pending = None
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = None
            if tc.grad_clip is not None:
                grad_norm = float(torch.nn.utils.clip_grad_norm_(net.parameters(), tc.grad_clip))
            self.optimizer.step()
            self.step += 1
            if self.step in keep and self.info.is_main:  # a snapshot of this trajectory
                save_kept(self.run_dir, self.model, self.step)
            self.last_loss = loss_value
            window.append(loss_value)
            if cuda:  # kernels run asynchronously: the clock must wait for the step's own
                torch.cuda.synchronize(self.device)
            train_s += time.perf_counter() - t0
            tokens += step_tokens
            self.tokens_per_s = tokens / train_s
            wall = self.wall_before + time.perf_counter() - session_start
            timed = not self.info.enabled and time.perf_counter() >= self.next_timed_ckpt
            due = (tc.ckpt_every and self.step % tc.ckpt_every == 0) or timed
            if self.step == tc.steps:  # written by _finish, once evaluation has measured it
                self.final = self._snapshot(wall)
            elif due:  # written once the next forward has measured these weights' loss
                pending = self._snapshot(wall)
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
            if stop["signal"] is not None and self.step < tc.steps:  # done: _finish ends it
                if self.last_ckpt_step != self.step:
                    self._write(pending or self._snapshot(wall))
                raise TrainingInterrupted(
                    f"interrupted at step {self.step} of {tc.steps}; checkpoint written to "
                    f"{self.run_dir / 'checkpoint'}: run the same command again to resume"
                )

    def _emit(self, record: dict[str, Any]) -> None:
        record = {**record, "steps": self.tc.steps}
        if self.info.is_main:
            append_metrics(self.run_dir, record)
            if self.progress is not None:
                self.progress(record)

    def _snapshot(self, wall: float) -> dict[str, Any]:
        """Everything a checkpoint of this step holds but the weights and moments (which
        stay as they are until the next update): the step, the losses, the generators."""
        rng = generators.capture(self.sampler, self.device)
        return {
            "step": self.step,
            "run_hash": run_hash(self.cfg),
            "config": self.cfg.to_dict(),
            "rng": dist_utils.gather(rng, self.info),
            "last_loss": self.last_loss,
            "recent_losses": self.guard.state(),
            "wall_s": wall,
            "tokens_per_s": self.tokens_per_s,
        }

    def _write(self, snapshot: dict[str, Any]) -> None:
        """Save ``snapshot`` with the current weights and optimizer state (rank 0)."""
        started = time.perf_counter()
        if not all(bool(torch.isfinite(p).all()) for p in self.model.parameters()):
            # The last update made a weight NaN or infinite: never save that.
            self._diverged(Said("a weight became non-finite in the update of step %s",
                                self.step), self.last_loss, step=self.step)
        if self.info.is_main:
            save_checkpoint(self.run_dir, self.model, self.optimizer, snapshot)
        self.last_ckpt_step = snapshot["step"]
        now = time.perf_counter()
        self.next_timed_ckpt = now + max(CKPT_SECONDS, 20 * (now - started))

    def _diverged(self, reason: Said | str, value: float, step: int | None = None) -> None:
        step = self.step + 1 if step is None else step
        err = diverged(reason, step, self.tc.steps, self.run_dir, self.last_ckpt_step)
        if self.info.is_main:
            record_divergence(self.run_dir, step, self.tc.steps, value, reason,
                              self.last_ckpt_step, err)
        raise err

    def _finish(self, wall: float) -> dict[str, Any]:
        ppl = self._evaluate()
        reason = self.guard.final_reason(self.last_loss, ppl)  # whatever the window
        if reason is not None:
            self._diverged(reason, self.last_loss, step=self.step)
        if self.final is not None:
            self._write(self.final)
        result = {
            "run_hash": run_hash(self.cfg),
            "steps": self.step,
            "final_loss": self.last_loss,
            **ppl,
            **self._sizes(),
            "tokens_per_s": self.tokens_per_s,
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
