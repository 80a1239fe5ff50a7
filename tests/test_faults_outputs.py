"""The output-path matrix: every command that writes (``train``, ``run``, ``reproduce``,
``report``, ``explore``) pointed at an output it cannot use, three ways:

- ``file``: the output folder is an existing file (for ``explore``, the page's folder is);
- ``read-only``: the output folder holds the previous output and cannot be written (an
  immutable folder, ``chattr +i``, where we run as root: permission bits do not stop root;
  ``chmod`` otherwise);
- ``full``: the previous output, with the disk full for real (RLIMIT_FSIZE: every write past
  a few hundred bytes fails in the kernel), in a child process; the previous output is
  made with other settings first, so that the command must write.

Each must end with exactly one ``attnlab:`` line (the last on stderr, no traceback, not an
internal error), exit 2, and leave the previous output byte for byte as it was. The file
and read-only cases are refused before any work (``attnlab.cli.outputs``). Micro settings,
one tiny run and one micro report made once for the module.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_tools import SETTINGS, cli, finished_run, tree_hash

COMMANDS = ["train", "run", "reproduce", "report", "explore"]
FAULTS = ["file", "read-only", "full"]
LIMIT = 500  # bytes a file may grow to in the full-disk child: every output here is larger
STEPS = ["--set", "train.steps=6", "--set", "train.ckpt_every=3", "--set", "train.log_every=1"]


def argv(command: str, out: Path, work: Path, corpus: Path) -> list[object]:
    """The command writing to ``out`` (a run folder, a report folder, a page's folder)."""
    suite = ["--profile", "micro", "--out", out, "--corpus", corpus, "--jobs", "1"]
    return {
        "train": ["train", "--corpus", corpus, "--run-dir", out, "--quiet", *SETTINGS, *STEPS],
        "run": ["run", "params", *suite, "--work", work],
        "reproduce": ["reproduce", "--only", "params", *suite, "--work", work],
        "report": ["report", "--profile", "micro", "--out", out],
        "explore": ["explore", "--out", out / "explorer.html"],
    }[command]


@pytest.fixture(scope="module")
def previous(tmp_path_factory) -> dict[str, Path]:
    """The previous output of each command: a run stopped at step 3 of 6 (checkpointed), a
    micro report with its params result, a page."""
    from attnlab.train.run_config import load_run_config
    from attnlab.train.trainer import train

    root = tmp_path_factory.mktemp("outputs")
    _, corpus, _, _ = finished_run(root)
    overrides = [s for s in [*SETTINGS, *STEPS] if s != "--set"] + [f"data.corpus={corpus}"]

    def stop_at_4(record: dict) -> None:
        if record["kind"] == "train" and record["step"] == 4:
            raise KeyboardInterrupt

    with contextlib.suppress(KeyboardInterrupt):
        train(load_run_config(None, overrides), root / "train", progress=stop_at_4)
    assert not (root / "train" / "result.json").exists()  # stopped, its checkpoint at step 3
    report = root / "report"
    code, _, err = cli(*argv("reproduce", report, root / "work", corpus))
    assert code == 0, err
    page = root / "page"
    assert cli(*argv("explore", page, root / "work", corpus))[0] == 0
    return {"train": root / "train", "run": report, "reproduce": report, "report": report,
            "explore": page, "corpus": corpus, "root": root}  # fmt: skip


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` made unwritable for this process, root included; restored afterwards."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                        capture_output=True).returncode:
        pytest.skip("cannot make a folder read-only for root here (chattr +i)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def one_error_line(code: int, err: str) -> str:
    """The one ``attnlab:`` line a refused command ends with (progress lines may precede)."""
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("attnlab:")]
    assert code == 2 and len(errors) == 1 and errors == lines[-1:], (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    return errors[0]


def _copy(previous: dict[str, Path], command: str, where: Path) -> Path:
    out = where / command
    shutil.copytree(previous[command], out)
    if command in ("run", "reproduce"):  # made with other settings: it must be written again
        path = out / "params" / "result.json"
        envelope = json.loads(path.read_text())
        path.write_text(json.dumps({**envelope, "seeds": 99}))
    return out


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_that_is_a_file(previous, tmp_path, command) -> None:
    out = tmp_path / "taken"
    out.write_bytes(b"not a folder\n")
    line = one_error_line(*cli(*argv(command, out, tmp_path / "work", previous["corpus"]))[::2])
    assert "is a file" in line and str(out) in line, line
    assert out.read_bytes() == b"not a folder\n" and not (tmp_path / "work").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_read_only_output(previous, tmp_path, command) -> None:
    out = _copy(previous, command, tmp_path)
    before = tree_hash(out)
    with read_only(out):
        code, _, err = cli(*argv(command, out, tmp_path / "work", previous["corpus"]))
    line = one_error_line(code, err)
    assert "cannot be written" in line and str(out) in line, line
    assert tree_hash(out) == before


# The child: each command in turn under the write limit (a limit in this process would stop
# pytest's own files too), with SIGXFSZ ignored so that a write past it fails with EFBIG.
_FULL = r"""
import contextlib, io, json, resource, signal, sys
from attnlab.cli.main import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
results = {}
for name, argv in json.loads(sys.argv[1]).items():
    out, err = io.StringIO(), io.StringIO()
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    results[name] = [code, err.getvalue()]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def full_disk(previous, tmp_path_factory) -> dict[str, tuple[int, str, str, str]]:
    """Every command on a copy of its previous output with the disk full, in one child:
    name -> (exit code, stderr, tree hash before, tree hash after)."""
    if sys.platform == "win32":
        pytest.skip("RLIMIT_FSIZE is POSIX")
    where = tmp_path_factory.mktemp("full")
    outs = {c: _copy(previous, c, where) for c in COMMANDS}
    before = {c: tree_hash(outs[c]) for c in COMMANDS}
    commands = {c: [str(a) for a in argv(c, outs[c], where / "work", previous["corpus"])]
                for c in COMMANDS}  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", _FULL, json.dumps(commands), str(LIMIT)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    return {c: (*results[c], before[c], tree_hash(outs[c])) for c in COMMANDS}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_disk(full_disk, command) -> None:
    code, err, before, after = full_disk[command]
    line = one_error_line(code, err)
    assert "could not write" in line and "File too large" in line, line
    assert after == before


@pytest.mark.parametrize("command", ["run", "reproduce", "explore"])
def test_a_work_folder_that_is_a_file_is_refused_before_any_work(previous, tmp_path,
                                                                 command) -> None:
    work = tmp_path / "runs"
    work.write_bytes(b"x")
    out = tmp_path / "out"
    args = (["explore", "--winograd", "--work", work, "--out", out / "page.html"]
            if command == "explore" else argv(command, out, work, previous["corpus"]))
    line = one_error_line(*cli(*args)[::2])
    assert line == f"attnlab: error: --work {work} is a file, not a folder: name a folder (or " \
        "move the file away)"  # fmt: skip
    assert work.read_bytes() == b"x" and not out.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_named_in_bytes_that_are_not_utf8_makes_nothing(previous, tmp_path,
                                                                  command) -> None:
    """``--run-dir $'runs/\\xff'`` (Python passes the byte as a lone surrogate): one line
    naming the byte, before anything is made (``train`` used to leave config.json and
    meta.json in a half-made run folder; ``report`` ended in an internal error)."""
    out = tmp_path / "runs" / "\udcff"
    code, _, err = cli(*argv(command, out, tmp_path / "work", previous["corpus"]))
    flag = "--run-dir" if command == "train" else "--out"
    what = "file" if command == "explore" else "folder"
    assert code == 2 and err == (f"attnlab: error: {flag} is not valid UTF-8 (byte 0xff) at "
                                 f"character {len(str(out))}: pass the {what} name as UTF-8 "
                                 "text\n"), err
    assert list(tmp_path.iterdir()) == []
