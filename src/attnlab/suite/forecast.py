"""How long a suite should take here: every pending run's step, timed on this machine.

``attnlab.suite.estimate_plan`` takes the plan ``reproduce`` makes (``plan_suite``:
the same ``SuitePlan`` the command then runs) and keeps the runs that have not finished;
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

The estimate checks itself against what this machine has measured: every finished run of
the same experiments in the run cache (any profile but micro, whose runs are too short
to time) is estimated as a pending one would be and compared with its recorded wall time.
Each experiment's estimate is then multiplied by its own measured ÷ estimated ratio (one
without finished runs: by the median ratio), and the text prints the ratios and an error
bar (``Calibration``). With nothing finished yet it says it is unchecked. The text is said
in the command's language (``Estimate.text(lang)``): its words are the report catalogue's
``estimate.*`` entries, a count said in its number (``attnlab.report.words.tn``).

Left out: analysis after training (minutes in the quick profile: the cost
sweep, position's longer windows), warm-up effects of long runs, and the
extra-seed round (``attnlab.kit.extra_seeds``): whether it runs depends
on verdicts not known before training. The printed estimate says so, with the
most it can add: ``extra / seeds`` of the training time of each experiment
that gets it.
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from attnlab.nn.model_config import Seq2SeqConfig
from attnlab.train.run_config import RunConfig

PAIR_WORDS = 16  # words of a translation pair, source and target alike, as a step is timed
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
    raw: dict[str, float] = field(default_factory=dict)  # worker-seconds before calibration
    calibration: Calibration | None = None  # the finished runs it was checked against

    def text(self, lang: str = "en") -> str:
        """The estimate as ``reproduce --estimate`` prints it, in ``lang`` (its words are the
        report's ``estimate.*`` entries; a count says its number, as ``tn`` keys it)."""
        from attnlab.report.words import t, tn
        from attnlab.train.progress import format_duration as took

        skipped = ["  " + t("estimate.skipped_why", lang, name=name, why=why)
                   for name, why in self.skipped.items()]
        if not any(self.runs.values()):
            nothing = "estimate.all_finished"
            if self.skipped:
                nothing = "estimate.others_finished" if self.runs else "estimate.none_can_run"
            return "\n".join([t("estimate.nothing", lang, profile=self.profile,
                                nothing=t(nothing, lang)),
                              *skipped, f"  {self.extra_text(lang)}"])
        bar = ""
        if self.calibration is not None:
            lo, hi = self.calibration.error_bar()
            bar = " (" + t("estimate.between", lang, low=took(self.wall_s * lo),
                           high=took(self.wall_s * hi)) + ")"
        lines = [tn("estimate.head", self.workers, lang, profile=self.profile,
                    device=self.device, time=took(self.wall_s), bar=bar)]
        for name, seconds in self.per_experiment.items():
            if self.runs.get(name):
                timed = ""
                if self.calibration is not None and name in self.raw:
                    timed = " (" + t("estimate.timed", lang, time=took(self.raw[name]),
                                     ratio=f"{self.calibration.ratio(name):.2f}") + ")"
                lines.append("  " + tn("estimate.runs", self.runs[name], lang, name=name,
                                       time=took(seconds), timed=timed))
        lines += ["  " + t("estimate.skipped", lang, name=name, why=why)
                  for name, why in self.skipped.items()]
        lines.append("  " + t("estimate.timings", lang, steps=STEPS, rounds=ROUNDS,
                              seconds=f"{self.timing_s:.0f}"))
        lines += (self.calibration.text(lang) if self.calibration is not None else
                  ["  " + t("estimate.unchecked", lang)])
        if self.sharing > self.workers:
            lines.append("  " + t("estimate.sharing", lang, sharing=self.sharing,
                                  n=self.workers))
        lines.append("  " + self.extra_text(lang))
        return "\n".join(lines)

    def extra_text(self, lang: str = "en") -> str:
        """What the estimate leaves out about the extra-seed round, in ``lang``."""
        from attnlab.report.words import t, tn

        if not self.extra_seeds:
            return t("estimate.no_extra_off", lang)
        shares = sorted({f"{self.extra_seeds}/{n}" for n in self.seeds.values() if n >= 3})
        if not shares:
            return t("estimate.no_extra_few", lang)
        return tn("estimate.extra", self.extra_seeds, lang,
                  shares=t("estimate.or", lang).join(shares))


@dataclass
class Calibration:
    """The estimate checked against the finished runs of the cache: per experiment, the
    estimated and measured seconds of those runs (summed) and their count; per run, its
    measured ÷ estimated ratio."""

    estimated: dict[str, float] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    per_run: list[tuple[str, float]] = field(default_factory=list)  # (experiment, ratio)
    profiles: set[str] = field(default_factory=set)  # the profiles of the runs checked
    profile: str = ""  # the profile being estimated

    def ratio(self, name: str) -> float:
        """Measured ÷ estimated: the experiment's own, or the median of the others'."""
        if name in self.measured:
            return self.measured[name] / self.estimated[name]
        return self.median()

    def median(self) -> float:
        return float(statistics.median(self.measured[n] / self.estimated[n]
                                       for n in self.measured))

    def error_bar(self) -> tuple[float, float]:
        """Factors (low, high) on the corrected estimate: how far the experiments' ratios
        lie from the median (what an experiment corrected by the median can miss) and how
        far single runs lie from their experiment's ratio (10th and 90th percentile).

        >>> c = Calibration({"a": 10.0, "b": 10.0}, {"a": 12.0, "b": 15.0}, {"a": 1, "b": 1},
        ...                 [("a", 1.2), ("b", 1.5)])
        >>> [round(x, 3) for x in c.error_bar()]
        [0.889, 1.111]
        """
        med = self.median()
        factors = [self.ratio(n) / med for n in self.measured]
        single = sorted(r / self.ratio(n) for n, r in self.per_run)
        if single:
            factors += [single[int(0.1 * (len(single) - 1))], single[int(0.9 * (len(single) - 1))]]
        return min(1.0, *factors), max(1.0, *factors)

    def text(self, lang: str = "en") -> list[str]:
        """The estimate's lines about this check, in ``lang``."""
        from attnlab.report.words import t, tn
        from attnlab.train.progress import format_duration as took

        lines = ["  " + tn("estimate.checked", sum(self.runs.values()), lang)]
        for name in self.measured:
            lines.append("    " + tn("estimate.checked_row", self.runs[name], lang, name=name,
                                     estimated=took(self.estimated[name]),
                                     measured=took(self.measured[name]),
                                     ratio=f"{self.ratio(name):.2f}"))
        lo, hi = self.error_bar()
        if self.profile and self.profiles and self.profile not in self.profiles:
            lines.append("  " + t("estimate.other_profiles", lang, profile=self.profile,
                                  profiles=t("estimate.and", lang).join(sorted(self.profiles))))
        lines.append("  " + t("estimate.corrected", lang, median=f"{self.median():.2f}",
                              low=f"{lo:.2f}", high=f"{hi:.2f}"))
        return lines


def calibrate(measured: dict[str, list[tuple[RunConfig, float, int, str]]],
              timed: dict[tuple[Any, ...], float], profile: str = "") -> Calibration | None:
    """Compare ``measured`` (experiment -> (config, measured wall seconds, held tokens, the
    profile that planned it) of each finished run) with what the estimate of ``profile``
    says of the same runs; None if there is none."""
    out = Calibration(profile=profile)
    for name, rows in measured.items():
        for cfg, wall, held, planned in rows:
            est = run_seconds(cfg, timed[shape_of(cfg)], held)
            if est <= 0 or wall <= 0:
                continue
            out.estimated[name] = out.estimated.get(name, 0.0) + est
            out.measured[name] = out.measured.get(name, 0.0) + wall
            out.runs[name] = out.runs.get(name, 0) + 1
            out.per_run.append((name, wall / est))
            if planned:
                out.profiles.add(planned)
    return out if out.measured else None


CHECKED_PROFILES = ("quick", "full")  # whose finished runs the estimate is checked against


def finished_runs(experiments: dict[str, Any], runner: Any, extra_seeds: int
                  ) -> dict[str, list[tuple[Any, dict]]]:
    """Per experiment (name -> its ``Experiment`` record), the finished runs of ``runner``'s
    cache (resolved spec, record) under the profiles the estimate is checked against, with
    their default seeds and the extra round's (each run once, its record marked with the
    profile that planned it)."""
    from attnlab.kit.extra_seeds import with_extra_seeds
    from attnlab.kit.registry import seeds_of

    out: dict[str, list[tuple[Any, dict]]] = {}
    for name, exp in experiments.items():
        seen: dict[str, tuple[Any, dict]] = {}
        for profile in CHECKED_PROFILES:
            try:
                base = exp.settings(profile)  # the profile's own seeds, and its extra round's
                rounds = [base] if seeds_of(base) is None or not extra_seeds else \
                    [base, with_extra_seeds(base, extra_seeds)]
                specs = [spec for settings in rounds
                         for spec in runner.resolve_all(exp.plan(settings))]
            except Exception:  # noqa: BLE001 - a plan that cannot be made checks nothing
                continue
            for spec in specs:
                record = runner.finished(spec)
                if record is not None:
                    seen.setdefault(runner.key(spec), (spec, {**record, "profile": profile}))
        out[name] = list(seen.values())
    return out


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

    from attnlab.train.runtime import CPU_THREADS, autocast, build_model
    from attnlab.train.speed import make_optimizer

    torch.set_num_threads(CPU_THREADS)  # this process is the stand-in for one worker
    states = []
    for cfg in configs:
        device = torch.device(cfg.train.device)
        model = build_model(cfg, device)
        opt = make_optimizer(model, cfg.train)  # the trainer's optimizer, its step timed too
        states.append((model, opt, _random_batch(cfg, device),
                       autocast(device, cfg.train.precision), device))

    def step(state: tuple) -> None:
        model, opt, batch, amp, _ = state
        with amp:
            loss = batch.loss(model)
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


@dataclass(frozen=True)
class _Batch:
    """One random batch of a run's shape and how its loss is taken."""

    inputs: tuple  # what the model is called with
    target: Any  # (B, T) the words to predict

    def loss(self, model: Any) -> Any:
        from attnlab.data.translation import PAD
        from attnlab.nn.model import next_token_loss
        from attnlab.nn.seq2seq import seq2seq_loss

        logits = model(*self.inputs)  # (B, T, V)
        if len(self.inputs) == 1:
            return next_token_loss(logits, self.target)
        return seq2seq_loss(logits, self.target, PAD)


def _random_batch(cfg: RunConfig, device: Any) -> _Batch:
    """A batch of ``cfg``'s shape: windows of the context for a language model; for a
    translation model, pairs of ``PAIR_WORDS`` source and target words."""
    import torch

    m, b = cfg.model, cfg.train.batch_size
    if isinstance(m, Seq2SeqConfig):
        src = torch.randint(3, m.src_vocab, (b, PAIR_WORDS), device=device)  # (B, S)
        lengths = torch.full((b,), PAIR_WORDS, device=device)  # (B,)
        tgt = torch.randint(3, m.tgt_vocab, (b, PAIR_WORDS), device=device)  # (B, T)
        return _Batch((src, lengths, tgt), tgt)
    shape = (b, m.n_ctx)
    x = torch.randint(0, m.vocab_size, shape, device=device)  # (B, T)
    return _Batch((x,), torch.randint(0, m.vocab_size, shape, device=device))


def tokens_per_step(cfg: RunConfig) -> int:
    """Tokens (target words, for a translation run) one training step reads."""
    words = PAIR_WORDS if isinstance(cfg.model, Seq2SeqConfig) else cfg.model.n_ctx
    return cfg.train.batch_size * words


def run_seconds(cfg: RunConfig, step_s: float, held_tokens: int) -> float:
    """A run's time: its steps, then the final evaluation (two held-out-sized forward passes,
    a forward costing about a third of a training step per token)."""
    per_step = tokens_per_step(cfg)
    return cfg.train.steps * step_s + 2 * held_tokens * step_s / per_step / 3


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
                   skipped: dict[str, str] | None = None,
                   finished: dict[str, list[tuple[Any, dict]]] | None = None) -> Estimate:
    """Time the steps of the ``pending`` runs (experiment -> resolved specs not finished),
    lay them on the runner's executor slots; ``seeds``: planned seeds per experiment;
    ``skipped``: experiments that would not run, and why (a missing corpus), said in the
    text; ``finished``: experiment -> (resolved spec, record) of finished runs to check the
    estimate against (``calibrate``)."""
    from attnlab.running.executors import gpu_count

    done = {name: [(s.config, float(r.get("wall_s") or 0.0), _held_tokens(s, runner),
                    str(r.get("profile", ""))) for s, r in rows if not r.get("diverged")]
            for name, rows in (finished or {}).items() if rows}
    configs = [s.config for specs in pending.values() for s in specs]
    configs += [row[0] for rows in done.values() for row in rows]
    shapes = list(dict.fromkeys(shape_of(c) for c in configs))
    first = {shape_of(c): c for c in configs}
    start = time.perf_counter()
    timed = dict(zip(shapes, step_seconds([first[s] for s in shapes]), strict=True))
    pool = runner.slots(sum(map(len, pending.values())))
    device = runner.resolve_device()
    laid = min(pool, max(1, gpu_count())) if device.type == "cuda" else pool
    out = Estimate(profile, laid, str(device), timing_s=time.perf_counter() - start,
                   extra_seeds=extra_seeds, seeds=seeds, sharing=pool,
                   skipped=dict(skipped or {}))
    out.calibration = calibrate(done, timed, profile) if any(pending.values()) else None
    every = []
    for name, specs in pending.items():
        factor = out.calibration.ratio(name) if out.calibration is not None else 1.0
        secs = [run_seconds(s.config, timed[shape_of(s.config)], _held_tokens(s, runner))
                for s in specs]
        out.raw[name] = sum(secs)
        out.per_experiment[name], out.runs[name] = sum(secs) * factor, len(specs)
        every += [x * factor for x in secs]
    out.wall_s = makespan(every, out.workers)
    return out


def _held_tokens(spec: Any, runner: Any) -> int:
    if isinstance(spec.config.model, Seq2SeqConfig):  # its held-out pairs in the trained band
        band = spec.data.train_band
        return PAIR_WORDS * sum(len(pairs) for (low, high), pairs in spec.data.held.items()
                                if band[0] <= low and high <= band[1])
    if spec.data is not None:
        return len(spec.data.held)
    return len(runner.token_data(spec.config).held)
