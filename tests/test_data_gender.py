"""The gender-agreement language: the explainers' sentence is one of its sentences, every
distance is what it says, and the held-out set is built so that no shortcut answers it."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.data import gender

DATA = gender.gender_dataset((8, 16, 32), max_d=40, n_train=3000, per_pair=2, seed=0)


def test_the_explainers_sentence_is_a_sentence_of_the_language() -> None:
    words = gender.sentence("gata", "perseguía", "ratón", [], "cansad")
    assert " ".join(words) == gender.SENTENCE
    assert words.index("cansada") - words.index("gata") == gender.BASE == 7


@pytest.mark.parametrize("d", DATA.distances)
def test_every_item_puts_the_adjective_d_words_after_the_subject(d: int) -> None:
    v = DATA.vocab
    assert DATA.items[d].shape[1] == d + 2  # ". det N1 ... muy"; the adjective comes next
    for row in DATA.items[d]:
        words = v.decode(row).split()
        assert words[0] == "." and words[-2:] == ["estaba", "muy"]
        assert len(words) - words.index(words[2]) == d  # N1 at 2, the adjective at d + 2
        n2 = max(i for i, w in enumerate(words) if w in gender.NOUNS)
        assert all(w in gender.FILLERS for w in words[n2 + 1 : -2])  # gender-neutral fillers


def test_the_nearest_noun_always_has_the_other_gender_in_held_out() -> None:
    v = DATA.vocab
    for d in DATA.distances:
        for row, right in zip(DATA.items[d], DATA.right[d], strict=True):
            nouns = [w for w in v.decode(row).split() if w in gender.NOUNS]
            assert len(nouns) == 2
            assert gender.feminine(nouns[0]) == v.words[right].endswith("a")
            assert gender.feminine(nouns[1]) != gender.feminine(nouns[0])


def test_no_shortcut_answers_the_held_out_set() -> None:
    b = gender.baselines(DATA)
    assert b["constant"] == 0.5  # as many masculine as feminine subjects
    assert b["nearest_noun"] == 0.0
    assert b["pair_seen_in_training"] == 0.0
    assert 0.45 < DATA.train_conflict < 0.55  # "opposite of the nearest noun" is chance in training
    for d in DATA.distances:  # and per distance, per adjective: balanced forms
        forms = [DATA.vocab.words[r] for r in DATA.right[d]]
        for stem in gender.STEMS:
            assert forms.count(stem + "o") == forms.count(stem + "a")


def test_training_text_agrees_and_never_holds_a_held_out_pair() -> None:
    words = DATA.vocab.decode(DATA.train).split()
    ends = [i for i, w in enumerate(words) if w == "."]
    start = 0
    for end in ends[:500]:
        s = words[start:end]
        start = end + 1
        n1, adj = s[1], s[-1]
        assert adj.endswith("a") == gender.feminine(n1)
        pair = (gender.NOUNS.index(n1), gender.STEMS.index(adj[:-1]))
        assert not gender.held_pair(*pair)
        assert gender.MIN_D <= len(s) - 2 <= 40  # d + 3 words with the ".", d + 2 without


def test_distances_outside_the_language_are_refused() -> None:
    with pytest.raises(ValueError, match="distances"):
        gender.gender_dataset((7,), max_d=20)
    with pytest.raises(ValueError, match="max_d"):
        gender.gender_dataset((8,), max_d=7)
    assert np.all(DATA.held >= 0)


def test_held_out_distances_may_lie_beyond_the_training_range() -> None:
    data = gender.gender_dataset((8, 32), max_d=16, n_train=200, per_pair=1, seed=0)
    for d in (8, 32):
        assert data.items[d].shape[1] == d + 2  # ". det N1 … muy": the clause at d, not clipped
    # no training sentence is longer than the range allows
    words = data.vocab.decode(data.train).split(" . ")
    assert max(len(s.split()) for s in words) <= 16 + 3
