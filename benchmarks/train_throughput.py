"""Training throughput: attnlab's default step against Hugging Face GPT-2, and the matmul peak.

Measured side by side in one process, rounds interleaved (attnlab, HF,
attnlab, HF, …), best round each, spread printed (``common.interleaved``):

1. The processor (name, flags, load) and its fp32 matmul peak: the best of
   several ``torch.mm`` of two 2048×2048 fp32 matrices (2·n³ FLOPs each).
2. attnlab's default training step against Hugging Face's ``GPT2LMHeadModel``
   at the same configuration (width 128, 4 heads, context 128, vocabulary
   1,024, batch 64, dropout 0, AdamW, fp32), at 1 and 2 blocks, on the same
   batches of Tiny Shakespeare. attnlab's step is what ``attnlab train`` does:
   the default ``ModelConfig``, a batch from the sampler, ``next_token_loss``,
   the loss read back (the divergence check), backward, and the optimizer of
   ``attnlab.train.speed.make_optimizer``. Hugging Face's is its own loss
   (``labels``, with ``shift_labels`` so both score the same next tokens) and
   its Trainer's default optimizer for torch ≥ 2.8, fused AdamW
   (``adamw_torch_fused``), with the same hyperparameters; its attention kernel
   is its default (printed), its cache is off while training. Printed:
   tokens/s, the share of the fp32 matmul peak, and the ratio against the
   targets (≥ 1.8× at 1 block, ≥ 1.6× at 2).
3. bf16 autocast against fp32 (attnlab's step) at the default width and, on a
   CPU with bf16 instructions (AVX512-BF16, AMX), at width 512. Only such CPUs
   can gain; elsewhere autocast converts around fp32 arithmetic and is slower
   (0.06x at width 128 and 0.03x at width 512 on the AVX2-only EPYC, where a
   width-512 bf16 step takes a minute and a half), and fp32 stays the default.
4. ``--parts``: every part of the fp32 step timed alone at the step's shapes
   (``step_parts``), and the model's linear-layer GEMMs alone against the peak
   (``gemm_ceiling``): where the time goes. ``--ppl-steps N``: held-out
   perplexity after N steps of the trainer in fp32 and bf16.

FLOPs per trained token (Kaplan et al. 2020; attention term as in Chowdhery
et al. 2022, PaLM, appendix B): ``6 · N + 12 · L · T · d`` with N the weights of
every linear map (q, k, v, o, MLP, output layer; embeddings are lookups), L
blocks, T context, d width. The 6 is 2 (multiply-add) × 3 (forward, and
backward for inputs and weights); the second term is QKᵀ and AV over the full
T×T matrix. Norms, softmax, GELU and the optimizer are not counted, so the
share of peak is a lower bound on the hardware's use. Both models do the same
matmuls, so the same count serves both.

On a GPU (``--device cuda``) both sides train there, each round closed by a
synchronisation; ``--precision bf16`` runs both under bf16 autocast and takes
the peak from bf16 products; ``--parts`` stays a CPU analysis.

    python -m benchmarks.train_throughput [--blocks 1 2] [--rounds 8] [--threads 2] [--parts]
    python -m benchmarks.train_throughput --device cuda [--precision bf16]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from attnlab.cli.process import configure_process
from attnlab.data.dataset import load_token_data, sample_batch
from attnlab.nn.attention import attention, resolve_backend
from attnlab.nn.model import LanguageModel, next_token_loss
from attnlab.nn.model_config import ModelConfig
from attnlab.train.run_config import RunConfig, load_run_config
from attnlab.train.runtime import autocast, build_model, cpu_has_bf16
from attnlab.train.speed import make_optimizer, maybe_compile
from attnlab.train.trainer import train

from .harness import (
    attnlab_sizes,
    device_line,
    hf_gpt2,
    hf_sizes,
    interleaved,
    processor,
    spread,
    synchronizer,
    verdict,
)

CPU = torch.device("cpu")
TARGETS = {1: 1.8, 2: 1.6}  # attnlab / HF tokens/s, by number of blocks (issue 12)


def best_seconds(fn: Callable[[], object], repeats: int = 5,
                 sync: Callable[[], None] = lambda: None) -> float:
    """Fastest of ``repeats`` calls of ``fn`` (each closed by ``sync``), after a warm-up call."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def best_mm_seconds(rows: int, inner: int, cols: int, repeats: int = 5,
                    device: torch.device = CPU,
                    dtype: torch.dtype = torch.float32) -> float:
    """Fastest of ``repeats`` ``torch.mm`` of (rows × inner)·(inner × cols), warmed up."""
    a = torch.randn(rows, inner, device=device, dtype=dtype)
    b = torch.randn(inner, cols, device=device, dtype=dtype)
    return best_seconds(lambda: torch.mm(a, b), repeats, synchronizer(device))


