"""Byte-level BPE with GPT-2-style pre-tokenisation, trained by Hugging Face ``tokenizers``.

Byte-pair encoding (Sennrich et al. 2016) on bytes (Radford et al. 2019, GPT-2):
the text is first cut into pre-tokens by GPT-2's regular expression (words with
their leading space, runs of digits, of punctuation, of whitespace), each
pre-token is seen as UTF-8 bytes, and the trainer merges the most frequent
adjacent pair again and again until the vocabulary holds ``vocab_size``
entries. The 256 bytes are the initial alphabet, so every string encodes and
``decode(encode(text)) == text`` exactly.

The settings (``SETTINGS_VERSION`` names them): ``ByteLevel(add_prefix_space=
False)`` pre-tokenizer and decoder, no normaliser, no special tokens,
``min_frequency=0``, the whole text given to the trainer as one sequence. On
Tiny Shakespeare at 1,024 entries this gives 459,792 tokens (2.426 characters
a token; the textbook's 459,760 is 32 tokens away, within 0.01%).

Determinism: the trainer breaks ties between equal pair counts by the pair's
ids, and the initial alphabet is sorted, so two trainings on the same text give
the same merges (tested). The known nondeterminism of ``tokenizers`` comes from
continuing-subword prefixes (WordPiece's ``##``), which are not used here.

Left out: special tokens (no ``<|endoftext|>``; the corpus is one document) and
BPE dropout.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from attnlab.data.cache import cache_dir as default_cache_dir
from attnlab.errors import DataError, UsageError, first_line

log = logging.getLogger(__name__)

SETTINGS_VERSION = "bytelevel-bpe-v1"  # bump when a training setting below changes


def _byte_table() -> dict[str, int]:
    """GPT-2's table from the printable stand-in characters back to the bytes they encode.

    Printable Latin-1 bytes stand for themselves; the other 68 bytes (controls,
    space, ...) are shifted to 256 + n, so ``Ġ`` (U+0120) is the space byte.
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    table = {chr(b): b for b in keep}
    shifted = (b for b in range(256) if b not in table.values())
    for n, b in enumerate(shifted):
        table[chr(256 + n)] = b
    return table


BYTE_OF_CHAR = MappingProxyType(_byte_table())  # read-only: stand-in character -> byte


class BPETokenizer:
    """A trained byte-level BPE tokenizer: text ↔ ids in ``[0, vocab_size)``."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tok = tokenizer

    @classmethod
    def train(cls, text: str, vocab_size: int = 1024) -> BPETokenizer:
        """Train on ``text`` (see the module docstring for the settings)."""
        if not isinstance(text, str) or not text:
            raise UsageError("tokenizer training text must be a non-empty string")
        if vocab_size < 256:
            raise UsageError("vocab_size must be >= 256 (the byte alphabet), got %s", vocab_size)
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=0,
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=[],
        )
        tok.train_from_iterator([text], trainer=trainer)
        return cls(tok)

    @property
    def vocab_size(self) -> int:
        """Entries in the vocabulary (fewer than asked when the text runs out of pairs)."""
        return self._tok.get_vocab_size()

    @property
    def fingerprint(self) -> str:
        """sha256 of the serialised tokenizer: equal fingerprints, equal encodings."""
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()

    def to_json(self) -> str:
        """The tokenizer as Hugging Face's JSON (vocabulary, merges, settings)."""
        return self._tok.to_str()

    def merges(self) -> list[tuple[str, str]]:
        """The learned merges, in the order they were learned."""
        raw = json.loads(self.to_json())["model"]["merges"]
        return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in raw]

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        if not isinstance(text, str):
            raise UsageError("encode expects a str, got %s", type(text).__name__)
        return self._tok.encode(text).ids

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; an id outside ``[0, vocab_size)`` is an error."""
        ids = [int(i) for i in np.asarray(list(ids), dtype=np.int64).ravel()]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise UsageError("token id %s is outside [0, %s)", bad[0], self.vocab_size)
        return self._tok.decode(ids, skip_special_tokens=False)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes one token stands for."""
        piece = self._tok.id_to_token(int(token_id))
        if piece is None:
            raise UsageError("token id %s is outside [0, %s)", token_id, self.vocab_size)
        return bytes(BYTE_OF_CHAR[c] for c in piece)

    def token_strings(self, ids: Iterable[int]) -> list[str]:
        """One readable piece per id, for display.

        A piece that is a fragment of a multi-byte character shows its bytes
        escaped (``'\\xe2'``) instead of a replacement character.

        >>> tok = BPETokenizer.train("ab ab ab", vocab_size=258)
        >>> tok.token_strings(tok.encode("ab ab"))
        ['ab', ' ab']
        """
        return [self.token_bytes(i).decode("utf-8", errors="backslashreplace") for i in ids]

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as JSON (written to a temporary file, then renamed).

        A failed write (a full disk) is a ``WriteError`` naming ``path``;
        ``tokenizers`` reports I/O errors as a bare ``Exception``, so that is
        what is caught around its call, and only there, and handed on as the
        ``OSError`` it is.
        """
        from attnlab.files import atomic_path

        with atomic_path(path) as tmp:  # turns the OSError below into WriteError(path)
            try:
                self._tok.save(str(tmp))
            except Exception as err:  # noqa: BLE001 - the Rust library's I/O error
                raise OSError(str(err).splitlines()[0] if str(err) else "write failed") from err

    @classmethod
    def load(cls, path: str | Path) -> BPETokenizer:
        """Read a tokenizer written by ``save``; a ``DataError`` naming ``path`` if it is
        missing or damaged (``tokenizers`` raises a bare ``Exception`` for those)."""
        path = Path(path)
        if not path.is_file():
            raise DataError("tokenizer file %s does not exist", path)
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as err:  # noqa: BLE001 - tokenizers' error for any bad file
            raise DataError("%s is not a tokenizer file (damaged?): %s; delete it: it is made "
                            "again from the corpus (a run's, by resuming the run with `attnlab "
                            "train`)", path, first_line(err)) from err
        if not isinstance(tok.model, models.BPE) or tok.get_vocab_size() < 1:
            raise DataError("%s is not a byte-level BPE tokenizer", path)
        return cls(tok)

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size})"


def tokenizer_key(text: str, vocab_size: int) -> str:
    """Content hash naming a trained tokenizer: sha256 of (settings, vocab_size, text)."""
    digest = hashlib.sha256(f"{SETTINGS_VERSION}\0{vocab_size}\0".encode())
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


def get_tokenizer(text: str, vocab_size: int = 1024, cache_dir: Path | None = None) -> BPETokenizer:
    """The tokenizer trained on ``text``, from the cache when it was trained before.

    The file is ``<cache>/tokenizers/bpe-<vocab_size>-<key[:16]>.json`` with
    ``key = tokenizer_key(text, vocab_size)``.
    """
    if not isinstance(text, str) or not text:
        raise UsageError("tokenizer training text must be a non-empty string")
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = root / "tokenizers" / f"bpe-{vocab_size}-{tokenizer_key(text, vocab_size)[:16]}.json"
    if path.is_file():
        try:
            return BPETokenizer.load(path)
        except DataError:
            log.warning("cached tokenizer %s is unreadable; training again", path)
    log.info("training a %d-entry BPE tokenizer on %d characters", vocab_size, len(text))
    tok = BPETokenizer.train(text, vocab_size)
    tok.save(path)
    return tok
