"""``train.denormals``: subnormal floats kept (the default, hash unchanged) or flushed to zero
inside a CPU run, and the √d_k experiment's runs flushing them."""

from __future__ import annotations

import pytest
import torch

from attnlab.errors import UsageError
from attnlab.experiments import sqrt_dk
from attnlab.train.run_config import RunConfig, load_run_config, run_hash
from attnlab.train.runtime import denormal_mode

TINY = 1e-39  # below float32's smallest normal number (1.18e-38)


def _survives() -> bool:
    return torch.tensor([TINY], dtype=torch.float32).mul(1.0).item() != 0.0


def test_the_choice_is_checked_and_keep_leaves_earlier_hashes_alone():
    with pytest.raises(UsageError, match=r"train.denormals .zero.; choose one of: keep, flush"):
        load_run_config(None, ["train.denormals=zero"])
    assert run_hash(RunConfig()) == "c132a12a45f5"  # the defaults' hash from before the field
    flushed = load_run_config(None, ["train.denormals=flush"])
    assert flushed.train.denormals == "flush" and run_hash(flushed) != "c132a12a45f5"


def test_flush_zeroes_subnormals_inside_the_block_only():
    assert _survives()
    with denormal_mode(torch.device("cpu"), "flush"):
        assert not _survives()
    assert _survives()
    with denormal_mode(torch.device("cpu"), "keep"):
        assert _survives()
    with denormal_mode(torch.device("cuda"), "flush"):  # a CUDA run leaves the CPU alone
        assert _survives()


@pytest.mark.parametrize("profile", ["full", "quick", "micro"])
def test_every_sqrt_dk_run_flushes(profile: str):
    specs = sqrt_dk.plan(sqrt_dk.PROFILES[profile])
    assert specs and {s.config.train.denormals for s in specs} == {"flush"}
