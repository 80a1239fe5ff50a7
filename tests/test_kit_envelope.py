"""attnlab.kit.envelope: an experiment's three files are written together or not at all."""

from __future__ import annotations

import dataclasses
import json

import pytest

from attnlab.errors import WriteError
from attnlab.kit.envelope import ENVELOPE, Envelope, write_envelope


@dataclasses.dataclass(frozen=True)
class _Settings:
    steps: int = 3


def _envelope(record: dict) -> Envelope:
    return Envelope(name="toy", title="Toy", profile="micro", settings=_Settings(),
                    quick_changes="nothing", record=record, wall_s=0.0, train_s=0.0, runs=0,
                    code_revision=None, finished_at="now")


class _Figure:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def savefig(self, path, **kwargs) -> None:
        if self.fail:  # as a full disk would, halfway through the three files
            raise WriteError(f"could not write {path}: No space left on device")
        with open(path, "wb") as fh:
            fh.write(b"PNG")


def test_the_three_files_reach_their_names_and_the_envelope_reads_back(tmp_path) -> None:
    stored = write_envelope(tmp_path, _envelope({"x": 1}), "| a |\n", _Figure())
    folder = tmp_path / "toy"
    assert sorted(p.name for p in folder.iterdir()) == sorted([ENVELOPE, "figure.png", "table.md"])
    assert json.loads((folder / ENVELOPE).read_text()) == stored
    assert stored["record"] == {"x": 1} and stored["profile"] == "micro"


def test_a_failure_halfway_leaves_the_previous_files_byte_for_byte(tmp_path) -> None:
    write_envelope(tmp_path, _envelope({"x": 1}), "old table\n", _Figure())
    folder = tmp_path / "toy"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(WriteError):
        write_envelope(tmp_path, _envelope({"x": 2}), "new table\n", _Figure(fail=True))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # no temp file left
