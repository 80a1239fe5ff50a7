"""The corpus: Tiny Shakespeare, found, checked, or fetched once.

Tiny Shakespeare (Karpathy 2015, the char-rnn corpus) is 1,115,394 characters
of plays. ``resolve_corpus`` looks for it in this order (docs/data.md):

1. an explicit path: the user's own text, used as is (any non-empty UTF-8
   file; a directory means ``<dir>/tinyshakespeare.txt``, checked like 2.);
2. ``$ATTNLAB_DATA/tinyshakespeare.txt``, which must match the sha256
   (``ATTNLAB_DATA`` names the folder: set to the file itself, it is an error
   that says so, not a silent download);
3. ``<cache>/tinyshakespeare.txt`` (see ``attnlab.data.cache``), likewise;
4. a download into the cache, verified before it is put in place.

A Tiny Shakespeare file with the wrong sha256 is never used: it raises
``CorpusError`` naming the file and both hashes (a downloaded bad file is
deleted; a file the user put somewhere is left for them to inspect).

Left out: retries, proxies and resuming partial downloads; the file is 1 MB.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from attnlab.data.cache import cache_dir
from attnlab.errors import DataError, WriteError, os_reason

log = logging.getLogger(__name__)

CORPUS_NAME = "tinyshakespeare.txt"
EXPECTED_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
EXPECTED_CHARS = 1_115_394
CORPUS_URL = (
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)
DOWNLOAD_TIMEOUT_S = 20.0


class CorpusError(DataError):
    """The corpus cannot be found, fetched, read or trusted (one line, exit 2)."""


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, dest: Path) -> None:
    """Fetch ``url`` into ``dest`` (tests replace this function; it is the only network call)."""
    with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, open(dest, "wb") as f:
        shutil.copyfileobj(response, f)


def _checked(path: Path) -> Path:
    """``path`` if its sha256 is Tiny Shakespeare's, else ``CorpusError``."""
    try:
        actual = sha256_of(path)
    except OSError as err:
        raise CorpusError("cannot read corpus file %s: %s", path, os_reason(err)) from err
    if actual != EXPECTED_SHA256:
        raise CorpusError("%s has sha256 %s, expected %s: refusing to use it (delete or "
                          "replace it)", path, actual, EXPECTED_SHA256)
    return path


def _user_text(path: Path) -> Path:
    """An explicit file: must exist, be non-empty and decode as UTF-8."""
    if not path.is_file():
        raise CorpusError("corpus file %s does not exist or is not a file", path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise CorpusError("cannot read corpus file %s: %s", path, err) from err
    except UnicodeDecodeError as err:
        raise CorpusError("corpus file %s is not UTF-8 text: %s at byte %d", path, err.reason,
                          err.start) from err
    if not text:
        raise CorpusError("corpus file %s is empty", path)
    if path.name == CORPUS_NAME and sha256_of(path) != EXPECTED_SHA256:
        log.warning("%s is not the reference Tiny Shakespeare (sha256 differs); using it", path)
    return path


def _fetch_into_cache(dest: Path) -> Path:
    """Download to a temporary file beside ``dest``, verify, then rename into place."""
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{CORPUS_NAME}.", suffix=".part",
                                        dir=dest.parent)
    except OSError as err:
        raise WriteError("could not write %s: %s", dest, os_reason(err)) from err
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            _download(CORPUS_URL, tmp)
        except Exception as err:  # urllib raises URLError, TimeoutError, OSError, HTTPError...
            reason = str(err).replace("\n", " ") or type(err).__name__
            raise CorpusError("%s (sha256 %s) not found and the download failed (%s); put it "
                              "in $ATTNLAB_DATA/ or at %s", CORPUS_NAME, EXPECTED_SHA256, reason,
                              dest) from err
        actual = sha256_of(tmp)
        if actual != EXPECTED_SHA256:
            raise CorpusError("downloaded %s from %s has sha256 %s, expected %s: deleted it",
                              CORPUS_NAME, CORPUS_URL, actual, EXPECTED_SHA256)
        try:
            os.replace(tmp, dest)
        except OSError as err:
            raise WriteError("could not write %s: %s", dest, os_reason(err)) from err
        log.info("downloaded %s into %s", CORPUS_NAME, dest)
        return dest
    finally:
        tmp.unlink(missing_ok=True)


def resolve_corpus(path: str | Path | None = None, *, download: bool = True) -> Path:
    """The path of the corpus to use, following the search order of the module docstring.

    ``download=False`` stops before step 4 and raises ``CorpusError`` instead.
    """
    if path is not None:
        explicit = Path(path).expanduser()
        if explicit.is_dir():
            candidate = explicit / CORPUS_NAME
            if not candidate.is_file():
                raise CorpusError("directory %s has no %s", explicit, CORPUS_NAME)
            return _checked(candidate)
        return _user_text(explicit)

    data_dir = os.environ.get("ATTNLAB_DATA")
    if data_dir:
        folder = Path(data_dir).expanduser()
        if folder.is_file():
            raise CorpusError("ATTNLAB_DATA=%s is a file; it must name the folder that holds %s "
                              "(set ATTNLAB_DATA=%s)", data_dir, CORPUS_NAME, folder.parent)
        candidate = folder / CORPUS_NAME
        if candidate.is_file():
            return _checked(candidate)
        log.warning("ATTNLAB_DATA is set but %s does not exist; looking in the cache", candidate)

    cached = cache_dir() / CORPUS_NAME
    if cached.is_file():
        return _checked(cached)
    if not download:
        raise CorpusError("%s (sha256 %s) not found and download is off; put it in "
                          "$ATTNLAB_DATA/ or at %s", CORPUS_NAME, EXPECTED_SHA256, cached)
    return _fetch_into_cache(cached)


def read_corpus(path: str | Path | None = None, *, download: bool = True) -> str:
    """The corpus text, exactly as stored (UTF-8, newlines untranslated)."""
    resolved = resolve_corpus(path, download=download)
    try:
        return resolved.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise CorpusError("corpus file %s is not UTF-8 text: %s", resolved, err.reason) from err
    except OSError as err:
        raise CorpusError("cannot read corpus file %s: %s", resolved, os_reason(err)) from err
