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
from typing import TYPE_CHECKING

from attnlab.errors import Said

if TYPE_CHECKING:
    from attnlab.train.rundir import TrainingDiverged

DIVERGE_WINDOW = 50  # steps whose mean loss is compared with the bound
DIVERGE_FACTOR = 3.0  # the bound, in units of ln V
# each perplexity a final model is measured by: its line when NaN, and when past the bound
# (a template each, so that each is said whole in another language)
PERPLEXITIES = {
    "held_ppl": ("the trained model gives NaN held-out perplexity",
                 "held-out perplexity %s exceeds %s (a loss of %s)"),
    "train_ppl": ("the trained model gives NaN training perplexity",
                  "training perplexity %s exceeds %s (a loss of %s)"),
}


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

    def check(self, loss: float) -> Said | None:
        """Record ``loss`` (one step's); the reason the run has diverged, or None. A reason
        is a ``Said``, its numbers written as strings (its parts are stored)."""
        if not math.isfinite(loss):
            return Said("non-finite loss (%s)", str(loss))
        self.recent.append(loss)
        if len(self.recent) == self.recent.maxlen:
            mean = sum(self.recent) / len(self.recent)
            if mean > self.bound:
                return Said("mean loss %s over the last %s steps exceeds %s", f"{mean:.4g}",
                            len(self.recent), self._bound())
        return None

    def _bound(self) -> str:
        """The bound as the lines say it: ``3·ln V = 20.8``."""
        return f"{self.factor:g}·ln V = {self.bound:.3g}"

    def over_bound(self) -> bool:
        """Whether the latest loss is past the bound (no checkpoint is written then)."""
        return bool(self.recent) and self.recent[-1] > self.bound

    def final_reason(self, last_loss: float, ppl: dict[str, float]) -> Said | None:
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
        if not math.isfinite(last_loss) or last_loss > self.bound:
            return Said("final loss %s exceeds %s", f"{last_loss:.4g}", self._bound())
        for key, (nan, past) in PERPLEXITIES.items():
            value = ppl.get(key)
            if value is None:
                continue
            if math.isnan(value):
                return Said(nan)
            if value > math.exp(self.bound):
                return Said(past, f"{value:.4g}", f"{math.exp(self.bound):.3g}", self._bound())
        return None

    def state(self) -> list[float]:
        """The recent losses, for the checkpoint (a resumed run decides the same)."""
        return list(self.recent)


def diverged(reason: str, step: int, steps: int, run_dir: Path,
             last_ckpt_step: int | None) -> TrainingDiverged:
    """The error a diverged run stops with, its one line a template and its values (said in
    the command's language): what happened, the checkpoint kept, what to try.

    >>> err = diverged(Said("non-finite loss (%s)", "nan"), 7, 100, Path("runs/x"), None)
    >>> str(err).split(";")[0], err.values[0].template
    ('non-finite loss (nan) at step 7 of 100', 'non-finite loss (%s)')
    """
    from attnlab.train.rundir import TrainingDiverged

    if last_ckpt_step is None:
        return TrainingDiverged("%s at step %s of %s; no checkpoint had been written yet. Try a "
                                "lower train.lr, train.warmup_steps or train.grad_clip.",
                                reason, step, steps)
    return TrainingDiverged("%s at step %s of %s; the last good checkpoint (step %s) is kept in "
                            "%s. Try a lower train.lr, train.warmup_steps or train.grad_clip.",
                            reason, step, steps, last_ckpt_step, run_dir / "checkpoint")


def record_divergence(run_dir: Path, step: int, steps: int, value: float, reason: str,
                      last_ckpt_step: int | None, message: str | BaseException) -> None:
    """A ``diverged`` metrics line and ``diverged.json``, which make ``train`` refuse the run
    again at once (delete the file to try again). A ``message`` raised as a template keeps
    its parts (``message_parts``), so that the refusal is said in a language."""
    from attnlab.files import write_json
    from attnlab.train.rundir import DIVERGED, append_metrics

    loss: float | str = value if math.isfinite(value) else str(value)
    append_metrics(run_dir, {"kind": "diverged", "step": step, "loss": loss})
    record = {"step": step, "steps": steps, "loss": loss, "reason": str(reason),
              "last_checkpoint": last_ckpt_step, "message": str(message)}
    template = getattr(message, "template", None)
    if template is not None:
        record["message_parts"] = Said(template, *message.values).parts()
    write_json(run_dir / DIVERGED, record)
