"""A full disk, for real: one line naming what could not be written, and the previous
checkpoint intact, for the checkpoint, the run's tokenizer, the cache's tokenizer and a report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fault_tools import SETTINGS, finished_run


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return finished_run(tmp_path_factory.mktemp("disk"))


# A full disk, for real: RLIMIT_FSIZE makes every write past LIMIT bytes fail in the kernel
# (EFBIG, with SIGXFSZ ignored), for Python, safetensors and tokenizers alike. One child
# process runs the scenarios in turn (a limit would also stop pytest's own files).
_FULL_DISK = r"""
import contextlib, io, json, os, resource, signal, sys
from pathlib import Path

import torch
from attnlab.cli.main import main
from attnlab.train.run_config import load_run_config
from attnlab.train.trainer import train

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
torch.set_num_threads(1)
root, corpus, settings = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)


def cli(limit, *argv):
    out, err = io.StringIO(), io.StringIO()
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, unlimited)
    return {"code": code, "err": err.getvalue()}


report = {}
# 1. A checkpoint write: a run checkpointed at step 3, resumed with room for its logs only.
overrides = [s for s in settings if s != "--set"] + [f"data.corpus={corpus}"]
cfg = load_run_config(None, overrides)
def stop_at_4(record):
    if record["kind"] == "train" and record["step"] == 4:
        raise KeyboardInterrupt
try:
    train(cfg, root / "ckpt", progress=stop_at_4)
except KeyboardInterrupt:
    pass
report["checkpoint"] = cli(20_000, "train", "--corpus", corpus, "--run-dir", root / "ckpt",
                           "--quiet", *settings)
report["checkpoint"]["state"] = json.loads((root / "ckpt/checkpoint/state.json").read_text())
report["checkpoint"]["left"] = sorted(p.name for p in (root / "ckpt").iterdir())
# 2. The run's tokenizer.json (the cache already holds the tokenizer).
report["run_tokenizer"] = cli(4_000, "train", "--corpus", corpus, "--run-dir", root / "tok",
                              "--quiet", *settings)
# 3. The cache's tokenizer: a fresh cache, so it is trained and written first.
os.environ["ATTNLAB_CACHE"] = str(root / "fresh-cache")
report["cache_tokenizer"] = cli(1_000, "train", "--corpus", corpus, "--run-dir", root / "c",
                                "--quiet", *settings)
# 4. A report (of a finished micro result: a folder of none is refused before any write).
cli(10**9, "run", "params", "--profile", "micro", "--out", root / "report", "--work",
    root / "work", "--jobs", "1")
report["report"] = cli(1_000, "report", "--profile", "micro", "--out", root / "report")
print(json.dumps(report))
"""


def test_a_full_disk_is_one_line_naming_what_could_not_be_written(finished, tmp_path):
    if sys.platform == "win32":
        pytest.skip("RLIMIT_FSIZE is POSIX")
    _, corpus, _, _ = finished
    settings = [*SETTINGS, "--set", "train.steps=6", "--set", "train.ckpt_every=3",
                "--set", "train.log_every=1"]
    proc = subprocess.run([sys.executable, "-c", _FULL_DISK, str(tmp_path), str(corpus),
                           *settings], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)

    def error_line(case: dict) -> str:
        lines = case["err"].strip().splitlines()
        errors = [x for x in lines if x.startswith("attnlab:")]
        assert case["code"] == 2 and len(errors) == 1 and errors == lines[-1:], case
        assert "Traceback" not in case["err"] and "internal error" not in case["err"]
        return errors[0]

    ckpt = report["checkpoint"]
    assert "could not write checkpoint file model.safetensors" in error_line(ckpt)
    assert "the previous checkpoint is kept" in error_line(ckpt)
    assert ckpt["state"]["step"] == 3  # the previous checkpoint, intact
    assert not [n for n in ckpt["left"] if n.startswith(".checkpoint-")]  # no temporaries
    assert "could not write" in error_line(report["run_tokenizer"])
    assert "tokenizer.json" in error_line(report["run_tokenizer"])
    line = error_line(report["cache_tokenizer"])
    assert "could not write" in line and "tokenizers" in line and ".json" in line
    assert "could not write" in error_line(report["report"])
    print("\n".join(error_line(case) for case in report.values()))  # shown with -s
