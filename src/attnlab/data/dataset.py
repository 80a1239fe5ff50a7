"""Token arrays for language modelling: encode once, split 90/10, sample windows.

Dimension legend: ``B`` batch (windows per batch), ``T`` context length
(``n_ctx``), ``N`` tokens in a split.

Token arrays are 1-D ``np.int64`` in memory (ready for ``torch.from_numpy`` and
embedding lookups; the whole corpus is 3.7 MB) and ``uint16`` on disk in the
cache (``<cache>/tokens/<key>.npy``), keyed by the corpus sha256 and the
tokenizer's fingerprint, so a second ``load_token_data`` reads instead of
encoding. Beside each array its record (``<key>.json``: the file's sha256, the
corpus and tokenizer it came from, length, dtype) is checked on every read; a
file that fails is encoded again, never used.

The split is by position, not at random (docs/data.md): the first 90% of the tokens
train, the last 10% are held out, so no held-out window overlaps a training
one. Left out: document boundaries (the corpus is one document) and shuffling.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnlab.data.cache import cache_dir as default_cache_dir
from attnlab.data.corpus import CorpusError, resolve_corpus
from attnlab.data.tokenizer import BPETokenizer, get_tokenizer
from attnlab.errors import DataError, first_line
from attnlab.files import atomic_path, write_json

log = logging.getLogger(__name__)

TOKEN_DTYPE = np.int64  # in memory
_DISK_DTYPE = np.uint16  # in the cache, for vocabularies up to 65,536


@dataclass(frozen=True)
class TokenData:
    """A tokenized corpus, split into train and held-out tokens."""

    train: np.ndarray  # (N_train,) int64, the first 90% of the tokens
    held: np.ndarray  # (N_held,) int64, the last 10%
    tokenizer: BPETokenizer  # the tokenizer that produced them
    corpus_sha256: str  # sha256 of the corpus bytes, for run records

    @property
    def vocab_size(self) -> int:
        """The tokenizer's vocabulary size (the models' output width)."""
        return self.tokenizer.vocab_size


def split_tokens(tokens: np.ndarray, frac: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens[:n], tokens[n:])`` with ``n = floor(frac * len(tokens))``.

    >>> [a.tolist() for a in split_tokens(np.arange(10))]
    [[0, 1, 2, 3, 4, 5, 6, 7, 8], [9]]
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be 1-D, got shape {tokens.shape}")
    if not 0.0 < frac < 1.0:
        raise ValueError(f"frac must be in (0, 1), got {frac}")
    n = int(np.floor(frac * len(tokens)))
    if n == 0 or n == len(tokens):
        raise DataError("the text gives %s tokens, too few to split at frac=%s", len(tokens),
                        frac)
    return tokens[:n], tokens[n:]


def _encoded(tokenizer: BPETokenizer, text: str, path: Path, corpus_sha: str) -> np.ndarray:
    """Encode ``text``, or read the result an earlier call stored at ``path``.

    The array is trusted only when its record beside it (``<key>.json``) proves
    it: the sha256 of the file's bytes, the corpus and tokenizer it was made
    from, its length and dtype; and every id lies in the tokenizer's range. A
    file that fails any check is said to in one line (a warning) and encoded
    again, never used.
    """
    made_from = {"corpus_sha256": corpus_sha, "tokenizer": tokenizer.fingerprint}
    record = path.with_suffix(".json")
    if path.is_file():
        try:
            return _checked_tokens(path, record, made_from, tokenizer.vocab_size)
        except DataError as err:
            log.warning("%s; encoding the corpus again", first_line(err))
    tokens = np.asarray(tokenizer.encode(text), dtype=TOKEN_DTYPE)
    disk_dtype = _DISK_DTYPE if tokenizer.vocab_size <= 1 << 16 else np.int32
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, tokens.astype(disk_dtype))
    write_json(record, {**made_from, "sha256": _file_sha256(path), "n_tokens": len(tokens),
                        "dtype": np.dtype(disk_dtype).name})
    return tokens


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _checked_tokens(path: Path, record: Path, made_from: dict, vocab_size: int) -> np.ndarray:
    """The cached array at ``path`` if its record and contents prove it; else ``DataError``."""
    try:
        meta = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise DataError("cached tokens %s have no readable checksum record (%s: %s)", path,
                        record.name, first_line(err)) from err
    if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in made_from.items()):
        raise DataError("cached tokens %s were not made from this corpus and tokenizer", path)
    if meta.get("sha256") != _file_sha256(path):
        raise DataError("cached tokens %s do not match their checksum (damaged)", path)
    try:
        raw = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise DataError("cached tokens %s are unreadable: %s", path, first_line(err)) from err
    if raw.ndim != 1 or raw.dtype.name != meta.get("dtype") or len(raw) != meta.get("n_tokens"):
        raise DataError("cached tokens %s are %s of shape %s, not the recorded 1-D %s of %s "
                        "tokens", path, raw.dtype.name, raw.shape, meta.get("dtype"),
                        meta.get("n_tokens"))
    tokens = raw.astype(TOKEN_DTYPE)
    if len(tokens) and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise DataError("cached tokens %s hold ids outside [0, %s)", path, vocab_size)
    return tokens


def load_token_data(
    corpus: str | Path | None = None,
    vocab_size: int = 1024,
    cache: Path | None = None,
    frac: float = 0.9,
) -> TokenData:
    """Resolve the corpus, get its (cached) tokenizer, encode (cached), split.

    ``corpus`` follows ``resolve_corpus`` (None: Tiny Shakespeare); ``cache``
    defaults to ``attnlab.data.cache.cache_dir()``.
    """
    root = Path(cache) if cache is not None else default_cache_dir()
    path = resolve_corpus(corpus)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CorpusError("corpus file %s is not UTF-8 text: %s", path, err.reason) from err
    corpus_sha = hashlib.sha256(raw).hexdigest()
    tokenizer = get_tokenizer(text, vocab_size, cache_dir=root)
    key = hashlib.sha256(f"{corpus_sha}\0{tokenizer.fingerprint}".encode()).hexdigest()
    tokens = _encoded(tokenizer, text, root / "tokens" / f"{key[:24]}.npy", corpus_sha)
    train, held = split_tokens(tokens, frac)
    return TokenData(train=train, held=held, tokenizer=tokenizer, corpus_sha256=corpus_sha)


def sample_batch(
    tokens: np.ndarray, batch_size: int, n_ctx: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` random windows ``x`` (B, T) and their next tokens ``y`` (B, T).

    Window starts are drawn uniformly from ``[0, N - T - 1]`` with
    ``torch.randint`` on ``generator``, so the batch depends only on the
    generator's state; ``y[b, t] == x[b, t + 1]`` for ``t < T - 1``. Both are
    int64 contiguous CPU tensors; ``generator`` is a CPU generator. Windows
    may overlap (sampling with replacement).
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be 1-D, got shape {tokens.shape}")
    if batch_size < 1 or n_ctx < 1:
        raise ValueError(f"batch_size and n_ctx must be >= 1, got {batch_size} and {n_ctx}")
    if len(tokens) < n_ctx + 1:
        raise ValueError(f"{len(tokens)} tokens are too few for windows of {n_ctx} + 1")
    starts = torch.randint(0, len(tokens) - n_ctx, (batch_size,), generator=generator)
    index = starts.numpy()[:, None] + np.arange(n_ctx + 1)  # (B, T + 1)
    windows = torch.from_numpy(tokens[index].astype(np.int64))  # (B, T + 1)
    return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()
