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

import contextlib
import hashlib
import io
import json
import random
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from attnlab.cli import main as cli_main

SETTINGS = [
    "--set", "model.vocab_size=300", "--set", "data.vocab_size=300", "--set", "model.d_model=16",
    "--set", "model.n_ctx=16", "--set", "model.n_head=2", "--set", "train.steps=4",
    "--set", "train.batch_size=4", "--set", "train.eval_every=0", "--set", "train.device=cpu",
    "--set", "train.eval_batch_size=256",
]
FILES = [
    "config.json", "meta.json", "metrics.jsonl", "tokenizer.json", "checkpoint/model.safetensors",
    "checkpoint/optimizer.safetensors", "checkpoint/state.json", "result.json",
]
DAMAGES = ["delete", "truncate", "empty", "random", "wrong_shape"]
READERS_IGNORE = {"meta.json", "metrics.jsonl", "result.json", "checkpoint/optimizer.safetensors"}


def expected_ok(command: str, name: str, damage: str) -> bool:
    """Whether ``command`` succeeds on a run whose ``name`` has ``damage`` (module docstring)."""
    if command in ("eval", "generate"):
        return name in READERS_IGNORE
    if name == "metrics.jsonl":
        return True
    return damage == "delete" and name in ("config.json", "meta.json", "tokenizer.json",
                                           "result.json")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def cli(*argv: str) -> tuple[int, str, str]:
    """``attnlab ARGV`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def tree_hash(root: Path) -> str:
    """sha256 over the relative paths and bytes of every file (the lock file aside)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".lock"):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished run of a tiny model on a tiny corpus: (run dir, corpus, result, hash)."""
    root = tmp_path_factory.mktemp("faults")
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


# -- single faults, on copies of the same finished run ------------------------------------


@pytest.fixture
def copy(finished, tmp_path):
    """A copy of the finished run to damage; the original is checked after the test."""
    run_dir, _, _, original = finished
    shutil.copytree(run_dir, tmp_path / "run")
    yield tmp_path / "run"
    assert tree_hash(run_dir) == original


def one_line_error(result: tuple[int, str, str], code: int = 2, bug: bool = False) -> str:
    got, _, err = result
    lines = err.strip().splitlines()
    assert got == code and len(lines) == 1, (got, err)
    assert "Traceback" not in err and ("internal error" in err) == bug, err
    return lines[0]


class Payload:
    """Unpickling this creates ``sentinel``: proof that code from the file ran."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self):  # noqa: ANN204 - pickle protocol
        return (Path.touch, (self.sentinel,))


@pytest.mark.parametrize("name", ["checkpoint/model.safetensors",
                                  "checkpoint/optimizer.safetensors", "checkpoint/state.json"])
def test_a_pickle_under_a_checkpoint_name_is_never_unpickled(finished, copy, tmp_path, name):
    _, corpus, _, _ = finished
    sentinel = tmp_path / "code-ran"
    torch.save({"weights": Payload(sentinel)}, copy / name)  # what torch.load would run
    (copy / "result.json").unlink()
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet",
                              *SETTINGS))
    assert Path(name).name in line
    if name != "checkpoint/optimizer.safetensors":  # eval does not read the optimizer
        assert Path(name).name in one_line_error(cli("eval", copy, "--device", "cpu"))
    assert not sentinel.exists()


def scale_weights(run: Path, factor: float) -> None:
    path = run / "checkpoint/model.safetensors"
    tensors = load_file(str(path))
    tensors = {k: t * factor if k.startswith("head.") else t for k, t in tensors.items()}
    save_file(tensors, str(path))


def test_an_exploded_model_has_perplexity_inf(copy):
    # Finite weights whose logits are so confidently wrong that exp(mean NLL) overflows.
    scale_weights(copy, 1e6)
    code, out, err = cli("eval", copy, "--device", "cpu")
    assert code == 0, err
    assert "held-out ppl inf" in out and "train ppl inf" in out
    record = json.loads(cli("eval", copy, "--device", "cpu", "--json")[1])
    assert record["held_ppl"] == float("inf")


def test_non_finite_weights_are_refused(copy):
    scale_weights(copy, float("nan"))
    line = one_line_error(cli("eval", copy, "--device", "cpu"))
    assert "model.safetensors holds non-finite weights" in line


def test_readers_refuse_while_a_training_run_holds_the_lock(copy):
    from attnlab.train.rundir import run_lock

    with run_lock(copy):
        for argv in (["eval", copy], ["generate", copy, "--prompt", "the", "--tokens", "2"]):
            assert "being trained by another process" in one_line_error(cli(*argv))
    assert cli("eval", copy, "--device", "cpu")[0] == 0  # free again
    # ...and a trainer is refused while a reader holds its shared lock.
    from attnlab.train.rundir import reader_lock

    with reader_lock(copy), pytest.raises(Exception, match="in use by another process"):
        with run_lock(copy):
            pass


