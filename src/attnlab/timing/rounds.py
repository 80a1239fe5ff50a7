"""A benchmark in interleaved rounds, the one way attnlab times things side by side.

Other work on the same cores slows whichever case happens to be running, so the cases are
never timed one after the other: after one untimed call of each (allocation, kernel
choice), every round reads every case once (``interleaved_rounds``), so a burst of load
falls on single readings of several cases, never on every reading of one. Every reading
is kept; what to make of them (the minimum, the spread) is the caller's. Two callers: the
attention-cost sweep (``attnlab.timing.cost_layer.time_interleaved``: sizes ascending in
one round and descending in the next, so a slow drift does not land on one size alone)
and the recurrence experiment's training-step benchmark (sizes ascending, the models
interleaved at each size, in every round).

Left out: how many calls make one reading (one, here), and any statistics of the rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import torch

T = TypeVar("T")


def interleaved_rounds(cases: Sequence[Callable[[], T]], rounds: int, *,
                       alternate: bool = False) -> list[list[T]]:
    """Each case's readings, one per round: every case called once untimed, then ``rounds``
    rounds that call each once, in the order given (reversed in odd rounds if ``alternate``).

    >>> calls = []
    >>> interleaved_rounds([lambda: calls.append("a") or 1, lambda: calls.append("b") or 2],
    ...                    2, alternate=True)
    [[1, 1], [2, 2]]
    >>> "".join(calls)  # the warm-up, then round 0 forward, round 1 backward
    'ababba'
    """
    for case in cases:
        case()
    readings: list[list[T]] = [[] for _ in cases]
    forward = list(range(len(cases)))
    for round_ in range(rounds):
        for i in forward if not alternate or round_ % 2 == 0 else forward[::-1]:
            readings[i].append(cases[i]())
    return readings


def clock(device: Any) -> float:
    """``time.perf_counter()`` once ``device`` has finished its queued work (a GPU runs
    asynchronously: without the wait a reading is the time to queue the work)."""
    if str(device).startswith("cuda"):
        torch.cuda.synchronize(device)
    return time.perf_counter()


@contextmanager
def cpu_threads(threads: int | None, device: Any) -> Iterator[None]:
    """Torch on ``threads`` threads while timing on the CPU (``None``, or on a GPU: as it
    is); the count before is restored afterwards."""
    before = torch.get_num_threads()
    if threads and not str(device).startswith("cuda"):
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
