"""The settings of the verb-agreement experiment: its name, the groups of keys, the
curriculum's probe sentence, the settings of each profile and what quick changes (the
experiment's other parts import these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import Seeded

NAME = "agreement"
NEEDS_CORPUS = False
GROUPS = ("subject", "stems", "separators", "other pronouns")
PROBE = "I work , you work , he"  # the curriculum's sentence, cut at the predicting position


@dataclass(frozen=True)
class Settings(Seeded):
    """The model and budget of the explorer's agreement probe."""

    d_model: int = 64  # residual width: ample for a 20-word language
    n_layer: int = 2  # blocks
    n_head: int = 4  # heads per block
    n_ctx: int = 18  # two sentences: the trainer draws random windows from the stream
    steps: int = 300  # AdamW updates
    lr: float = 3e-3  # peak rate, cosine-decayed after a warmup
    warmup_steps: int = 30  # linear warmup
    batch_size: int = 32  # windows per update
    n_clauses: int = 3  # clauses per sentence
    data_seed: int = 0  # which sentences are held out


PROFILES = {
    "full": Settings(),
    "quick": Settings(),
    "micro": Settings(d_model=16, steps=4, batch_size=8, seeds=1),
}
