"""A synthetic English → Spanish translation language with a known answer (issue 49).

Every sentence is a subject noun phrase, a chain of relative clauses, and a predicate
adjective that agrees with the subject, however far back it is::

    the girl that chased the boy was very tired .
    la niña que perseguía al niño estaba muy cansada .

    the tired girl that helped a quiet horse was happy .
    la niña cansada que ayudaba a un caballo callado estaba contenta .

The grammar (English; ``[x]`` optional, ``*`` repeated)::

    sentence = NP ("that" VERB NP)* "was" ["very"] ADJ "."
    NP       = ("the" | "a") [["very"] ADJ] NOUN

and what the translation does to it (``translate``):

- *gender*: every Spanish noun has a gender the English word fixes (``girl`` → ``niña``,
  ``boy`` → ``niño``, ``mother`` → ``madre``: the lexicon pairs words whose English
  already says it, and ``madre``, ``padre``, ``mujer``, ``hombre``, ``rey`` do not show
  it in their ending); articles (``el``/``la``, ``un``/``una``) and adjectives
  (``-o``/``-a``) agree with their noun;
- *order*: the adjective follows its noun (``the tired girl`` → ``la niña cansada``,
  ``the very tired girl`` → ``la niña muy cansada``);
- *the personal a*: every object is a person or an animal, so it takes ``a``, which
  contracts with ``el`` (``a + el = al``: ``chased the boy`` → ``perseguía al niño``);
- *distance*: each relative clause (4 to 6 words) puts the subject noun further from the
  predicate adjective that must agree with it, past nouns of either gender.

**Gold alignment.** ``Pair.alignment[k]`` is the source position of the word that target
word k translates. Every target word has one, except the personal ``a`` standing alone
(``a la niña``, ``a un niño``), which translates nothing in the source: ``None``. The
contraction ``al`` aligns to ``the``: it holds the article ``el`` (its ``a`` has no source).
The final ``.`` aligns to the final ``.``.

**Agreement at a distance.** ``Pair.agreement`` lists (target position, source position)
of each target word whose form depends on a noun that is not next to it: the predicate
adjective, and the subject noun it agrees with. Articles and attributive adjectives
agree too, but with the adjacent noun; they are not listed.

**Lengths.** A sentence has ``n`` source words, the final ``.`` included: at least 5
(``the girl was tired .``); every ``n >= 5`` is possible (``sentence_plan``), so a length
band (``sample_pairs(n, (lo, hi), seed)``) draws lengths uniformly in it, as far past a
training band as a test needs. Generation is deterministic from a seed; a data set's
``checksum`` (sha256 of its text, alignments and agreements) names it.

Left out: plurals, tenses other than the imperfect, object relative clauses, nouns
whose gender English leaves open (``cat`` → ``gato`` or ``gata``), adjectives placed
before the noun, and anything beyond the grammar above.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from attnlab.data.synthetic import Vocab

PAD, BOS, EOS = 0, 1, 2  # the same ids on both sides
SPECIALS = ("<pad>", "<bos>", "<eos>")
MASCULINE = {"boy": "niño", "man": "hombre", "king": "rey", "brother": "hermano",
             "father": "padre", "rooster": "gallo", "bull": "toro", "horse": "caballo",
             "mouse": "ratón"}
FEMININE = {"girl": "niña", "woman": "mujer", "queen": "reina", "sister": "hermana",
            "mother": "madre", "hen": "gallina", "cow": "vaca", "mare": "yegua",
            "lady": "señora"}
NOUNS = {**MASCULINE, **FEMININE}
ADJECTIVES = {"tired": "cansad", "happy": "content", "scared": "asustad",  # stem + o | a
              "hungry": "hambrient", "sick": "enferm", "busy": "ocupad", "wet": "mojad",
              "quiet": "callad"}
VERBS = {"chased": "perseguía", "watched": "miraba", "followed": "seguía", "heard": "oía",
         "helped": "ayudaba", "called": "llamaba", "pushed": "empujaba", "visited": "visitaba"}
ARTICLES = {"the": ("el", "la"), "a": ("un", "una")}  # (masculine, feminine)
MIN_WORDS = 5  # "the girl was tired ."


def feminine(noun: str) -> bool:
    """Whether the Spanish of English ``noun`` is feminine."""
    if noun not in NOUNS:
        raise ValueError(f"{noun!r} is not a noun of the language")
    return noun in FEMININE


def source_vocab() -> Vocab:
    """The English words, after pad, bos and eos (ids 0, 1, 2)."""
    return Vocab((*SPECIALS, ".", "that", "was", "very", *ARTICLES, *NOUNS, *ADJECTIVES,
                  *VERBS))


def target_vocab() -> Vocab:
    """The Spanish words, after pad, bos and eos (ids 0, 1, 2)."""
    articles = [w for pair in ARTICLES.values() for w in pair]
    adjectives = [stem + end for stem in ADJECTIVES.values() for end in "oa"]
    return Vocab((*SPECIALS, ".", "que", "estaba", "muy", "a", "al", *articles,
                  *NOUNS.values(), *adjectives, *VERBS.values()))


@dataclass(frozen=True)
class Pair:
    """One sentence and its translation, with what is known about every target word."""

    source: tuple[str, ...]  # English words, the final "." included
    target: tuple[str, ...]  # Spanish words, the final "." included
    alignment: tuple[int | None, ...]  # per target word: the source position it translates
    agreement: tuple[tuple[int, int], ...]  # (target position, source position of its noun)

    def line(self) -> str:
        """The pair as one line of text (what ``checksum`` hashes)."""
        align = ",".join("-" if a is None else str(a) for a in self.alignment)
        agree = ",".join(f"{t}:{s}" for t, s in self.agreement)
        return f"{' '.join(self.source)}\t{' '.join(self.target)}\t{align}\t{agree}"

    def alignment_matrix(self) -> np.ndarray:
        """(target words, source words) of 0 and 1: row k marks the word target word k
        translates (a row of zeros for a word with no source), as Bahdanau drew it."""
        out = np.zeros((len(self.target), len(self.source)))
        for k, j in enumerate(self.alignment):
            if j is not None:
                out[k, j] = 1.0
        return out


# ---------------------------------------------------------------- translation


class _Reader:
    """The English words, read left to right by ``translate``."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words, self.at = list(words), 0

    def peek(self) -> str | None:
        return self.words[self.at] if self.at < len(self.words) else None

    def take(self, allowed: Iterable[str], what: str) -> tuple[str, int]:
        word, at = self.peek(), self.at
        if word not in allowed:
            raise ValueError(f"expected {what} at word {at} of {' '.join(self.words)!r}, "
                             f"got {word!r}")
        self.at += 1
        return word, at


