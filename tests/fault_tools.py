"""Shared by the fault-injection tests: one tiny finished run, the command in-process,
tree hashes and the one-line-error check. Not a test module (no ``test_`` prefix)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import random
from pathlib import Path

from attnlab.cli import main as cli_main

SETTINGS = [
    "--set", "model.vocab_size=300", "--set", "data.vocab_size=300", "--set", "model.d_model=16",
    "--set", "model.n_ctx=16", "--set", "model.n_head=2", "--set", "train.steps=4",
    "--set", "train.batch_size=4", "--set", "train.eval_every=0", "--set", "train.device=cpu",
    "--set", "train.eval_batch_size=256",
]


def cli(*argv: object) -> tuple[int, str, str]:
    """``attnlab ARGV`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main.main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse's refusal of an option: one line, exit 2
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def tree_hash(root: Path) -> str:
    """sha256 over the relative paths and bytes of every file (the lock file aside)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".lock"):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def finished_run(root: Path) -> tuple[Path, Path, dict, str]:
    """Train one tiny run to the end in ``root/run``: (run dir, corpus, result, tree hash)."""
    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    corpus = root / "tiny.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(words) for _ in range(10)) + "."
                                for _ in range(300)) + "\n", encoding="utf-8")
    run_dir = root / "run"
    code, out, err = cli("train", "--corpus", corpus, "--run-dir", run_dir, "--quiet", "--json",
                         *SETTINGS)
    assert code == 0, err
    return run_dir, corpus, json.loads(out), tree_hash(run_dir)


def one_line_error(result: tuple[int, str, str], code: int = 2, bug: bool = False) -> str:
    """The one stderr line of a failed command (exit ``code``; ``bug``: an internal error)."""
    got, _, err = result
    lines = err.strip().splitlines()
    assert got == code and len(lines) == 1, (got, err)
    assert "Traceback" not in err and ("internal error" in err) == bug, err
    return lines[0]
