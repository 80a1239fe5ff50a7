"""Fault injection: every file of a finished run, damaged five ways, under every command.

One small run is trained once (module fixture). Then each file of its run
directory is damaged in each of five ways (deleted, truncated to half,
emptied, replaced by random bytes, replaced by valid content of the wrong
shape) in a copy, and ``eval``, ``generate`` and a resume (``train`` with the
copy's ``result.json`` removed, so that the checkpoint is read) run on that
copy, in-process through ``attnlab.cli.main.main``. Each combination must
either fail with exit code 2 and exactly one line naming the damaged file (no
traceback, not an internal error) while leaving the copy as it was, or, where
the damage is recoverable, succeed. The original run is never modified.

Recoverable, and why:
- ``meta.json``, ``metrics.jsonl``, ``result.json``, ``optimizer.safetensors``:
  ``eval`` and ``generate`` do not read them;
- ``metrics.jsonl``: a log; a resume skips unreadable lines;
- deleted ``config.json``, ``meta.json``, ``tokenizer.json``: a resume writes
  them again (the config comes from the command, checked against the
  checkpoint's run hash; the tokenizer from the corpus);
- deleted ``result.json``: a resume evaluates the final checkpoint again.
Everything else is refused: ``eval``/``generate`` need the config, the
tokenizer, the weights and ``state.json``; a resume needs every checkpoint
file and will not overwrite a damaged config, meta, tokenizer or result.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from fault_tools import SETTINGS, cli, finished_run, tree_hash
from safetensors.torch import load_file, save_file

FILES = [
    "config.json", "meta.json", "metrics.jsonl", "tokenizer.json", "checkpoint/model.safetensors",
    "checkpoint/optimizer.safetensors", "checkpoint/state.json", "result.json",
]
DAMAGES = ["delete", "truncate", "empty", "random", "wrong_shape"]
# every refusal says what to do: one of these
ADVICE = ("delete", "restore", "move it away", "resume", "name a folder made by")
READERS_IGNORE = {"meta.json", "metrics.jsonl", "result.json", "checkpoint/optimizer.safetensors"}


def expected_ok(command: str, name: str, damage: str) -> bool:
    """Whether ``command`` succeeds on a run whose ``name`` has ``damage`` (module docstring)."""
    if command in ("eval", "generate"):
        return name in READERS_IGNORE
    if name == "metrics.jsonl":
        return True
    return damage == "delete" and name in ("config.json", "meta.json", "tokenizer.json",
                                           "result.json")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished run of a tiny model on a tiny corpus: (run dir, corpus, result, hash)."""
    return finished_run(tmp_path_factory.mktemp("faults"))



def wrong_shape(path: Path) -> bytes:
    """Valid content of the file's own kind, with the wrong structure."""
    name = path.name
    if name == "config.json":  # the section is missing (was a bare KeyError 'config')
        return json.dumps({"hash": json.loads(path.read_text())["hash"]}).encode()
    if name == "metrics.jsonl":
        return b'[1, 2]\n"text"\n{"step": "x"}\n'
    if name == "state.json":
        return json.dumps({"format": 1, "step": "four"}).encode()
    if name.endswith(".json"):
        return b"[]"
    # A safetensors file with the right names, one tensor transposed (the wrong shape).
    tensors = load_file(str(path))
    key = next(k for k, t in sorted(tensors.items()) if t.dim() == 2 and t.shape[0] != t.shape[1])
    tensors[key] = tensors[key].t().contiguous()
    tmp = path.with_suffix(".tmp")
    save_file(tensors, str(tmp))
    data = tmp.read_bytes()
    tmp.unlink()
    return data


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "random":
        path.write_bytes(random.Random(len(data)).randbytes(max(len(data), 64)))
    else:
        path.write_bytes(wrong_shape(path))


def check(command: str, name: str, how: str, result: tuple[int, str, str], copy: Path,
          before: str) -> None:
    code, out, err = result
    where = f"{command} with {name} {how}: exit {code}, stderr {err!r}"
    assert "Traceback" not in err and "internal error" not in err, where
    if expected_ok(command, name, how):
        assert code == 0 and out.strip(), where
        return
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("attnlab: error:"), where
    said = lines[0].replace(str(copy), "RUN")  # the copy's own name ("resume") aside
    assert any(what in said for what in ADVICE), f"{where}: does not say what to do"
    assert Path(name).name in lines[0] or (name.startswith("checkpoint/")
                                           and "checkpoint" in lines[0]), where
    assert tree_hash(copy) == before, f"{where}: the damaged run was changed"


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("name", FILES)
def test_damaged_file(finished, tmp_path, name, how):
    run_dir, corpus, result, original = finished
    readers, resume = tmp_path / "readers", tmp_path / "resume"
    for copy in (readers, resume):
        shutil.copytree(run_dir, copy)
        damage(copy / name, how)
    if name != "result.json":
        (resume / "result.json").unlink()  # so that the resume reads the checkpoint
    before = tree_hash(readers)
    check("eval", name, how, cli("eval", readers, "--device", "cpu"), readers, before)
    check("generate", name, how, cli("generate", readers, "--prompt", "the king", "--tokens",
                                     "3", "--device", "cpu"), readers, before)
    before = tree_hash(resume)
    res = cli("train", "--corpus", corpus, "--run-dir", resume, "--quiet", "--json", *SETTINGS)
    check("train", name, how, res, resume, before)
    if res[0] == 0:  # recovered: the same run, bit for bit
        again = json.loads(res[1])
        assert again["weights_sha256"] == result["weights_sha256"]
        assert again["held_ppl"] == result["held_ppl"]
    assert tree_hash(run_dir) == original  # the original run is never touched
