"""Checking where a command will write, before it does any work.

A command that trains for minutes and then finds its ``--out`` is a file, or
on a read-only disk, has wasted the minutes and, worse, used to end in an
internal error. Each writing command calls ``check_folder`` (``--out``,
``--run-dir``, ``--work``) or ``check_file`` (a page's ``--out``) first: a
path that cannot be written is one ``UsageError``/``WriteError`` line, exit 2,
and nothing has been created.

Writability is tried, not inferred from permission bits: the tests (and many
containers) run as root, for whom the bits say yes while a read-only mount
or an immutable folder says no. So the check creates and removes one empty
temporary file in the folder (or, for a folder yet to be made, in its
nearest existing parent). Left out: a disk that fills up later; the writes
themselves are atomic (``attnlab.files``) and say so in one line.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from attnlab.bounds import check_text
from attnlab.errors import UsageError, WriteError

__all__ = ["check_file", "check_folder", "check_suite_outputs"]


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest parent that exists (``.`` at worst)."""
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def _try_write(folder: Path, flag: str, shown: Path) -> None:
    """Create and remove one temporary file in ``folder``; a failure is one WriteError line."""
    try:
        fd, name = tempfile.mkstemp(prefix=".attnlab-write-check.", dir=folder)
    except OSError as err:
        reason = err.strerror or str(err)
        raise WriteError(f"{flag} {shown} cannot be written ({reason} in {folder}): choose "
                         "another folder, or make this one writable") from err  # fmt: skip
    os.close(fd)
    Path(name).unlink(missing_ok=True)


def check_folder(flag: str, path: str | Path) -> Path:
    """``path`` as a folder a command will create or write into; else one line, exit 2.

    Refused: a name that is not UTF-8 text (the run's files could not name it), an
    existing file (or a file above it, where the folder would be made), and a folder
    (or, for one yet to be made, its nearest parent) in which no file can be created.
    """
    path = Path(check_text(str(path), flag, "folder name"))
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path} is a file, not a folder: name a folder (or move the "
                         "file away)")  # fmt: skip
    base = _nearest_existing(path)
    if not base.is_dir():
        raise UsageError(f"{flag} {path} cannot be made: {base} is a file, not a folder")
    _try_write(base, flag, path)
    return path


def check_file(flag: str, path: str | Path) -> Path:
    """``path`` as a file a command will write (atomically, beside it); else one line, exit 2."""
    path = Path(check_text(str(path), flag, "file name"))
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a folder: name the file to write, e.g. "
                         f"{path / 'explorer.html'}")  # fmt: skip
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise UsageError(f"{flag} {path} cannot be made: {base} is a file, not a folder")
    _try_write(base, flag, path)
    return path


def check_suite_outputs(args: argparse.Namespace) -> None:
    """``run``/``reproduce``/``report``: ``--out`` (default ``reports/<profile>``) and, where
    runs are trained, ``--work``, before any experiment is planned or analysed."""
    if not getattr(args, "estimate", False):
        check_folder("--out", args.out or Path("reports") / (args.profile or "quick"))
    if not getattr(args, "report_only", False):
        check_folder("--work", args.work)
