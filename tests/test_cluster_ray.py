"""Runs on a real local Ray cluster: a head (no CPU) and two worker nodes of one CPU each,
started once for the module, on the loopback address, with a short temp dir.

The same bits as training in order; a node killed mid-run costs nothing but time (the run
resumes from its checkpoint on the other node); Ctrl-C on the driver leaves checkpoints that
the rerun resumes; the preflight refuses a node that cannot see ``--work``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

# Ray reads this once, on import: every address of the test cluster is then the loopback one.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")

from attnlab.errors import UsageError  # noqa: E402
from attnlab.nn.model_config import ModelConfig  # noqa: E402
from attnlab.running.cluster import RunFailed  # noqa: E402
from attnlab.running.executors import LocalPool  # noqa: E402
from attnlab.running.ray_executor import RayExecutor  # noqa: E402
from attnlab.running.ray_preflight import preflight  # noqa: E402
from attnlab.running.runner import Runner, RunSpec, seeded  # noqa: E402
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig  # noqa: E402

TINY = RunConfig(model=ModelConfig(vocab_size=64, d_model=8, n_ctx=8, n_head=2),
                 train=TrainConfig(steps=6, batch_size=2, eval_every=0, ckpt_every=0,
                                   device="cpu"),
                 data=DataConfig(vocab_size=64))
# Long enough to be cut at step 150 however late the driver hears of it: ~3-6 s of steps,
# a checkpoint every 100 of them.
LONG = TINY.replace(train=dataclasses.replace(TINY.train, steps=1200, ckpt_every=100))


def Tokens() -> SimpleNamespace:  # noqa: N802 - stands for a data class
    """Token data given directly, as the synthetic languages are (a plain namespace: the
    worker nodes cannot import this test module)."""
    return SimpleNamespace(train=np.arange(400) % 64, held=np.arange(100) % 64)


@pytest.fixture(scope="module")
def cluster():  # noqa: ANN201
    from ray.cluster_utils import Cluster

    # Ray's socket paths must stay short; the loopback address keeps every byte on this host.
    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_TMPDIR", tmp)
    started = time.perf_counter()
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "_system_config": {"health_check_period_ms": 1000,
                                          "health_check_failure_threshold": 5}})
    for _ in range(2):
        c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    c.start_s = time.perf_counter() - started
    yield c
    ray.shutdown()
    c.shutdown()
    mp.undo()
    shutil.rmtree(tmp, ignore_errors=True)


def on_cluster(work: Path, progress=None) -> Runner:  # noqa: ANN001
    return Runner(work, "cpu", executor=RayExecutor(ray, "cpu"), progress=progress)


def in_order(work: Path) -> Runner:
    return Runner(work, "cpu", executor=LocalPool(1, "cpu"))


def same(record: dict) -> dict:  # everything but time, speed and where it lives
    return {k: v for k, v in record.items() if k not in ("wall_s", "tokens_per_s", "run_dir")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:  # noqa: ANN001
    """The long run trained in order in this process: the bits every other path must give."""
    return in_order(tmp_path_factory.mktemp("ref")).train([RunSpec("long", LONG, Tokens())])["long"]


def sessions(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "meta.json").read_text())["sessions"]


def test_a_plan_on_the_cluster_is_bitwise_the_plan_in_order(cluster, tmp_path,
                                                            trained_hashes):
    specs = seeded("tiny", TINY, 4, data=Tokens())
    events: list[dict] = []
    runner = on_cluster(tmp_path / "ray", events.append)
    started = time.perf_counter()
    results = runner.train(specs)
    took = time.perf_counter() - started
    assert trained_hashes == []  # nothing trained on the driver
    assert runner.slots(4) == 2 and len(runner.executor.nodes) == 2  # both nodes trained
    local = in_order(tmp_path / "local").train(specs)
    assert {k: same(v) for k, v in results.items()} == {k: same(v) for k, v in local.items()}
    assert len({r["weights_sha256"] for r in local.values()}) == 4  # four different models
    named = {(e["run"], e["node"]) for e in events if e.get("kind") == "train"}
    assert {run for run, _ in named} == {s.label for s in specs}
    assert all(node.startswith("127.0.0.1 (") for _, node in named)  # each names its node
    meta = json.loads((Path(results["tiny seed 0"]["run_dir"]) / "meta.json").read_text())
    assert meta["sessions"][0]["host"] and meta["sessions"][0]["processor"]
    print(f"cluster up in {cluster.start_s:.1f} s; 4 micro runs on it in {took:.1f} s")


def test_corpus_runs_get_the_token_data_once_and_no_corpus(cluster, tmp_path,
                                                           shakespeare_head):
    cfg = RunConfig(model=dataclasses.replace(TINY.model, vocab_size=300), train=TINY.train,
                    data=DataConfig(vocab_size=300))
    specs = seeded("corpus", cfg, 2)
    runner = Runner(tmp_path / "ray", "cpu", str(shakespeare_head),
                    executor=RayExecutor(ray, "cpu"))
    local = Runner(tmp_path / "local", "cpu", str(shakespeare_head),
                   executor=LocalPool(1, "cpu")).train(specs)
    resolved = runner.resolve_all(specs)
    runner.job.token_data(resolved[0].config)  # the driver reads and tokenises the corpus...
    shakespeare_head.unlink()  # ...and from then on no process has it
    results = runner.train(specs)
    assert {k: same(v) for k, v in results.items()} == {k: same(v) for k, v in local.items()}
    assert len(runner.executor._objects) == 1  # one object in the store for both runs


def test_a_node_lost_mid_run_costs_only_time(cluster, tmp_path, reference, caplog):
    killed: list[str] = []

    def kill_its_node(info: dict) -> None:  # runs on the driver, between two polls
        if killed or info.get("kind") != "train" or info["step"] < 150:
            return
        node_id = info["node"].split("(")[1].rstrip(")")
        node = next(n for n in cluster.worker_nodes if n.node_id.startswith(node_id))
        # A lost machine takes its processes with it. Removing a local node kills its raylet,
        # but its worker can live on for seconds and, on a fast processor, finish the run
        # before it notices; so the trainer goes first, then its node.
        with contextlib.suppress(ProcessLookupError):
            os.kill(info["pid"], signal.SIGKILL)
        cluster.remove_node(node, allow_graceful=False)  # a hard kill, mid-run
        killed.append(node_id)

    started = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="attnlab.running.ray_executor"):
        record = on_cluster(tmp_path, kill_its_node).train(
            [RunSpec("long", LONG, Tokens())])["long"]
    took = time.perf_counter() - started
    assert any("long on node 127.0.0.1" in r.getMessage() and "(attempt 2:" in r.getMessage()
               for r in caplog.records)  # the retry is said, naming its new node
    cluster.add_node(num_cpus=1)  # the next tests get two nodes again
    resumed = sessions(Path(record["run_dir"]))
    assert killed and len(resumed) == 2 and resumed[1]["start_step"] > 0  # from a checkpoint
    assert same(record) == same(reference)  # the weights' hash included
    print(f"node lost at step >= 150; resumed from step {resumed[1]['start_step']}; "
          f"{took:.1f} s; weights {record['weights_sha256'][:16]} == in-order run's")


def test_ctrl_c_on_the_driver_leaves_checkpoints_and_the_rerun_resumes(cluster, tmp_path,
                                                                       reference):
    spec = RunSpec("long", LONG, Tokens())

    def interrupt(info: dict) -> None:
        if info.get("kind") == "train" and info["step"] >= 150:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        on_cluster(tmp_path, interrupt).train([spec])
    (run_dir,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert (run_dir / "checkpoint").is_dir() and not (run_dir / "result.json").exists()
    record = on_cluster(tmp_path).train([spec])["long"]
    resumed = sessions(run_dir)
    assert len(resumed) == 2 and resumed[1]["start_step"] >= 150
    assert same(record) == same(reference)
    print(f"cancelled at step >= 150; the rerun resumed from step {resumed[1]['start_step']}")


def test_sigterm_in_a_task_is_a_retried_interruption(cluster, tmp_path, reference):
    """A preempting scheduler's SIGTERM: the run checkpoints, Ray retries it, it resumes."""
    sent: list[int] = []

    def preempt(info: dict) -> None:
        if not sent and info.get("kind") == "train" and info["step"] >= 150:
            os.kill(info["pid"], signal.SIGTERM)
            sent.append(info["step"])

    record = on_cluster(tmp_path, preempt).train([RunSpec("long", LONG, Tokens())])["long"]
    resumed = sessions(Path(record["run_dir"]))
    assert sent and len(resumed) == 2 and resumed[1]["start_step"] >= sent[0]
    assert same(record) == same(reference)


