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

One folder holds one profile. ``run``, ``reproduce`` and ``report`` write a profile's
results and report into ``--out``; a folder that holds another profile's finished report
(``results.json``'s ``meta.profile``) or experiment results (each ``<name>/result.json``'s
``profile``) is refused in one line (``check_one_profile``), which says what is there and
the ways out: that profile's ``--profile``, another ``--out``, or ``--replace``, which
deletes the other profile's files (``replace_other_profiles``) once every other check has
passed, just before the command writes.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import TextIO

from attnlab.bounds import check_text
from attnlab.cli.words import Words, lang_of
from attnlab.errors import UsageError, WriteError
from attnlab.i18n.logs import reason_said
from attnlab.kit.envelope import ENVELOPE

__all__ = ["add_replace", "check_file", "check_folder", "check_one_profile",
           "check_suite_outputs", "profiles_in", "replace_other_profiles"]

REPORT = "report"  # in profiles_in's lists: the folder's report (its three files)


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest parent that exists (``.`` at worst)."""
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def _try_write(folder: Path, flag: str, shown: Path, say: Words) -> None:
    """Create and remove one temporary file in ``folder``; a failure is one WriteError line."""
    try:
        fd, name = tempfile.mkstemp(prefix=".attnlab-write-check.", dir=folder)
    except OSError as err:
        reason = reason_said(err, say.lang)
        raise WriteError(say("outputs.cannot_write", flag=flag, path=shown, reason=reason,
                             folder=folder)) from err
    os.close(fd)
    Path(name).unlink(missing_ok=True)


def check_folder(flag: str, path: str | Path, say: Words | None = None) -> Path:
    """``path`` as a folder a command will create or write into; else one line, exit 2.

    Refused: a name that is not UTF-8 text (the run's files could not name it), an
    existing file (or a file above it, where the folder would be made), and a folder
    (or, for one yet to be made, its nearest parent) in which no file can be created.
    """
    say = say or Words("en")
    path = Path(check_text(str(path), flag, "folder name"))
    if path.exists() and not path.is_dir():
        raise UsageError(say("outputs.folder_is_file", flag=flag, path=path))
    base = _nearest_existing(path)
    if not base.is_dir():
        raise UsageError(say("outputs.cannot_make", flag=flag, path=path, base=base))
    _try_write(base, flag, path, say)
    return path


def check_file(flag: str, path: str | Path, say: Words | None = None) -> Path:
    """``path`` as a file a command will write (atomically, beside it); else one line, exit 2."""
    say = say or Words("en")
    path = Path(check_text(str(path), flag, "file name"))
    if path.is_dir():
        raise UsageError(say("outputs.file_is_folder", flag=flag, path=path,
                             example=path / "explorer.html"))
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise UsageError(say("outputs.cannot_make", flag=flag, path=path, base=base))
    _try_write(base, flag, path, say)
    return path


def check_suite_outputs(args: argparse.Namespace) -> None:
    """``run``/``reproduce``/``report``: ``--out`` (default ``reports/<profile>``) and, where
    runs are trained, ``--work``, before any experiment is planned or analysed."""
    say = lang_of(args)
    if not getattr(args, "estimate", False):
        out = check_folder("--out", args.out or Path("reports") / (args.profile or "quick"), say)
        check_one_profile(out, args.profile or "quick", getattr(args, "replace", False), say)
    if not getattr(args, "report_only", False):
        check_folder("--work", args.work, say)


def add_replace(p: argparse.ArgumentParser, say: Words | None = None) -> None:
    """``--replace``: of ``run``, ``reproduce`` and ``report``."""
    p.add_argument("--replace", action="store_true",
                   help=(say or Words("en"))("outputs.replace"))


def profiles_in(out: Path) -> dict[str, list[str]]:
    """The profiles whose finished report or experiment results ``out`` holds: profile ->
    what of it, ``REPORT`` first, then experiment names. A file that cannot be read as one
    of ours (damaged, or a training run's record) is no profile's."""
    found: dict[str, list[str]] = {}
    profile = _profile_of(out / "results.json", "meta")
    if profile is not None:
        found[profile] = [REPORT]
    for envelope in sorted(out.glob(f"*/{ENVELOPE}")):
        profile = _profile_of(envelope)
        if profile is not None:
            found.setdefault(profile, []).append(envelope.parent.name)
    return found


def _profile_of(path: Path, *keys: str) -> str | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        for key in keys:
            record = record[key]
        profile = record["profile"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return profile if isinstance(profile, str) else None


def held(profile: str, what: list[str], say: Words | None = None) -> str:
    """``profile micro's report and 2 results (ladder, params)`` and the like.

    >>> held("micro", ["report"]), held("full", ["cost"])
    ("profile micro's report", "profile full's result (cost)")
    """
    say = say or Words("en")
    names = [w for w in what if w != REPORT]
    parts = [say("outputs.report")] if REPORT in what else []
    if names:
        count = say("outputs.result") if len(names) == 1 else \
            say("outputs.results", count=len(names))
        parts.append(f"{count} ({', '.join(names)})")
    return say("outputs.held", profile=profile, what=say("outputs.and").join(parts))


def check_one_profile(out: Path, profile: str, replace: bool,
                      say: Words | None = None) -> None:
    """Refuse, in one line, to write ``profile``'s results or report into ``out`` when it
    holds another profile's (``replace``: they will be deleted, so nothing is refused)."""
    say = say or Words("en")
    others = {p: what for p, what in profiles_in(Path(out)).items() if p != profile}
    if not others or replace:
        return
    keep = say("outputs.keep", profile=next(iter(others))) if len(others) == 1 else ""
    raise UsageError(say("outputs.two_profiles", out=out, profile=profile, keep=keep,
                         held="; ".join(held(p, w, say) for p, w in others.items())))


def replace_other_profiles(out: Path, profile: str, stderr: TextIO,
                           say: Words | None = None) -> None:
    """``--replace``: delete the report and experiment results of every profile but
    ``profile`` from ``out`` (each experiment's ``result.json`` first, as it marks the
    experiment finished; the report's ``results.json`` last, as it names the report's
    profile), and say so in one line on ``stderr``."""
    from attnlab.report.write import REPORT_FILES

    say = say or Words("en")
    out = Path(out)
    others = {p: what for p, what in profiles_in(out).items() if p != profile}
    for what in others.values():
        for item in what:
            if item == REPORT:
                _delete(out, [out / name for name in REPORT_FILES.values()], say)
            else:
                folder = out / item
                _delete(out, [folder / name for name in (ENVELOPE, "table.md", "figure.png")],
                        say)
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
    if others:
        stderr.write(say("outputs.deleted", out=out,
                         held="; ".join(held(p, w, say) for p, w in others.items())) + "\n")
        stderr.flush()


def _delete(out: Path, paths: list[Path], say: Words) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as err:
            raise WriteError(say("outputs.cannot_delete", path=path, out=out,
                                 reason=reason_said(err, say.lang))) from err
