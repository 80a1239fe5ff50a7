"""The token cache is trusted only when it proves itself: a damaged array is said to in
one line and encoded again, never used (issue 27)."""

from __future__ import annotations

import hashlib
import json
import logging
import random

import numpy as np
import pytest

from attnlab.data.dataset import load_token_data


@pytest.fixture
def corpus(tmp_path):
    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    path = tmp_path / "tiny.txt"
    path.write_text("\n".join(" ".join(rng.choice(words) for _ in range(10)) + "."
                              for _ in range(300)) + "\n", encoding="utf-8")
    return path


def _cached(cache):
    (array,) = (cache / "tokens").glob("*.npy")
    return array, array.with_suffix(".json")


def _reseal(array, record) -> None:
    """Damage the record as well: its checksum made to match the damaged file, so the
    checks after the checksum (shape, dtype, range) are what must catch it."""
    meta = json.loads(record.read_text())
    meta["sha256"] = hashlib.sha256(array.read_bytes()).hexdigest()
    record.write_text(json.dumps(meta))


def _other_ids(tokens):
    return np.random.default_rng(1).permutation(tokens).astype(np.uint16)


@pytest.mark.parametrize(("damage", "reseal", "says"), [
    (_other_ids, False, "do not match their checksum"),
    (lambda t: t[: len(t) // 2 * 2].reshape(2, -1).astype(np.uint16), False, "checksum"),
    (lambda t: np.full_like(t, 5000).astype(np.uint16), False, "checksum"),
    (lambda t: t[: len(t) // 2 * 2].reshape(2, -1).astype(np.uint16), True, "shape (2,"),
    (lambda t: t.astype(np.int32), True, "int32"),
    (lambda t: np.full_like(t, 5000).astype(np.uint16), True, "ids outside [0, 300)"),
    (_other_ids, None, "no readable checksum record"),
])
def test_a_damaged_cache_is_said_in_one_line_and_encoded_again(
        corpus, tmp_path, caplog, damage, reseal, says):
    cache = tmp_path / "cache"
    first = load_token_data(corpus, vocab_size=300, cache=cache)
    array, record = _cached(cache)
    clean = np.concatenate([first.train, first.held])
    np.save(array, damage(clean))
    if reseal:
        _reseal(array, record)
    elif reseal is None:
        record.unlink()
    with caplog.at_level(logging.WARNING, logger="attnlab.data.dataset"):
        again = load_token_data(corpus, vocab_size=300, cache=cache)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert says in warning and "\n" not in warning and "vocab_size" not in warning
    assert warning.endswith("encoding the corpus again")
    assert np.array_equal(again.train, first.train) and np.array_equal(again.held, first.held)
    caplog.clear()  # the rebuilt cache is whole again: read without a word
    load_token_data(corpus, vocab_size=300, cache=cache)
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]


def test_a_record_from_another_corpus_is_not_trusted(corpus, tmp_path, caplog):
    cache = tmp_path / "cache"
    load_token_data(corpus, vocab_size=300, cache=cache)
    array, record = _cached(cache)
    meta = json.loads(record.read_text())
    record.write_text(json.dumps({**meta, "corpus_sha256": "0" * 64}))
    with caplog.at_level(logging.WARNING, logger="attnlab.data.dataset"):
        load_token_data(corpus, vocab_size=300, cache=cache)
    assert any("not made from this corpus and tokenizer" in r.getMessage() for r in caplog.records)


def test_train_on_a_damaged_cache_trains_on_the_corpus(corpus, tmp_path, capsys, monkeypatch,
                                                      caplog):
    """The reported case end to end: other valid ids in the cached array; `attnlab train`
    gives the same held-out figure as on a clean cache, and says the cache was damaged."""
    from attnlab.cli import main as cli_main

    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    settings = ["--set", "model.vocab_size=300", "--set", "data.vocab_size=300",
                "--set", "model.d_model=16", "--set", "model.n_ctx=16", "--set", "model.n_head=2",
                "--set", "train.steps=2", "--set", "train.batch_size=4",
                "--set", "train.eval_every=0", "--set", "train.device=cpu"]

    def train(out: str) -> dict:
        code = cli_main.main(["train", "--corpus", str(corpus), "--quiet", "--json",
                              "--run-dir", out, *settings])
        stdout, stderr = capsys.readouterr()
        assert code == 0, stderr
        return json.loads(stdout), stderr

    clean, _ = train("a")
    array, _ = _cached(tmp_path / "cache")
    np.save(array, _other_ids(np.load(array)))
    with caplog.at_level(logging.WARNING, logger="attnlab.data.dataset"):
        damaged, _ = train("b")
    assert "do not match their checksum (damaged); encoding the corpus again" in caplog.text
    assert damaged["held_ppl"] == clean["held_ppl"]
