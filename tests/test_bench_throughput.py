"""benchmarks/train_throughput.py: its FLOP count by hand, its GEMM ceiling and step parts on a
tiny model, the two training steps it compares, and a smoke run of the whole script (no timing
assertions: the figures are the script's to print, not the tests' to judge)."""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
from benchmark_modules import load_benchmark, run_benchmark

from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig

bench = load_benchmark("train_throughput")
harness = load_benchmark("harness")

TINY = ["--d-model", "16", "--n-head", "2", "--n-ctx", "8", "--vocab", "64", "--batch", "4"]


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


def _args():  # noqa: ANN202 - argparse namespace
    """The sizes of TINY, as the script's parser would give them."""
    return bench.argparse.Namespace(d_model=16, n_head=2, n_ctx=8, vocab=64, batch=4, device="cpu")


def test_run_config_takes_the_command_line_sizes_and_lets_a_caller_override_them():
    cfg = bench.run_config(_args(), n_layer=2, d_model=32)
    m = cfg.model
    assert (m.d_model, m.n_layer, m.n_head, m.n_ctx) == (32, 2, 2, 8)
    assert (m.vocab_size, cfg.data.vocab_size, cfg.train.batch_size) == (64, 64, 4)
    assert m.replace(d_model=128, n_layer=1, n_head=4, n_ctx=128, vocab_size=1024) == ModelConfig()


def test_hf_model_has_attnlab_sizes_and_no_dropout():
    cfg = bench.run_config(_args(), n_layer=2)
    hf = harness.hf_gpt2(cfg.model)
    assert harness.hf_sizes(hf) == harness.attnlab_sizes(cfg.model)
    assert harness.hf_sizes(hf) == {"vocab_size": 64, "pos_rows": 8, "d_model": 16, "n_layer": 2,
                                   "n_head": 2, "dropout": 0.0}
    assert sum(p.numel() for p in hf.parameters()) > 0


def test_both_steps_train_on_the_same_batches_and_targets():
    cfg = bench.run_config(_args(), n_layer=1)
    data = bench.random_tokens(64, n=2_000)
    ours = bench.attnlab_step(cfg, data.train)
    theirs, hf = bench.hf_step(cfg, data.train)
    # The same sampler seed on both sides: the same (x, y) windows, step after step.
    sampler = torch.Generator().manual_seed(cfg.train.seed)
    x, y = bench.sample_batch(data.train, cfg.train.batch_size, cfg.model.n_ctx, sampler)
    with torch.no_grad():
        expected = F.cross_entropy(hf(input_ids=x).logits.reshape(-1, 64), y.reshape(-1))
    hf_loss = theirs()  # HF's own loss with shift_labels scores y[:, t] at position t
    assert abs(hf_loss - float(expected)) < 1e-5
    losses = [ours() for _ in range(3)]
    assert all(loss == loss and loss > 0 for loss in losses)
    assert losses[-1] < losses[0] + 1.0  # it trains (no divergence on random tokens)


def test_script_prints_parseable_ratios_and_matching_sizes():
    out = run_benchmark("train_throughput", "--random-data", *TINY, "--rounds", "2",
                        "--round-steps", "1", "--threads", "1", "--bf16-widths", "32",
                        "--bf16-rounds", "1", "--peak-n", "64").stdout
    assert out.startswith("processor: ") and "load average" in out
    ratios = re.findall(r"^ratio (\d) block\(s\): attnlab / HF tokens/s = ([\d.]+)x best rounds "
                        r"\(([\d.]+)x medians.*\(target >= ([\d.]+)x: (met|NOT met)\)$", out, re.M)
    assert [(r[0], r[3]) for r in ratios] == [("1", "1.8"), ("2", "1.6")]
    for _, best, median, target, said in ratios:
        assert float(best) > 0 and float(median) > 0
        assert said == ("met" if float(best) >= float(target) else "NOT met")
    bounds = re.findall(r"^bound (\d) block\(s\): .* would be ([\d.]+)x HF's best step$", out, re.M)
    assert [b[0] for b in bounds] == ["1", "2"] and all(float(b[1]) > 0 for b in bounds)
    assert re.findall(r"^check (\d) block\(s\): HF sizes == attnlab sizes .*: (\w+)$", out,
                      re.M) == [("1", "yes"), ("2", "yes")]
    assert re.search(r"^bf16 width 32: .*bf16/fp32 speed = [\d.]+x \((faster|slower.*)\)$", out,
                     re.M)
