"""The settings of the in-context regression experiment: its name, the settings of each
profile and what quick changes (the experiment's other parts import these, and nothing of
theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import Seeded

NAME = "icl_gd"
NEEDS_CORPUS = False


@dataclass(frozen=True)
class Settings(Seeded):
    """The task distribution and the training of the layer (``Seeded``: each seed draws
    its own initialisation and tasks)."""

    d: int = 10  # input width (the paper's)
    n: int = 10  # context pairs (the paper's)
    steps: int = 4000  # Adam updates, each on a fresh batch of tasks
    batch_size: int = 256  # tasks per update
    lr: float = 1e-3  # Adam's rate
    init_std: float = 0.05  # the layer's initial weights ~ N(0, init_std²)
    n_eta: int = 50_000  # training tasks that fix GD's best step size
    n_held: int = 4000  # held-out tasks


PROFILES = {
    "full": Settings(steps=20_000, seeds=5),
    "quick": Settings(steps=20_000, seeds=5),  # the full settings: minutes, not hours
    "micro": Settings(steps=20, batch_size=16, n_eta=500, n_held=64, seeds=1),
}
