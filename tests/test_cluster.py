"""The cluster's choices without a cluster: flag and environment precedence, what a run asks
of the scheduler, where ``auto`` trains, the preflight's node-side checks, the wait for a dead
attempt's lock, the one-line refusals (no Ray, no cluster at the address), the sized estimate."""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import types

import pytest

# Ray reads this once, on its first import in the session (maybe in this module): every
# address of test_cluster_ray's local cluster is then the loopback one.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

from attnlab.cli.main import main
from attnlab.errors import UsageError
from attnlab.running.cluster import (
    INSTALL,
    Planned,
    cluster_address,
    cluster_device,
    cluster_kind,
    cluster_slots,
    sized,
    task_resources,
)
from attnlab.running.executors import LocalPool
from attnlab.running.ray_executor import wait_for_lock
from attnlab.running.ray_preflight import PROBE_DIR, check_node, node_facts
from attnlab.running.runner import Runner
from attnlab.train.rundir import LOCK, trained_on


def test_flag_then_environment_then_default():
    assert cluster_kind(None, {}) == "local"
    assert cluster_kind(None, {"ATTNLAB_CLUSTER": "ray"}) == "ray"
    assert cluster_kind("local", {"ATTNLAB_CLUSTER": "ray"}) == "local"  # the flag wins
    with pytest.raises(UsageError, match="ATTNLAB_CLUSTER must be one of local, ray"):
        cluster_kind(None, {"ATTNLAB_CLUSTER": "slurm"})
    assert cluster_address(None, {}) == "auto"
    assert cluster_address(None, {"RAY_ADDRESS": "10.0.0.1:6379"}) == "10.0.0.1:6379"
    assert cluster_address("head:6379", {"RAY_ADDRESS": "10.0.0.1:6379"}) == "head:6379"


def test_what_a_run_asks_of_the_scheduler_and_how_many_fit():
    assert task_resources("cpu", 4) == {"num_cpus": 1}  # --runs-per-gpu means nothing there
    assert task_resources("cuda") == {"num_cpus": 1, "num_gpus": 1.0}
    assert task_resources("cuda", 3)["num_gpus"] == pytest.approx(1 / 3)
    with pytest.raises(UsageError, match="--runs-per-gpu must be at least 1"):
        task_resources("cuda", 0)
    assert cluster_slots("cpu", {"CPU": 2.0}) == 2
    assert cluster_slots("cuda", {"CPU": 64.0, "GPU": 8.0}, 3) == 24
    assert cluster_slots("cuda", {"CPU": 6.0, "GPU": 8.0}, 4) == 6  # a core per run
    assert cluster_slots("cpu", {}) == 1


def test_auto_resolves_from_the_clusters_resources_not_the_drivers():
    assert cluster_device("auto", {"CPU": 8, "GPU": 2}) == "cuda"  # a CPU-only driver too
    assert cluster_device("auto", {"CPU": 8}) == "cpu"
    assert cluster_device("cpu", {"CPU": 8, "GPU": 2}) == "cpu"
    with pytest.raises(UsageError, match="the Ray cluster has no GPU"):
        cluster_device("cuda", {"CPU": 8})


def test_the_node_side_preflight_checks(tmp_path):
    probe = tmp_path / PROBE_DIR / "t1.txt"
    probe.parent.mkdir()
    facts = node_facts()
    assert set(facts) == {"python", "torch", "attnlab", "commit", "source"}
    missing = check_node(str(tmp_path), "t1", facts)
    assert len(missing) == 1 and missing[0].startswith(f"cannot see {probe}, which the driver")
    probe.write_text("t1\n")
    lock = probe.with_suffix(".lock")
    lock.touch()
    # Nobody holds the lock: a node that gets it would not see the driver's (NFS local_lock).
    (unshared,) = check_node(str(tmp_path), "t1", facts)
    assert "is not seen here" in unshared and "local_lock" in unshared
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the driver's lock, as during a real preflight
        assert check_node(str(tmp_path), "t1", facts) == []
        other = {**facts, "torch": "0.0.1", "commit": "abc123"}
        (differs,) = check_node(str(tmp_path), "t1", other)
    assert differs == (f"runs differently here: torch {facts['torch']} (driver: 0.0.1), "
                       f"commit {facts['commit']} (driver: abc123)")
    probe.write_text("another\n")
    (elsewhere,) = check_node(str(tmp_path), "t1", facts)
    assert "another content than the driver wrote" in elsewhere


