"""Choosing and reaching a Ray cluster: the flags, the connection, the resources a run asks for.

The local process pool is the default executor and needs no Ray. ``--cluster
ray`` (or ``ATTNLAB_CLUSTER=ray``) hands the runs to an existing Ray cluster
instead (``attnlab.running.ray_executor``), reached at ``--address``, else
``RAY_ADDRESS``, else ``auto`` (the cluster that ``ray start`` on this machine
recorded). Nothing here starts a cluster: an address where none answers is one
line and exit 2, never a silent single-machine Ray instance, because a user who
asked for a cluster and got this machine alone would wait days for the full
profile without knowing why.

Ray is an optional extra (``pip install 'ray>=2.60'``, or the ``cluster`` extra of a
clone, pinned in ``constraints.txt``) and is imported only here, lazily, when asked for.

Everything but ``connect`` (and ``cli.common.cluster_executor``, which calls it) is plain
Python, tested without Ray: which executor, which address, what each run asks of
the scheduler, where ``auto`` trains, how many runs fit on the cluster at once,
and the estimate's stand-in for a cluster of N workers (``sized``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

from attnlab.errors import AttnlabError, Said, UsageError, first_line, os_reason

log = logging.getLogger(__name__)

CLUSTERS = ("local", "ray")  # the executors a command can choose
INSTALL = "pip install 'ray>=2.60' (from a clone: pip install -e '.[cluster]')"
PROBE_S = 5.0  # how long the address may take to accept a TCP connection
ANSWER_S = 5.0  # and then to answer a gRPC (HTTP/2) greeting, as every Ray server does
# HTTP/2's client preface and an empty SETTINGS frame (RFC 9113 §3.4): a gRPC server (Ray's
# GCS, its client server) answers with a SETTINGS frame of its own; anything else does not.
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
# what to do when no cluster answers: a sentence of its own, said in the command's language
START_HINT = Said("start one (`ray start --head` on one machine, `ray start --address=HEAD:6379` "
                  "on the others) or point --address / RAY_ADDRESS at it")
_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.?)+|\[[0-9A-Fa-f:.]+\]")


class RunFailed(AttnlabError):
    """A run that failed on a cluster: one line, exit 1 (a failed outcome, not bad input).
    It is not trained again on the driver, which may be no machine to train on."""

    exit_code = 1


def cluster_kind(flag: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """``--cluster``, else ``ATTNLAB_CLUSTER``, else ``local``.

    >>> cluster_kind(None, {}), cluster_kind(None, {"ATTNLAB_CLUSTER": "ray"})
    ('local', 'ray')
    >>> cluster_kind("local", {"ATTNLAB_CLUSTER": "ray"})
    'local'
    """
    kind = flag or environ.get("ATTNLAB_CLUSTER") or "local"
    if kind not in CLUSTERS:
        where = "--cluster" if flag else "ATTNLAB_CLUSTER"
        raise UsageError("%s must be one of %s, got %r", where, ", ".join(CLUSTERS), kind)
    return kind


def cluster_address(flag: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """``--address``, else ``RAY_ADDRESS``, else ``auto``; parsed before any use
    (``parse_address``).

    >>> cluster_address(None, {"RAY_ADDRESS": "10.0.0.1:6379"}), cluster_address(None, {})
    ('10.0.0.1:6379', 'auto')
    """
    where = "--address" if flag else "RAY_ADDRESS"
    address = flag or environ.get("RAY_ADDRESS") or "auto"
    parse_address(address, where)
    return address


def parse_address(address: str, where: str = "--address") -> tuple[str, int] | None:
    """``(host, port)`` of ``[ray://]host:port`` (None for ``auto``); anything else is one
    UsageError line, before Ray is imported or anything is reached.

    >>> parse_address("ray://10.1.2.3:10001"), parse_address("[::1]:6379"), parse_address("auto")
    (('10.1.2.3', 10001), ('::1', 6379), None)
    """
    if address == "auto":
        return None
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not _HOST.fullmatch(host):
        raise UsageError("%s %r is not host:port (e.g. 10.0.0.1:6379, ray://head:10001, or auto)",
                         where, address)
    return host.strip("[]"), int(port)


def task_resources(device_type: str, runs_per_gpu: int = 1) -> dict[str, float]:
    """What one training run asks of the Ray scheduler.

    On the CPU one core, as a local worker gets (each run trains on one thread,
    which is also what makes it bitwise the same wherever it runs). On CUDA a
    ``1/runs_per_gpu`` share of a GPU, so ``runs_per_gpu`` small runs share one
    device (the quick-profile models leave a large GPU mostly idle), and one
    core to launch its kernels from.

    >>> task_resources("cpu"), task_resources("cuda", 4)
    ({'num_cpus': 1}, {'num_cpus': 1, 'num_gpus': 0.25})
    """
    if runs_per_gpu < 1:
        raise UsageError("--runs-per-gpu must be at least 1, got %s", runs_per_gpu)
    if device_type == "cuda":
        return {"num_cpus": 1, "num_gpus": 1 / runs_per_gpu}
    return {"num_cpus": 1}


def cluster_device(device: str, resources: Mapping[str, float]) -> str:
    """``--device`` resolved from the *cluster's* resources (``ray.cluster_resources()``),
    not the driver's: a CPU-only head node driving GPU workers trains on CUDA.

    >>> cluster_device("auto", {"CPU": 64, "GPU": 8}), cluster_device("auto", {"CPU": 4})
    ('cuda', 'cpu')
    """
    has_gpu = resources.get("GPU", 0) > 0
    if device == "auto":
        return "cuda" if has_gpu else "cpu"
    if device == "cuda" and not has_gpu:
        raise UsageError("--device cuda but the Ray cluster has no GPU (use auto or cpu)")
    return device


def cluster_slots(device_type: str, resources: Mapping[str, float],
                  runs_per_gpu: int = 1) -> int:
    """How many runs the cluster trains at once (at least 1).

    >>> cluster_slots("cpu", {"CPU": 96.0}), cluster_slots("cuda", {"CPU": 64, "GPU": 8}, 4)
    (96, 32)
    """
    return max(1, runs_fitting(device_type, resources, runs_per_gpu))


def runs_fitting(device_type: str, resources: Mapping[str, float],
                 runs_per_gpu: int = 1) -> int:
    """How many runs ``resources`` (one node's, or the sum) hold at once (may be 0).

    >>> runs_fitting("cuda", {"CPU": 4.0}), runs_fitting("cpu", {"CPU": 1.0})
    (0, 1)
    """
    need = task_resources(device_type, runs_per_gpu)
    return min(int(resources.get(key, 0) / amount + 1e-9)
               for key, amount in (("CPU", need["num_cpus"]), ("GPU", need.get("num_gpus", 0)))
               if amount)


def import_ray() -> ModuleType:
    """The ``ray`` module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError("--cluster ray needs Ray, which is not installed: %s", INSTALL) \
            from None
    return ray


def connect(address: str) -> ModuleType:
    """Connect this process to the Ray cluster at ``address`` (``auto``: the one ``ray start``
    recorded on this machine) and return ``ray``; never start one.

    An address is probed first (``probe``), each step with a deadline of seconds:
    Ray's own client retries an unreachable address, or one that accepts and never
    answers, for minutes before it gives up. Ray's own log lines stay out of the
    terminal unless ``-v`` (debug logging) asks for them: its Python logging at ERROR, its
    core's at fatal, and what that core writes while it starts (``quiet_stderr``).
    """
    hint = START_HINT
    given = parse_address(address)
    if given is not None:  # before Ray's import, which alone takes seconds on a busy node
        probe(*given, address, hint)
    ray = import_ray()
    if ray.is_initialized():  # already a driver: inside `ray job submit`, or a test
        return ray
    verbose = logging.getLogger("attnlab").isEnabledFor(logging.DEBUG)
    if not verbose:
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")  # its C++ core's stderr
    target = address
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address_or_die

        try:
            target = canonicalize_bootstrap_address_or_die("auto")
        except ConnectionError:
            raise UsageError("no Ray cluster is running on this machine: %s", hint) from None
        host, port = _host_port(target)
        if port is not None:
            probe(host, port, target, hint)
    try:
        with quiet_stderr(not verbose):  # its core announces the log level it was given
            ray.init(address=target, log_to_driver=False,
                     logging_level=logging.DEBUG if verbose else logging.ERROR)
    except (ConnectionError, TimeoutError, RuntimeError) as err:
        raise UsageError("could not join the Ray cluster at %s: %s", target, first_line(err)) \
            from None
    return ray


@contextlib.contextmanager
def quiet_stderr(quiet: bool = True) -> Iterator[None]:
    """While Ray's core starts, the process's standard error (file descriptor 2) goes to a
    temporary file, logged at debug level afterwards: its C++ writes there directly, past
    Python's logging ("Set ray log level from environment variable RAY_BACKEND_LOG_LEVEL
    to 3", which setting the level prints). ``quiet`` False (``-v``): left as it is."""
    if not quiet:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            text = caught.read().decode("utf-8", "replace").strip()
            if text:
                log.debug("Ray, while connecting: %s", text)


def probe(host: str, port: int, target: str, hint: str = "",
          connect_s: float = PROBE_S, answer_s: float = ANSWER_S) -> None:
    """A UsageError line unless a gRPC server (every Ray server is one) answers at
    ``host:port`` within seconds: a TCP connection, then HTTP/2's greeting, to which it
    must answer with a SETTINGS frame. A port nobody listens on, one that accepts and
    stays silent, and one where something else listens (a web server) are each told
    apart. With ``RAY_USE_TLS`` only the connection is probed (the greeting would be
    plain text to a TLS server)."""
    try:
        conn = socket.create_connection((host, port), timeout=connect_s)
    except OSError as err:
        raise UsageError("no Ray cluster answers at %s (%s): %s", target, os_reason(err),
                         hint) from None
    with conn:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        conn.settimeout(answer_s)
        try:
            conn.sendall(_H2_HELLO)
            head = conn.recv(64)
        except TimeoutError:
            raise UsageError("%s accepts connections but does not answer within %g s: not a "
                             "Ray cluster (or a stalled one)", target, answer_s) from None
        except OSError as err:
            raise UsageError("%s closed the connection (%s): not a Ray cluster", target,
                             os_reason(err)) from None
    if len(head) < 9 or head[3] != 0x04 or any(head[5:9]):  # a SETTINGS frame on stream 0
        said = head.decode("latin-1").splitlines()[0][:60].strip() if head else "nothing"
        raise UsageError("something other than Ray listens at %s (it answered %r): point "
                         "--address at the cluster's head (port 6379)", target, said)


def _host_port(address: str) -> tuple[str, int | None]:
    """``host`` and ``port`` of ``[ray://]host:port`` (port None when there is none).

    >>> _host_port("ray://10.1.2.3:10001"), _host_port("head")
    (('10.1.2.3', 10001), ('head', None))
    """
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit():
        return bare, None
    return host.strip("[]"), int(port)


def describe(resources: Mapping[str, Any], nodes: int) -> str:
    """``3 nodes, 96 CPUs, 8 GPUs`` for the progress line that names the cluster.

    >>> describe({"CPU": 2.0}, 3)
    '3 nodes, 2 CPUs, 0 GPUs'
    """
    return (f"{nodes} node{'s' if nodes != 1 else ''}, {int(resources.get('CPU', 0))} CPUs, "
            f"{int(resources.get('GPU', 0))} GPUs")


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    """``--cluster``, ``--address`` and ``--runs-per-gpu`` (``run`` and ``reproduce``)."""
    from attnlab.bounds import whole

    p.add_argument("--cluster", choices=CLUSTERS, default=None,
                   help="where runs train: local worker processes (default) or an existing "
                   f"Ray cluster (also ATTNLAB_CLUSTER=ray; needs {INSTALL}; --work must be "
                   "on storage every node mounts at the same path)")
    p.add_argument("--address", default=None,
                   help="with --cluster ray: the cluster's address (default: $RAY_ADDRESS, else "
                   "auto, the cluster `ray start` recorded on this machine); none is started")
    p.add_argument("--runs-per-gpu", type=whole("--runs-per-gpu"), default=1, metavar="K",
                   help="with --cluster ray on GPUs: K runs share each GPU (each asks for 1/K "
                   "of one; default 1; at most 64)")


class Planned:
    """An executor that only offers ``workers`` slots: the estimate for a cluster of that size
    lays the runs on it (``reproduce --estimate --jobs N``); it trains nothing."""

    name = "planned"

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise UsageError("--jobs must be at least 1, got %s", workers)
        self.workers = workers

    def slots(self, n_pending: int) -> int:
        return max(1, min(self.workers, n_pending))

    def where(self) -> dict[str, Any]:
        return {"training workers": f"{self.workers} planned"}

    def run(self, pending: list[Any], job: Any) -> dict[str, str]:
        raise RuntimeError("a planned executor sizes an estimate; it trains nothing")


def sized(runner: Any, workers: int | None) -> Any:
    """``runner``, or (``workers`` given) the same runner laid out on ``workers`` slots."""
    import dataclasses

    return runner if workers is None else dataclasses.replace(runner, executor=Planned(workers))
