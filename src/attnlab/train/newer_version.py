"""A run folder written by a newer attnlab: named as such, never called damaged.

A later attnlab may write a checkpoint of a higher ``format``, or a config with
a field this one does not know. Such a folder is not damaged, and deleting it
would throw a good run away: the answer names the version that wrote it (the
newest one ``meta.json`` records) and this one, and says to read it with the
newer one.

    attnlab: error: runs/x/checkpoint/state.json has format 2 (this attnlab reads
    format 1): it was written by attnlab 0.2.0; this is 0.1.0. Read the run with
    attnlab 0.2.0 or later (pip install --upgrade attnlab); the run is not damaged

When ``meta.json`` records only this version or older ones, the file may still be
a newer attnlab's (that one wrote it into a run an older one started, or
``meta.json`` was copied from elsewhere), or it was edited: the answer says both,
names the version ``meta.json`` records, and never advises deleting the run.

    attnlab: error: runs/x/checkpoint/state.json has format 2 (this attnlab reads
    format 1): a newer attnlab wrote it, or it was edited (runs/x/meta.json records
    attnlab 0.1.0; this is 0.1.0). Read the run with the attnlab that wrote it, or
    put back a copy of the file; the run may not be damaged
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from attnlab import __version__
from attnlab.errors import DataError, Said
from attnlab.train.run_config import unknown_fields

META = "meta.json"  # as attnlab.train.rundir.META (which imports this module)


class NewerRun(DataError):
    """A run file of a format or with a field that only a newer attnlab writes."""


def version_key(version: str) -> tuple[int, ...] | None:
    """The numeric release of ``version``, for ordering; None if it has none.

    >>> version_key("0.10.2"), version_key("1.0rc1"), version_key("dev")
    ((0, 10, 2), (1, 0), None)
    """
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in match.group().split(".")) if match else None


def written_by(run_dir: Path) -> str | None:
    """The newest attnlab version ``run_dir/meta.json`` records (its first session's
    versions and every session's code revision), or None when it records none."""
    try:
        meta = json.loads((Path(run_dir) / META).read_bytes().decode("utf-8"))
    except (OSError, ValueError):  # missing or damaged: the version is not recorded
        return None
    if not isinstance(meta, dict):
        return None
    found = [meta.get("versions", {}).get("attnlab")] if isinstance(meta.get("versions"),
                                                                    dict) else []
    sessions = meta.get("sessions")
    for session in sessions if isinstance(sessions, list) else []:
        revision = session.get("code_revision") if isinstance(session, dict) else None
        if isinstance(revision, dict):
            found.append(revision.get("version"))
    known = [v for v in found if isinstance(v, str) and version_key(v) is not None]
    return max(known, key=version_key, default=None)


def newer_run(run_dir: Path, what: str) -> NewerRun:
    """The error for a file of ``run_dir`` that holds ``what`` (``"path has format 2 (this
    attnlab reads format 1)"``): written by a newer attnlab, the one ``meta.json`` names,
    or an unrecorded one; or, when ``meta.json`` records only this version or older ones,
    by a newer attnlab or by hand. Never advice to delete the run. ``what`` is said in the
    user's language too when it is a ``Said`` with its ``error`` entry."""
    writer = written_by(run_dir)
    meta = Path(run_dir) / META
    if writer is None:
        return NewerRun("%s: it was written by a newer attnlab (%s does not record which); "
                        "this is %s. Read the run with a newer attnlab (pip install --upgrade "
                        "attnlab); the run is not damaged", what, meta, __version__)
    if version_key(writer) <= version_key(__version__):
        return NewerRun("%s: a newer attnlab wrote it, or it was edited (%s records attnlab "
                        "%s; this is %s). Read the run with the attnlab that wrote it, or put "
                        "back a copy of the file; the run may not be damaged", what, meta,
                        writer, __version__)
    return NewerRun("%s: it was written by attnlab %s; this is %s. Read the run with attnlab "
                    "%s or later (pip install --upgrade attnlab); the run is not damaged", what,
                    writer, __version__, writer)


def refuse_newer_config(run_dir: Path, path: Path, stored: Any) -> None:
    """Raise a ``NewerRun`` if the config stored in ``path`` has a field this attnlab does
    not know (a newer one's field, or an edit: never called damage)."""
    unknown = unknown_fields(stored)
    if unknown:
        raise newer_run(run_dir, Said("%s has the config field %s, which this attnlab does "
                                      "not know", path, unknown[0]))
