"""The English → Spanish translation language: hand-written translations with their gold
alignments (the adjective–noun swap, the personal a and al, relative clauses), agreement
always right in the generated data, every alignment a lexicon entry, lengths where the
bands put them, determinism and the checksum, and padded batches."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.data import translation as tr
from attnlab.data.translation import (
    BOS,
    EOS,
    PAD,
    encode_batch,
    sample_pairs,
    sample_sentence,
    translate,
    translation_dataset,
)

DATA = translation_dataset(n_train=600, train_band=(5, 20), held_bands=((5, 12), (21, 30),
                                                                       (41, 60)),
                           n_held=40, seed=0)
ALL = [*DATA.train, *(p for band in DATA.held.values() for p in band)]
# The checksum of translation_dataset(n_train=200, n_held=20, seed=0): a change to the
# lexicon, the grammar, the sampling or the alignments changes it, and must change it here.
CHECKSUM = "ebe72131c10c62e561ef60154100f174acb70243ae311b3a18918485ca9f0484"


@pytest.mark.parametrize("english,spanish,alignment,agreement", [
    # the explainers' sentence, with nouns whose gender English fixes: al = a + el
    ("the girl that chased the boy was very tired .",
     "la niña que perseguía al niño estaba muy cansada .",
     (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), ((8, 1),)),
    # adjective and noun swap: cansada (2) translates tired (1), niña (1) girl (2)
    ("the tired girl was happy .", "la niña cansada estaba contenta .",
     (0, 2, 1, 3, 4, 5), ((4, 2),)),
    # "very" moves with its adjective; padre shows no gender in its ending
    ("a very quiet father was wet .", "un padre muy callado estaba mojado .",
     (0, 3, 1, 2, 4, 5, 6), ((5, 3),)),
    # the personal a alone has no source; the predicate agrees with mujer, not caballo
    ("the woman that helped a quiet horse was scared .",
     "la mujer que ayudaba a un caballo callado estaba asustada .",
     (0, 1, 2, 3, None, 4, 6, 5, 7, 8, 9), ((9, 1),)),
    # two relative clauses: the subject is eleven target words before its adjective
    ("the king that watched the queen that heard the hen was hungry .",
     "el rey que miraba a la reina que oía a la gallina estaba hambriento .",
     (0, 1, 2, 3, None, 4, 5, 6, 7, None, 8, 9, 10, 11, 12), ((13, 1),)),
])
def test_hand_written_translations_and_alignments(english, spanish, alignment, agreement):
    pair = translate(english)
    assert " ".join(pair.target) == spanish
    assert pair.alignment == alignment and pair.agreement == agreement
    matrix = pair.alignment_matrix()
    assert matrix.shape == (len(pair.target), len(pair.source))
    assert matrix.sum(1).tolist() == [0.0 if a is None else 1.0 for a in alignment]


@pytest.mark.parametrize("bad", ["girl was tired .", "the girl was tired", "the girl tired .",
                                 "the girl that the boy was tired .", "the cat was tired .",
                                 "the girl was tired . ."])
def test_sentences_outside_the_grammar_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        translate(bad)


def _gender_of(word: str) -> str | None:
    """'f' or 'm' for a Spanish word that shows gender (noun, article, adjective)."""
    for english, spanish in tr.NOUNS.items():
        if word == spanish:
            return "f" if tr.feminine(english) else "m"
    if word in ("la", "una"):
        return "f"
    if word in ("el", "un", "al"):
        return "m"
    if word[:-1] in tr.ADJECTIVES.values():
        return "f" if word.endswith("a") else "m"
    return None


def test_agreement_is_always_right_in_the_gold_data() -> None:
    for pair in ALL:
        (t, s), = pair.agreement  # one predicate adjective per sentence
        assert pair.target[t][:-1] in tr.ADJECTIVES.values() and pair.target[t + 1] == "."
        assert _gender_of(pair.target[t]) == ("f" if tr.feminine(pair.source[s]) else "m")
        assert s == next(i for i, w in enumerate(pair.source) if w in tr.NOUNS)  # the subject
        # every article and attributive adjective agrees with its own (adjacent) noun
        nouns = [k for k, w in enumerate(pair.target) if w in tr.NOUNS.values()]
        for k, word in enumerate(pair.target[:t]):
            gender = _gender_of(word)
            if gender is not None and k not in nouns:
                near = min(nouns, key=lambda n: abs(n - k))
                assert gender == _gender_of(pair.target[near]), (pair.line(), k)


def test_the_far_agreement_often_crosses_a_noun_of_the_other_gender() -> None:
    crossed = [p for p in DATA.held[(21, 30)]
               if any(_gender_of(w) != _gender_of(p.target[p.agreement[0][0]])
                      for w in p.target if w in tr.NOUNS.values())]
    assert len(crossed) > 0.5 * len(DATA.held[(21, 30)])


def test_every_gold_alignment_is_a_lexicon_entry() -> None:
    fixed = {".": ".", "that": "que", "was": "estaba", "very": "muy"}
    for pair in ALL:
        assert len(pair.alignment) == len(pair.target)
        for word, j in zip(pair.target, pair.alignment, strict=True):
            if j is None:
                assert word == "a"  # the personal a, and nothing else, has no source
                continue
            src = pair.source[j]
            allowed = {fixed.get(src), tr.NOUNS.get(src), tr.VERBS.get(src)}
            allowed |= {tr.ADJECTIVES[src] + e for e in "oa"} if src in tr.ADJECTIVES else set()
            allowed |= {*tr.ARTICLES[src], "al"} if src in tr.ARTICLES else set()
            assert word in allowed, (pair.line(), word, src)
        assert sorted(j for j in pair.alignment if j is not None) == list(range(len(pair.source)))


def test_lengths_fall_in_their_bands_and_fill_them() -> None:
    assert {len(p.source) for p in DATA.train} == set(range(5, 21))
    for (lo, hi), pairs in DATA.held.items():
        assert all(lo <= len(p.source) <= hi for p in pairs)
    rng = np.random.default_rng(0)
    for n in (5, 6, 7, 8, 9, 13, 50, 80):
        assert len(sample_sentence(n, rng).source) == n
    with pytest.raises(ValueError, match="at least 5"):
        sample_sentence(4, rng)


def test_no_held_out_source_occurs_in_training() -> None:
    seen = {p.source for p in DATA.train}
    assert all(p.source not in seen for band in DATA.held.values() for p in band)


def test_generation_is_deterministic_and_checksummed() -> None:
    small = translation_dataset(n_train=200, n_held=20, seed=0)
    assert small.checksum == translation_dataset(n_train=200, n_held=20, seed=0).checksum
    assert small.checksum == CHECKSUM
    assert translation_dataset(n_train=200, n_held=20, seed=1).checksum != CHECKSUM
    assert sample_pairs(5, (9, 9), seed=3) == sample_pairs(5, (9, 9), seed=3)
    more = translation_dataset(n_train=300, n_held=20, seed=0)  # one part's size alone
    assert more.held == small.held and more.train[:200] == small.train


def test_every_word_is_in_the_vocabularies() -> None:
    src, tgt = tr.source_vocab(), tr.target_vocab()
    assert src.words[:3] == tgt.words[:3] == ("<pad>", "<bos>", "<eos>")
    assert (PAD, BOS, EOS) == (0, 1, 2)
    for pair in ALL:
        src.encode(" ".join(pair.source))
        tgt.encode(" ".join(pair.target))


def test_a_batch_is_padded_with_lengths_and_the_target_shifted() -> None:
    pairs = [translate("the girl was tired ."), translate("the boy that helped a cow was wet .")]
    batch = encode_batch(pairs, DATA.source_vocab, DATA.target_vocab)
    assert batch.src.shape == (2, 10) and batch.src_lengths.tolist() == [6, 10]  # words + eos
    assert batch.src[0, 5] == EOS and (batch.src[0, 6:] == PAD).all()
    assert batch.tgt_lengths.tolist() == [6, 11]
    assert batch.tgt_in[:, 0].tolist() == [BOS, BOS]
    assert (batch.tgt_in[1, 1:] == batch.tgt_out[1, :-1]).all()  # shifted by one
    assert DATA.target_vocab.decode(batch.tgt_out[0, :5]) == "la niña estaba cansada ."
    assert batch.tgt_out[0, 5] == EOS and (batch.tgt_out[0, 6:] == PAD).all()
