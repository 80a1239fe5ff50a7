"""The settings of the Winograd experiment: its name, variants and models, the probe
sentence and the settings of each profile (its title and what quick changes are in its
words.json; the experiment's other parts import these, and nothing of theirs is imported
here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.data.synthetic import WINOGRAD_TEMPLATE
from attnlab.kit.settings import Seeded

NAME = "winograd"
NEEDS_CORPUS = False
VARIANTS = ("A", "B")
MODELS = ("mean", "one block", "two blocks")  # the report lays them out in this order
PROBE_ADJECTIVES = ("tired", "wet")  # tired → the animal waited; wet → the street
PROBE = "the animal did not cross the street because it was too {adj} , so the"
NOUN_POSITIONS = [1, 6]  # where `animal` and `street` stand in the probe
N_CTX = len(WINOGRAD_TEMPLATE.split()) - 1  # 17: the window is one sentence's inputs


@dataclass(frozen=True)
class Settings(Seeded):
    """Model width and the training budget of each variant."""

    d_model: int = 64  # residual width: ample for a 40-word language
    n_head: int = 4  # heads per block (width d_model / n_head), the spec's four
    steps_a: int = 1000  # AdamW updates per model on variant A (learnt in a few hundred)
    steps_b: int = 3000  # updates per model on variant B (the mean memorises slowest)
    lr: float = 1e-2  # peak AdamW rate, cosine-decayed to a tenth (see the module docstring)
    batch_size: int = 64  # one-sentence windows per update
    data_seed: int = 0  # which pairs are held out (training seeds vary, the split does not)


PROFILES = {
    "full": Settings(),
    "quick": Settings(),  # the chapter's own settings: they cost minutes, not hours
    "micro": Settings(d_model=16, steps_a=6, steps_b=6, batch_size=8, seeds=1),
}
