"""The settings of the ladder: its name, the one budget every row gets, the settings of
each profile, what quick changes and the small-data pair's settings (the experiment's
other parts import these, and nothing of theirs is imported here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from attnlab.kit.settings import OneBudget

NAME = "ladder"
NEEDS_CORPUS = True


@dataclass(frozen=True)
class Settings(OneBudget):
    """Width (also the single head's), context and the one training budget every row gets
    (``OneBudget``: steps per row, a constant rate), and the overfitting pair."""

    # The overfitting claim (row 10 vs row 9) needs many passes over the data. None: rows 9
    # and 10 of the ladder decide it (the spec's setting); a number: rows 9 and 10 are also
    # trained on only the first ``overfit_tokens`` training tokens for ``overfit_steps``.
    overfit_tokens: int | None = None
    overfit_steps: int = 800  # steps of that extra pair (batch and rate as above)


PROFILES = {
    "full": Settings(),
    "quick": Settings(steps=400, batch_size=4, overfit_tokens=20_000, overfit_steps=500),
    "micro": Settings(d_model=16, n_ctx=32, steps=3, batch_size=4, train_tokens=2_000,
                      overfit_tokens=1_000, overfit_steps=2, eval_batch_size=1024, seeds=1),
}


def overfit_settings(s: Settings) -> Settings | None:
    """The settings of the extra row 9 / row 10 pair, or None when the ladder decides."""
    if s.overfit_tokens is None:
        return None
    return dataclasses.replace(s, train_tokens=s.overfit_tokens, steps=s.overfit_steps,
                               overfit_tokens=None)
