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

And an estimate of the best step: every part of the fp32 step timed alone at
the step's own shapes, forward and backward (the linear GEMMs above, the
attention kernel, the cross-entropy over the vocabulary, GELU, LayerNorm, one
AdamW step). Their sum is about the time of a step that wasted nothing
between PyTorch's kernels, and FLOPs over that time about the share of peak
those kernels allow here. An estimate, not a bound: a part timed alone runs
with caches warmed by itself, so a real step can come in a little under it.

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
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.data.dataset import load_token_data
from attnlab.nn.attention import attention
from attnlab.nn.config import ModelConfig
from attnlab.nn.model import LanguageModel
from attnlab.train.config import load_run_config
from attnlab.train.trainer import train


def best_seconds(fn: Callable[[], object], repeats: int = 5) -> float:
    """Fastest of ``repeats`` calls of ``fn``, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def best_mm_seconds(rows: int, inner: int, cols: int, repeats: int = 5) -> float:
    """Fastest of ``repeats`` fp32 ``torch.mm`` of (rows × inner)·(inner × cols), warmed up."""
    a, b = torch.randn(rows, inner), torch.randn(inner, cols)
    return best_seconds(lambda: torch.mm(a, b), repeats)


def matmul_peak(n: int = 2048, repeats: int = 5) -> float:
    """Best fp32 FLOP/s of ``torch.mm`` on two n×n matrices."""
    return 2 * n**3 / best_mm_seconds(n, n, n, repeats)


def linear_gemms(model: nn.Module, tokens: int, repeats: int = 5) -> tuple[float, float]:
    """(FLOPs, seconds) of the model's linear-layer GEMMs in one step, each timed alone.

    Every ``nn.Linear`` (out × in) does three matmuls per training step on ``tokens``
    rows: the forward (tokens × in)·(in × out), the input gradient (tokens × out)·
    (out × in) and the weight gradient (out × tokens)·(tokens × in).
    """
    shapes = []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            n_out, n_in = m.weight.shape
            shapes += [(tokens, n_in, n_out), (tokens, n_out, n_in), (n_out, tokens, n_in)]
    flops = sum(2 * rows * inner * cols for rows, inner, cols in shapes)
    return flops, sum(best_mm_seconds(*shape, repeats) for shape in shapes)


def gemm_ceiling(model: nn.Module, tokens: int, peak: float, repeats: int = 5) -> float:
    """Share of ``peak`` reached by the model's own linear-layer GEMMs, timed alone.

    Timed one by one at exactly the step's shapes, with nothing else running, they
    give the highest share of the square-matmul peak the step's matmuls reach here.
    """
    flops, seconds = linear_gemms(model, tokens, repeats)
    return flops / seconds / peak


def _forward_backward(fn: Callable[..., Tensor], *shapes: tuple[int, ...]) -> Callable[[], None]:
    """A closure running ``fn`` on fresh-gradient random inputs, forward and backward."""
    inputs = [torch.randn(shape, requires_grad=True) for shape in shapes]

    def run() -> None:
        for x in inputs:
            x.grad = None
        fn(*inputs).sum().backward()

    return run


def step_parts(cfg: ModelConfig, batch: int, repeats: int = 5) -> dict[str, float]:
    """Seconds of each part of one fp32 training step of ``cfg``, each timed alone.

    Shapes are the step's own: ``batch · n_ctx`` tokens of width c, h heads of
    width c/h, hidden width 4c, V outputs; one kernel per block where the model
    has one per block. The cross-entropy is timed on given logits (their GEMM is
    in ``linear GEMMs``); LayerNorm counts the two per block and the final one.
    """
    model = LanguageModel(cfg)
    tokens, c, layers = batch * cfg.n_ctx, cfg.d_model, cfg.n_layer
    heads, width = cfg.n_head, cfg.d_model // cfg.n_head
    qkv = (batch, heads, cfg.n_ctx, width)  # (b, h, t, d)
    targets = torch.randint(cfg.vocab_size, (tokens,))
    norm = nn.LayerNorm(c)
    gelu = nn.GELU(approximate="tanh" if cfg.gelu == "tanh" else "none")
    optimizer = torch.optim.AdamW(model.parameters())
    for p in model.parameters():
        p.grad = torch.randn_like(p)

    def core(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        return attention(q, k, v, causal=True, backend=cfg.backend)[0]

    timed = {
        "attention kernel": (_forward_backward(core, qkv, qkv, qkv), layers),
        "cross-entropy": (_forward_backward(
            lambda z: F.cross_entropy(z, targets), (tokens, cfg.vocab_size)), 1),
        "GELU": (_forward_backward(gelu, (tokens, cfg.mlp_ratio * c)), layers),
        "LayerNorm": (_forward_backward(norm, (tokens, c)), 2 * layers + 1),
        "AdamW": (optimizer.step, 1),
    }
    parts = {"linear GEMMs": linear_gemms(model, tokens, repeats)[1]}
    for name, (fn, count) in timed.items():
        parts[name] = count * best_seconds(fn, repeats)
    return parts


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
    result["model_config"] = cfg.model
    result["batch_size"] = cfg.train.batch_size
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
    for n_layer in (1, 2):
        fp32 = rows[n_layer, "fp32"]
        parts = step_parts(fp32["model_config"], fp32["batch_size"])
        parts_s = sum(parts.values())
        step = fp32["tokens_per_step"] / fp32["tokens_per_s"]
        budget = fp32["tokens_per_step"] * fp32["flops_per_token"] / (0.65 * peak)
        best = fp32["tokens_per_step"] * fp32["flops_per_token"] / (parts_s * peak)
        listed = ", ".join(f"{name} {1e3 * s:.0f}" for name, s in parts.items())
        print(f"{n_layer} block(s), fp32 step parts timed alone (ms): {listed}; sum "
              f"{1e3 * parts_s:.0f} ms, against {1e3 * step:.0f} ms measured per step and "
              f"{1e3 * budget:.0f} ms allowed at 65% of peak: a step of nothing but these "
              f"kernels would reach about {100 * best:.1f}% of peak")
    fp32, bf16 = rows[1, "fp32"], rows[1, "bf16"]
    gap = bf16["held_ppl"] / fp32["held_ppl"] - 1
    print(f"held-out ppl after {args.steps} steps: fp32 {fp32['held_ppl']:.3f}, bf16 "
          f"{bf16['held_ppl']:.3f} ({100 * gap:+.2f}%; target within 1%: "
          f"{'met' if abs(gap) <= 0.01 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