def test_a_retry_waits_for_the_dead_attempts_lock(tmp_path):
    wait_for_lock(tmp_path / "never-trained")  # no run directory: nothing to wait for
    (tmp_path / LOCK).touch()
    wait_for_lock(tmp_path)  # a lock file nobody holds
    with open(tmp_path / LOCK) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the lost attempt, still holding it
        with pytest.raises(RuntimeError, match="still locked 0 s after its previous attempt"):
            wait_for_lock(tmp_path, timeout_s=0.2, poll_s=0.05)


def test_each_session_names_its_host_and_processor(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n")
    assert trained_on("cpu", cpuinfo) == {"host": socket.gethostname(),
                                          "processor": "AMD EPYC 9654 96-Core Processor"}
    assert trained_on("cpu", tmp_path / "none")["processor"]  # elsewhere: the platform's


def test_the_estimate_can_be_sized_for_a_cluster(tmp_path):
    runner = Runner(tmp_path, "cpu", executor=LocalPool(2, "cpu"))
    assert sized(runner, None) is runner
    big = sized(runner, 128)
    assert big.slots(1000) == 128 and big.slots(5) == 5 and big.work == runner.work
    with pytest.raises(UsageError, match="--jobs must be at least 1"):
        Planned(0)


def test_jobs_sizes_the_estimate(tmp_path, monkeypatch, capsys):
    """One name for the worker count: ``--jobs`` trains on N workers, and with ``--estimate``
    lays the estimate on N (a cluster's size, past this machine's pool)."""
    import attnlab.suite

    seen = {}

    def estimate_plan(planned, runner):
        seen["slots"] = runner.slots(10_000)
        return types.SimpleNamespace(text=lambda lang="en": "estimated")

    monkeypatch.setattr(attnlab.suite, "estimate_plan", estimate_plan)
    code = main(["reproduce", "--profile", "micro", "--estimate", "--jobs", "300",
                 "--work", str(tmp_path)])
    assert code == 0 and seen["slots"] == 300 and "estimated" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["flag", "env"])
def test_no_ray_installed_is_one_line(tmp_path, capsys, monkeypatch, how):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    args = ["reproduce", "--profile", "micro", "--work", str(tmp_path / "w"),
            "--out", str(tmp_path / "o")]
    if how == "flag":
        args += ["--cluster", "ray"]
    else:
        monkeypatch.setenv("ATTNLAB_CLUSTER", "ray")
    code = main(args)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert err == f"attnlab: error: --cluster ray needs Ray, which is not installed: {INSTALL}"


