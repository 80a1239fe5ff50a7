"""How long a suite should take here: every pending run's step, timed on this machine.

``attnlab.suite.estimate`` plans the selected experiments exactly as
``reproduce`` does (``Suite.plan``) and keeps the runs that have not finished;
``estimate_plans`` times a few training steps of each distinct shape (model,
batch, context) in a fresh one-thread process
(on CUDA: on the device, under the run's precision), as a worker would run
it. Each shape is timed in interleaved rounds and the best round is kept, so
a burst of other work on a shared machine inflates the estimate less. A run
then costs ``steps × step time`` plus its final evaluation (a forward pass
over the held-out split and a train slice of the same size, counted as a third
of a training step per token). The runs are laid on the workers longest first,
as the pool takes them, and the estimate is the time the busiest worker needs.
Workers that share a GPU (``--jobs`` above the GPU count) are counted as one
per GPU: how much sharing gains is for a measurement to say, not assumed.

Left out: analysis after training (minutes in the quick profile: the cost
sweep, position's longer windows), warm-up effects of long runs, and the
extra-seed round (``attnlab.lab.seeds``): whether it runs depends
on verdicts not known before training. The printed estimate says so, with the
most it can add: ``extra / seeds`` of the training time of each experiment
that gets it.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass, field
from typing import Any

from attnlab.train.config import RunConfig

ROUNDS = 2  # interleaved timing rounds; the best is kept
STEPS = 2  # timed steps per shape and round (after one warm-up step)


@dataclass
class Estimate:
    """Estimated training time of the pending runs of a suite."""

    profile: str
    workers: int
    device: str
    per_experiment: dict[str, float] = field(default_factory=dict)  # worker-seconds
    runs: dict[str, int] = field(default_factory=dict)  # pending runs per experiment
    wall_s: float = 0.0  # the busiest worker's seconds
    timing_s: float = 0.0  # how long the timing itself took
    extra_seeds: int = 0  # the extra-seed round's size (not in the estimate: said in text)
    seeds: dict[str, int] = field(default_factory=dict)  # planned seeds per experiment
    sharing: int = 0  # workers that will share the GPUs (counted as `workers`, one per GPU)
    skipped: dict[str, str] = field(default_factory=dict)  # experiment -> why it cannot run

    def text(self) -> str:
        from attnlab.train.progress import format_duration

        skipped = [f"  skipped {name}: {why}" for name, why in self.skipped.items()]
        if not any(self.runs.values()):
            nothing = "every planned run has finished"
            if self.skipped:
                nothing = ("every other planned run has finished" if self.runs else
                           "no experiment selected can run here")
            return "\n".join([f"estimate ({self.profile}): nothing to train, {nothing}",
                              *skipped, f"  {self.extra_text()}"])
        lines = [f"estimate ({self.profile}, {self.device}, {self.workers} worker(s)): training "
                 f"should take about {format_duration(self.wall_s)} on this machine"]
        for name, seconds in self.per_experiment.items():
            if self.runs.get(name):
                lines.append(f"  {name}: {self.runs[name]} runs, {format_duration(seconds)} "
                             "of one worker's time")
        lines += [f"  skipped {name} (not in the estimate): {why}"
                  for name, why in self.skipped.items()]
        lines.append(f"  (from {STEPS}-step timings of each model, best of {ROUNDS} rounds, "
                     f"{self.timing_s:.0f} s; analysis comes on top)")
        if self.sharing > self.workers:
            lines.append(f"  ({self.sharing} workers will share {self.workers} GPU(s); counted "
                         "as one per GPU, so sharing's gain is left out)")
        lines.append("  " + self.extra_text())
        return "\n".join(lines)

    def extra_text(self) -> str:
        """What the estimate leaves out about the extra-seed round."""
        if not self.extra_seeds:
            return "(no extra-seed round: --extra-seeds 0)"
        shares = sorted({f"{self.extra_seeds}/{n}" for n in self.seeds.values() if n >= 3})
        if not shares:
            return "(no extra-seed round: it needs at least 3 seeds)"
        return (f"(not included: the extra round of {self.extra_seeds} seed(s) for each "
                "experiment left with a training claim inconclusive on 3 or more seeds: up "
                f"to {' or '.join(shares)} more of its training)")


def shape_of(cfg: RunConfig) -> tuple[Any, ...]:
    """What a step's time depends on: the model, the batch, device and precision."""
    return (cfg.model, cfg.train.batch_size, cfg.train.device, cfg.train.precision)


