"""What a head does: role scores on a standard probe, for attnlab and Hugging Face models.

``head_scores(model)`` gives previous-token, induction (prefix-matching),
duplicate-token and first-token ("sink") scores per layer and head
(``attnlab.interp.scores``); ablating a head goes through the one way to look
inside, ``attnlab.nn.trace.ablate``.
"""

from attnlab.interp.scores import (
    PROBE_HALF,
    PROBE_ROWS,
    PROBE_SEED,
    SCORES,
    HeadScores,
    head_scores,
    scores_of_weights,
)
from attnlab.nn.trace import ablate, head_means

__all__ = ["PROBE_HALF", "PROBE_ROWS", "PROBE_SEED", "SCORES", "HeadScores", "ablate",
           "head_means", "head_scores", "scores_of_weights"]
