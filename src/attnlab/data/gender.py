"""A long-range gender-agreement language, built on the explainers' sentence.

    la gata que perseguía al ratón estaba muy cansada .

The adjective agrees with ``gata``, seven words back, not with the nearer
``ratón``. Every sentence of the language has that shape::

    {det} {N1} que {verb} {al | a la} {N2} {filler × m} estaba muy {adjective}{o | a} .

``N1`` (the subject, the head of the relative clause) has a gender, ``el`` or
``la`` before it; ``N2`` (the object, inside the clause) is the nearer noun;
the fillers are gender-neutral adverbs (``ayer``, ``siempre`` …) that lengthen
the clause. ``d`` is the distance in words from ``N1`` to the adjective (7 in
the explainers' sentence); a sentence of distance ``d`` has ``d + 3`` words
whatever its nouns (``a la`` is one word longer than ``al``, and takes one
filler fewer). A model reads ``. {det} … muy`` and is scored on the adjective:
*forced choice*, the right form's logit above the wrong form's.

How the held-out set is built so that no shortcut answers it (each property is
measured by ``baselines`` and checked in ``tests/test_data_gender.py``):

- *The nearest noun answers wrongly*: in every held-out sentence ``N2`` has the
  other gender (the explainers' case), so agreeing with the nearest noun scores
  0, not chance.
- *Its opposite is not learnable*: in training, ``N2``'s gender is drawn
  independently of ``N1``'s (half the sentences agree, half conflict), so "the
  form opposite to the nearest noun" scores one half on the training text and
  nothing rewards learning it.
- *The first noun alone, memorised with its adjective, does not answer*: the 16
  nouns × 6 adjectives are split in two by a checkerboard (noun i, adjective j
  held out when i + j is even); a held-out sentence's (N1, adjective) pair never
  occurs in training, so recalling "``gata`` went with ``cansada``" cannot score
  it. Gender must be carried from ``N1`` (or its determiner) to the adjective.
- *Chance is one half, and a constant answer gets exactly that*: every held-out
  distance has as many masculine as feminine subjects, and every adjective as
  many of each.

Left out: number agreement, other word orders, nested clauses, and any grammar
beyond the template (the fillers make unidiomatic but gender-neutral Spanish).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.data.synthetic import Vocab

SENTENCE = "la gata que perseguía al ratón estaba muy cansada ."  # the explainers' sentence
MASCULINE = ("gato", "perro", "ratón", "niño", "lobo", "toro", "pájaro", "caballo")
FEMININE = ("gata", "perra", "rata", "niña", "loba", "vaca", "paloma", "yegua")
NOUNS = MASCULINE + FEMININE  # index i < 8: masculine
VERBS = ("perseguía", "miraba", "buscaba", "seguía", "oía", "mordía")
STEMS = ("cansad", "content", "dormid", "asustad", "quiet", "mojad")  # + o (m) / a (f)
FILLERS = ("ayer", "hoy", "siempre", "luego", "mucho", "poco", "allí", "aquí", "despacio",
           "tarde", "pronto", "entonces")
BASE = 7  # the distance of the explainers' sentence, the least with a masculine object
MIN_D = BASE + 1  # the least distance both objects allow (``a la`` is one word longer)


def vocab() -> Vocab:
    words = (".", "el", "la", "que", "al", "a", "estaba", "muy", *NOUNS, *VERBS, *FILLERS,
             *(s + e for s in STEMS for e in "oa"))
    return Vocab(words)


def feminine(noun: str) -> bool:
    return noun in FEMININE


def held_pair(noun: int, stem: int) -> bool:
    """The checkerboard: (noun, adjective) pairs held out of training."""
    return (noun + stem) % 2 == 0


def sentence(n1: str, verb: str, n2: str, fillers: list[str], stem: str) -> list[str]:
    """The words of one sentence, the final ``.`` included."""
    obj = ["a", "la"] if feminine(n2) else ["al"]
    return [("la" if feminine(n1) else "el"), n1, "que", verb, *obj, n2, *fillers, "estaba",
            "muy", stem + ("a" if feminine(n1) else "o"), "."]


def n_fillers(d: int, n2: str) -> int:
    """Fillers that put the adjective ``d`` words after N1 with object ``n2``."""
    return d - BASE - (1 if feminine(n2) else 0)


@dataclass(frozen=True)
class GenderData:
    """Training and held-out text as token streams, and the scored held-out items by distance.

    ``items[d]`` is an (n, d + 2) array ``. {det} … muy`` (the adjective is predicted at its
    last position), ``right[d]`` / ``wrong[d]`` the ids of the agreeing and the other form,
    ``nearest[d]`` the id of the form that agrees with N2, ``pairs[d]`` the (noun, stem)
    index of each item.
    """

    vocab: Vocab
    train: np.ndarray  # (n_train · words,) int64: sentences end to end
    held: np.ndarray  # (n_held · words,) int64: the held-out sentences end to end
    distances: tuple[int, ...]
    items: dict[int, np.ndarray]
    right: dict[int, np.ndarray]
    wrong: dict[int, np.ndarray]
    nearest: dict[int, np.ndarray]
    train_pairs: frozenset[tuple[int, int]]  # (noun, stem) pairs that occur in training
    train_conflict: float  # fraction of training sentences whose N2 has the other gender
    train_subject_feminine: float  # fraction of training subjects that are feminine


def _other(rng: np.random.Generator, n1: str, conflict: bool) -> str:
    pool = [n for n in NOUNS if n != n1 and (feminine(n) != feminine(n1)) == conflict]
    return pool[int(rng.integers(len(pool)))]


def gender_dataset(distances: tuple[int, ...], max_d: int, n_train: int = 4000,
                   per_pair: int = 2, seed: int = 0) -> GenderData:
    """Training sentences with d uniform in [MIN_D, ``max_d``] over the training pairs, N2 of
    either gender; held-out sentences at each of ``distances``, ``per_pair`` per held-out
    pair, N2 always of the other gender. A held-out distance may lie beyond ``max_d``: the
    model then meets a clause longer than any it trained on."""
    if min(distances) < MIN_D or max_d < MIN_D:
        raise ValueError(f"distances and max_d must be at least {MIN_D}, got {distances} "
                         f"and {max_d}")
    rng = np.random.default_rng(seed)
    v = vocab()
    pairs = [(i, j) for i in range(len(NOUNS)) for j in range(len(STEMS))]
    train_pairs = [p for p in pairs if not held_pair(*p)]
    held_pairs = [p for p in pairs if held_pair(*p)]

    def draw(i: int, j: int, d: int, conflict: bool) -> list[str]:
        n1 = NOUNS[i]
        n2 = _other(rng, n1, conflict)
        fill = [FILLERS[k] for k in rng.integers(len(FILLERS), size=n_fillers(d, n2))]
        return sentence(n1, VERBS[int(rng.integers(len(VERBS)))], n2, fill, STEMS[j])

    train_words, conflicts, fem = [], 0, 0
    for _ in range(n_train):
        i, j = train_pairs[int(rng.integers(len(train_pairs)))]
        conflict = bool(rng.integers(2))
        conflicts += conflict
        fem += i >= len(MASCULINE)
        train_words += draw(i, j, int(rng.integers(MIN_D, max_d + 1)), conflict)
    items, right, wrong, nearest, held_words = {}, {}, {}, {}, []
    for d in distances:
        rows, r, w, n = [], [], [], []
        for i, j in held_pairs * per_pair:
            words = draw(i, j, d, conflict=True)
            held_words += words
            rows.append(v.encode(" ".join([".", *words[:-2]])))
            form = words[-2]
            other = STEMS[j] + ("o" if form.endswith("a") else "a")
            r.append(v.id(form))
            w.append(v.id(other))
            n.append(v.id(other))  # the nearest noun always has the other gender here
        items[d] = np.asarray(rows, dtype=np.int64)
        right[d], wrong[d] = np.asarray(r), np.asarray(w)
        nearest[d] = np.asarray(n)
    return GenderData(
        vocab=v, train=np.asarray(v.encode(" ".join(train_words)), dtype=np.int64),
        held=np.asarray(v.encode(" ".join(held_words)), dtype=np.int64),
        distances=tuple(distances), items=items, right=right, wrong=wrong, nearest=nearest,
        train_pairs=frozenset(train_pairs), train_conflict=conflicts / n_train,
        train_subject_feminine=fem / n_train,
    )


def baselines(data: GenderData) -> dict[str, float]:
    """Held-out forced-choice accuracy of the shortcuts, over all distances: a constant
    answer (always the masculine form), the nearest noun's form, and the fraction of held-out
    (subject, adjective) pairs that occur in training (memory of the pair)."""
    v = data.vocab
    masc, near, seen, n = 0, 0, 0, 0
    for d in data.distances:
        for row, r, nr in zip(data.items[d], data.right[d], data.nearest[d], strict=True):
            masc += v.words[r].endswith("o")
            near += nr == r
            words = v.decode(row).split()
            noun, stem = NOUNS.index(words[2]), STEMS.index(v.words[r][:-1])
            seen += (noun, stem) in data.train_pairs
            n += 1
    return {"constant": float(masc / n), "nearest_noun": float(near / n),
            "pair_seen_in_training": float(seen / n)}