def step_seconds(configs: list[RunConfig]) -> list[float]:
    """Seconds per training step of each config, timed in a fresh one-thread process."""
    if not configs:
        return []
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_time_steps, (configs,))


def _time_steps(configs: list[RunConfig]) -> list[float]:
    """In the timing process: interleaved rounds over every config; the best round each."""
    import torch

    from attnlab.nn.model import next_token_loss
    from attnlab.train.runtime import CPU_THREADS, autocast, build_model
    from attnlab.train.speed import make_optimizer

    torch.set_num_threads(CPU_THREADS)  # this process is the stand-in for one worker
    states = []
    for cfg in configs:
        device = torch.device(cfg.train.device)
        model = build_model(cfg, device)
        opt = make_optimizer(model, cfg.train)  # the trainer's optimizer, its step timed too
        shape = (cfg.train.batch_size, cfg.model.n_ctx)
        x = torch.randint(0, cfg.model.vocab_size, shape, device=device)  # (B, T)
        y = torch.randint(0, cfg.model.vocab_size, shape, device=device)  # (B, T)
        states.append((model, opt, x, y, autocast(device, cfg.train.precision), device))

    def step(state: tuple) -> None:
        model, opt, x, y, amp, _ = state
        with amp:
            logits = model(x)  # (B, T, V)
        loss = next_token_loss(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def sync(device: Any) -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for state in states:
        step(state)  # warm-up: allocations, kernel choice
    best = [float("inf")] * len(states)
    for _ in range(ROUNDS):
        for i, state in enumerate(states):
            sync(state[-1])
            start = time.perf_counter()
            for _ in range(STEPS):
                step(state)
            sync(state[-1])
            best[i] = min(best[i], (time.perf_counter() - start) / STEPS)
    return best


def run_seconds(cfg: RunConfig, step_s: float, held_tokens: int) -> float:
    """A run's time: its steps, then the final evaluation (two held-out-sized forward passes,
    a forward costing about a third of a training step per token)."""
    tokens_per_step = cfg.train.batch_size * cfg.model.n_ctx
    return cfg.train.steps * step_s + 2 * held_tokens * step_s / tokens_per_step / 3


def makespan(seconds: list[float], workers: int) -> float:
    """The busiest worker's time when runs are taken longest first by the least busy worker.

    >>> makespan([4, 3, 3, 2], 2)
    6.0
    """
    load = [0.0] * max(1, workers)
    for s in sorted(seconds, reverse=True):
        load[load.index(min(load))] += s
    return max(load)


def estimate_plans(profile: str, pending: dict[str, list[Any]], runner: Any, *,
                   seeds: dict[str, int], extra_seeds: int = 0,
                   skipped: dict[str, str] | None = None) -> Estimate:
    """Time the steps of the ``pending`` runs (experiment -> resolved specs not finished),
    lay them on the runner's executor slots; ``seeds``: planned seeds per experiment;
    ``skipped``: experiments that would not run, and why (a missing corpus), said in the
    text."""
    from attnlab.lab.executors import gpu_count

    shapes = list(dict.fromkeys(shape_of(s.config) for specs in pending.values() for s in specs))
    first = {shape_of(s.config): s.config for specs in pending.values() for s in specs}
    start = time.perf_counter()
    timed = dict(zip(shapes, step_seconds([first[s] for s in shapes]), strict=True))
    pool = runner.slots(sum(map(len, pending.values())))
    device = runner.resolve_device()
    laid = min(pool, max(1, gpu_count())) if device.type == "cuda" else pool
    out = Estimate(profile, laid, str(device), timing_s=time.perf_counter() - start,
                   extra_seeds=extra_seeds, seeds=seeds, sharing=pool,
                   skipped=dict(skipped or {}))
    every = []
    for name, specs in pending.items():
        secs = [run_seconds(s.config, timed[shape_of(s.config)], _held_tokens(s, runner))
                for s in specs]
        out.per_experiment[name], out.runs[name] = sum(secs), len(specs)
        every += secs
    out.wall_s = makespan(every, out.workers)
    return out


def _held_tokens(spec: Any, runner: Any) -> int:
    if spec.data is not None:
        return len(spec.data.held)
    return len(runner.token_data(spec.config).held)
