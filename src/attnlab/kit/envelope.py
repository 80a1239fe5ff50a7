"""An experiment's finished result on disk: the envelope, its table and its figure.

``<out>/<name>/`` holds ``ENVELOPE`` (the record, the settings, the wall time,
the code revision), ``table.md`` and ``figure.png``. The envelope's file is
named ``result.json``, like a training run's own record (``attnlab.train.rundir.RESULT``)
in ``<work>/<key>/``: the two live in different folders and the name is kept so
that report folders written before stay readable; in code they are
``ENVELOPE`` and ``RESULT``.

A finished envelope with the same profile and settings (the seed count
included) is reused as is (``finished_envelope``). An envelope made by the
extra-seed round (``attnlab.kit.extra_seeds``) names the settings it grew from under
``planned``: it is reused for those, with the same number of extra seeds. An
experiment that did not finish is an envelope with ``status`` (``failed``,
``skipped``) and ``reason`` only (``not_run``); the report reads all of them as
JSON objects, so ``Envelope.to_json`` keeps the keys and their order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.errors import Said, os_reason
from attnlab.files import staged, write_json
from attnlab.kit.tables import settings_dict

ENVELOPE = "result.json"  # an experiment's envelope, in <out>/<name>/
FIGURE_DPI = 110


def identity(profile: str, settings: Any) -> dict[str, Any]:
    """What makes a finished envelope reusable: the profile and every setting."""
    return {"profile": profile, "seeds": getattr(settings, "seeds", None),
            "settings": settings_dict(settings)}


@dataclass(frozen=True)
class Envelope:
    """An experiment's finished result (its ``to_json`` is what ``ENVELOPE`` holds)."""

    name: str
    title: str
    profile: str
    settings: Any  # the settings dataclass it ran with
    quick_changes: str
    record: dict[str, Any]  # what ``analyse`` returned
    wall_s: float  # analysis; training is in the runs' records
    train_s: float  # the runs' own training time, summed
    runs: int  # planned runs
    code_revision: str | None
    finished_at: str
    planned: dict[str, Any] | None = None  # extra round: the identity it grew from
    extra_round: dict[str, Any] | None = None  # extra round: what ran and why

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "title": self.title, **identity(self.profile, self.settings),
               "quick_changes": self.quick_changes, "record": self.record,
               "wall_s": self.wall_s, "train_s": self.train_s, "runs": self.runs,
               "code_revision": self.code_revision, "finished_at": self.finished_at}
        if self.planned is not None:
            out["planned"] = self.planned
        if self.extra_round is not None:
            out["extra_round"] = self.extra_round
        return out


def status_of(envelope: dict[str, Any]) -> str:
    """An envelope's status: ``ok`` (a finished record), ``failed`` or ``skipped``; read
    here, and only here."""
    return envelope.get("status", "ok")


def not_run(name: str, title: str, status: str, reason: str,
            wall_s: float | None = None) -> dict[str, Any]:
    """The envelope of an experiment that did not finish (``status``: failed or skipped); a
    ``reason`` made in parts (``attnlab.errors.Said``) keeps them, to be said in a language."""
    out: dict[str, Any] = {"name": name, "title": title, "status": status, "reason": str(reason)}
    parts = getattr(reason, "parts", None)
    if parts is not None:
        out["reason_parts"] = parts()
    if wall_s is not None:
        out["wall_s"] = wall_s
    return out


def finished_envelope(out: Path, name: str, ident: dict[str, Any],
                      extra_seeds: int | None = None) -> dict | None:
    """The envelope in ``out/name`` if it was made with ``ident``, else None.

    An envelope that had the extra-seed round is made with ``ident`` when its ``planned``
    identity is ``ident`` and its round added ``extra_seeds`` seeds (None: any number);
    it then holds more seeds than ``ident`` says, and is never grown again.
    """
    path = Path(out) / name / ENVELOPE
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or damaged: the experiment is analysed again
        return None
    if not isinstance(cached, dict):
        return None
    grown = cached.get("extra_round") or {}
    if grown.get("ran"):
        same = cached.get("planned") == ident and \
            extra_seeds in (None, grown.get("extra_seeds"))
    else:
        same = all(cached.get(k) == v for k, v in ident.items())
    return cached if same else None


def damage(path: Path) -> Said | None:
    """Why the envelope file ``path`` cannot be read as one (a truncated file: ``not valid
    JSON (...)``), or None when it reads or there is none. ``finished_envelope`` analyses
    such an experiment again; a report, which runs nothing, names it instead. The reason is
    kept in parts (``attnlab.errors.Said``), to be said in the command's language."""
    try:
        cached = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as err:
        return Said("not UTF-8 text (byte %s)", err.start)
    except ValueError as err:
        return Said("not valid JSON (%s)", err)
    except OSError as err:
        return Said("cannot be read (%s)", os_reason(err))
    return None if isinstance(cached, dict) else \
        Said("expected a JSON object, got %s", type(cached).__name__)


def write_envelope(out: Path, envelope: Envelope, table: str, figure: Any) -> dict[str, Any]:
    """Write ``table.md``, ``figure.png`` and the envelope together (``files.staged``: a
    full disk halfway leaves the previous three as they were, never a new table beside an
    old record); the envelope is renamed in last, as it marks the experiment finished.
    Returns its JSON form."""
    stored = envelope.to_json()
    with staged(Path(out) / envelope.name) as stage:
        stage.write_text("table.md", table)
        figure.savefig(stage.path("figure.png"), dpi=FIGURE_DPI, format="png")
        stage.write_text(ENVELOPE, json.dumps(stored, indent=2) + "\n")
    return stored


def store_note(out: Path, envelope: dict[str, Any]) -> None:
    """Rewrite a finished envelope's file after its ``extra_round`` note changed."""
    path = Path(out) / envelope["name"] / ENVELOPE
    if path.is_file():
        write_json(path, {k: v for k, v in envelope.items() if k != "reused"}, sort_keys=False)
