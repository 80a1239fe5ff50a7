"""Shared test set-up: every test session gets its own attnlab cache, so tests
never write tokenizers or token arrays into the user's home, and the corpus
tokenizer is trained at most once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

# Tests use tiny models, for which one thread is much faster than two fighting
# over a busy 2-core machine.
torch.set_num_threads(1)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # noqa: ANN202
    """Each module starts on one thread and leaves the count as it found it, even when
    the code it tests sets the process's thread count (the trainer, the probes)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def trained_hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run hash of every call of the trainer during the test, in order."""
    import attnlab.train.trainer as trainer
    from attnlab.train.run_config import run_hash

    calls: list[str] = []
    real = trainer.train

    def counted(cfg, run_dir, **kw):  # noqa: ANN001, ANN003, ANN202
        calls.append(run_hash(cfg))
        return real(cfg, run_dir, **kw)

    monkeypatch.setattr(trainer, "train", counted)
    return calls


@pytest.fixture(autouse=True, scope="session")
def _attnlab_cache(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN202
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTNLAB_CACHE", str(tmp_path_factory.mktemp("attnlab-cache")))
    yield
    mp.undo()


@pytest.fixture
def shakespeare_head(tmp_path: Path) -> Path:
    """The first 150k characters of Tiny Shakespeare: a held-out split small enough for
    micro runs in seconds (skips when the corpus is not found through ATTNLAB_DATA)."""
    data = os.environ.get("ATTNLAB_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
    corpus = Path(data) / "tinyshakespeare.txt"
    if not corpus.is_file():
        pytest.skip("corpus not found (set ATTNLAB_DATA)")
    small = tmp_path / "shakespeare-head.txt"
    small.write_text(corpus.read_text(encoding="utf-8")[:150_000], encoding="utf-8")
    return small


@pytest.fixture
def no_chosen_language(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that states no language: no ATTNLAB_LANG, LC_ALL or LC_MESSAGES; LANG is
    C.UTF-8 (the lab tests use it: ``pytestmark = pytest.mark.usefixtures(...)``)."""
    for var in ("ATTNLAB_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal gives it, wherever the suite was started: a suite started in the
    background of a script (``cmd &``, ``nohup``) begins with SIGINT ignored, which every
    subprocess would inherit, and the tests of what Ctrl-C does would test nothing."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _signals_left_as_found():  # noqa: ANN202
    """Every test leaves the process's SIGINT and SIGTERM handlers and its signal mask as
    it found them: attnlab called in-process must not leave Ctrl-C blocked or ignored,
    which every process started afterwards (a worker, a subprocess) would inherit."""
    import signal

    def state() -> tuple:  # a SIGTERM handler of Ray's own (ray.init) is Ray's to keep
        return (signal.pthread_sigmask(signal.SIG_BLOCK, []), signal.getsignal(signal.SIGINT),
                signal.getsignal(signal.SIGTERM) == signal.SIG_IGN)

    before = state()
    yield
    after = state()
    if after != before:
        signal.pthread_sigmask(signal.SIG_SETMASK, before[0])
        signal.signal(signal.SIGINT, before[1])
        pytest.fail(f"signal state changed by this test: {before} -> {after}")
