"""Your attention, trained: the learner's exercise functions as the attention of a small model.

Dimension legend: ``b`` batch, ``h`` heads, ``t`` positions (queries and keys), ``d`` head
width. The learner's folder holds ``attention.py`` (exercise 3), ``masks.py`` (4) and
``backward.py`` (9), and ``sinusoidal.py`` (7) when it is done. Each file runs in a contained
child of its own (:func:`attnlab.labs.sandbox.session`); the parent never imports it. In the
model's one block, the kernel of the attention is :class:`_Yours`, a custom autograd function:

    forward   out = attention(q, k, v, causal_mask(t, t))       one call, the whole (b, h, t, d)
    backward  dq, dk, dv = Σ_i attention_backward(q_i, k_≤i, v_≤i, dout_i)

The backward exercise is one head, no batch and no mask, so the causal backward is one call per
query on the keys it may see (the causal row *is* unmasked attention over its prefix), summed.
Beside it, the same model from the same seed trains with attnlab's own attention on the same
batches. At every step the learner's output and gradients are compared with attnlab's on the
*same* q, k, v (so the first tensor that parts names the exercise to revisit), and the two loss
curves with each other. Training stops at the end of the step where they part: past it the two
models hold different weights, and what they compute says nothing more about the learner's
code. At the end, both models' held-out perplexity::

    report = train("my-labs", steps=40)       # in a notebook; lab train DIR on the command line
    print(report); report.figure()

Float64 throughout, so "equal" means within :data:`TOLERANCE` of float rounding. Left out:
heads (the model splits and merges heads itself, as exercise 5 does), RoPE, dropout, and more
than one block: the budget is a minute on two cores, not a trained model.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.errors import DataError
from attnlab.i18n import resolve_lang, text
from attnlab.labs import get
from attnlab.labs.checker import Fn, Raised
from attnlab.labs.sandbox import TIME_LIMIT, Unusable, isolated, session
from attnlab.nn.attention import attention

NEEDED = ("attention", "masks", "backward")  # the exercises whose code the model runs
TOLERANCE = 1e-9  # largest |yours - attnlab's| / largest |attnlab's| still equal (seen: <1e-15)
TENSORS = {"positions": "sinusoidal", "output": "attention", "mask": "masks",
           "dq": "backward", "dk": "backward", "dv": "backward"}  # tensor -> exercise to revisit


@dataclass(frozen=True)
class Budget:
    """What one ``lab train`` runs: stated in the report, so its numbers can be traced."""

    steps: int = 300  # optimiser steps (about a minute on two cores with the rest below)
    batch: int = 12  # windows per step
    n_ctx: int = 32  # context length
    d_model: int = 32  # residual width: two heads of 16
    n_head: int = 2  # heads of the one block's attention
    lr: float = 3e-3  # AdamW learning rate, constant
    held_tokens: int = 8192  # the first held-out tokens, for perplexity
    seed: int = 0  # the models' initial weights and the batches


@dataclass(frozen=True)
class Parting:
    """The first step at which the learner's code and attnlab's differ, and where."""

    step: int  # from 1
    tensor: str  # a key of TENSORS, or "loss"
    difference: float  # the relative difference (see TOLERANCE)

    @property
    def exercise(self) -> str | None:
        return TENSORS.get(self.tensor)


@dataclass
class Report:
    """What :func:`train` returns: prints as the command's output; ``figure()`` draws."""

    budget: Budget
    yours: list[float]  # training loss per step run (it stops where they part), the learner's
    reference: list[float]  # the same, attnlab's attention
    perplexity: tuple[float, float]  # held-out (yours, attnlab's)
    parting: Parting | None  # None: equal within TOLERANCE everywhere
    largest: float  # the largest relative difference of any compared tensor
    positions: str  # "sinusoidal" (the learner's) or "learned"
    corpus: str  # the corpus file's name
    vocab: int  # the BPE vocabulary's size
    seconds: float
    lang: str
    png: Path | None = None  # where the command saved the figure

    @property
    def equal(self) -> bool:
        return self.parting is None

    def say(self, key: str, **fields: Any) -> str:
        return text("labs", f"train.{key}", self.lang, **fields)

    def __str__(self) -> str:
        b, say = self.budget, self.say
        lines = [say("budget", steps=b.steps, batch=b.batch, n_ctx=b.n_ctx, corpus=self.corpus,
                     vocab=self.vocab, d_model=b.d_model, n_head=b.n_head, lr=f"{b.lr:g}",
                     seed=b.seed, positions=say(f"positions.{self.positions}"),
                     seconds=f"{self.seconds:.0f}"),
                 say("losses", first=_num(self.yours[0]), last=_num(self.yours[-1]),
                     ref_first=_num(self.reference[0]), ref_last=_num(self.reference[-1])),
                 say("perplexity", tokens=b.held_tokens, yours=_num(self.perplexity[0]),
                     reference=_num(self.perplexity[1]))]
        if self.parting is None:
            lines.append(say("equal", largest=f"{self.largest:.1e}", tol=f"{TOLERANCE:g}"))
        else:
            p = self.parting
            lines.append(say("parted" if p.step else "parted_before", step=p.step,
                             tensor=say(f"tensor.{p.tensor}"), difference=f"{p.difference:.2e}",
                             tol=f"{TOLERANCE:g}"))
            lines.append(_revisit(p.exercise, self.lang))
            if len(self.yours) < b.steps:
                lines.append(say("stopped_early", step=len(self.yours), steps=b.steps))
        if self.png is not None:
            lines.append(say("figure", path=self.png))
        return "\n".join(lines)

    __repr__ = __str__

    def figure(self) -> Any:
        """Both loss curves against the step, the parting step marked (a matplotlib Figure)."""
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        say, fig = self.say, Figure(figsize=(7, 5.6))
        ax, gap = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1.4))
        steps = np.arange(1, len(self.yours) + 1)
        yours, ref = np.array(self.yours), np.array(self.reference)
        dots = "o" if len(steps) <= 30 else None  # a run stopped early: a few points, shown
        with np.errstate(all="ignore"):  # an equal step is drawn at the floor, 1e-17
            gap.semilogy(steps, np.maximum(np.abs(yours - ref) / np.abs(ref), 1e-17), ".-",
                         color="tab:red", ms=3)
        gap.axhline(TOLERANCE, color="0.4", lw=0.8, ls="--")
        gap.set_ylabel(say("axis.gap"), fontsize=8)
        ax.plot(steps, self.reference, "-", color="0.6", lw=3, marker=dots, ms=6,
                label=say("curve.reference", ppl=_num(self.perplexity[1])))
        ax.plot(steps, self.yours, "--", color="tab:red", lw=1.2, marker=dots, ms=3,
                label=say("curve.yours", ppl=_num(self.perplexity[0])))
        if self.parting is not None:
            self._mark_parting(ax, steps)
        gap.set_xlabel(say("axis.step"))
        gap.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # whole steps
        ax.set_ylabel(say("axis.loss"))
        ax.ticklabel_format(axis="y", useOffset=False)  # an offset's text sits where the legend is
        fig.suptitle(say("title.equal" if self.equal else "title.parted"), fontsize=10)
        # above the axes, under the title: never over the curves or the parting step's label
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.01), fontsize=8, frameon=False,
                  borderaxespad=0.0)
        fig.tight_layout()
        return fig

    def _mark_parting(self, ax: Any, steps: np.ndarray) -> None:
        """The parting step's line and label, the label on the side of the line with room."""
        p, say = self.parting, self.say
        at = max(p.step, 1)  # parted before training (the mask, the positions): at step 1
        ax.axvline(at, color="tab:red", lw=0.8, ls=":")
        if len(steps) == 1:  # one point: give the axis a width for the label to sit in
            ax.set_xlim(0.5, 1.5)
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.12 * (high - low))  # a row above the curves for the label
        left = at > np.mean(ax.get_xlim())  # in the right half: write it to the left
        ax.annotate(say("parted_short", step=p.step, tensor=say(f"tensor.{p.tensor}")),
                    (at, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(-4 if left else 4, -12), textcoords="offset points",
                    ha="right" if left else "left", fontsize=8, color="tab:red")


def _num(x: float) -> str:
    return f"{x:.4f}" if math.isfinite(x) else str(x)


def _revisit(exercise: str | None, lang: str) -> str:
    if exercise is None:
        return text("labs", "train.revisit_unknown", lang)
    ex = get(exercise)
    return text("labs", "train.revisit", lang, number=ex.number, name=ex.name,
                title=ex.title(lang))


def _function(exercise: str) -> str:
    return get(exercise).function


def refusal(folder: Path, lang: str, time_limit: float = TIME_LIMIT) -> str | None:
    """The one line that refuses training (a needed exercise missing or not passing), or None."""
    missing, failing = [], []
    for name in NEEDED:
        ex, path = get(name), folder / f"{name}.py"
        if not path.is_file():
            missing.append(f"{ex.number} {name}")
        elif not isolated(ex, path, lang, time_limit).passed:
            failing.append(f"{ex.number} {name}")
    lines = ([text("labs", "train.missing", lang, folder=folder, exercises=", ".join(missing))]
             if missing else [])
    if failing:
        lines.append(text("labs", "train.failing", lang, folder=folder,
                          exercises=", ".join(failing)))
    return "; ".join(lines) or None


def train(folder: str | Path, budget: Budget | None = None, lang: str | None = None,
          time_limit: float = TIME_LIMIT, progress: Callable[[int, int, float, float], None]
          | None = None, corpus: str | Path | None = None, **changes: Any) -> Report:
    """Train the learner's attention beside attnlab's (see the module docstring).

    ``changes`` override fields of ``budget`` (``steps=40``); ``progress(step, steps, yours,
    attnlab's)`` is called with the losses after each step; ``corpus`` is a text file in
    place of Tiny Shakespeare (``attnlab.data.corpus.resolve_corpus``). A needed exercise
    that is missing or does not pass its checker, and learner code that fails, hangs past
    ``time_limit`` seconds per call or ends its child during training, raise
    :class:`DataError` with the one line.
    """
    from attnlab.data.corpus import resolve_corpus
    from attnlab.data.dataset import load_token_data, sample_batch
    from attnlab.data.perplexity import perplexity
    from attnlab.nn.model import LanguageModel
    from attnlab.nn.model_config import ModelConfig

    folder, lang = Path(folder), resolve_lang(lang)
    budget = replace(budget or Budget(), **changes)
    line = refusal(folder, lang, time_limit)
    if line is not None:
        raise DataError(line)
    sines = folder / "sinusoidal.py"
    positions = ("sinusoidal" if sines.is_file() and isolated(get("sinusoidal"), sines, lang,
                                                               time_limit).passed else "learned")
    started = time.monotonic()
    data = load_token_data(corpus)
    cfg = ModelConfig(vocab_size=data.vocab_size, n_ctx=budget.n_ctx, d_model=budget.d_model,
                      n_layer=1, mixer="mha", n_head=budget.n_head, position=positions,
                      dropout=0.0, backend="naive")
    with contextlib.ExitStack() as stack, torch.random.fork_rng(), _one_thread(), _one_line():
        calls = {name: stack.enter_context(session(folder / f"{name}.py", get(name).function,
                                                    lang, call_seconds=time_limit))
                 for name in NEEDED + (("sinusoidal",) if positions == "sinusoidal" else ())}
        torch.manual_seed(budget.seed)
        reference = LanguageModel(cfg).double()
        yours = copy.deepcopy(reference)
        watch = _Watch(budget.n_ctx, calls, lang)
        if positions == "sinusoidal":  # the learner's table in place of attnlab's, compared
            table = watch.array("sinusoidal", watch.call("sinusoidal", cfg.pos_rows,
                                                         budget.d_model),
                                (cfg.pos_rows, budget.d_model))
            from attnlab.reference.positions import sinusoidal

            want = sinusoidal(cfg.pos_rows, budget.d_model)  # float64, not the model's float32
            watch.compare("positions", table, want)
            reference.pos.sines, yours.pos.sines = torch.from_numpy(want), torch.from_numpy(table)
        for block in yours.blocks:
            block.mixer.kernel = watch.kernel
        optims = [torch.optim.AdamW(m.parameters(), lr=budget.lr) for m in (yours, reference)]
        batches = torch.Generator().manual_seed(budget.seed)
        losses: tuple[list[float], list[float]] = ([], [])
        for step in range(1, budget.steps + 1):
            watch.step = step
            x, y = sample_batch(data.train, budget.batch, budget.n_ctx, batches)
            for model, optim, curve in zip((yours, reference), optims, losses, strict=True):
                optim.zero_grad(set_to_none=True)
                loss = watch.guarded(model.loss, x, y)
                watch.guarded(loss.backward)
                optim.step()
                curve.append(float(loss.detach()))
            watch.compare_loss(losses[0][-1], losses[1][-1])
            if progress is not None:
                progress(step, budget.steps, losses[0][-1], losses[1][-1])
            if watch.parting is not None:  # parted (before training, or in this step): stop
                break
        watch.step, watch.on = budget.steps + 1, False
        held = data.held[: budget.held_tokens]
        ppl = tuple(watch.guarded(perplexity, m, held, budget.n_ctx) for m in (yours, reference))
    return Report(budget, losses[0], losses[1], ppl, watch.parting, watch.largest, positions,
                  resolve_corpus(corpus).name, data.vocab_size, time.monotonic() - started, lang)


@contextlib.contextmanager
def _one_line() -> Any:
    """What stops the learner's code (a failure, a file the child cannot load) as the one line
    of a :class:`DataError`."""
    try:
        yield
    except (_Failed, Unusable) as err:
        raise DataError(str(err)) from None


@contextlib.contextmanager
def _one_thread() -> Any:
    """Torch on one thread for the run, as it was after: ops this small run ~3x faster on one
    thread than on two that wait for each other (measured on two cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class _Failed(Exception):
    """The learner's code could not go on (the one line is ``line``)."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


class _Watch:
    """The learner's functions as a kernel, and every comparison with attnlab's on the way."""

    def __init__(self, n_ctx: int, calls: dict[str, Fn], lang: str) -> None:
        self.calls, self.lang, self.step, self.on = calls, lang, 0, True
        self.parting: Parting | None = None
        self.largest = 0.0
        want = np.where(np.tril(np.ones((n_ctx, n_ctx), dtype=bool)), 0.0, -np.inf)
        self.mask = self.array("masks", self.call("masks", n_ctx, n_ctx, np.float64),
                               (n_ctx, n_ctx))
        self.compare("mask", self.mask, want)

    def kernel(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = True,
               **_: Any) -> tuple[torch.Tensor, None]:
        """The mixer's kernel (its options are the block's: causal, scaled, no ALiBi)."""
        return _Yours.apply(q, k, v, self), None

    def call(self, name: str, *args: Any) -> Any:
        """The learner's function of exercise ``name``; a failure becomes :class:`_Failed`."""
        try:
            return self.calls[name](*args)
        except Unusable as err:
            raise _Failed(text("labs", "train.stopped", self.lang, step=self.step,
                               function=_function(name), reason=str(err))) from None
        except (Raised, NotImplementedError) as err:
            error = err.error if isinstance(err, Raised) else "NotImplementedError"
            raise _Failed(text("labs", "train.raised", self.lang, step=self.step,
                               function=_function(name), error=error,
                               message=str(err))) from None

    def array(self, name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
        """``value`` as a float64 array of ``shape``; else the one line that stops training."""
        a = np.asarray(value) if isinstance(value, np.ndarray | np.generic) else None
        if a is None or a.shape != shape or a.dtype.kind not in "biuf":
            got = (f"{type(value).__name__}" if a is None else f"{a.dtype} {a.shape}")
            raise _Failed(text("labs", "train.returned", self.lang, step=self.step,
                               function=_function(name), got=got, want=str(shape)))
        return np.array(a, dtype=np.float64)

    def compare(self, tensor: str, yours: np.ndarray, ref: np.ndarray) -> None:
        same = (yours == ref) | (np.isnan(yours) & np.isnan(ref))  # -inf == -inf: equal
        finite = np.isfinite(ref) & np.isfinite(yours)
        with np.errstate(invalid="ignore"):
            gap = np.where(finite, np.abs(yours - ref), 0.0)
        top = float(np.abs(ref[np.isfinite(ref)]).max(initial=0.0))
        worst = math.inf if (~same & ~finite).any() else float(gap.max(initial=0.0)) / (top or 1.0)
        self.note(tensor, worst)

    def compare_loss(self, yours: float, ref: float) -> None:
        self.compare("loss", np.array([yours]), np.array([ref]))

    def note(self, tensor: str, worst: float) -> None:
        self.largest = max(self.largest, worst)
        if worst > TOLERANCE and self.parting is None:
            self.parting = Parting(self.step, tensor, worst)

    def guarded(self, run: Callable[..., Any], *args: Any) -> Any:
        """``run(*args)``; a learner's failure inside autograd comes out as itself."""
        try:
            return run(*args)
        except RuntimeError as err:  # should autograd wrap what a backward raises
            if isinstance(err.__cause__, _Failed):
                raise err.__cause__ from None
            raise


class _Yours(torch.autograd.Function):
    """Causal attention through the learner's NumPy forward and backward (q, k, v: b, h, t, d)."""

    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                watch: _Watch) -> torch.Tensor:
        b, h, t, d = q.shape
        qn, kn, vn = (x.detach().numpy() for x in (q, k, v))
        answer = watch.call("attention", qn, kn, vn, watch.mask[:t, :t])
        first = answer[0] if isinstance(answer, tuple | list) and answer else answer
        out = watch.array("attention", first, (b, h, t, v.shape[-1]))
        if watch.on:
            with torch.no_grad():
                ref = attention(q, k, v, causal=True, backend="naive")[0]
            watch.compare("output", out, ref.numpy())
        ctx.watch = watch
        ctx.save_for_backward(q, k, v)
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx: Any, dout: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        watch: _Watch = ctx.watch
        q, k, v = ctx.saved_tensors
        b, h, t, d = q.shape
        qn, kn, vn, dn = (x.detach().numpy() for x in (q, k, v, dout))
        grads = [np.zeros(x.shape) for x in (qn, kn, vn)]  # dq, dk, dv
        for n in range(b):
            for m in range(h):
                for i in range(t):  # query i sees keys 0..i: unmasked attention on them
                    answer = watch.call("backward", qn[n, m, i:i + 1], kn[n, m, :i + 1],
                                        vn[n, m, :i + 1], dn[n, m, i:i + 1])
                    if not isinstance(answer, tuple | list) or len(answer) != 3:
                        answer = (answer, None, None)
                    shapes = ((1, d), (i + 1, d), (i + 1, v.shape[-1]))
                    parts = [watch.array("backward", a, s) for a, s in zip(answer, shapes,
                                                                          strict=True)]
                    grads[0][n, m, i:i + 1] += parts[0]
                    grads[1][n, m, :i + 1] += parts[1]
                    grads[2][n, m, :i + 1] += parts[2]
        if watch.on:
            with torch.enable_grad():
                leaves = [x.detach().requires_grad_() for x in (q, k, v)]
                out = attention(*leaves, causal=True, backend="naive")[0]
                want = torch.autograd.grad(out, leaves, dout)
            for name, got, ref in zip(("dq", "dk", "dv"), grads, want, strict=True):
                watch.compare(name, got, ref.numpy())
        return (*(torch.from_numpy(g) for g in grads), None)
