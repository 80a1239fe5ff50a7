"""Synthetic languages: Winograd referents (variants A and B) and verb agreement."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.data import synthetic as syn
from attnlab.data.synthetic import (
    Vocab,
    forced_choice_accuracy,
    top1_accuracy,
    verb_agreement_dataset,
    winograd_dataset,
)


@pytest.fixture(scope="module", params=["A", "B"])
def wino(request) -> syn.WinogradData:
    return winograd_dataset(request.param, seed=0)


def words(data, row) -> list[str]:
    return data.vocab.decode(row).split()


# ---------------------------------------------------------------- Vocab


def test_vocab_round_trip_and_errors():
    v = Vocab(("the", "cat", "."))
    assert v.encode("the cat .") == [0, 1, 2] and v.decode([1, 0]) == "cat the"
    assert len(v) == v.size == 3 and v.id("cat") == 1
    with pytest.raises(ValueError, match="not in the vocabulary"):
        v.encode("the dog")
    with pytest.raises(ValueError, match="outside"):
        v.decode([3])
    with pytest.raises(ValueError, match="unique"):
        Vocab(("a", "a"))
    with pytest.raises(ValueError, match="without spaces"):
        Vocab(("a b",))


# ---------------------------------------------------------------- Winograd


def test_winograd_sentences_follow_the_template(wino):
    assert wino.train.ndim == wino.held.ndim == 2
    assert wino.train.shape[1] == wino.held.shape[1] == 18  # all the same length
    assert wino.train.dtype == wino.held.dtype == np.int64
    for row in np.concatenate([wino.train[:50], wino.held[:50]]):
        w = words(wino, row)
        x, y, adj, ref = w[1], w[6], w[11], w[15]
        assert " ".join(w) == syn.WINOGRAD_TEMPLATE.format(x=x, y=y, adj=adj, ref=ref)
    assert words(wino, wino.held[0])[wino.score_index : wino.ref_index] == ["the"]  # "so the"
    assert wino.score_index == 14 and wino.ref_index == 15


def test_winograd_answers_follow_the_role_rule(wino):
    for row, cands, answer in zip(wino.held, wino.candidates, wino.answer, strict=True):
        w = words(wino, row)
        assert wino.vocab.decode(cands).split() == [w[1], w[6]]
        expected = w[1] if w[11] in syn.CROSSER_ADJECTIVES else w[6]
        assert w[11] in syn.CROSSER_ADJECTIVES + syn.CROSSED_ADJECTIVES
        assert wino.vocab.words[answer] == expected == w[15]
    for row in wino.train:
        w = words(wino, row)
        assert w[15] == (w[1] if w[11] in syn.CROSSER_ADJECTIVES else w[6])


def test_winograd_held_pairs_never_occur_in_training(wino):
    train_pairs = {tuple(words(wino, r)[i] for i in (1, 6)) for r in wino.train}
    held_pairs = {tuple(words(wino, r)[i] for i in (1, 6)) for r in wino.held}
    assert train_pairs == set(wino.train_pairs) and held_pairs == set(wino.held_pairs)
    assert held_pairs and not held_pairs & train_pairs
    # each pair comes with all eight adjectives, four answers per side
    assert len(wino.held) == 8 * len(held_pairs) and len(wino.train) == 8 * len(train_pairs)
    assert np.mean(wino.answer == wino.candidates[:, 0]) == 0.5


def test_variant_a_is_animals_crossing_places_with_unseen_pairs():
    data = winograd_dataset("A", seed=0)
    pairs = data.train_pairs + data.held_pairs
    assert all(x in syn.ANIMALS and y in syn.PLACES for x, y in pairs)
    assert len(set(pairs)) == 64 and len(data.held_pairs) == 16
    # every animal and place still has training pairs (the held-out set is balanced)
    assert {x for x, _ in data.train_pairs} == set(syn.ANIMALS)
    assert {y for _, y in data.train_pairs} == set(syn.PLACES)


def test_variant_b_held_pairs_are_exactly_reversed_training_pairs():
    data = winograd_dataset("B", seed=0)
    train, held = set(data.train_pairs), set(data.held_pairs)
    assert len(syn.NOUNS) == 16 and {"animal", "street"} <= set(syn.NOUNS)
    assert all((y, x) in train for x, y in held)  # the reverse was seen in training
    assert not held & train
    assert len(train) + len(held) == 16 * 15  # every ordered pair of distinct nouns
    slots = {x for x, _ in train} | {y for _, y in train}
    assert slots == set(syn.NOUNS)
    xs, ys = {x for x, _ in data.train_pairs}, {y for _, y in data.train_pairs}
    assert xs == ys == set(syn.NOUNS)  # every noun in either slot


def test_winograd_is_deterministic_in_the_seed():
    a, b, c = (winograd_dataset("B", seed=s) for s in (0, 0, 1))
    assert np.array_equal(a.train, b.train) and np.array_equal(a.held, b.held)
    assert set(a.held_pairs) != set(c.held_pairs)


def test_winograd_rejects_bad_input():
    with pytest.raises(ValueError, match="variant"):
        winograd_dataset("C")
    with pytest.raises(ValueError, match="held_frac"):
        winograd_dataset("A", held_frac=0.0)
    with pytest.raises(ValueError, match="adjective"):
        syn.winograd_sentence("cat", "road", "green")


# ---------------------------------------------------------------- verb agreement


def test_verb_after_third_person_singular_takes_s():
    data = verb_agreement_dataset(seed=0)
    assert data.train.shape[1] == data.held.shape[1] == 9  # "p v , p v , p v ."
    s_forms = {s for _, s in syn.VERBS}
    base_forms = {b for b, _ in syn.VERBS}
    for row in np.concatenate([data.train, data.held]):
        w = data.vocab.decode(row).split()
        assert w[2::3] == [",", ",", "."]
        verbs = set()
        for pronoun, verb in zip(w[0::3], w[1::3], strict=True):
            if pronoun in ("he", "she", "it"):
                assert verb in s_forms
            else:
                assert pronoun in ("I", "you", "we", "they") and verb in base_forms
            verbs.add(dict(syn.VERBS).get(verb, verb))
        assert len(verbs) == 1  # one verb per sentence


def test_verb_agreement_answers_and_split():
    data = verb_agreement_dataset(seed=0)
    assert len(data.train) + len(data.held) == 8 * 7**3
    assert not {tuple(r) for r in data.train} & {tuple(r) for r in data.held}
    assert data.score_indices == (0, 3, 6)
    positions = [i + 1 for i in data.score_indices]
    assert np.array_equal(data.answer, data.held[:, positions])
    assert data.candidates.shape == (len(data.held), 3, 2)
    for cands, answers in zip(data.candidates, data.answer, strict=True):
        for (base, s_form), answer in zip(cands, answers, strict=True):
            assert (data.vocab.words[base], data.vocab.words[s_form]) in syn.VERBS
            assert answer in (base, s_form)
    assert syn.agreement_sentence(("work", "works"), ["I", "you", "he"]) == (
        "I work , you work , he works ."
    )
    with pytest.raises(ValueError, match="n_clauses"):
        verb_agreement_dataset(n_clauses=0)
    with pytest.raises(ValueError, match="pronoun"):
        syn.agreement_sentence(("work", "works"), ["thou"])


# ---------------------------------------------------------------- scoring


def test_forced_choice_and_top1_on_hand_made_logits():
    # rows: right wins, wrong wins, tie (counts 1/2); vocabulary of 4, candidates (1, 2).
    logits = np.array([[0, 5, 1, 0], [0, 1, 5, 0], [9, 2, 2, 0]], dtype=float)
    candidates = np.array([[1, 2], [1, 2], [1, 2]])
    answer = np.array([1, 1, 2])
    assert forced_choice_accuracy(logits, candidates, answer) == pytest.approx(1.5 / 3)
    assert top1_accuracy(logits, answer) == pytest.approx(1 / 3)  # row 3's argmax is 0
    with pytest.raises(ValueError):
        forced_choice_accuracy(logits, candidates[:2], answer)
    with pytest.raises(ValueError):
        top1_accuracy(logits[0], answer)
