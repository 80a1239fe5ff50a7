"""Distributed data parallel on the CPU: two gloo processes end with the same weights.

The fast test forks two workers with the environment ``torchrun`` would give
them (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), so the trainer
takes exactly its torchrun path; forking reuses the parent's imported torch,
which keeps the test within seconds. A slow test runs the real ``torchrun``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from safetensors.torch import load_file

from attnlab.train.distributed import sampler_seed
from attnlab.train.run_config import load_run_config
from attnlab.train.rundir import read_metrics

TINY = [
    "model.vocab_size=32", "model.d_model=16", "model.n_ctx=16", "model.n_head=2",
    "model.dropout=0.1", "train.steps=6", "train.batch_size=4", "train.log_every=2",
    "train.eval_every=0", "train.ckpt_every=3", "train.eval_batch_size=8", "train.device=cpu",
]


def tokens() -> SimpleNamespace:
    rng = np.random.default_rng(0)
    toks = rng.integers(0, 29, 1200)
    return SimpleNamespace(train=toks[:1000], held=toks[1000:], tokenizer=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank: int, world: int, port: int, run_dir: str, out_dir: str) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    from attnlab.train.trainer import train

    result = train(load_run_config(None, TINY), Path(run_dir), data=tokens())
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(result))


def test_two_gloo_processes_keep_identical_weights(tmp_path):
    import torch._dynamo  # noqa: F401 - imported once here, not in each forked worker

    run_dir, out = tmp_path / "run", tmp_path / "out"
    out.mkdir()
    mp.start_processes(worker, args=(2, free_port(), str(run_dir), str(out)), nprocs=2,
                       start_method="fork")
    r0, r1 = (json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1))
    assert r0["world_size"] == r1["world_size"] == 2
    assert r0["weights_sha256"] == r1["weights_sha256"]  # the ranks stayed in sync
    assert r0["final_loss"] == r1["final_loss"]  # the logged loss is the mean over ranks
    assert r0["tokens_seen"] == 6 * 4 * 16 * 2
    # Only rank 0 wrote files, once each: one metrics line per log step.
    assert [r["step"] for r in read_metrics(run_dir) if r["kind"] == "train"] == [2, 4, 6]
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    assert len(state["rng"]) == 2 and state["rng"][0]["sampler"] != state["rng"][1]["sampler"]
    weights = load_file(str(run_dir / "checkpoint" / "model.safetensors"))
    assert all(torch.isfinite(t).all() for t in weights.values())


def test_each_rank_samples_its_own_batches():
    seeds = {sampler_seed(s, r) for s in range(3) for r in range(4)}
    assert len(seeds) == 12 and all(0 <= s < 2**63 for s in seeds)
    assert sampler_seed(0, 1) == sampler_seed(0, 1)


@pytest.mark.slow
def test_real_torchrun(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_train_ddp import TINY, tokens
        from attnlab.train.run_config import load_run_config
        from attnlab.train.trainer import train
        result = train(load_run_config(None, TINY), {str(tmp_path / "run")!r}, data=tokens())
        with open(os.path.join({str(tmp_path)!r}, "rank" + os.environ["RANK"]), "w") as fh:
            json.dump(result, fh)
    """))
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc_per_node=2", str(script)], check=True, timeout=300,
                   env={**os.environ, "OMP_NUM_THREADS": "1"})
    r0, r1 = (json.loads((tmp_path / f"rank{r}").read_text()) for r in (0, 1))
    assert r0["weights_sha256"] == r1["weights_sha256"] and r0["world_size"] == 2
