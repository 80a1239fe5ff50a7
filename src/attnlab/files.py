"""Writing files atomically: a temporary file beside the target, fsync, rename.

A reader (or a later run) sees either the old file or the whole new one,
never a half-written one, whatever happens in between: a crash, a kill, a
full disk. A failed write removes its temporary file, leaves the previous
file as it was and raises ``WriteError`` naming the file and the reason.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "x.json"
>>> _ = write_json(p, {"a": 1})
>>> p.read_text()
'{\\n  "a": 1\\n}\\n'
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attnlab.errors import WriteError, os_reason


@contextlib.contextmanager
def atomic_path(path: str | Path, *, fsync: bool = True) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s new content to; on success rename it in.

    For writers that need a file name (``safetensors.save_file``,
    ``Figure.savefig``, a tokenizer's ``save``). The temporary file lies in the
    same folder, so the rename is atomic; its permissions follow the umask.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The target's extension stays last: some writers pick the format by it (savefig).
        fd, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}",
                                    dir=path.parent)
        os.close(fd)
    except OSError as err:
        raise WriteError("could not write %s: %s", path, os_reason(err)) from err
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes it private; the target need not be
        yield tmp
        if fsync:
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
        if fsync:
            fsync_dir(path.parent)
    except OSError as err:
        raise WriteError("could not write %s: %s", path, os_reason(err)) from err
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes(path: str | Path, data: bytes, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_path(path, fsync=fsync) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
    return Path(path)


def write_text(path: str | Path, text: str, *, fsync: bool = True) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"), fsync=fsync)


def write_json(path: str | Path, obj: Any, *, fsync: bool = True, sort_keys: bool = True) -> Path:
    """Write ``obj`` as indented JSON (and a final newline) to ``path`` atomically."""
    text = json.dumps(obj, indent=2, sort_keys=sort_keys) + "\n"
    return write_text(path, text, fsync=fsync)


def fsync_dir(path: str | Path) -> None:
    """fsync a folder, so that a rename inside it survives a power cut (best effort)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # some platforms cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process umask (read without changing it for longer than one call)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Staged:
    """Files of one folder written under temporary names, renamed in together (``staged``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pending: dict[Path, Path] = {}  # target -> its temporary file, in write order

    def path(self, name: str | Path) -> Path:
        """A temporary path to write the new content of ``folder/name`` to (by any writer)."""
        target = self.folder / name
        if target.parent != self.folder:
            raise ValueError(f"{target} is not a file of {self.folder}")
        if target in self.pending:
            return self.pending[target]
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}",
                                       dir=self.folder)  # fmt: skip
            os.close(fd)
            os.chmod(tmp, 0o666 & ~current_umask())
        except OSError as err:
            raise WriteError("could not write %s: %s", target, os_reason(err)) from err
        self.pending[target] = Path(tmp)
        return Path(tmp)

    def write_bytes(self, name: str | Path, data: bytes) -> Path:
        """Stage ``data`` as the new content of ``folder/name``; returns the final path."""
        tmp = self.path(name)
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
        except OSError as err:
            raise WriteError("could not write %s: %s", self.folder / name,
                             os_reason(err)) from err
        return self.folder / name

    def write_text(self, name: str | Path, text: str) -> Path:
        """Stage ``text`` (UTF-8) as the new content of ``folder/name``."""
        return self.write_bytes(name, text.encode("utf-8"))


@contextlib.contextmanager
def staged(folder: str | Path, *, fsync: bool = True) -> Iterator[Staged]:
    """Write several files of ``folder`` as one: all reach their names, or none does.

    Inside the block each file is written to a temporary name beside its target
    (``stage.write_text(name, text)``, or ``stage.path(name)`` for writers that
    need a file name). Only when the block ends without an error, and every file
    is written and fsynced, are they renamed into place; an error in the block
    (a full disk halfway through) removes every temporary file and leaves the
    folder's previous files as they were, so a reader never finds a new
    ``report.md`` beside an old ``results.json``.

    Left out: the renames themselves are one per file, not one for all; they
    need no space and do not fail on a full disk, but a crash between two of
    them leaves some files new and some old (each whole).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with staged(d) as stage:
    ...     _ = stage.write_text("a.txt", "A")
    ...     _ = stage.write_text("b.txt", "B")
    ...     sorted(p.name for p in d.iterdir() if not p.name.startswith("."))
    []
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError("could not write into %s: %s", folder, os_reason(err)) from err
    stage = Staged(folder)
    current = folder
    try:
        yield stage
        if fsync:
            for target, tmp in stage.pending.items():
                current = target
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
        for target, tmp in stage.pending.items():
            current = target
            os.replace(tmp, target)
        if fsync:
            fsync_dir(folder)
    except OSError as err:
        if isinstance(err, WriteError):
            raise
        raise WriteError("could not write %s: %s", current, os_reason(err)) from err
    finally:
        for tmp in stage.pending.values():
            tmp.unlink(missing_ok=True)
