"""The last internal errors, one line each: a run that blows up in its last steps, the
bounds of `heads`, a busy port, a damaged cached result under `explore`, a run folder of a
newer attnlab. Each command's one line and exit code."""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fault_tools import SETTINGS, cli, finished_run, one_line_error, tree_hash

from attnlab import __version__


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return finished_run(tmp_path_factory.mktemp("round5"))


@pytest.fixture
def copy(finished, tmp_path):
    """A copy of the finished run to change; the original is checked after the test."""
    run_dir, _, _, original = finished
    shutil.copytree(run_dir, tmp_path / "run")
    yield tmp_path / "run"
    assert tree_hash(run_dir) == original


# -- a run that blows up before the 50-step window is full --------------------------------

def test_a_run_that_explodes_in_its_last_steps_ends_as_diverged(finished, tmp_path):
    _, corpus, _, _ = finished
    run = tmp_path / "hot"
    argv = ["train", "--corpus", corpus, "--run-dir", run, "--quiet", *SETTINGS,
            "--set", "train.steps=30", "--set", "train.lr=30", "--set", "train.warmup_steps=0"]
    code, _, err = cli(*argv)
    lines = err.strip().splitlines()  # the run's header line, then the answer
    assert code == 1 and len(lines) == 2 and "Traceback" not in err, err
    line = lines[-1]
    # Where the loss lands at lr 30 depends on the processor's arithmetic (the trained bits
    # differ between CPUs): a finite loss past the bound at the end, or a NaN on the way.
    # Either way the run is diverged, never a result.
    if line.startswith("attnlab: training stopped: final loss "):
        assert "exceeds 3·ln V = 17.1 at step 30 of 30" in line and "train.lr" in line
    else:
        assert line.startswith("attnlab: training stopped: non-finite loss"), line
        assert "of 30" in line and "train.lr" in line
    assert not (run / "result.json").exists() and (run / "diverged.json").exists()
    assert not (run / "checkpoint").exists()  # no checkpoint of those weights passes as good
    assert "recorded in" in one_line_error(cli(*argv), code=1)  # and again, at once


# -- heads: bounds before any work ---------------------------------------------------------

@pytest.mark.parametrize(("argv", "part"), [
    (["--half", "1000000000"], "argument --half: must be a whole number in [2, 1,048,576], got"),
    (["--half", "1"], "argument --half: must be a whole number in [2,"),
    (["--rows", "100000000"], "argument --rows: must be a whole number in [1, 1,024], got"),
    (["--rows", "0"], "argument --rows: must be a whole number in [1, 1,024], got 0"),
    (["--seed", "-1"], "argument --seed: must be a whole number in [0, 4,294,967,295], got -1"),
])
def test_heads_options_past_their_range_are_refused_as_parsed(finished, argv, part):
    run_dir = finished[0]
    line = one_line_error(cli("heads", run_dir, *argv))
    assert part in line and line.endswith("(see --help)")


def test_heads_checks_the_context_before_drawing_the_probe(finished, monkeypatch):
    import attnlab.interp.scores as scores

    def drawn(*args, **kwargs):
        raise AssertionError("the probe was drawn before the context check")

    monkeypatch.setattr(scores, "repeated_probe", drawn)
    line = one_line_error(cli("heads", finished[0], "--half", "9"))  # the context is 16
    assert line == ("attnlab: error: --half: the probe of 9 tokens repeated once (18) exceeds "
                    "the model's context of 16; use at most 8")
    monkeypatch.undo()
    code, out, err = cli("heads", finished[0], "--half", "8", "--rows", "2")
    assert code == 0 and "2 probe rows of 8 random tokens" in out, err


# -- explore --serve on a busy port --------------------------------------------------------