def _noun_phrase(read: _Reader, is_object: bool) -> tuple[list[str], list[int | None], int]:
    """Spanish words and alignment of one noun phrase, and the source position of its noun."""
    det, det_at = read.take(ARTICLES, "an article")
    very_at = read.take(["very"], "very")[1] if read.peek() == "very" else None
    adj, adj_at = read.take(ADJECTIVES, "an adjective") if (
        very_at is not None or read.peek() in ADJECTIVES) else (None, None)
    noun, noun_at = read.take(NOUNS, "a noun")
    fem = feminine(noun)
    article = ARTICLES[det][fem]
    words: list[str] = []
    align: list[int | None] = []
    if is_object and article == "el":
        words, align = ["al"], [det_at]  # a + el = al: aligned to "the", whose el it holds
    else:
        if is_object:  # the personal a: no source word
            words, align = ["a"], [None]
        words, align = words + [article], align + [det_at]
    words, align = words + [NOUNS[noun]], align + [noun_at]
    if very_at is not None:
        words, align = words + ["muy"], align + [very_at]
    if adj is not None:  # after the noun, agreeing with it
        words, align = words + [ADJECTIVES[adj] + ("a" if fem else "o")], align + [adj_at]
    return words, align, noun_at


def translate(source: str | Sequence[str]) -> Pair:
    """The Spanish of an English sentence of the grammar, with its gold alignment and the
    predicate adjective's agreement. Raises ``ValueError`` on a sentence outside it.

    >>> p = translate("the tired girl was happy .")
    >>> " ".join(p.target), p.alignment, p.agreement
    ('la niña cansada estaba contenta .', (0, 2, 1, 3, 4, 5), ((4, 2),))
    """
    words = tuple(source.split() if isinstance(source, str) else source)
    read = _Reader(words)
    target, align, subject = _noun_phrase(read, is_object=False)
    while read.peek() == "that":
        target, align = target + ["que"], align + [read.take(["that"], "that")[1]]
        verb, verb_at = read.take(VERBS, "a verb")
        target, align = target + [VERBS[verb]], align + [verb_at]
        obj, obj_align, _ = _noun_phrase(read, is_object=True)
        target, align = target + obj, align + obj_align
    target, align = target + ["estaba"], align + [read.take(["was"], "'was' or 'that'")[1]]
    if read.peek() == "very":
        target, align = target + ["muy"], align + [read.take(["very"], "very")[1]]
    adj, adj_at = read.take(ADJECTIVES, "an adjective")
    agreement = ((len(target), subject),)
    target, align = target + [ADJECTIVES[adj] + ("a" if feminine(words[subject]) else "o")], \
        align + [adj_at]
    target, align = target + ["."], align + [read.take(["."], "'.'")[1]]
    if read.peek() is not None:
        raise ValueError(f"words after the final '.' in {' '.join(words)!r}")
    return Pair(words, tuple(target), tuple(align), agreement)


