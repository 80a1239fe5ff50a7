"""Data-parallel training under ``torchrun``, with PyTorch's own DDP.

``torchrun --nproc_per_node=N`` starts N copies of the program and sets
``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` and the rendezvous address. Each copy
builds the same model from the same seed, samples its own batches (its
generator is seeded by ``(seed, rank)``) and ``DistributedDataParallel``
averages the gradients (Li et al. 2020, "PyTorch Distributed"), so every rank
holds the same weights after each step. The backend is ``nccl`` on CUDA and
``gloo`` on CPU. Only rank 0 writes files. Left out: sharded optimizers (ZeRO,
FSDP), gradient accumulation and tensor/pipeline parallelism.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class DistInfo:
    """Where this process sits among the training processes."""

    rank: int = 0  # global index of this process
    world_size: int = 1  # number of processes
    local_rank: int = 0  # index on this machine (picks the GPU)
    owns_group: bool = False  # we called init_process_group, so we tear it down

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def setup(device_type: str) -> DistInfo:
    """Join the process group when launched with ``WORLD_SIZE > 1``; else a single process."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistInfo()
    rank = int(os.environ["RANK"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    owns = False
    if not dist.is_initialized():
        if device_type == "cuda":
            torch.cuda.set_device(local)
        dist.init_process_group(backend="nccl" if device_type == "cuda" else "gloo")
        owns = True
    return DistInfo(rank=rank, world_size=world, local_rank=local, owns_group=owns)


def teardown(info: DistInfo) -> None:
    if info.owns_group and dist.is_initialized():
        dist.destroy_process_group()


def sampler_seed(seed: int, rank: int) -> int:
    """A 63-bit seed for the batch sampler of ``rank``, distinct for each (seed, rank)."""
    digest = hashlib.sha256(f"attnlab-sampler:{seed}:{rank}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def mean_across(value: torch.Tensor, info: DistInfo) -> torch.Tensor:
    """The mean of a scalar tensor over all ranks (the value itself on one process)."""
    if not info.enabled:
        return value
    out = value.detach().clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out / info.world_size


def gather(obj: Any, info: DistInfo) -> list[Any]:
    """``[obj of rank 0, obj of rank 1, ...]`` on every rank."""
    if not info.enabled:
        return [obj]
    out: list[Any] = [None] * info.world_size
    dist.all_gather_object(out, obj)
    return out


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()
