"""Corpus search order, checksums, the (faked) download, and the cache directory.

No test touches the network: ``corpus._download`` is replaced in every test, by
default with one that fails the test if it is called. The search-order tests
use small fake files and patch ``EXPECTED_SHA256`` to their hash.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
from pathlib import Path

import pytest

from attnlab.data import cache, corpus
from attnlab.data.corpus import CorpusError, read_corpus, resolve_corpus

FAKE = "First Citizen:\nBefore we proceed any further, hear me speak.\n"
FAKE_SHA = hashlib.sha256(FAKE.encode()).hexdigest()
# Where the real corpus is: $ATTNLAB_DATA as the run was started, else ../shared/data.
REAL_DATA = Path(
    os.environ.get("ATTNLAB_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A fresh cache per test, no $ATTNLAB_DATA, and no network."""
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTNLAB_DATA", raising=False)

    def no_network(url, dest):
        pytest.fail(f"unexpected download of {url}")

    monkeypatch.setattr(corpus, "_download", no_network)


@pytest.fixture
def fake_expected(monkeypatch):
    """Make the small FAKE text the 'reference' corpus."""
    monkeypatch.setattr(corpus, "EXPECTED_SHA256", FAKE_SHA)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ---------------------------------------------------------------- cache_dir


def test_cache_dir_prefers_attnlab_cache_and_creates_it(tmp_path, monkeypatch):
    target = tmp_path / "a" / "b"
    monkeypatch.setenv("ATTNLAB_CACHE", str(target))
    assert cache.cache_dir() == target and target.is_dir()


def test_cache_dir_falls_back_to_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE", "")  # empty counts as unset
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "attnlab"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "attnlab"
    assert (tmp_path / "home" / ".cache" / "attnlab").is_dir()


# ---------------------------------------------------------------- search order


def test_explicit_file_is_used_as_is_without_checksum(tmp_path, monkeypatch):
    own = write(tmp_path / "mine.txt", "any text at all, é ü 你好\n")
    write(tmp_path / "data" / corpus.CORPUS_NAME, FAKE)
    monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path / "data"))
    assert resolve_corpus(own) == own
    assert read_corpus(str(own)) == "any text at all, é ü 你好\n"


def test_explicit_directory_means_the_checked_corpus_inside(tmp_path, fake_expected):
    good = write(tmp_path / "d" / corpus.CORPUS_NAME, FAKE)
    assert resolve_corpus(tmp_path / "d") == good
    with pytest.raises(CorpusError, match="has no tinyshakespeare.txt"):
        resolve_corpus(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "is empty"), (b"caf\xe9 latin-1", "not UTF-8"), (None, "does not exist")],
)
def test_explicit_bad_files_raise_one_line(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    if content is not None:
        write(path, content)
    with pytest.raises(CorpusError, match=message) as info:
        resolve_corpus(path)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_attnlab_data_comes_before_the_cache(tmp_path, monkeypatch, fake_expected):
    in_data = write(tmp_path / "data" / corpus.CORPUS_NAME, FAKE)
    write(cache.cache_dir() / corpus.CORPUS_NAME, FAKE)
    monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path / "data"))
    assert resolve_corpus() == in_data


def test_attnlab_data_without_the_file_falls_through_to_the_cache(
    tmp_path, monkeypatch, fake_expected
):
    monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path / "empty"))
    cached = write(cache.cache_dir() / corpus.CORPUS_NAME, FAKE)
    assert resolve_corpus() == cached


@pytest.mark.parametrize("where", ["data", "cache"])
def test_wrong_checksum_is_a_clear_error_and_not_used(tmp_path, monkeypatch, where):
    if where == "data":
        bad = write(tmp_path / "data" / corpus.CORPUS_NAME, FAKE)
        monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path / "data"))
        write(cache.cache_dir() / corpus.CORPUS_NAME, "a good cache must not hide the bad file")
    else:
        bad = write(cache.cache_dir() / corpus.CORPUS_NAME, FAKE)
    with pytest.raises(CorpusError) as info:
        read_corpus()
    message = str(info.value)
    assert str(bad) in message and FAKE_SHA in message and corpus.EXPECTED_SHA256 in message
    assert "\n" not in message
    assert bad.read_text() == FAKE  # left for the user to inspect


