"""Byte-level BPE: the Tiny Shakespeare token count, exact round trips, determinism, caching.

The tokenizer of the whole corpus is trained once for this module (a few
seconds) into a temporary cache; every test also gets its own $ATTNLAB_CACHE
so nothing is written to the user's home.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.data import corpus, dataset
from attnlab.data.dataset import TokenData, load_token_data
from attnlab.data.tokenizer import BPETokenizer, get_tokenizer, tokenizer_key

REAL_DATA = Path(
    os.environ.get("ATTNLAB_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
TARGET_TOKENS = 459_760  # the chapter's count (docs/data.md), to within 0.1%
SMALL = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def shakespeare() -> str:
    path = REAL_DATA / corpus.CORPUS_NAME
    if not path.is_file():
        pytest.skip(f"Tiny Shakespeare not found in {REAL_DATA} (set ATTNLAB_DATA)")
    return corpus.read_corpus(path)


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("attnlab-cache")


@pytest.fixture(scope="module")
def token_data(shakespeare, module_cache) -> TokenData:
    """The whole corpus tokenized once for the module (trains and encodes: a few seconds)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTNLAB_DATA", str(REAL_DATA))
        return load_token_data(vocab_size=1024, cache=module_cache)


@pytest.fixture(scope="module")
def full_tok(token_data) -> BPETokenizer:
    return token_data.tokenizer


@pytest.fixture(scope="module")
def small_tok() -> BPETokenizer:
    return BPETokenizer.train(SMALL * 20, vocab_size=300)


# ---------------------------------------------------------------- the corpus


def test_tiny_shakespeare_gives_the_textbook_token_count(token_data):
    n = len(token_data.train) + len(token_data.held)
    assert token_data.vocab_size == 1024
    assert abs(n - TARGET_TOKENS) <= 0.001 * TARGET_TOKENS, n
    for part in (token_data.train, token_data.held):
        assert part.dtype == np.int64 and part.min() >= 0 and part.max() < 1024


def test_round_trip_on_the_whole_corpus(token_data, shakespeare):
    # token_data holds encode(corpus); decoding its two splits gives the corpus back.
    tokens = np.concatenate([token_data.train, token_data.held])
    assert token_data.tokenizer.decode(tokens) == shakespeare


def test_training_twice_gives_identical_merges_and_vocab(shakespeare):
    text = shakespeare[:150_000]
    a, b = BPETokenizer.train(text, 512), BPETokenizer.train(text, 512)
    assert a.merges() == b.merges() and len(a.merges()) == 512 - 256
    assert a.to_json() == b.to_json() and a.fingerprint == b.fingerprint


# ---------------------------------------------------------------- round trips (property)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_round_trip_on_any_unicode_text(full_tok, small_tok, text):
    for tok in (full_tok, small_tok):
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert b"".join(tok.token_bytes(i) for i in ids) == text.encode("utf-8")


# ---------------------------------------------------------------- hand-worked case


def test_hand_worked_merges():
    # "ab ab ab" pre-tokenizes (GPT-2 regex, no prefix space) into "ab", " ab", " ab",
    # i.e. the byte symbols [a b], [Ġ a b], [Ġ a b] (Ġ stands for the space byte).
    # Pair counts: (a, b) = 3, (Ġ, a) = 2  ->  merge 1: a + b = "ab".
    # Now [ab], [Ġ ab], [Ġ ab]: (Ġ, ab) = 2  ->  merge 2: Ġ + ab = " ab".
    tok = BPETokenizer.train("ab ab ab", vocab_size=258)
    assert tok.merges() == [("a", "b"), ("Ġ", "ab")]
    ids = tok.encode("ab ab b")
    assert tok.token_strings(ids) == ["ab", " ab", " ", "b"]
    assert ids[:2] == [256, 257]  # the two merges follow the 256 bytes


def test_byte_table_is_gpt2s_and_matches_the_library():
    from tokenizers.pre_tokenizers import ByteLevel

    from attnlab.data.tokenizer import BYTE_OF_CHAR

    assert set(BYTE_OF_CHAR) == set(ByteLevel.alphabet())
    assert sorted(BYTE_OF_CHAR.values()) == list(range(256))  # a bijection onto the bytes
    assert BYTE_OF_CHAR["Ġ"] == ord(" ") and BYTE_OF_CHAR["Ċ"] == ord("\n")
    assert BYTE_OF_CHAR["A"] == ord("A")


def test_token_strings_escape_partial_characters(small_tok):
    ids = small_tok.encode("€")  # three bytes, none merged in SMALL
    assert small_tok.token_strings(ids) == ["\\xe2", "\\x82", "\\xac"]