def test_no_cluster_at_the_address_is_one_line(tmp_path, capsys, monkeypatch):
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("this process is already a Ray driver")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")  # the environment's address
    code = main(["run", "params", "--profile", "micro", "--cluster", "ray",
                 "--work", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert err.startswith(f"attnlab: error: no Ray cluster answers at 127.0.0.1:{port} (")
    assert "ray start --head" in err and not ray.is_initialized()  # nothing was started


@pytest.mark.parametrize("address", ["not a host:xx", "head", "head:0", "head:99999",
                                     "ray://:10001", "h@st:6379"])
def test_an_address_that_is_not_host_port_is_one_line_before_ray(tmp_path, capsys,
                                                                monkeypatch, address):
    monkeypatch.setitem(sys.modules, "ray", None)  # parsed before Ray is even imported
    code = main(["reproduce", "--profile", "micro", "--cluster", "ray", "--address", address,
                 "--work", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert err == (f"attnlab: error: --address {address!r} is not host:port (e.g. "
                   "10.0.0.1:6379, ray://head:10001, or auto)")


def test_an_address_that_accepts_and_never_answers_is_one_line_within_seconds(
        tmp_path, capsys, monkeypatch):
    import time

    monkeypatch.setitem(sys.modules, "ray", None)  # refused before Ray is imported
    with socket.socket() as silent:  # the kernel accepts; nobody ever reads or writes
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        started = time.monotonic()
        code = main(["run", "params", "--profile", "micro", "--cluster", "ray", "--address",
                     f"127.0.0.1:{port}", "--work", str(tmp_path / "w"),
                     "--out", str(tmp_path / "o")])
        took = time.monotonic() - started
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and took < 15, (took, err)
    assert err == (f"attnlab: error: 127.0.0.1:{port} accepts connections but does not answer "
                   "within 5 s: not a Ray cluster (or a stalled one)")


def test_an_address_where_a_web_server_listens_is_refused_quickly(tmp_path, capsys,
                                                                  monkeypatch):
    import http.server
    import threading
    import time

    monkeypatch.setitem(sys.modules, "ray", None)  # refused before Ray is imported
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # noqa: ANN002, ANN202
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        started = time.monotonic()
        code = main(["run", "params", "--profile", "micro", "--cluster", "ray", "--address",
                     f"127.0.0.1:{server.server_port}", "--work", str(tmp_path / "w"),
                     "--out", str(tmp_path / "o")])
        took = time.monotonic() - started
    finally:
        server.shutdown()
        server.server_close()
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and took < 10, (took, err)
    assert err.startswith(f"attnlab: error: something other than Ray listens at "
                          f"127.0.0.1:{server.server_port} (it answered '")
    assert err.endswith("point --address at the cluster's head (port 6379)")


def test_a_node_holds_as_many_runs_as_its_own_cpus_and_gpus():
    from attnlab.running.cluster import runs_fitting
    from attnlab.running.ray_executor import RayExecutor

    class Nodes:  # a head without CPUs, a one-CPU node, a 3-CPU node, a dead node
        def nodes(self):  # noqa: ANN202
            return [{"Alive": True, "Resources": {"CPU": 0.0}},
                    {"Alive": True, "Resources": {"CPU": 1.0}},
                    {"Alive": True, "Resources": {"CPU": 3.0, "GPU": 1.0}},
                    {"Alive": False, "Resources": {"CPU": 64.0}}]

        def cluster_resources(self):  # noqa: ANN202 - the sum, as Ray gives it
            return {"CPU": 4.0, "GPU": 1.0}

    assert RayExecutor(Nodes(), "cpu").slots(100) == 4
    assert RayExecutor(Nodes(), "cuda", runs_per_gpu=4).slots(100) == 3  # 3 CPUs, 1 GPU
    assert RayExecutor(Nodes(), "cuda", runs_per_gpu=2).slots(100) == 2  # 2 shares of 1 GPU
    assert RayExecutor(Nodes(), "cpu").where()["training workers"] == \
        "a Ray cluster, 4 runs at once (4 CPUs, 1 GPUs)"
    assert runs_fitting("cuda", {"CPU": 8.0}) == 0


def test_a_progress_line_is_sent_without_waiting_for_the_queue():
    """``_put`` never waits in ``ray.get`` (Ray would lend the waiting task's CPU out): it
    sends the call to the queue's actor and drops the answer."""
    from types import SimpleNamespace

    from attnlab.running.ray_executor import _put

    sent, waited = [], []
    actor = SimpleNamespace(put_nowait=SimpleNamespace(remote=sent.append))
    queue = SimpleNamespace(actor=actor, put_nowait=waited.append, put=waited.append)
    _put(queue, {"kind": "train", "step": 3})
    assert sent == [{"kind": "train", "step": 3}] and waited == []


def test_the_node_side_check_refuses_bf16_on_a_cpu_without_bf16_units(tmp_path, monkeypatch):
    from attnlab.train import runtime

    (tmp_path / PROBE_DIR).mkdir()
    (tmp_path / PROBE_DIR / "t.txt").write_text("t\n")
    facts = node_facts()
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda *a: False)
    (problem,) = [p for p in check_node(str(tmp_path), "t", facts, bf16=True) if "bf16" in p]
    assert "has no bf16 units" in problem and "0.06x" in problem and "--precision fp32" in problem
    assert not any("bf16" in p for p in check_node(str(tmp_path), "t", facts))  # fp32: no word
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda *a: True)
    assert not any("bf16" in p for p in check_node(str(tmp_path), "t", facts, bf16=True))
