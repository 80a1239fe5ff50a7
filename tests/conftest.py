"""Shared test set-up: every test session gets its own attnlab cache, so tests
never write tokenizers or token arrays into the user's home, and the corpus
tokenizer is trained at most once per session."""

from __future__ import annotations

import pytest
import torch

# Tests use tiny models, for which one thread is much faster than two fighting
# over a busy 2-core machine.
torch.set_num_threads(1)


@pytest.fixture(autouse=True, scope="session")
def _attnlab_cache(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN202
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTNLAB_CACHE", str(tmp_path_factory.mktemp("attnlab-cache")))
    yield
    mp.undo()