# ---------------------------------------------------------------- generation


def sentence_plan(n_words: int, rng: np.random.Generator) -> tuple[list[int], int]:
    """How a sentence of ``n_words`` source words is built: the optional words of each noun
    phrase (0: none, 1: an adjective, 2: "very" and an adjective), one per phrase, the
    subject's first, and whether the predicate has "very" (0 or 1).

    With k relative clauses the sentence has 5 + 4k words before the optional ones, and
    at most 2(k + 1) + 1 of those: k covers 5 … 8 + 6k, so every length from 5 on has a
    plan; k is drawn among those that reach ``n_words``, then the optional words are
    dealt one at a time to phrases with room.
    """
    if n_words < MIN_WORDS:
        raise ValueError(f"a sentence has at least {MIN_WORDS} words, asked for {n_words}")
    ks = [k for k in range((n_words - MIN_WORDS) // 4 + 1)
          if MIN_WORDS + 4 * k <= n_words <= 8 + 6 * k]
    k = ks[int(rng.integers(len(ks)))]
    room = [2] * (k + 1) + [1]  # noun phrases, then the predicate's "very"
    amounts = [0] * len(room)
    for _ in range(n_words - MIN_WORDS - 4 * k):
        open_slots = [i for i, (a, r) in enumerate(zip(amounts, room, strict=True)) if a < r]
        amounts[open_slots[int(rng.integers(len(open_slots)))]] += 1
    return amounts[:-1], amounts[-1]


def _pick(rng: np.random.Generator, words: Sequence[str], avoid: str | None = None) -> str:
    pool = [w for w in words if w != avoid]
    return pool[int(rng.integers(len(pool)))]


def sample_sentence(n_words: int, rng: np.random.Generator) -> Pair:
    """A random sentence of exactly ``n_words`` source words, translated."""
    phrases, very = sentence_plan(n_words, rng)
    nouns, adjectives = list(NOUNS), list(ADJECTIVES)
    words: list[str] = []
    noun = None
    for i, extra in enumerate(phrases):
        if i:  # a relative clause on the previous noun, its object a different noun
            words += ["that", _pick(rng, list(VERBS))]
        words.append(_pick(rng, list(ARTICLES)))
        words += ["very"] * (extra == 2) + [_pick(rng, adjectives)] * (extra >= 1)
        noun = _pick(rng, nouns, avoid=noun)
        words.append(noun)
    words += ["was"] + ["very"] * very + [_pick(rng, adjectives), "."]
    return translate(words)


def sample_pairs(n: int, band: tuple[int, int], seed: int) -> tuple[Pair, ...]:
    """``n`` sentences with source lengths drawn uniformly in ``band`` (both ends included),
    from ``seed`` alone."""
    lo, hi = band
    if not MIN_WORDS <= lo <= hi:
        raise ValueError(f"a band needs {MIN_WORDS} <= lo <= hi, got {band}")
    rng = np.random.default_rng(seed)
    return tuple(sample_sentence(int(rng.integers(lo, hi + 1)), rng) for _ in range(n))


def checksum(pairs: Iterable[Pair]) -> str:
    """sha256 of the pairs' lines: equal checksums, equal data (words, alignments,
    agreements)."""
    digest = hashlib.sha256()
    for pair in pairs:
        digest.update((pair.line() + "\n").encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class TranslationData:
    """Training pairs in one length band and held-out pairs per band; no held-out source
    occurs in training."""

    source_vocab: Vocab
    target_vocab: Vocab
    train: tuple[Pair, ...]
    train_band: tuple[int, int]
    held: dict[tuple[int, int], tuple[Pair, ...]]  # band -> pairs

    @property
    def checksum(self) -> str:
        """sha256 of every pair, training first, then each band in order."""
        return checksum([*self.train, *(p for band in self.held.values() for p in band)])


def translation_dataset(n_train: int = 4000, train_band: tuple[int, int] = (5, 20),
                        held_bands: Sequence[tuple[int, int]] = ((5, 12), (13, 20), (21, 30),
                                                                 (31, 45)),
                        n_held: int = 200, seed: int = 0) -> TranslationData:
    """Training sentences in ``train_band`` and ``n_held`` held-out sentences in each of
    ``held_bands`` (which may lie past the training band), each part from its own stream
    of ``seed`` so that changing one size leaves the other parts as they were."""
    train = sample_pairs(n_train, train_band, seed=_stream(seed, 0))
    seen = {p.source for p in train}
    held = {}
    for i, band in enumerate(held_bands):
        rng_seed = _stream(seed, i + 1)
        pairs: list[Pair] = []
        draw = 0
        while len(pairs) < n_held:  # short bands repeat training sentences: skip those
            pairs += [p for p in sample_pairs(n_held, band, seed=rng_seed + draw)
                      if p.source not in seen][: n_held - len(pairs)]
            draw += 1
            if draw > 100:
                raise ValueError(f"band {band} has too few sentences outside training")
        held[tuple(band)] = tuple(pairs)
    return TranslationData(source_vocab(), target_vocab(), train, tuple(train_band), held)


def _stream(seed: int, part: int) -> int:
    """An independent seed for part ``part`` of the data set of ``seed``."""
    return int(np.random.SeedSequence([seed, part]).generate_state(1)[0])


# ---------------------------------------------------------------- batches


@dataclass(frozen=True)
class TranslationBatch:
    """Pairs as padded id arrays: the models' ``(src, src_lengths, tgt_in)`` and the loss's
    ``tgt_out``. Position k of ``tgt_out`` is target word k (then eos), so ``alignment[k]``
    of the pair is its gold source position; pad is ``PAD`` everywhere."""

    src: np.ndarray  # (b, s) int64: source words, eos, padding
    src_lengths: np.ndarray  # (b,) words + 1 (the eos)
    tgt_in: np.ndarray  # (b, t) int64: bos, target words, padding
    tgt_out: np.ndarray  # (b, t) int64: target words, eos, padding
    tgt_lengths: np.ndarray  # (b,) words + 1


def encode_batch(pairs: Sequence[Pair], source: Vocab, target: Vocab) -> TranslationBatch:
    """The pairs' ids, each side padded to its longest sentence (+ eos)."""
    if not pairs:
        raise ValueError("a batch needs at least one pair")
    src_ids = [source.encode(" ".join(p.source)) + [EOS] for p in pairs]
    tgt_ids = [target.encode(" ".join(p.target)) for p in pairs]
    s, t = max(map(len, src_ids)), max(map(len, tgt_ids)) + 1
    src = np.full((len(pairs), s), PAD, dtype=np.int64)
    tgt_in = np.full((len(pairs), t), PAD, dtype=np.int64)
    tgt_out = np.full((len(pairs), t), PAD, dtype=np.int64)
    for row, (a, b) in enumerate(zip(src_ids, tgt_ids, strict=True)):
        src[row, : len(a)] = a
        tgt_in[row, : len(b) + 1] = [BOS, *b]
        tgt_out[row, : len(b) + 1] = [*b, EOS]
    return TranslationBatch(src, np.array(list(map(len, src_ids))), tgt_in, tgt_out,
                            np.array([len(b) + 1 for b in tgt_ids]))
