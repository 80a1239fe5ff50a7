"""The settings of "The cost of attention": its name, the sizes, kinds and memory budget of
each profile, and what quick changes (the experiment's other parts import these, and nothing
of theirs is imported here; the kinds and the least number of timed rounds are
``attnlab.timing.cost``'s)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.timing import cost as measure

NAME = "cost"
NEEDS_CORPUS = False


@dataclass(frozen=True)
class Settings:
    sizes: tuple[int, ...]  # sequence lengths n, doubling
    kinds: tuple[str, ...] = measure.KINDS  # naive | sdpa | memeff
    mem_limit_gib: float = 8.0  # memory budget of each measurement (address space / allocator)
    repeats: int = 5  # timed rounds over every size, interleaved (the minimum is the figure)
    d_model: int = 512  # width of the attention layer
    n_head: int = 8  # heads
    threads: int = 1  # torch threads per measuring subprocess (stable timings; CPU only)


def _doubling(lo: int, hi: int) -> tuple[int, ...]:
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return tuple(out)


PROFILES = {
    "full": Settings(sizes=_doubling(128, 16_384)),
    "quick": Settings(sizes=_doubling(128, 8_192), mem_limit_gib=2.0),
    "micro": Settings(sizes=(16, 32, 64), kinds=("naive", "memeff"), mem_limit_gib=1.0,
                      repeats=measure.MIN_REPEATS, d_model=64, n_head=4),
}
