"""Atomic writes: the whole new file or the old one, never a part; one error type."""

from __future__ import annotations

import json
import os

import pytest

from attnlab.errors import AttnlabError, WriteError
from attnlab.files import atomic_path, write_bytes, write_json, write_text


def test_write_text_and_json_round_trip(tmp_path):
    write_text(tmp_path / "a.txt", "héllo\n")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    write_json(tmp_path / "sub" / "b.json", {"b": [1, 2], "a": None})
    assert json.loads((tmp_path / "sub" / "b.json").read_text()) == {"a": None, "b": [1, 2]}
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "b.json", "sub"]


def test_failed_writer_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("the writer broke")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_unwritable_folder_is_one_write_error(tmp_path):
    if os.geteuid() == 0:  # root writes anywhere: use a path under a file instead
        blocker = tmp_path / "file"
        blocker.write_text("x")
        target = blocker / "out.json"
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        target = folder / "out.json"
    with pytest.raises(WriteError) as info:
        write_bytes(target, b"data")
    assert isinstance(info.value, AttnlabError)
    assert str(target) in str(info.value) and "\n" not in str(info.value)


def test_full_disk_is_one_write_error_and_the_old_file_survives(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    target.write_text("old")
    real_open = open

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(28, "No space left on device")

    def fake_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        return Full(fh) if "w" in mode else fh

    monkeypatch.setattr("builtins.open", fake_open)
    with pytest.raises(WriteError, match="No space left on device"):
        write_json(target, {"a": 1})
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_staged_files_reach_their_names_together_or_not_at_all(tmp_path, monkeypatch):
    """A full disk at the second of three files: none is renamed in, every temporary is gone,
    the folder's previous files are as they were (no new report.md beside an old
    results.json)."""
    from attnlab.files import staged

    for name in ("a.md", "b.html", "c.json"):
        (tmp_path / name).write_text(f"old {name}")
    real_open = open
    writes = []

    class FullAtSecond:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            writes.append(data)
            if len(writes) == 2:
                raise OSError(28, "No space left on device")
            return self.fh.write(data)

    def fake_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        return FullAtSecond(fh) if "w" in mode else fh

    monkeypatch.setattr("builtins.open", fake_open)
    with pytest.raises(WriteError, match=r"b\.html: No space left on device"):
        with staged(tmp_path) as stage:
            for name in ("a.md", "b.html", "c.json"):
                stage.write_text(name, f"new {name}")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.html", "c.json"]
    assert all((tmp_path / n).read_text() == f"old {n}" for n in ("a.md", "b.html", "c.json"))
    with staged(tmp_path) as stage:  # and when every write succeeds, all three are new
        for name in ("a.md", "b.html", "c.json"):
            stage.write_text(name, f"new {name}")
        assert (tmp_path / "a.md").read_text() == "old a.md"  # nothing renamed in yet
    assert all((tmp_path / n).read_text() == f"new {n}" for n in ("a.md", "b.html", "c.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.html", "c.json"]