def test_readers_read_an_interrupted_save_without_repairing_it(finished, copy):
    _, corpus, result, _ = finished
    # A save cut between its two renames: no checkpoint/, the previous one aside.
    (copy / "checkpoint").rename(copy / ".checkpoint-old-1234abcd")
    before = tree_hash(copy)
    code, out, err = cli("eval", copy, "--device", "cpu", "--json")
    assert code == 0, err
    assert json.loads(out)["held_ppl"] == result["held_ppl"]
    assert cli("generate", copy, "--prompt", "the", "--tokens", "2", "--device", "cpu")[0] == 0
    assert tree_hash(copy) == before  # nothing renamed or deleted by a reader
    # The trainer, holding the lock, repairs it.
    (copy / "result.json").unlink()
    assert cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet", *SETTINGS)[0] == 0
    assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".checkpoint")) == []
    assert (copy / "checkpoint/state.json").is_file()


def test_stale_old_checkpoints_are_removed(finished, copy):
    _, corpus, _, _ = finished
    shutil.copytree(copy / "checkpoint", copy / ".checkpoint-old-0badf00d")  # a killed cleanup
    shutil.copytree(copy / "checkpoint", copy / ".checkpoint-tmp-0badf00d")  # a killed save
    (copy / "result.json").unlink()
    assert cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet", *SETTINGS)[0] == 0
    assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".checkpoint")) == []


def test_a_damaged_checkpoint_does_not_cost_the_aside_beside_it(finished, copy):
    _, corpus, _, _ = finished
    shutil.copytree(copy / "checkpoint", copy / ".checkpoint-old-0badf00d")
    (copy / "checkpoint/state.json").write_text("{")
    (copy / "result.json").unlink()
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet",
                              *SETTINGS))
    assert "state.json is damaged" in line
    assert (copy / ".checkpoint-old-0badf00d/state.json").is_file()  # still there to restore


@pytest.mark.parametrize("content, message", [
    (b"[]", "config.json is damaged: expected a JSON object, got list"),
    (b'{"hash": "x", "config": [1]}', "config.json is damaged: a run config must be a table"),
    (b'{"hash": "x", "config": {"model": {"d_model": "wide"}}}',
     "config.json is damaged: model.d_model expects int"),
])
def test_config_json_of_the_wrong_shape(copy, content, message):
    (copy / "config.json").write_bytes(content)
    assert message in one_line_error(cli("eval", copy))


def test_a_binary_toml_config(tmp_path):
    path = tmp_path / "run.toml"
    path.write_bytes(bytes(range(256)) * 8)
    line = one_line_error(cli("train", path))
    assert f"config {path} is not UTF-8 text" in line


@pytest.mark.parametrize("option, message", [
    (["--temperature", "nan"], "--temperature must be a finite number >= 0"),
    (["--temperature", "inf"], "--temperature must be a finite number >= 0"),
    (["--temperature", "-1"], "--temperature must be a finite number >= 0"),
    (["--top-k", "0"], "--top-k (top_k) must be >= 1"),
    (["--top-k", "100000"], "--top-k 100000 exceeds the model's vocabulary of 300"),
    (["--tokens", "-1"], "--tokens must be >= 0"),
])
def test_generate_refuses_bad_sampling_options(copy, option, message):
    line = one_line_error(cli("generate", copy, "--prompt", "the", "--tokens", "2", *option))
    assert message in line


def test_a_run_dir_that_is_a_file(finished, tmp_path):
    _, corpus, _, _ = finished
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", path, *SETTINGS))
    assert "is a file" in line
    assert "is a file" in one_line_error(cli("eval", path))
    assert "is a file" in one_line_error(cli("generate", path, "--prompt", "the"))
    assert path.read_text() == "x"


def test_a_resume_in_another_precision_is_refused(finished, copy):
    _, corpus, _, _ = finished
    (copy / "result.json").unlink()
    before = tree_hash(copy)
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, *SETTINGS,
                              "--set", "train.precision=bf16"))
    assert "was trained on cpu in fp32; here it would go on on cpu in bf16" in line
    assert "--set train.device=cpu --set train.precision=fp32" in line
    assert tree_hash(copy) == before


