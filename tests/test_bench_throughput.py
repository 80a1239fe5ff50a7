"""benchmarks/train_throughput.py: its FLOP count by hand and its GEMM ceiling on a tiny model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from attnlab.nn.config import ModelConfig
from attnlab.nn.model import LanguageModel

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "train_throughput.py"
_spec = importlib.util.spec_from_file_location("train_throughput", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_flops_per_token_by_hand():
    model = LanguageModel(ModelConfig())  # width 128, 1 block, MLP ×4, vocabulary 1,024
    d, v = 128, 1024
    linear = 4 * d * d + 2 * 4 * d * d + d * v  # q, k, v, o; MLP up and down; output layer
    assert bench.flops_per_token(model, 1, 128, d) == 6 * linear + 12 * 1 * 128 * d


def test_gemm_ceiling_is_a_share_of_the_peak():
    model = LanguageModel(ModelConfig(d_model=16, n_head=2, n_ctx=8, vocab_size=32))
    peak = bench.matmul_peak(n=64, repeats=2)
    share = bench.gemm_ceiling(model, tokens=64, peak=peak, repeats=2)
    assert share > 0 and share == share  # a positive, finite share (may exceed 1 on tiny shapes)


def test_step_parts_time_every_part_of_the_step():
    cfg = ModelConfig(d_model=16, n_head=2, n_ctx=8, vocab_size=32, n_layer=2, backend="sdpa")
    parts = bench.step_parts(cfg, batch=4, repeats=2)
    assert list(parts) == ["linear GEMMs", "attention kernel", "cross-entropy", "GELU",
                           "LayerNorm", "AdamW"]
    assert all(0 < seconds < 10 for seconds in parts.values())
