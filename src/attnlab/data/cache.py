"""Where attnlab keeps what it can rebuild: the downloaded corpus, trained
tokenizers and encoded token arrays.

The directory is ``$ATTNLAB_CACHE`` when that is set, else the user cache
directory (``$XDG_CACHE_HOME/attnlab``, or ``~/.cache/attnlab``). Everything in
it is keyed by a content hash, so deleting it only costs time.

Left out: locking between processes. Writers put each file in place with an
atomic rename, so two processes filling the cache at once at worst do the
work twice.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnlab.errors import WriteError, os_reason


def cache_dir() -> Path:
    """The attnlab cache directory, created on demand (an empty variable counts as unset)."""
    explicit = os.environ.get("ATTNLAB_CACHE")
    if explicit:
        path = Path(explicit).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        path = base / "attnlab"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError("cannot create the attnlab cache directory %s: %s (set ATTNLAB_CACHE "
                         "to a writable folder)", path, os_reason(err)) from err
    return path
