"""A ``kill -9`` of the command leaves no orphan trainers: the pool's workers end when
their parent does (issue 27)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import sys, types
    from pathlib import Path
    import numpy as np
    from attnlab.running.executors import Job, LocalPool
    from attnlab.running.runner import Runner, RunSpec
    from attnlab.nn.model_config import ModelConfig
    from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

    if __name__ == "__main__":
        work = Path(sys.argv[1])
        cfg = RunConfig(model=ModelConfig(vocab_size=64, d_model=8, n_ctx=8, n_head=2),
                        train=TrainConfig(steps=10_000_000, batch_size=2, eval_every=0,
                                          ckpt_every=0, log_every=1_000_000),
                        data=DataConfig(vocab_size=64))
        data = types.SimpleNamespace(train=np.arange(400) % 64, held=np.arange(100) % 64)
        spec = Runner(work, device="cpu").resolve(RunSpec("endless", cfg, data))
        LocalPool(1, "cpu").run([spec], Job(work))  # trains until killed
""")


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True, check=False).stdout
    return [int(p) for p in out.split()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _ended(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
def test_workers_end_when_the_main_process_is_killed(tmp_path):
    script = tmp_path / "pool.py"
    script.write_text(SCRIPT)
    main = subprocess.Popen([sys.executable, str(script), str(tmp_path / "work")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while not workers and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [c for c in _children(main.pid)
                       if "spawn_main" in _cmdline(c) and "resource_tracker" not in _cmdline(c)]
        assert workers, "no worker started"
        # training has begun once the run directory holds its lock
        while not list((tmp_path / "work").glob("*/.lock")) and time.monotonic() < deadline:
            time.sleep(0.2)
        os.kill(main.pid, signal.SIGKILL)
        main.wait()
        gone = time.monotonic() + 20
        while not all(_ended(w) for w in workers) and time.monotonic() < gone:
            time.sleep(0.2)
        assert all(_ended(w) for w in workers), "an orphan worker is still training"
    finally:
        for pid in [main.pid, *workers]:
            if not _ended(pid):
                os.kill(pid, signal.SIGKILL)
