"""The settings of the ladder: its name, the one budget every row gets, the settings of
each profile, what quick changes and the small-data pair's settings (the experiment's
other parts import these, and nothing of theirs is imported here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from attnlab.kit.settings import OneBudget

NAME = "ladder"
TITLE = "The ladder: from a mean to a block"
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

QUICK_CHANGES = (  # also in i18n/quick_changes.json, beside its Spanish
    "400 steps of batch 4 instead of 3,000 of batch 64, so that three seeds of all ten "
    "models fit the quick suite. So little training cannot overfit, so the overfitting "
    "claim is decided on an extra pair: rows 9 and 10 trained again on the first 20,000 "
    "training tokens for 500 steps (about 13 passes), starred in the figure."
)


def overfit_settings(s: Settings) -> Settings | None:
    """The settings of the extra row 9 / row 10 pair, or None when the ladder decides."""
    if s.overfit_tokens is None:
        return None
    return dataclasses.replace(s, train_tokens=s.overfit_tokens, steps=s.overfit_steps,
                               overfit_tokens=None)
