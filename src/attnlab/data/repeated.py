"""Repeated random tokens: the probe of head roles and the induction-head language.

Dimension legend: ``n`` sequences, ``T`` positions of a row, ``L`` length of a
repeated segment.

Two sources, both seeded and both plain ``np.int64`` arrays:

- ``repeated_probe``: each row is ``half`` random tokens then the same
  tokens again, ``[r_0 … r_{m-1} r_0 … r_{m-1}]`` (Olsson et al. 2022, "Induction
  Heads", the prefix-matching probe). Within a row the first half has no
  repeated token when the vocabulary allows it, so "the earlier occurrence" of a
  token in the second half is one position.
- ``segment_rows``: rows of random tokens in which one segment of random
  length ``L`` (drawn per row from ``[min_len, max_len]``) occurs twice at
  random places, so no period can be memorised; ``first`` and ``second`` give
  where each occurrence starts. A language model reads ``row[:-1]`` and
  predicts ``row[1:]``: the token at ``start + j`` (``j ≥ 1``) is predicted at
  logit position ``start + j - 1``.

Left out: natural-text repeats, and any token that would mark a segment's start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def repeated_probe(vocab_size: int, half: int, n: int = 8, seed: int = 0) -> np.ndarray:
    """(n, 2·half) rows ``x x`` of ``half`` random ids in ``[0, vocab_size)``, distinct within
    ``x`` when ``vocab_size >= half``.

    >>> rows = repeated_probe(50, 4, n=2)
    >>> rows.shape, bool((rows[:, :4] == rows[:, 4:]).all())
    ((2, 8), True)
    """
    if vocab_size < 1 or half < 1 or n < 1:
        raise ValueError(f"vocab_size, half and n must be >= 1, got {vocab_size}, {half}, {n}")
    rng = np.random.default_rng(seed)
    distinct = vocab_size >= half
    first = np.stack([rng.choice(vocab_size, half, replace=not distinct) for _ in range(n)])
    return np.concatenate([first, first], axis=1).astype(np.int64)  # (n, 2·half)


@dataclass(frozen=True)
class SegmentRows:
    """Rows with one repeated segment each, and where its two occurrences start."""

    rows: np.ndarray  # (n, T) int64 ids
    first: np.ndarray  # (n,) start of the first occurrence
    second: np.ndarray  # (n,) start of the second occurrence (>= first + length)
    length: np.ndarray  # (n,) segment length L

    def scored(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row index, logit position of the first occurrence and of the second, for every
        segment token after the segment's first (predictable only in the repeat), flattened."""
        row, j = [], []
        for i, m in enumerate(self.length):
            row += [i] * (int(m) - 1)
            j += list(range(1, int(m)))
        row_a, j_a = np.array(row, dtype=np.int64), np.array(j, dtype=np.int64)
        return row_a, self.first[row_a] + j_a - 1, self.second[row_a] + j_a - 1


def segment_rows(vocab_size: int, width: int, n: int, min_len: int, max_len: int,
                 seed: int) -> SegmentRows:
    """``n`` rows of ``width`` random ids, each with one segment of random length repeated.

    >>> s = segment_rows(32, 20, 3, 3, 6, seed=1)
    >>> all((r[a:a + m] == r[b:b + m]).all() for r, a, b, m in
    ...     zip(s.rows, s.first, s.second, s.length))
    True
    """
    if not 1 <= min_len <= max_len or 2 * max_len > width:
        raise ValueError(f"segment lengths [{min_len}, {max_len}] must fit twice in {width}")
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, vocab_size, size=(n, width), dtype=np.int64)  # (n, T)
    length = rng.integers(min_len, max_len + 1, size=n)
    first, second = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for i, m in enumerate(length):
        gap = width - 2 * m  # free positions around the two occurrences
        a = int(rng.integers(0, gap + 1))
        b = a + m + int(rng.integers(0, gap - a + 1))
        rows[i, b:b + m] = rows[i, a:a + m]
        first[i], second[i] = a, b
    return SegmentRows(rows, first, second, length.astype(np.int64))


@dataclass(frozen=True)
class SegmentStream:
    """Token data for the trainer (``train`` and ``held`` streams of segment rows end to end:
    it draws windows at random offsets, as from a corpus)."""

    train: np.ndarray  # (n_train · T,) int64 ids
    held: np.ndarray  # (n_held · T,) int64 ids

    @classmethod
    def of(cls, vocab_size: int, width: int, n_train: int, n_held: int, min_len: int,
           max_len: int, seed: int) -> SegmentStream:
        """Streams of ``n_train`` and ``n_held`` rows (seeds ``seed`` and ``seed + 1``)."""
        train = segment_rows(vocab_size, width, n_train, min_len, max_len, seed)
        held = segment_rows(vocab_size, width, n_held, min_len, max_len, seed + 1)
        return cls(train.rows.reshape(-1), held.rows.reshape(-1))