def test_auto_resolving_to_a_gpu_is_refused_or_rekeyed(finished, tmp_path, monkeypatch):
    _, corpus, _, _ = finished
    auto = [s if s != "train.device=cpu" else "train.device=auto" for s in SETTINGS]
    monkeypatch.chdir(tmp_path)
    assert cli("train", "--corpus", corpus, "--quiet", *auto)[0] == 0
    (cpu_run,) = (tmp_path / "runs").iterdir()
    stored = json.loads((cpu_run / "config.json").read_text())["config"]["train"]
    assert (stored["device"], stored["precision"]) == ("cpu", "fp32")  # resolved, recorded
    # The same command where CUDA is present: a new run directory (the hash names the
    # device), and the old one, named explicitly, is refused rather than resumed in bf16.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    from attnlab.train.config import load_run_config, run_hash
    from attnlab.train.runtime import resolve_run

    overrides = [a for a in auto if a != "--set"] + [f"data.corpus={corpus}"]
    gpu = resolve_run(load_run_config(None, overrides))
    assert (gpu.train.device, gpu.train.precision) == ("cuda", "bf16")
    assert run_hash(gpu) != cpu_run.name
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", cpu_run, *auto))
    assert "was trained on cpu in fp32; here it would go on on cuda in bf16" in line


def test_a_run_from_before_resolution_is_refused(finished, copy):
    _, corpus, _, _ = finished
    record = json.loads((copy / "config.json").read_text())
    record["config"]["train"].update(device="auto", precision="auto")
    record["hash"] = "0123456789ab"
    (copy / "config.json").write_text(json.dumps(record))
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, *SETTINGS))
    assert "started before attnlab recorded the resolved device" in line


def test_a_diverged_run_is_reported_by_every_command(finished, tmp_path):
    _, corpus, _, _ = finished
    run = tmp_path / "run"
    settings = [*SETTINGS, "--set", "train.steps=80", "--set", "train.lr=10",
                "--set", "train.ckpt_every=1", "--set", "model.norm=none"]
    code, _, err = cli("train", "--corpus", corpus, "--run-dir", run, "--quiet", *settings)
    lines = err.strip().splitlines()  # the run's header line, then the one stop line
    assert code == 1 and len(lines) == 2 and lines[0].startswith("run: "), err
    assert lines[1].startswith("attnlab: training stopped: mean loss")
    # lr 10 wrecks the weights in the first update: no checkpoint is good enough to keep.
    assert "exceeds 3·ln V = 17.1 at step 50 of 80; no checkpoint had been written" in err
    record = json.loads((run / "diverged.json").read_text())
    assert record["step"] == 50 and record["loss"] > 3 * 5.7  # finite, far past 3 ln 300
    assert not (run / "result.json").exists()
    for argv in (["eval", run], ["generate", run, "--prompt", "the", "--tokens", "2"]):
        line = one_line_error(cli(*argv), code=1)
        assert line.startswith(f"attnlab: error: run {run} diverged: mean loss")
    code, _, err = cli("train", "--corpus", corpus, "--run-dir", run, "--quiet", *settings)
    assert code == 1 and "recorded in" in err and "diverged.json" in err  # at once, again


def test_a_bug_is_reported_as_one_and_not_as_bad_input(monkeypatch):
    import attnlab.cli.params as params

    def broken(args):
        raise KeyError("d_model")

    monkeypatch.setattr(params, "run", broken)
    line = one_line_error(cli("params"), code=1, bug=True)
    assert line == ("attnlab: internal error: KeyError: 'd_model' (run with -v for the "
                    "traceback)")
    code, _, err = cli("-v", "params")
    assert code == 1 and "Traceback" in err and err.strip().endswith("KeyError: 'd_model'")

    def raises_value_error(args):
        raise ValueError("not input at all")  # a library bug, not a UsageError

    monkeypatch.setattr(params, "run", raises_value_error)
    assert "internal error: ValueError" in one_line_error(cli("params"), code=1, bug=True)


def test_bad_input_traceback_only_with_verbose():
    assert one_line_error(cli("params", "--set", "n_head=3")).startswith("attnlab: error:")
    code, _, err = cli("-v", "params", "--set", "n_head=3")
    assert code == 2 and "Traceback" in err and "UsageError" in err


# -- a full disk ------------------------------------------------------------------------

# A full disk, for real: RLIMIT_FSIZE makes every write past LIMIT bytes fail in the kernel
# (EFBIG, with SIGXFSZ ignored), for Python, safetensors and tokenizers alike. One child
# process runs the scenarios in turn (a limit would also stop pytest's own files).
_FULL_DISK = r"""
import contextlib, io, json, os, resource, signal, sys
from pathlib import Path

import torch
from attnlab.cli.main import main
from attnlab.train.config import load_run_config
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
# 4. A report.
report["report"] = cli(1_000, "report", "--profile", "micro", "--out", root / "report")
print(json.dumps(report))
"""


def test_a_full_disk_is_one_line_naming_what_could_not_be_written(finished, tmp_path):
    import subprocess
    import sys

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
