"""Before any run starts on a Ray cluster: can every node train into ``--work``, with our code?

Run directories live on shared storage (``--work``, mounted at the same path
on every node), as Ray Train/Tune and Hydra's cluster launchers assume: a run
killed with its node resumes from its checkpoint on whichever node Ray retries
it, and a finished run is never trained again, whichever node asks. Each of
those rests on something the driver cannot see from where it stands, so one
small task pinned to every node that can train (``check_node``) looks:

- it sees the file the driver has just written in ``--work`` (not a local
  folder of the same name);
- file locks there are shared with the driver: the driver holds an exclusive
  ``flock`` on a probe file, and the node must be refused it. A file system
  without ``flock`` (ENOSYS, ENOLCK) or one whose locks stay on the node (NFS
  mounted with ``local_lock=flock|all``) would let two attempts of a run write
  one checkpoint; each is one line;
- Python, torch, attnlab and the code (the git commit and a hash of the
  attnlab sources, which also covers a working tree without git) are the
  driver's: a run resumed on another node must be the same computation;
- for ``--precision bf16`` on CPUs, the node's CPU has bf16 units (without them
  bf16 trains many times slower than fp32).

Any difference is one ``UsageError`` line naming the node and what differs.
Left out: nodes that join after the check (an autoscaler's), and the
libraries a run's numbers depend on less directly (numpy, tokenizers).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import socket
import uuid
from pathlib import Path
from typing import Any

from attnlab.errors import Said, UsageError, os_reason

log = logging.getLogger(__name__)

PROBE_DIR = ".attnlab-preflight"  # in --work; each check's files are removed after it
ANSWER_S = 120.0  # how long every node gets to answer
FACTS = ("python", "torch", "attnlab", "commit", "source")  # what must match the driver's
NO_LOCKS = {errno.ENOSYS, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL}


def source_hash() -> str:
    """A short hash of every ``.py`` file of the installed attnlab package, by relative path."""
    import attnlab

    root = Path(attnlab.__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def node_facts() -> dict[str, str]:
    """What must be the same on every node: versions, the commit, the sources' hash."""
    from attnlab.train.rundir import code_revision, versions

    v = versions()
    return {"python": v["python"], "torch": v["torch"], "attnlab": v["attnlab"],
            "commit": str(code_revision()["commit"]), "source": source_hash()}


def lock_problem(lock: Path, work: str) -> Said | None:
    """Whether ``lock``, which the driver holds exclusively, is refused here (as it must be):
    None, or the problem as a sentence in parts (said in the driver's language)."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError as err:
        return Said("cannot open %s (%s)", lock, os_reason(err))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return None  # the driver's lock is seen here: locks are shared
    except OSError as err:
        if err.errno in NO_LOCKS:
            return Said("file locking (flock) does not work in %s (%s): put --work on a file "
                        "system with flock", work, os_reason(err))
        return Said("cannot lock %s (%s)", lock, os_reason(err))
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return Said("a lock the driver holds in %s is not seen here (NFS mounted with "
                    "local_lock=flock or all?): mount --work with locks shared between nodes",
                    work)
    finally:
        os.close(fd)
    return None


def check_node(work: str, token: str, driver: dict[str, str], bf16: bool = False) -> list[str]:
    """On a node: what stops it from training into ``work`` for the driver (empty: nothing);
    with ``bf16`` (bf16 runs on the CPU), a CPU without bf16 units too. Each problem is a
    ``Said``: the driver says it in its command's language."""
    from attnlab.train import runtime

    problems = []
    if bf16 and runtime.cpu_has_bf16() is False:
        problems.append(Said("has no bf16 units (AVX512-BF16, AMX), where bf16 trains at %s: "
                             "use --precision fp32", Said(runtime.BF16_SLOWDOWN)))
    probe = Path(work) / PROBE_DIR / f"{token}.txt"
    try:
        seen = probe.read_text(encoding="utf-8").strip()
    except OSError as err:
        seen = None
        problems.append(Said("cannot see %s, which the driver wrote (%s): --work must be "
                             "shared storage mounted at the same path on every node", probe,
                             os_reason(err)))
    if seen is not None and seen != token:
        problems.append(Said("%s holds another content than the driver wrote: --work is not "
                             "the same storage there", probe))
    if seen == token:
        lock = lock_problem(probe.with_suffix(".lock"), work)
        if lock:
            problems.append(lock)
    mine = node_facts()
    differ = [Said("%s %s (driver: %s)", k, mine[k], driver[k]) for k in FACTS
              if mine[k] != driver[k]]
    if differ:
        problems.append(Said("runs differently here: %s", joined(differ, ", ")))
    return problems


def joined(parts: list[str], sep: str) -> Said:
    """``sep.join(parts)`` kept in parts, so that each part (a ``Said``) is said in the
    language too.

    >>> joined([Said("cannot lock %s (%s)", "x", "ENOLCK"), "other"], "; ")
    'cannot lock x (ENOLCK); other'
    """
    return Said(sep.join(["%s"] * len(parts)), *parts)


def node_name(node: dict[str, Any]) -> str:
    """``10.0.0.3 (1a2b3c)``: a node's address and the start of its Ray id."""
    return f"{node.get('NodeManagerAddress', '?')} ({node['NodeID'][:6]})"


def preflight(ray: Any, work: Path, resource: str = "CPU", bf16: bool = False) -> int:
    """Check every alive node with ``resource`` (CPU, or GPU for CUDA runs), and with
    ``bf16`` its CPU's bf16 units; the number of nodes checked. A node that fails is one
    ``UsageError`` line naming it."""
    import fcntl

    from ray.exceptions import TaskUnschedulableError
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from attnlab.files import write_text

    nodes = [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get(resource, 0) > 0]
    if not nodes:
        raise UsageError("the Ray cluster has no live node with a %s to train on", resource)
    work = Path(work).resolve()
    token = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    probe = work / PROBE_DIR / f"{token}.txt"
    write_text(probe, token + "\n")
    lock = probe.with_suffix(".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            raise UsageError("file locking (flock) does not work in %s on this machine (%s): "
                             "put --work on a file system with flock", work, os_reason(err)) \
                from None
        check = ray.remote(num_cpus=0, max_retries=0)(check_node)
        facts = node_facts()
        refs = {check.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(str(work), token, facts, bf16): n for n in nodes}
        ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=ANSWER_S)
        failed = [(refs[r], [Said("did not answer the preflight check within %.0f s",
                                  ANSWER_S)]) for r in late]
        gone = 0
        for ref in ready:
            try:
                problems = ray.get(ref)
            except TaskUnschedulableError:  # the node died after it was listed: it takes no run
                log.info("preflight: node %s is gone, not checked", node_name(refs[ref]))
                gone += 1
                continue
            except Exception as err:  # noqa: BLE001 - any failure there is that node's problem
                problems = [Said("the preflight check failed: %s", type(err).__name__)]
            if problems:
                failed.append((refs[ref], problems))
    finally:
        os.close(fd)
        for path in (probe, lock):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # another driver's check may be using it
            probe.parent.rmdir()
    if failed:
        node, problems = failed[0]
        if len(failed) > 1:
            raise UsageError("preflight: node %s %s (and %s more node(s))", node_name(node),
                             joined(problems, "; "), len(failed) - 1)
        raise UsageError("preflight: node %s %s", node_name(node), joined(problems, "; "))
    if gone == len(nodes):
        raise UsageError("the Ray cluster has no live node with a %s to train on", resource)
    return len(nodes) - gone
