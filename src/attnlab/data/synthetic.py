"""Synthetic word-level languages, generated in code: Winograd referents and verb agreement.

Both are small enough to enumerate, so a held-out set can be chosen to need
exactly the skill under test, and each sentence has a position with a right
answer. Sequences are rows of a 2-D ``np.int64`` array, all of one length
``L``; a language model reads ``row[:-1]`` and predicts ``row[1:]``, so the
answer at sentence position ``p`` is scored at logit position ``p - 1``.

**Winograd referents** (docs/experiments.md, "Winograd referents", after Levesque et al. 2012)::

    the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .

``ref`` (sentence position 15, scored at logit position 14, the ``the`` after
``so``) is ``x`` when the adjective describes the crosser (``tired``,
``scared``, ``slow``, ``weak``) and ``y`` when it describes the crossed
(``wet``, ``wide``, ``busy``, ``steep``).

- Variant ``"A"`` (cheatable): ``x`` is always an animal, ``y`` always a place,
  so "the animal word if the adjective is animal-ish" answers it without
  order; held-out (animal, place) pairs never occur in training.
- Variant ``"B"``: 16 nouns (``animal`` and ``street`` among them) in either
  slot; the held-out pairs are ordered pairs whose *reverse* is in training,
  so a bag of words (a uniform mean) sees the same words as in training with
  the opposite answer.

**Verb agreement**: clauses ``{pronoun} {verb}`` joined by commas, one verb per
sentence: ``I work , you work , he works .``; after ``he``, ``she`` or ``it``
the verb takes its ``-s`` form, after ``I``, ``you``, ``we``, ``they`` its base.

Left out: articles other than ``the``, plural nouns, and any grammar beyond the
templates; these languages test one skill each, nothing more.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

WINOGRAD_TEMPLATE = "the {x} did not cross the {y} because it was too {adj} , so the {ref} waited ."
REF_POSITION = 15  # sentence position of the {ref} word
SCORE_INDEX = REF_POSITION - 1  # logit / target position that predicts it
CROSSER_ADJECTIVES = ("tired", "scared", "slow", "weak")  # describe x: ref = x
CROSSED_ADJECTIVES = ("wet", "wide", "busy", "steep")  # describe y: ref = y
ANIMALS = ("animal", "cat", "dog", "horse", "cow", "sheep", "fox", "deer")
PLACES = ("street", "road", "river", "bridge", "field", "lake", "hill", "yard")
NOUNS = ANIMALS + PLACES  # variant B: any of the 16 in either slot

BASE_PRONOUNS = ("I", "you", "we", "they")
S_PRONOUNS = ("he", "she", "it")  # third person singular: the verb takes -s
VERBS = (
    ("work", "works"),
    ("walk", "walks"),
    ("run", "runs"),
    ("sing", "sings"),
    ("read", "reads"),
    ("write", "writes"),
    ("play", "plays"),
    ("sleep", "sleeps"),
)


@dataclass(frozen=True)
class Vocab:
    """Words ↔ ids for space-separated text.

    >>> v = Vocab(("a", "b", "."))
    >>> v.encode("b a ."), v.decode([1, 0, 2])
    ([1, 0, 2], 'b a .')
    """

    words: tuple[str, ...]
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", tuple(self.words))
        for w in self.words:
            if not w or any(c.isspace() for c in w):
                raise ValueError(f"vocabulary words must be non-empty without spaces, got {w!r}")
        if len(set(self.words)) != len(self.words):
            raise ValueError("vocabulary words must be unique")
        self._index.update((w, i) for i, w in enumerate(self.words))

    def __len__(self) -> int:
        return len(self.words)

    @property
    def size(self) -> int:
        """Number of words (the models' vocabulary size)."""
        return len(self.words)

    def id(self, word: str) -> int:
        """The id of one word."""
        try:
            return self._index[word]
        except KeyError:
            raise ValueError(f"{word!r} is not in the vocabulary") from None

    def encode(self, text: str) -> list[int]:
        """Ids of the whitespace-separated words of ``text``."""
        return [self.id(w) for w in text.split()]

    def decode(self, ids) -> str:
        """The words of ``ids``, joined by single spaces."""
        out = []
        for i in np.asarray(ids, dtype=np.int64).ravel().tolist():
            if not 0 <= i < len(self.words):
                raise ValueError(f"id {i} is outside [0, {len(self.words)})")
            out.append(self.words[i])
        return " ".join(out)


def _unique(words) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


# ---------------------------------------------------------------- Winograd referents


@dataclass(frozen=True)
class WinogradData:
    """A Winograd referent language: sentences as id rows, and the held-out answers."""

    variant: str  # "A" (cheatable) or "B" (needs order)
    vocab: Vocab
    train: np.ndarray  # (n_train, 18) int64 sentences
    held: np.ndarray  # (n_held, 18) int64 sentences
    candidates: np.ndarray  # (n_held, 2) ids of the two nouns present, [x, y]
    answer: np.ndarray  # (n_held,) id of the right referent
    train_pairs: tuple[tuple[str, str], ...]  # ordered (x, y) pairs in training
    held_pairs: tuple[tuple[str, str], ...]  # ordered (x, y) pairs held out
    score_index: int = SCORE_INDEX  # logit position predicting the referent

    @property
    def ref_index(self) -> int:
        """Sentence position of the referent word (``score_index + 1``)."""
        return self.score_index + 1


def winograd_sentence(x: str, y: str, adj: str) -> str:
    """The sentence for (x, y, adj), with its referent by the role rule.

    >>> winograd_sentence("animal", "street", "wet").split()[REF_POSITION]
    'street'
    """
    if adj in CROSSER_ADJECTIVES:
        ref = x
    elif adj in CROSSED_ADJECTIVES:
        ref = y
    else:
        raise ValueError(f"unknown adjective {adj!r}")
    return WINOGRAD_TEMPLATE.format(x=x, y=y, adj=adj, ref=ref)


def _pairs_a(rng: np.random.Generator, held_frac: float):
    """Latin-square hold-out: pair animal i with place (i + shift) for a few shifts."""
    k = len(ANIMALS)
    n_shifts = int(round(held_frac * k))
    if not 1 <= n_shifts < k:
        raise ValueError(f"held_frac={held_frac} holds out no pair or every pair")
    animals = [ANIMALS[i] for i in rng.permutation(k)]
    places = [PLACES[i] for i in rng.permutation(k)]
    shifts = set(rng.permutation(k)[:n_shifts].tolist())
    held = [(animals[i], places[(i + s) % k]) for s in sorted(shifts) for i in range(k)]
    held_set = set(held)
    train = [(a, p) for a in ANIMALS for p in PLACES if (a, p) not in held_set]
    return train, held


def _pairs_b(rng: np.random.Generator, held_frac: float):
    """Hold out one order of some unordered pairs; the reverse order stays in training."""
    unordered = list(itertools.combinations(NOUNS, 2))
    n_held = int(round(held_frac * len(unordered)))
    if not 1 <= n_held <= len(unordered):
        raise ValueError(f"held_frac={held_frac} holds out no pair")
    chosen = set(rng.permutation(len(unordered))[:n_held].tolist())
    train, held = [], []
    for i, (a, b) in enumerate(unordered):
        if i in chosen:
            pair = (a, b) if rng.random() < 0.5 else (b, a)
            held.append(pair)
            train.append(pair[::-1])
        else:
            train += [(a, b), (b, a)]
    return train, held


def winograd_dataset(variant: str, seed: int = 0, held_frac: float | None = None) -> WinogradData:
    """The Winograd referent language of ``variant`` ("A" or "B").

    Every ordered pair is written with all eight adjectives (four pointing at
    ``x``, four at ``y``). ``held_frac``: variant A holds out that fraction of
    the 64 (animal, place) pairs, balanced so each animal and place keeps
    most of its pairs in training (default 0.25: 16 pairs); variant B holds
    out one order of that fraction of the 120 unordered noun pairs (default
    0.5: 60 pairs, their reverses and the other 60 pairs' both orders train).
    """
    if variant not in ("A", "B"):
        raise ValueError(f"variant must be 'A' or 'B', got {variant!r}")
    rng = np.random.default_rng(seed)
    if variant == "A":
        train_pairs, held_pairs = _pairs_a(rng, 0.25 if held_frac is None else held_frac)
    else:
        train_pairs, held_pairs = _pairs_b(rng, 0.5 if held_frac is None else held_frac)
    adjectives = CROSSER_ADJECTIVES + CROSSED_ADJECTIVES
    template_words = WINOGRAD_TEMPLATE.format(x="", y="", adj="", ref="").split()
    vocab = Vocab(_unique([*template_words, *NOUNS, *adjectives]))

    def rows(pairs):
        return np.array(
            [vocab.encode(winograd_sentence(x, y, adj)) for x, y in pairs for adj in adjectives],
            dtype=np.int64,
        )

    train = rows(train_pairs)[rng.permutation(len(train_pairs) * len(adjectives))]
    held = rows(held_pairs)
    x_pos, y_pos = 1, 6  # sentence positions of the two nouns
    return WinogradData(
        variant=variant,
        vocab=vocab,
        train=train,
        held=held,
        candidates=held[:, [x_pos, y_pos]].copy(),
        answer=held[:, REF_POSITION].copy(),
        train_pairs=tuple(train_pairs),
        held_pairs=tuple(held_pairs),
    )


# ---------------------------------------------------------------- verb agreement


@dataclass(frozen=True)
class VerbAgreementData:
    """The verb-agreement language: sentences as id rows, and the held-out answers."""

    vocab: Vocab
    train: np.ndarray  # (n_train, L) int64 sentences, L = 3 · n_clauses
    held: np.ndarray  # (n_held, L) int64 sentences
    score_indices: tuple[int, ...]  # logit positions predicting each clause's verb
    candidates: np.ndarray  # (n_held, n_clauses, 2) ids [base form, -s form]
    answer: np.ndarray  # (n_held, n_clauses) id of the right form


def agreement_sentence(verb: tuple[str, str], pronouns) -> str:
    """``I work , you work , he works .`` for ``verb=("work", "works")``."""
    clauses = []
    for p in pronouns:
        if p in S_PRONOUNS:
            clauses.append(f"{p} {verb[1]}")
        elif p in BASE_PRONOUNS:
            clauses.append(f"{p} {verb[0]}")
        else:
            raise ValueError(f"unknown pronoun {p!r}")
    return " , ".join(clauses) + " ."


def verb_agreement_dataset(
    seed: int = 0, n_clauses: int = 3, held_frac: float = 0.2
) -> VerbAgreementData:
    """Every (verb, pronoun sequence) sentence, split at random into train and held out.

    With 8 verbs, 7 pronouns and 3 clauses there are 8 · 7³ = 2,744 sentences;
    the held-out ones never occur in training.
    """
    if not 1 <= n_clauses <= 5:
        raise ValueError(f"n_clauses must be in [1, 5], got {n_clauses}")
    if not 0.0 < held_frac < 1.0:
        raise ValueError(f"held_frac must be in (0, 1), got {held_frac}")
    pronouns = BASE_PRONOUNS + S_PRONOUNS
    vocab = Vocab(_unique([*pronouns, *itertools.chain(*VERBS), ",", "."]))
    combos = [(verb, ps) for verb in VERBS for ps in itertools.product(pronouns, repeat=n_clauses)]
    rows = np.array([vocab.encode(agreement_sentence(v, ps)) for v, ps in combos], dtype=np.int64)
    order = np.random.default_rng(seed).permutation(len(rows))
    n_held = int(round(held_frac * len(rows)))
    held, train = rows[order[:n_held]], rows[order[n_held:]]
    verb_positions = [3 * c + 1 for c in range(n_clauses)]
    forms = {}  # id of either form -> [base id, -s id]
    for verb in VERBS:
        ids = [vocab.id(w) for w in verb]
        forms.update({i: ids for i in ids})
    answer = held[:, verb_positions]  # (n_held, n_clauses)
    candidates = np.array([[forms[i] for i in row] for row in answer.tolist()], dtype=np.int64)
    return VerbAgreementData(
        vocab=vocab,
        train=train,
        held=held,
        score_indices=tuple(p - 1 for p in verb_positions),
        candidates=candidates,
        answer=answer.copy(),
    )


# ---------------------------------------------------------------- scoring


def forced_choice_accuracy(logits: np.ndarray, candidates: np.ndarray, answer: np.ndarray) -> float:
    """Fraction of rows whose right candidate has the higher logit (a tie counts one half).

    ``logits`` (n, V) at the scored position, ``candidates`` (n, 2) ids,
    ``answer`` (n,) ids, each equal to one of its row's candidates.
    """
    logits, candidates, answer = np.asarray(logits), np.asarray(candidates), np.asarray(answer)
    if candidates.shape != (len(logits), 2) or answer.shape != (len(logits),):
        raise ValueError("need logits (n, V), candidates (n, 2) and answer (n,)")
    wrong = np.where(candidates[:, 0] == answer, candidates[:, 1], candidates[:, 0])
    rows = np.arange(len(logits))
    right_score, wrong_score = logits[rows, answer], logits[rows, wrong]
    return float(np.mean((right_score > wrong_score) + 0.5 * (right_score == wrong_score)))


def top1_accuracy(logits: np.ndarray, answer: np.ndarray) -> float:
    """Fraction of rows whose highest logit over the whole vocabulary is the answer."""
    logits, answer = np.asarray(logits), np.asarray(answer)
    if logits.ndim != 2 or answer.shape != (len(logits),):
        raise ValueError("need logits (n, V) and answer (n,)")
    return float(np.mean(logits.argmax(axis=-1) == answer))
