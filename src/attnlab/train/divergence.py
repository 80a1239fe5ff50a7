"""When a run has diverged: a rule over the losses of its steps.

A loss that is NaN or infinite has diverged at once. A finite loss has
diverged when it has left any range a learning model visits for many steps
in a row: when the mean of the last ``window`` losses exceeds ``factor · ln V``.

Why this bound. ln V is the cross-entropy of the uniform distribution over
the V tokens: what a model that knows nothing pays (a fresh model starts
near it). A loss well past it means the model is confidently wrong about
most tokens, which training at a sane rate never produces: attnlab's most
fragile runs (twelve post-norm blocks at 3e-3 without warmup, unscaled
attention at width 1,024) stay at or below ln V after their first steps.
Three times ln V (20.8 nats at V = 1,024, a perplexity of 10⁹) leaves a wide
margin above them; a run that has blown up (the issue's example ended at a
loss of 54,159) is far above it. The mean over 50 steps keeps one spike from
stopping a run that recovers.

A run that reaches its last step is measured once more, whatever the window:
its last loss and its perplexities (``final_reason``). A run that blew up in
its last few dozen steps ends there at a loss of thousands and a held-out
perplexity of inf, past the bound although the 50-step mean never had the
time to pass it; it has diverged as surely as one stopped on the way.

Left out: rules relative to the run's own best loss (they need a warm-up
period and stop slow-learning runs), and gradient-norm rules.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from pathlib import Path

DIVERGE_WINDOW = 50  # steps whose mean loss is compared with the bound
DIVERGE_FACTOR = 3.0  # the bound, in units of ln V
PERPLEXITIES = {"held_ppl": "held-out perplexity", "train_ppl": "training perplexity"}


class LossGuard:
    """Watches a run's per-step losses and says when it has diverged.

    >>> guard = LossGuard(vocab_size=1024, window=2)
    >>> round(guard.bound, 1)
    20.8
    >>> guard.check(7.0) is None  # the window is not full yet
    True
    >>> guard.check(40.0)
    'mean loss 23.5 over the last 2 steps exceeds 3·ln V = 20.8'

    """

    def __init__(
        self,
        vocab_size: int,
        *,
        window: int = DIVERGE_WINDOW,
        factor: float = DIVERGE_FACTOR,
        recent: Iterable[float] = (),
    ) -> None:
        self.bound = factor * max(math.log(vocab_size), 1.0)  # ln 1 = 0 would stop everything
        self.factor = factor
        self.recent: deque[float] = deque((float(x) for x in recent), maxlen=window)

    def check(self, loss: float) -> str | None:
        """Record ``loss`` (one step's); the reason the run has diverged, or None."""
        if not math.isfinite(loss):
            return f"non-finite loss ({loss})"
        self.recent.append(loss)
        if len(self.recent) == self.recent.maxlen:
            mean = sum(self.recent) / len(self.recent)
            if mean > self.bound:
                return (f"mean loss {mean:.4g} over the last {len(self.recent)} steps exceeds "
                        f"{self.factor:g}·ln V = {self.bound:.3g}")
        return None

    def over_bound(self) -> bool:
        """Whether the latest loss is past the bound (no checkpoint is written then)."""
        return bool(self.recent) and self.recent[-1] > self.bound

    def final_reason(self, last_loss: float, ppl: dict[str, float]) -> str | None:
        """Why a finished run has diverged, whatever the window: its last step's loss, or a
        perplexity of its final weights, not finite or past the bound; None if neither.

        >>> guard = LossGuard(vocab_size=1024)
        >>> guard.final_reason(3.1, {"held_ppl": 22.0, "train_ppl": 20.0}) is None
        True
        >>> guard.final_reason(3768.5, {"held_ppl": math.inf})
        'final loss 3768 exceeds 3·ln V = 20.8'
        >>> guard.final_reason(3.1, {"held_ppl": math.inf})
        'held-out perplexity inf exceeds 1.07e+09 (a loss of 3·ln V = 20.8)'
        """
        bound = f"{self.factor:g}·ln V = {self.bound:.3g}"
        if not math.isfinite(last_loss) or last_loss > self.bound:
            return f"final loss {last_loss:.4g} exceeds {bound}"
        for key, name in PERPLEXITIES.items():
            value = ppl.get(key)
            if value is None:
                continue
            if math.isnan(value):
                return f"the trained model gives NaN {name}"
            if value > math.exp(self.bound):
                return f"{name} {value:.4g} exceeds {math.exp(self.bound):.3g} (a loss of {bound})"
        return None

    def state(self) -> list[float]:
        """The recent losses, for the checkpoint (a resumed run decides the same)."""
        return list(self.recent)


def divergence_message(reason: str, step: int, steps: int, run_dir: Path,
                       last_ckpt_step: int | None) -> str:
    """The one line a diverged run stops with: what happened, the checkpoint kept, what to try."""
    kept = (
        f"the last good checkpoint (step {last_ckpt_step}) is kept in {run_dir / 'checkpoint'}"
        if last_ckpt_step is not None else "no checkpoint had been written yet"
    )
    return (f"{reason} at step {step} of {steps}; {kept}. "
            "Try a lower train.lr, train.warmup_steps or train.grad_clip.")


def record_divergence(run_dir: Path, step: int, steps: int, value: float, reason: str,
                      last_ckpt_step: int | None, message: str) -> None:
    """A ``diverged`` metrics line and ``diverged.json``, which make ``train`` refuse the run
    again at once (delete the file to try again)."""
    from attnlab.files import write_json
    from attnlab.train.rundir import DIVERGED, append_metrics

    loss: float | str = value if math.isfinite(value) else str(value)
    append_metrics(run_dir, {"kind": "diverged", "step": step, "loss": loss})
    write_json(run_dir / DIVERGED, {
        "step": step, "steps": steps, "loss": loss, "reason": reason,
        "last_checkpoint": last_ckpt_step, "message": message,
    })
