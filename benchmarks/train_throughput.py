"""Training throughput of the default model, against this machine's own matmul peak.

Measured side by side in one run (no asserts; the figures are printed):

1. The fp32 matmul peak of this machine: the best of several ``torch.mm`` of
   two n×n fp32 matrices (2·n³ FLOPs each).
2. For 1 and 2 blocks at the spec's defaults (width 128, context 128, batch 64,
   vocabulary 1,024, 4 heads, pre-norm, MLP), fp32 and CPU bf16 autocast:
   training tokens/s through ``attnlab.train.train`` (sampling, forward,
   backward, AdamW), the FLOP/s that implies, and its ratio to the peak.
3. Held-out perplexity after ``--steps`` (300) steps of the 1-block model in
   fp32 and in bf16, and the bf16/fp32 speed ratio.

FLOPs per trained token (Kaplan et al. 2020; attention term as in Chowdhery
et al. 2022, PaLM, appendix B):

    6 · N  +  12 · L · T · d

with N the weights of every linear map (q, k, v, o, MLP, output layer; the
embedding tables are lookups, not matmuls), L blocks, T context and d width.
The 6 is 2 (multiply-add) × 3 (forward, and backward for inputs and weights);
the second term is QKᵀ and AV over the full T×T matrix (the naive kernel
computes the masked half too). Norms, softmax, GELU and the optimizer are not
counted, so the ratio to peak is a lower bound on the hardware's use.

Beside it the script prints a ceiling: the model's linear-layer matmuls at
their own shapes (tokens × 128 by 128 × 128 and the like, and their two
backward products), timed alone. Thin matmuls run well below the square
2048×2048 peak, so this bounds what any training step of this model can reach.

Targets printed beside the figures: fp32 ≥ 65% of peak; bf16 ≥ 1.3× fp32
with held-out perplexity within 1%. CPUs without bf16 matrix instructions
(AVX512-BF16 / AMX) will not reach the bf16 target.

    python benchmarks/train_throughput.py [--steps 300] [--timing-steps 30] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

from attnlab.data.dataset import load_token_data
from attnlab.nn.model import LanguageModel
from attnlab.train.config import load_run_config
from attnlab.train.trainer import train


def best_mm_seconds(rows: int, inner: int, cols: int, repeats: int = 5) -> float:
    """Fastest of ``repeats`` fp32 ``torch.mm`` of (rows × inner)·(inner × cols), warmed up."""
    a, b = torch.randn(rows, inner), torch.randn(inner, cols)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    return best


def matmul_peak(n: int = 2048, repeats: int = 5) -> float:
    """Best fp32 FLOP/s of ``torch.mm`` on two n×n matrices."""
    return 2 * n**3 / best_mm_seconds(n, n, n, repeats)


def gemm_ceiling(model: nn.Module, tokens: int, peak: float, repeats: int = 5) -> float:
    """Share of ``peak`` reached by the model's own linear-layer GEMMs, timed alone.

    Every ``nn.Linear`` (out × in) does three matmuls per training step on ``tokens``
    rows: the forward (tokens × in)·(in × out), the input gradient (tokens × out)·
    (out × in) and the weight gradient (out × tokens)·(tokens × in). Timed one by
    one at exactly those shapes, with nothing else running in the step, they give
    the highest share of the square-matmul peak the step's matmuls can reach here.
    """
    shapes = []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            n_out, n_in = m.weight.shape
            shapes += [(tokens, n_in, n_out), (tokens, n_out, n_in), (n_out, tokens, n_in)]
    flops = sum(2 * rows * inner * cols for rows, inner, cols in shapes)
    seconds = sum(best_mm_seconds(*shape, repeats) for shape in shapes)
    return flops / seconds / peak


def flops_per_token(model: nn.Module, n_layer: int, n_ctx: int, d_model: int) -> float:
    """6·N + 12·L·T·d (see the module docstring)."""
    n = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    return 6 * n + 12 * n_layer * n_ctx * d_model


def one_run(data, n_layer: int, precision: str, steps: int, backend: str) -> dict:
    cfg = load_run_config(None, [
        f"model.n_layer={n_layer}", f"model.backend={backend}", f"train.steps={steps}",
        f"train.precision={precision}", "train.device=cpu", "train.eval_every=0",
        "train.ckpt_every=0", f"train.log_every={steps}",
    ])
    with tempfile.TemporaryDirectory() as tmp:
        result = train(cfg, Path(tmp), data=data)
    model = LanguageModel(cfg.model)
    result["flops_per_token"] = flops_per_token(model, n_layer, cfg.model.n_ctx, cfg.model.d_model)
    result["model"] = model
    result["tokens_per_step"] = cfg.train.batch_size * cfg.model.n_ctx
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300,
                        help="steps of the 1-block runs whose perplexity is compared")
    parser.add_argument("--timing-steps", type=int, default=30,
                        help="steps of the 2-block runs (speed only)")
    parser.add_argument("--corpus", default=None, help="text file (default: Tiny Shakespeare)")
    parser.add_argument("--backend", default="naive", choices=("naive", "sdpa", "memeff"))
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)

    data = load_token_data(args.corpus)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"backend {args.backend}")
    train(load_run_config(None, ["model.d_model=16", "model.n_ctx=16", "model.n_head=2",
                                 "train.steps=2", "train.device=cpu"]),
          Path(tempfile.mkdtemp()), data=data)  # pay one-time imports outside the timings
    peak = matmul_peak()
    print(f"fp32 matmul peak (torch.mm 2048x2048): {peak / 1e9:.1f} GFLOP/s")
    rows = {}
    for n_layer, steps in ((1, args.steps), (2, args.timing_steps)):
        for precision in ("fp32", "bf16"):
            rows[n_layer, precision] = one_run(data, n_layer, precision, steps, args.backend)
    print()
    print("| blocks | precision | steps | tokens/s | GFLOP/s | % of fp32 peak | held-out ppl |")
    print("|---|---|---|---|---|---|---|")
    for (n_layer, precision), r in rows.items():
        flops = r["tokens_per_s"] * r["flops_per_token"]
        print(f"| {n_layer} | {precision} | {r['steps']} | {r['tokens_per_s']:,.0f} | "
              f"{flops / 1e9:.1f} | {100 * flops / peak:.1f}% | {r['held_ppl']:.2f} |")
    print()
    for n_layer in (1, 2):
        fp32, bf16 = rows[n_layer, "fp32"], rows[n_layer, "bf16"]
        share = fp32["tokens_per_s"] * fp32["flops_per_token"] / peak
        speed = bf16["tokens_per_s"] / fp32["tokens_per_s"]
        ceiling = gemm_ceiling(fp32["model"], fp32["tokens_per_step"], peak)
        print(f"{n_layer} block(s): fp32 at {100 * share:.1f}% of peak (target >= 65%: "
              f"{'met' if share >= 0.65 else 'NOT met'}); its linear layers' GEMMs timed "
              f"alone at their own shapes reach {100 * ceiling:.1f}% of peak; bf16/fp32 "
              f"speed {speed:.2f}x (target >= 1.3x: {'met' if speed >= 1.3 else 'NOT met'})")
    fp32, bf16 = rows[1, "fp32"], rows[1, "bf16"]
    gap = bf16["held_ppl"] / fp32["held_ppl"] - 1
    print(f"held-out ppl after {args.steps} steps: fp32 {fp32['held_ppl']:.3f}, bf16 "
          f"{bf16['held_ppl']:.3f} ({100 * gap:+.2f}%; target within 1%: "
          f"{'met' if abs(gap) <= 0.01 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