def test_explore_serve_on_a_busy_port_names_it_and_another_way(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_line_error(cli("explore", "--serve", "--port", port))
    assert line.startswith(f"attnlab: error: cannot serve on port {port} of 127.0.0.1: ")
    assert "choose another with --port N, or --port 0 for any free one" in line
    assert "--port: must be a whole number in [0, 65,535]" in one_line_error(
        cli("explore", "--serve", "--port", "70000"))


def test_a_server_that_cannot_bind_closes_cleanly():
    from attnlab.explorer.server.httpd import make_server

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(OSError) as info:  # the socket's own error, not an AttributeError
            make_server(lambda text: {}, port=busy.getsockname()[1])
    assert type(info.value) is not AttributeError and info.value.errno is not None


# -- explore over a damaged cached result --------------------------------------------------

@pytest.mark.parametrize("flag", ["--induction", "--agreement"])
def test_explore_over_a_cached_result_without_its_fields_is_one_line(tmp_path, monkeypatch,
                                                                     flag):
    import attnlab.running.train_run as work

    monkeypatch.setattr(work, "run_key", lambda spec: "cached")  # every probe model: one folder
    (tmp_path / "runs/cached").mkdir(parents=True)
    (tmp_path / "runs/cached/result.json").write_text(json.dumps({"garbage": 1}))
    line = one_line_error(cli("explore", flag, "--work", tmp_path / "runs",
                              "--out", tmp_path / "page.html"))
    assert line == (f"attnlab: error: {tmp_path / 'runs/cached/result.json'} is damaged: no "
                    "'steps' field; delete it and run again to evaluate the final checkpoint "
                    "anew")
    assert not (tmp_path / "page.html").exists()


# -- a run folder of a newer attnlab -------------------------------------------------------

def set_version(run, version):
    """``meta.json`` of ``run`` as if attnlab ``version`` (None: no version) had written it."""
    path = run / "meta.json"
    meta = json.loads(path.read_text())
    if version is None:
        del meta["versions"]["attnlab"]
        for session in meta["sessions"]:
            del session["code_revision"]["version"]
    else:
        meta["versions"]["attnlab"] = version
        meta["sessions"][-1]["code_revision"]["version"] = version
    path.write_text(json.dumps(meta))


def newer_format(run):
    path = run / "checkpoint/state.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "format": 2}))


def newer_field(run):
    path = run / "config.json"
    record = json.loads(path.read_text())
    record["config"]["model"]["rotary_base"] = 10000.0
    record["hash"] = "0123456789ab"  # a newer attnlab hashes the field too
    path.write_text(json.dumps(record))


@pytest.mark.parametrize(("change", "what"), [
    (newer_format, "checkpoint/state.json has format 2 (this attnlab reads format 1)"),
    (newer_field, "config.json has the config field model.rotary_base, which this attnlab "
                  "does not know"),
])
@pytest.mark.parametrize("version", ["9.2.0", None])
def test_a_run_of_a_newer_attnlab_is_named_so_not_called_damaged(finished, copy, change, what,
                                                                 version):
    _, corpus, _, _ = finished
    change(copy)
    set_version(copy, version)
    by = f"attnlab {version}" if version else f"a newer attnlab ({copy / 'meta.json'} does " \
        "not record which)"
    commands = [["eval", copy, "--device", "cpu"],
                ["generate", copy, "--prompt", "the", "--tokens", "2", "--device", "cpu"]]
    if change is newer_format:  # so that train resumes from the checkpoint
        (copy / "result.json").unlink()
    commands.append(["train", "--corpus", corpus, "--run-dir", copy, "--quiet", *SETTINGS])
    for argv in commands:
        line = one_line_error(cli(*argv))
        assert what in line, (argv, line)
        assert f"it was written by {by}; this is {__version__}" in line, (argv, line)
        assert "delete" not in line and "damaged" not in line.replace("not damaged", ""), line


@pytest.mark.parametrize(("change", "what"), [
    (newer_format, "checkpoint/state.json has format 2 (this attnlab reads format 1)"),
    (newer_field, "config.json has the config field model.rotary_base, which this attnlab "
                  "does not know"),
])
@pytest.mark.parametrize("version", [__version__, "0.0.1"])
def test_the_same_change_under_this_version_or_an_older_may_be_newer(finished, copy, change,
                                                                       what, version):
    """meta.json names this version or an older one: a newer attnlab may still have written
    the file (or it was edited), so the line says both, names the version meta.json records,
    and never says to delete the run (it used to: "has format 2, expected 1; ... delete")."""
    _, corpus, _, _ = finished
    change(copy)
    set_version(copy, version)
    if change is newer_format:  # so that train resumes from the checkpoint
        (copy / "result.json").unlink()
    before = tree_hash(copy)
    for argv in (["eval", copy, "--device", "cpu"],
                 ["generate", copy, "--prompt", "the", "--tokens", "2", "--device", "cpu"],
                 ["train", "--corpus", corpus, "--run-dir", copy, "--quiet", *SETTINGS]):
        line = one_line_error(cli(*argv))
        assert line == (f"attnlab: error: {copy / what}: a newer attnlab wrote it, or it was "
                        f"edited ({copy / 'meta.json'} records attnlab {version}; this is "
                        f"{__version__}). Read the run with the attnlab that wrote it, or put "
                        "back a copy of the file; the run may not be damaged"), (argv, line)
    assert tree_hash(copy) == before


# -- many runs: asked first, refused with no terminal --------------------------------------

class Terminal(io.StringIO):
    """A stdin that is a terminal, with ``answer`` typed in."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("command", [["run", "agreement"], ["reproduce", "--only", "agreement"]])
def test_more_than_200_runs_without_yes_are_refused_with_no_terminal(tmp_path, monkeypatch,
                                                                     command):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # CI: not a terminal
    argv = [*command, "--profile", "micro", "--seeds", "300", "--work", tmp_path / "w",
            "--out", tmp_path / "o", "--jobs", "1"]
    line = one_line_error(cli(*argv))
    assert line == ("attnlab: error: 300 runs to train, more than 200 (how long they would "
                    "take: `attnlab reproduce --profile micro --only agreement --seeds 300 "
                    "--estimate`); nothing started: add --yes to start them")
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))  # a terminal: asked, and no
    code, _, err = cli(*argv)
    assert code == 2 and err.startswith("attnlab: 300 runs to train") and "[y/N] " in err
    assert err.rstrip().endswith("not started: 300 runs to train; add --yes to start them "
                                 "without being asked")
    assert not (tmp_path / "w").exists() or not any((tmp_path / "w").iterdir())


def test_the_confirmation_passes_with_yes_a_typed_yes_or_few_runs():
    from argparse import Namespace

    from attnlab.cli.confirm import CONFIRM_RUNS, confirm_runs
    from attnlab.errors import UsageError

    args = Namespace(profile="quick", seeds=None, yes=False)
    confirm_runs(CONFIRM_RUNS, args, stdin=io.StringIO(""))  # at the limit: no question
    confirm_runs(5000, Namespace(profile="quick", seeds=None, yes=True), stdin=io.StringIO(""))
    err = io.StringIO()
    confirm_runs(5000, args, stdin=Terminal("yes\n"), stderr=err)
    assert "5,000 runs to train" in err.getvalue()
    with pytest.raises(UsageError, match="nothing started: add --yes"):
        confirm_runs(CONFIRM_RUNS + 1, args, stdin=io.StringIO(""))


# -- the estimate names an experiment skipped for want of its corpus -----------------------

def test_the_estimate_says_which_experiment_lacks_its_corpus(tmp_path):
    missing = tmp_path / "no-such-corpus.txt"
    code, out, err = cli("reproduce", "--only", "position", "--profile", "full", "--estimate",
                         "--corpus", missing, "--work", tmp_path / "w", "--out", tmp_path / "o")
    assert code == 0, err
    assert out.splitlines()[:2] == [
        "estimate (full): nothing to train, no experiment selected can run here",
        f"  skipped position: corpus unavailable: corpus file {missing} does not exist or is "
        "not a file"]
    assert "every planned run has finished" not in out


def test_the_estimate_text_lists_skipped_experiments_beside_the_timed_ones():
    from attnlab.suite.forecast import Estimate

    est = Estimate("quick", 1, "cpu", per_experiment={"agreement": 60.0},
                   runs={"agreement": 3}, wall_s=60.0,
                   skipped={"norm": "corpus unavailable: no corpus here"})
    text = est.text()
    assert "  agreement: 3 runs, 1m00s of one worker's time" in text
    assert "  skipped norm (not in the estimate): corpus unavailable: no corpus here" in text
    done = Estimate("quick", 1, "cpu", runs={"agreement": 0}, skipped={"norm": "no corpus"})
    assert done.text().splitlines()[:2] == [
        "estimate (quick): nothing to train, every other planned run has finished",
        "  skipped norm: no corpus"]


# -- Ray's own log line stays out of the terminal unless -v --------------------------------

class FakeRay:
    """What ``connect`` asks of Ray; its core, starting, writes its line to descriptor 2."""

    LINE = (b"[2026-12-02 10:22:24,220 I 19470 19470] logging.cc:303: Set ray log level from "
            b"environment variable RAY_BACKEND_LOG_LEVEL to 3\n")

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs) -> None:  # noqa: ANN003
        os.write(2, self.LINE)


def test_ray_core_lines_stay_out_of_the_terminal_unless_verbose(monkeypatch, capfd):
    import logging

    import attnlab.running.cluster as cluster

    monkeypatch.setattr(cluster, "import_ray", FakeRay)
    monkeypatch.setattr(cluster, "probe", lambda *args, **kwargs: None)  # no server to probe
    monkeypatch.delenv("RAY_BACKEND_LOG_LEVEL", raising=False)
    root = logging.getLogger("attnlab")  # the logger -v opens to debug lines
    before = root.level
    try:
        root.setLevel(logging.INFO)
        cluster.connect("127.0.0.1:6379")
        assert "Set ray log level" not in capfd.readouterr().err
        assert os.environ["RAY_BACKEND_LOG_LEVEL"] == "fatal"
        monkeypatch.delenv("RAY_BACKEND_LOG_LEVEL")
        root.setLevel(logging.DEBUG)  # -v: Ray's lines as they come
        cluster.connect("127.0.0.1:6379")
        assert "Set ray log level" in capfd.readouterr().err
        assert "RAY_BACKEND_LOG_LEVEL" not in os.environ
    finally:
        root.setLevel(before)


def test_quiet_stderr_restores_the_descriptor_after_an_error(capfd):
    from attnlab.running.cluster import quiet_stderr

    with pytest.raises(RuntimeError), quiet_stderr():
        os.write(2, b"hidden\n")
        raise RuntimeError("could not join")
    os.write(2, b"seen\n")
    assert capfd.readouterr().err == "seen\n"


# -- without transformers: one line naming the extra; verify runs what needs nothing -------

@pytest.fixture
def no_transformers(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` fails


def test_a_hugging_face_folder_without_transformers_names_the_extra(tmp_path, no_transformers):
    folder = tmp_path / "gpt2-tiny"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "gpt2"}')
    want = ("attnlab: error: reading a Hugging Face folder needs transformers, which is not "
            "installed here: pip install 'attnlab[hf]'")
    assert one_line_error(cli("heads", folder)) == want
    assert one_line_error(cli("explore", "--hf-model", folder, "--out", tmp_path / "x.html")) \
        == want
    import tomllib

    from attnlab.cli.main import __file__ as main_file

    pyproject = Path(main_file).parents[3] / "pyproject.toml"
    if pyproject.is_file():  # a checkout: the extra named is one pyproject.toml defines
        extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
        assert any(dep.startswith("transformers") for dep in extras["hf"])


def test_verify_without_transformers_skips_in_words_and_runs_the_rest(no_transformers):
    code, out, err = cli("verify", "--device", "cpu")
    assert code == 0, err
    lines = out.strip().splitlines()
    skip = " SKIP (needs transformers: pip install 'attnlab[hf]')"
    assert [line for line in lines if "SKIP" in line] == [
        "ours vs Hugging Face GPT2LMHeadModel logits".ljust(62) + " " + "-".rjust(11) + " "
        + "-".rjust(8) + " " + skip,
        "GPT-2 small params: formula vs Hugging Face's count".ljust(62) + " " + "-".rjust(11)
        + " " + "-".rjust(8) + " " + skip]
    assert "check_" not in out  # no function names
    ran = [line for line in lines if line.endswith("  ok")]
    assert any(line.startswith("GPT-2 small params: formula 124,439,808 vs ours 124,439,808")
               for line in ran)
    assert lines[-1] == (f"{len(ran)} checks passed, 2 skipped (needs transformers: "
                         "pip install 'attnlab[hf]')")


# -- output into a closed pipe ends quietly ------------------------------------------------

@pytest.mark.parametrize("argv", [["params"], ["params", "--preset", "gpt2-small"],
                                  ["train", "--list-configs"]])
def test_output_into_a_closed_pipe_ends_quietly(argv):
    """`attnlab params | head -1`: the reader has gone; no traceback, no line, exit 141."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before attnlab writes a byte
    try:
        done = subprocess.run([sys.executable, "-m", "attnlab.cli.main", *argv], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == "", done.stderr