def test_a_failed_run_is_one_line_and_not_trained_on_the_driver(cluster, tmp_path,
                                                                trained_hashes):
    bad = TINY.replace(model=dataclasses.replace(TINY.model, vocab_size=32))  # tokens up to 63
    runner = on_cluster(tmp_path)
    with pytest.raises(RunFailed) as err:
        runner.train([RunSpec("bad", bad, Tokens())])
    assert str(err.value).startswith("bad: failed: ") and "\n" not in str(err.value)
    assert trained_hashes == [] and not runner.executor.records
    with pytest.raises(RunFailed):  # asked again in the same command: not submitted again
        runner.train([RunSpec("bad", bad, Tokens())])
    assert len(runner.executor.failed) == 1


def test_reproduce_on_the_cluster_from_the_command_line(cluster, tmp_path, capsys,
                                                       trained_hashes):
    from attnlab.cli.main import main

    code = main(["reproduce", "--profile", "micro", "--only", "agreement", "--seeds", "2",
                 "--cluster", "ray", "--work", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 0 and trained_hashes == []  # every run trained on the cluster
    assert "planned runs on the Ray cluster (2 at once)" in err
    assert " on 127.0.0.1 (" in err  # the progress lines name their node
    machine = json.loads((tmp_path / "o" / "results.json").read_text())["meta"]["machine"]
    assert machine["training nodes"] in (1, 2) and "Ray cluster" in machine["training workers"]
    code = main(["reproduce", "--profile", "micro", "--only", "winograd",  # 6 runs
                 "--cluster", "ray", "--estimate", "--work", str(tmp_path / "w")])
    out = capsys.readouterr().out
    assert code == 0 and "estimate (micro, cpu, 2 workers)" in out  # the cluster's size


# Started in every Python process of one node: a mount namespace of its own in which an
# empty tmpfs covers $HIDE (the node's view of --work differs, as a node without the share).
HIDE = """
import ctypes, os
if os.environ.get("HIDE"):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x00020000) == 0:  # CLONE_NEWNS
        libc.mount(b"none", b"/", None, 16384 | (1 << 18), None)  # MS_REC | MS_PRIVATE
        libc.mount(b"tmpfs", os.environ["HIDE"].encode(), b"tmpfs", 0, None)
"""


def test_preflight_asks_every_node_for_bf16_units_when_runs_train_in_bf16(cluster, tmp_path):
    from attnlab.train.runtime import cpu_has_bf16

    work = tmp_path / "work"
    work.mkdir()
    if cpu_has_bf16() is False:  # the nodes share this machine's CPU: each one refuses
        with pytest.raises(UsageError, match="has no bf16 units"):
            preflight(ray, work, "CPU", bf16=True)
    else:
        assert preflight(ray, work, "CPU", bf16=True) == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="hiding --work from a node needs root (mount)")
def test_preflight_refuses_a_node_that_cannot_see_work(cluster, tmp_path):
    work, hide = tmp_path / "work", tmp_path / "hide"
    work.mkdir()
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE)
    assert preflight(ray, work) == 2  # the two real nodes pass
    node = cluster.add_node(num_cpus=1, env_vars={"PYTHONPATH": str(hide), "HIDE": str(work)})
    try:
        with pytest.raises(UsageError) as err:
            preflight(ray, work)
        line = str(err.value)
        assert "\n" not in line
        assert line.startswith(f"preflight: node 127.0.0.1 ({node.node_id[:6]})")
        assert "cannot see" in line and str(work) in line and "more node" not in line
    finally:
        cluster.remove_node(node)