# ---------------------------------------------------------------- download (faked)


def test_download_lands_in_the_cache_verified_and_only_once(monkeypatch, fake_expected):
    calls = []

    def fake_download(url, dest):
        calls.append(url)
        Path(dest).write_text(FAKE)

    monkeypatch.setattr(corpus, "_download", fake_download)
    first = resolve_corpus()
    assert first == cache.cache_dir() / corpus.CORPUS_NAME
    assert first.read_text() == FAKE and calls == [corpus.CORPUS_URL]
    assert resolve_corpus() == first and len(calls) == 1  # second time from the cache
    assert sorted(os.listdir(first.parent)) == [corpus.CORPUS_NAME]  # no temp file left


def test_bad_download_is_deleted_and_raises(monkeypatch, fake_expected):
    monkeypatch.setattr(corpus, "_download", lambda url, dest: Path(dest).write_text("<html>"))
    with pytest.raises(CorpusError, match="deleted") as info:
        resolve_corpus()
    assert FAKE_SHA in str(info.value)
    assert hashlib.sha256(b"<html>").hexdigest() in str(info.value)
    assert os.listdir(cache.cache_dir()) == []


def test_offline_and_absent_says_what_to_put_where(monkeypatch):
    def offline(url, dest):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(corpus, "_download", offline)
    with pytest.raises(CorpusError) as info:
        resolve_corpus()
    message = str(info.value)
    assert "\n" not in message
    for needle in (
        corpus.CORPUS_NAME,
        corpus.EXPECTED_SHA256,
        "ATTNLAB_DATA",
        str(cache.cache_dir()),
    ):
        assert needle in message
    assert os.listdir(cache.cache_dir()) == []


def test_download_false_never_downloads():
    with pytest.raises(CorpusError, match="download is off"):
        resolve_corpus(download=False)  # the autouse fixture fails the test on a download


# ---------------------------------------------------------------- the real corpus


def test_the_real_corpus_has_the_documented_size_and_hash(monkeypatch):
    if not (REAL_DATA / corpus.CORPUS_NAME).is_file():
        pytest.skip(f"Tiny Shakespeare not found in {REAL_DATA} (set ATTNLAB_DATA)")
    monkeypatch.setenv("ATTNLAB_DATA", str(REAL_DATA))
    path = resolve_corpus(download=False)
    text = read_corpus()
    assert len(text) == corpus.EXPECTED_CHARS
    assert corpus.sha256_of(path) == corpus.EXPECTED_SHA256
    assert text.startswith("First Citizen:\n")


def test_attnlab_data_naming_the_file_instead_of_its_folder_says_so(tmp_path, monkeypatch):
    path = write(tmp_path / "data" / corpus.CORPUS_NAME, FAKE)
    monkeypatch.setenv("ATTNLAB_DATA", str(path))
    with pytest.raises(CorpusError, match=rf"ATTNLAB_DATA={path} is a file; it must name the "
                                          rf"folder .*set ATTNLAB_DATA={tmp_path / 'data'}\)"):
        resolve_corpus()  # and no download is tried (it would fail the test)


def test_corpus_errors_are_one_line_data_errors(tmp_path):
    from attnlab.errors import DataError

    with pytest.raises(DataError) as info:
        resolve_corpus(tmp_path / "absent.txt")
    assert isinstance(info.value, CorpusError) and "\n" not in str(info.value)


def test_an_unwritable_cache_is_a_write_error(tmp_path, monkeypatch):
    from attnlab.errors import WriteError

    blocker = write(tmp_path / "file", "x")
    monkeypatch.setenv("ATTNLAB_CACHE", str(blocker / "cache"))  # a folder inside a file
    with pytest.raises(WriteError, match="cannot create the attnlab cache directory"):
        cache.cache_dir()
