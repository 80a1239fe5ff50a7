"""The settings of "Where attention was born": its name, the models and the settings of each
profile (its title and what quick changes are in its words.json; the experiment's other
parts import these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import Seeded

NAME = "translation"
NEEDS_CORPUS = False  # the synthetic English → Spanish language of attnlab.data.translation
MODELS = ("rnn", "bahdanau", "transformer")

Band = tuple[int, int]  # source lengths, both ends included (the final "." counts)


@dataclass(frozen=True)
class Settings(Seeded):
    """The language, the three models (one parameter count) and their one budget."""

    width: int = 64  # the transformer's width; the GRUs get the width nearest its count
    layers: int = 2  # transformer blocks in the encoder, and as many in the decoder
    heads: int = 4  # transformer heads
    bidirectional: bool = True  # the GRU encoders read both ways (Bahdanau's RNNsearch)
    train_band: Band = (5, 20)  # source lengths of the training sentences
    # held-out bands, ascending: those inside train_band first, then those past it
    bands: tuple[Band, ...] = ((5, 8), (9, 12), (13, 16), (17, 20), (21, 28), (29, 36))
    train_pairs: int = 8000  # training sentences
    held_pairs: int = 200  # held-out sentences per band
    steps: int = 2000  # AdamW updates, every model
    lr: float = 3e-3  # peak rate, after a warmup of a tenth of the steps, cosine-decayed
    batch: int = 64  # sentence pairs per update
    step_lengths: tuple[int, ...] = (8, 16, 32)  # source lengths of the dependent-steps count
    data_seed: int = 0  # which sentences the language draws


PROFILES = {
    "full": Settings(),
    "quick": Settings(width=32, layers=1, train_band=(5, 14),
                      bands=((5, 7), (8, 10), (11, 14), (15, 20), (21, 28)),
                      train_pairs=3000, held_pairs=60, steps=300, lr=5e-3, batch=32),
    "micro": Settings(width=8, layers=1, heads=2, train_band=(5, 8),
                      bands=((5, 6), (7, 8), (9, 11)), train_pairs=60, held_pairs=4,
                      steps=3, lr=5e-3, batch=4, step_lengths=(6, 12), seeds=1),
}