def matmul_peak(n: int = 2048, repeats: int = 5, device: torch.device = CPU,
                dtype: torch.dtype = torch.float32) -> float:
    """Best FLOP/s of ``torch.mm`` on two n×n matrices (fp32 unless ``dtype`` says)."""
    return 2 * n**3 / best_mm_seconds(n, n, n, repeats, device, dtype)


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
    """Share of ``peak`` reached by the model's own linear-layer GEMMs, timed alone."""
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
    targets = torch.randint(cfg.vocab_size, (batch, cfg.n_ctx))
    norm = nn.LayerNorm(c)
    gelu = nn.GELU(approximate="tanh" if cfg.gelu == "tanh" else "none")
    optimizer = make_optimizer(model, RunConfig().train)
    for p in model.parameters():
        p.grad = torch.randn_like(p)

    def core(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        return attention(q, k, v, causal=True, backend=cfg.backend)[0]

    timed = {
        "attention kernel": (_forward_backward(core, qkv, qkv, qkv), layers),
        "cross-entropy": (_forward_backward(
            lambda z: next_token_loss(z, targets), (batch, cfg.n_ctx, cfg.vocab_size)), 1),
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


def attnlab_step(cfg: RunConfig, train_tokens: np.ndarray, precision: str = "fp32") -> Callable:
    """One training step as ``attnlab train`` takes it (see the module docstring), on
    ``cfg.train.device``."""
    device = torch.device(cfg.train.device)
    # the kernel `attnlab train` would use at this device and precision (KERNEL_TABLE)
    kernel = resolve_backend(cfg.model.backend, device.type, precision)
    model = build_model(cfg.replace(model=cfg.model.replace(backend=kernel)), device)
    optimizer = make_optimizer(model, cfg.train)
    net = maybe_compile(model, device, enabled=cfg.train.compile)  # eager unless asked for
    sampler = torch.Generator().manual_seed(cfg.train.seed)
    amp, tc = autocast(device, precision), cfg.train

    def step() -> float:
        for group in optimizer.param_groups:
            group["lr"] = tc.lr
        x, y = sample_batch(train_tokens, tc.batch_size, cfg.model.n_ctx, sampler)  # (B, T) each
        x, y = x.to(device), y.to(device)
        with amp:
            logits = net(x)  # (B, T, V)
        loss = next_token_loss(logits, y)
        value = float(loss.detach())  # the trainer reads every loss (divergence check)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return value

    return step


def hf_step(cfg: RunConfig, train_tokens: np.ndarray,
            precision: str = "fp32") -> tuple[Callable, Any]:
    """One training step of Hugging Face's GPT-2 at ``cfg``'s sizes, on the same batches, on
    ``cfg.train.device`` (under the same autocast as attnlab's step)."""
    torch.manual_seed(cfg.train.seed)
    device = torch.device(cfg.train.device)
    hf = hf_gpt2(cfg.model).to(device)
    hf.train()
    tc, amp = cfg.train, autocast(device, precision)
    # Hugging Face Trainer's default optimizer for torch >= 2.8 ("adamw_torch_fused").
    optimizer = torch.optim.AdamW(hf.parameters(), lr=tc.lr, betas=tc.betas, eps=tc.eps,
                                  weight_decay=tc.weight_decay, fused=True)
    sampler = torch.Generator().manual_seed(tc.seed)

    def step() -> float:
        x, y = sample_batch(train_tokens, tc.batch_size, cfg.model.n_ctx, sampler)  # (B, T) each
        x, y = x.to(device), y.to(device)
        # shift_labels: HF scores y[:, t] at position t, exactly the targets attnlab uses.
        with amp:
            loss = hf(input_ids=x, labels=y, shift_labels=y, use_cache=False).loss
        value = float(loss.detach())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return value

    return step, hf


def run_config(args: argparse.Namespace, **model: Any) -> RunConfig:
    """The default run at the command line's sizes (tests shrink them); ``model`` overrides."""
    sets = [
        f"model.d_model={args.d_model}", f"model.n_head={args.n_head}",
        f"model.n_ctx={args.n_ctx}", f"model.vocab_size={args.vocab}",
        f"data.vocab_size={args.vocab}", f"train.batch_size={args.batch}",
        f"train.device={args.device}",
    ]
    return load_run_config(None, sets + [f"model.{k}={v}" for k, v in model.items()])


def compare_with_hf(
    args: argparse.Namespace, data: Any, peak: float
) -> tuple[dict[int, float], float]:
    """Interleaved rounds of attnlab's and HF's steps at each block count: the ratios, and
    the best peak seen (timed in the same rounds).

    Beside each ratio, its bound on this machine: HF's step time over the time of a
    step that did only its matmul FLOPs (the count above) at 100% of the measured
    fp32 peak: the most any implementation of the same model reaches here unless its
    matmuls outrun torch.mm on large square matrices.
    """
    ratios, bounds = {}, {}
    kind = peak_name(args)
    print(f"| blocks | side | tokens/s, best round | ms/step | % of {kind} peak |")
    print("|---|---|---|---|---|")
    lines = []
    for n_layer in args.blocks:
        cfg = run_config(args, n_layer=n_layer)
        ours = attnlab_step(cfg, data.train, args.precision)
        theirs, hf = hf_step(cfg, data.train, args.precision)
        tokens = cfg.train.batch_size * cfg.model.n_ctx
        flops = flops_per_token(LanguageModel(cfg.model), n_layer, cfg.model.n_ctx,
                                cfg.model.d_model)
        device = torch.device(args.device)
        square = torch.randn(args.peak_n, args.peak_n, device=device, dtype=peak_dtype(args))
        timing = interleaved({"attnlab": ours, "HF GPT-2": theirs,
                              "peak": functools.partial(torch.mm, square, square)},
                             args.rounds, args.round_steps, sync=synchronizer(device))
        # The peak is timed in the same rounds, under the same load: its best round (or the
        # first measurement, if that was better) is what the shares and the bound divide by.
        peak = max(peak, 2 * args.peak_n**3 / timing.pop("peak").best)
        for side, t in timing.items():
            share = tokens / t.best * flops / peak
            print(f"| {n_layer} | {side} | {spread(t, tokens, 'tok/s')} | {1e3 * t.best:.0f} | "
                  f"{100 * share:.1f}% |")
        ratio = timing["HF GPT-2"].best / timing["attnlab"].best
        median = timing["HF GPT-2"].median / timing["attnlab"].median
        ratios[n_layer] = ratio
        at_peak = tokens * flops / peak  # seconds of a step at 100% of the peak, nothing else
        bounds[n_layer] = timing["HF GPT-2"].best / at_peak
        same = attnlab_sizes(cfg.model) == hf_sizes(hf)
        lines.append(f"check {n_layer} block(s): HF sizes == attnlab sizes "
                     f"({attnlab_sizes(cfg.model)}): {'yes' if same else 'NO'}")
        lines.append(f"ratio {n_layer} block(s): attnlab / HF tokens/s = {ratio:.2f}x best rounds "
                     f"({median:.2f}x medians; HF attention "
                     f"{hf.config._attn_implementation}, activation "
                     f"{hf.config.activation_function}) "
                     f"({verdict(ratio, TARGETS.get(n_layer, 0.0))})")
        lines.append(f"bound {n_layer} block(s): a step doing nothing but its matmul FLOPs at "
                     f"100% of the {kind} peak ({peak / 1e9:.1f} GFLOP/s, best of the first "
                     f"measurement and the rounds: {1e3 * at_peak:.0f} ms) would be "
                     f"{bounds[n_layer]:.2f}x HF's best step")
    print()
    print("\n".join(lines))
    return ratios, peak


def compare_bf16(args: argparse.Namespace, data: Any) -> dict[int, float]:
    """bf16 autocast against fp32, attnlab's step, at each width of ``--bf16-widths``."""
    ratios = {}
    for width in args.bf16_widths:
        cfg = run_config(args, d_model=width, n_layer=1)
        timing = interleaved({"fp32": attnlab_step(cfg, data.train, "fp32"),
                              "bf16": attnlab_step(cfg, data.train, "bf16")}, args.bf16_rounds,
                             sync=synchronizer(torch.device(args.device)))
        tokens = cfg.train.batch_size * cfg.model.n_ctx
        ratios[width] = ratio = timing["fp32"].best / timing["bf16"].best
        faster = "faster" if ratio > 1 else "slower: fp32 stays the default"
        print(f"bf16 width {cfg.model.d_model}: fp32 {spread(timing['fp32'], tokens, 'tok/s')}, "
              f"bf16 {spread(timing['bf16'], tokens, 'tok/s')}; bf16/fp32 speed = {ratio:.2f}x "
              f"({faster})")
    return ratios


def print_parts(args: argparse.Namespace, peak: float) -> None:
    """Where an fp32 step's time goes: each part alone, and the linear GEMMs' ceiling."""
    for n_layer in args.blocks:
        cfg = run_config(args, n_layer=n_layer)
        model, tokens = LanguageModel(cfg.model), cfg.train.batch_size * cfg.model.n_ctx
        parts = step_parts(cfg.model, cfg.train.batch_size)
        flops = tokens * flops_per_token(model, n_layer, cfg.model.n_ctx, cfg.model.d_model)
        listed = ", ".join(f"{name} {1e3 * s:.0f}" for name, s in parts.items())
        print(f"{n_layer} block(s), fp32 step parts timed alone (ms): {listed}; sum "
              f"{1e3 * sum(parts.values()):.0f} ms: a step of nothing but these kernels would "
              f"reach about {100 * flops / sum(parts.values()) / peak:.1f}% of peak; the linear "
              f"GEMMs alone reach {100 * gemm_ceiling(model, tokens, peak):.1f}%")


def print_perplexity(args: argparse.Namespace, data: Any) -> None:
    """Held-out perplexity after ``--ppl-steps`` trainer steps, fp32 and bf16 (1 block)."""
    ppl = {}
    for precision in ("fp32", "bf16"):
        sizes = run_config(args, n_layer=1)
        cfg = sizes.replace(train=dataclasses.replace(
            sizes.train, steps=args.ppl_steps, precision=precision, eval_every=0, ckpt_every=0,
            log_every=args.ppl_steps))
        with tempfile.TemporaryDirectory() as tmp:
            ppl[precision] = train(cfg, Path(tmp), data=data)["held_ppl"]
    gap = ppl["bf16"] / ppl["fp32"] - 1
    print(f"held-out ppl after {args.ppl_steps} steps: fp32 {ppl['fp32']:.3f}, bf16 "
          f"{ppl['bf16']:.3f} ({100 * gap:+.2f}%)")


def random_tokens(vocab: int, n: int = 50_000) -> Any:
    """Uniform random tokens standing in for the corpus (``--random-data``: smoke tests)."""
    tokens = torch.randint(vocab, (n,), generator=torch.Generator().manual_seed(0)).numpy()
    return SimpleNamespace(train=tokens[: 9 * n // 10], held=tokens[9 * n // 10 :])


def peak_dtype(args: argparse.Namespace) -> torch.dtype:
    """The products the peak is taken from: bf16 for a bf16 comparison on a GPU, else fp32."""
    return torch.bfloat16 if args.device == "cuda" and args.precision == "bf16" else torch.float32


def peak_name(args: argparse.Namespace) -> str:
    return "bf16" if peak_dtype(args) == torch.bfloat16 else "fp32"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where both sides train (default: cpu)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="both sides of the comparison with HF (default: fp32)")
    parser.add_argument("--blocks", type=int, nargs="*", default=[1, 2],
                        help="block counts compared with HF (none: skip the comparison)")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved rounds per side")
    parser.add_argument("--round-steps", type=int, default=2, help="training steps per round")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--bf16-widths", type=int, nargs="*", default=None,
                        help="widths at which bf16 autocast is timed against fp32 (none: skip; "
                             "default 128 and 512 on a CPU with bf16 instructions, else 128)")
    parser.add_argument("--bf16-rounds", type=int, default=2)
    parser.add_argument("--parts", action="store_true", help="time each part of the step alone")
    parser.add_argument("--ppl-steps", type=int, default=0,
                        help="held-out perplexity after N trainer steps, fp32 and bf16 (0: skip)")
    parser.add_argument("--corpus", default=None, help="text file (default: Tiny Shakespeare)")
    parser.add_argument("--random-data", action="store_true", help="random tokens (smoke tests)")
    for name, default in (("d-model", 128), ("n-head", 4), ("n-ctx", 128), ("vocab", 1024),
                          ("batch", 64), ("peak-n", 2048)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here")
    if args.bf16_widths is None:  # width 512 in bf16 takes minutes a step without bf16 units
        args.bf16_widths = [128, 512] if args.device == "cuda" or cpu_has_bf16() else [128]
    torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)
    configure_process()  # the allocator setting `attnlab train` runs with, for both sides alike

    data = random_tokens(args.vocab) if args.random_data else load_token_data(args.corpus)
    device = torch.device(args.device)
    print(processor())
    if device.type == "cuda":
        print(device_line(device))
    dtype = peak_dtype(args)
    peak = matmul_peak(args.peak_n, device=device, dtype=dtype)
    print(f"{peak_name(args)} matmul peak on {args.device} "
          f"(torch.mm {args.peak_n}x{args.peak_n}): {peak / 1e9:.1f} GFLOP/s")
    print(f"configuration: width {args.d_model}, {args.n_head} heads, context {args.n_ctx}, "
          f"vocabulary {args.vocab}, batch {args.batch}, dropout 0, AdamW, {args.precision}, "
          f"{args.device}; rounds of {args.round_steps} steps")
    if args.blocks:
        print()
        peak = compare_with_hf(args, data, peak)[1]
    if args.bf16_widths:
        print()
        compare_bf16(args, data)
    if args.parts and device.type != "cpu":
        print("\n--parts: a CPU analysis (each kernel timed alone on the CPU); skipped on a GPU")
    elif args.parts:
        print()
        print_parts(args, peak)
    if args.ppl_steps:
        print_perplexity(args, data)
    print(processor())  # again: the load at the end
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