# ---------------------------------------------------------------- cache and files


def test_get_tokenizer_is_cached_by_content(tmp_path, monkeypatch):
    first = get_tokenizer(SMALL, 300, cache_dir=tmp_path)
    files = list((tmp_path / "tokenizers").glob("*.json"))
    assert len(files) == 1 and tokenizer_key(SMALL, 300)[:16] in files[0].name

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of reading the cache")

    monkeypatch.setattr(BPETokenizer, "train", no_training)
    again = get_tokenizer(SMALL, 300, cache_dir=tmp_path)
    assert again.fingerprint == first.fingerprint
    assert tokenizer_key(SMALL, 300) != tokenizer_key(SMALL, 301)
    assert tokenizer_key(SMALL, 300) != tokenizer_key(SMALL + " ", 300)


def test_get_tokenizer_defaults_to_the_attnlab_cache(tmp_path):
    get_tokenizer(SMALL, 280)
    assert len(list((tmp_path / "cache" / "tokenizers").glob("bpe-280-*.json"))) == 1


def test_save_and_load_give_the_same_tokenizer(small_tok, tmp_path):
    small_tok.save(tmp_path / "sub" / "tok.json")
    loaded = BPETokenizer.load(tmp_path / "sub" / "tok.json")
    assert loaded.fingerprint == small_tok.fingerprint
    assert loaded.encode(SMALL) == small_tok.encode(SMALL)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: BPETokenizer.train("abc", vocab_size=100), "vocab_size must be >= 256"),
        (lambda: BPETokenizer.train("", vocab_size=300), "non-empty"),
        (lambda: get_tokenizer("", 300), "non-empty"),
        (lambda: BPETokenizer.load("/nonexistent/tok.json"), "does not exist"),
    ],
)
def test_bad_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_decode_and_encode_reject_bad_input(small_tok, tmp_path):
    with pytest.raises(ValueError, match="outside"):
        small_tok.decode([0, small_tok.vocab_size])
    with pytest.raises(ValueError, match="outside"):
        small_tok.decode([-1])
    with pytest.raises(ValueError, match="expects a str"):
        small_tok.encode(b"bytes")
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a tokenizer file"):
        BPETokenizer.load(tmp_path / "junk.json")


# ---------------------------------------------------------------- load_token_data


def test_load_token_data_splits_and_caches(token_data, module_cache, monkeypatch):
    n = len(token_data.train) + len(token_data.held)
    assert len(token_data.train) == int(0.9 * n)
    assert token_data.corpus_sha256 == corpus.EXPECTED_SHA256
    assert len(list((module_cache / "tokens").glob("*.npy"))) == 1
    assert len(list((module_cache / "tokenizers").glob("bpe-1024-*.json"))) == 1

    def no_work(*args, **kwargs):
        raise AssertionError("trained or encoded again instead of reading the cache")

    monkeypatch.setattr(BPETokenizer, "encode", no_work)
    monkeypatch.setattr(BPETokenizer, "train", no_work)
    monkeypatch.setenv("ATTNLAB_DATA", str(REAL_DATA))
    again = dataset.load_token_data(vocab_size=1024, cache=module_cache)
    assert np.array_equal(again.train, token_data.train)
    assert np.array_equal(again.held, token_data.held)
    assert again.tokenizer.fingerprint == token_data.tokenizer.fingerprint


def test_load_token_data_accepts_any_utf8_file(tmp_path):
    own = tmp_path / "own.txt"
    own.write_text(SMALL * 50)
    data = load_token_data(own, vocab_size=300, cache=tmp_path / "c")
    tokens = np.concatenate([data.train, data.held])
    assert data.tokenizer.decode(tokens) == SMALL * 50


def test_tokenizer_file_errors_are_data_and_write_errors(small_tok, tmp_path):
    from attnlab.errors import DataError, WriteError

    for content in (b"", b"[]", bytes(range(256)), b'{"model": {"type": "WordLevel", '
                    b'"vocab": {"a": 0}, "unk_token": "a"}}'):
        (tmp_path / "t.json").write_bytes(content)
        with pytest.raises(DataError, match=r"t\.json is not a"):
            BPETokenizer.load(tmp_path / "t.json")

    class FullDisk:  # what tokenizers raises for an I/O error: a bare Exception
        def save(self, path: str) -> None:
            raise Exception("No space left on device (os error 28)")

    broken = BPETokenizer(small_tok._tok)
    broken._tok = FullDisk()
    with pytest.raises(WriteError, match=r"could not write .*out\.json: No space left"):
        broken.save(tmp_path / "out.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]  # no temporary left