def test_a_ray_head_answers_the_probe(cluster):
    from attnlab.running.cluster import parse_address, probe

    host, port = parse_address(cluster.address)
    probe(host, port, cluster.address)  # a real GCS answers HTTP/2's greeting: no error


def test_progress_never_lends_a_training_tasks_cpu_out(cluster):
    """Tasks that send progress lines all the time: a one-CPU node still runs one at a time
    (a progress call that waited in ray.get would let Ray start a second on its CPU)."""
    from ray.util.queue import Queue

    from attnlab.running.ray_executor import _put

    def busy(queue):  # noqa: ANN001, ANN202
        import time as t

        import ray as r

        start = t.time()
        while t.time() - start < 2.0:
            _put(queue, {"kind": "train", "step": 1})
            t.sleep(0.002)
        return r.get_runtime_context().get_node_id(), start, t.time()

    queue = Queue(actor_options={"num_cpus": 0})
    try:
        spans = ray.get([ray.remote(num_cpus=1)(busy).remote(queue) for _ in range(4)],
                        timeout=120)
    finally:
        ray.kill(queue.actor)
    for node in {n for n, _, _ in spans}:
        mine = sorted((a, b) for n, a, b in spans if n == node)
        assert all(b1 <= a2 + 0.05 for (_, b1), (a2, _) in zip(mine, mine[1:], strict=False)), \
            mine


@pytest.mark.skipif(os.geteuid() != 0, reason="hiding --work from a node needs root (mount)")
def test_reproduce_with_a_node_that_cannot_see_work_is_one_line_before_any_run(
        cluster, tmp_path, capsys, monkeypatch, trained_hashes):
    import attnlab.running.ray_preflight as preflight_module
    from attnlab.cli.main import main

    work, hide = tmp_path / "work", tmp_path / "hide"
    work.mkdir()
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE)
    calls = []
    real = preflight_module.preflight
    monkeypatch.setattr(preflight_module, "preflight",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    node = cluster.add_node(num_cpus=1, env_vars={"PYTHONPATH": str(hide), "HIDE": str(work)})
    try:
        code = main(["reproduce", "--profile", "micro", "--only", "agreement", "--seeds", "2",
                     "--cluster", "ray", "--work", str(work), "--out", str(tmp_path / "o")])
    finally:
        cluster.remove_node(node)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err, err
    assert err.startswith(f"attnlab: error: preflight: node 127.0.0.1 ({node.node_id[:6]}) "
                          "cannot see")
    assert len(calls) == 1 and trained_hashes == []  # checked once, nothing trained
    assert not (tmp_path / "o").exists() and [p.name for p in work.iterdir()] in ([], [PROBE])


PROBE = ".attnlab-preflight"
