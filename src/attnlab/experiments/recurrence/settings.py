"""The settings of "Why attention replaced recurrence": its name, the models and the settings
of each profile (its title and what quick changes are in its words.json; the experiment's
other parts import these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import Seeded

NAME = "recurrence"
NEEDS_CORPUS = True
MODELS = ("rnn", "lstm", "attention")  # the language models (parts 1, 3 and 4)
# The agreement models (part 2): the three above, attention with RoPE, and beside it the same
# attention model with ALiBi in place of RoPE (no parameters either way: the same count), so
# that what attention does past its trained distances can be told from what RoPE does
AGREEMENT_MODELS = (*MODELS, "alibi")


@dataclass(frozen=True)
class Settings(Seeded):
    """The ladder profile the language models copy, the agreement language and its models,
    the sizes of the sequential-work sweep (the seeds: ``Seeded``)."""

    ladder_profile: str = "full"  # the ladder settings of the language models (part 1 and 4)
    reach_windows: int = 64  # held-out windows the reach is averaged over
    agree_width: int = 64  # the attention model's width; the recurrences match its parameters
    agree_layers: int = 2  # blocks of every agreement model
    agree_heads: int = 4  # attention heads
    agree_ctx: int = 64  # training window (words)
    distances: tuple[int, ...] = (8, 16, 24, 32, 40, 48)  # held-out d; past max_d: untrained
    max_d: int = 32  # training sentences have d uniform in [8, max_d]
    agree_sentences: int = 20_000  # training sentences (fewer: the LSTM learns them by heart)
    agree_per_pair: int = 2  # held-out sentences per held-out (noun, adjective) pair and d
    agree_steps: int = 1500  # AdamW updates, every model
    agree_lr: float = 3e-3  # peak rate, cosine-decayed after a warmup
    agree_batch: int = 32  # windows per update
    sizes: tuple[int, ...] = (32, 64, 128, 256, 512, 1024)  # T of the sequential-work sweep
    tokens_per_step: int = 2048  # batch × T of a timed training step
    rounds: int = 5  # rounds of the interleaved benchmark (each a paired sample)
    data_seed: int = 0  # which sentences the agreement language draws


PROFILES = {
    "full": Settings(),
    "quick": Settings(ladder_profile="quick", reach_windows=32, agree_steps=1000,
                      tokens_per_step=1024, rounds=4),
    "micro": Settings(ladder_profile="micro", reach_windows=4, agree_width=16, agree_ctx=20,
                      distances=(8, 12, 16), max_d=12, agree_sentences=200, agree_per_pair=1,
                      agree_steps=3, agree_batch=4, sizes=(8, 16), tokens_per_step=16,
                      rounds=1, seeds=1),
}
