"""Attention kernel × precision: tokens/s of attnlab's training step, per processor.

For each configuration — the chapter's (width 128, 4 heads, context 128,
vocabulary 1,024, batch 64, AdamW) at 1 and 2 blocks, and the shapes the quick
profile trains most (``QUICK``) — the trainer's step (``train_throughput.
attnlab_step``: a sampled batch, the loss read back, backward, fused AdamW) is
timed with each attention kernel (naive, sdpa, memeff) in fp32 and under bf16
autocast: six contenders, interleaved in rounds (A, B, C, …, A, B, C, …), the
best round of each reported with its median. Printed: the processor with its
bf16 units (AVX512-BF16, AMX), one Markdown table per configuration, and the
fastest kernel per precision, which is what ``attnlab.nn.attention.KERNEL_TABLE``
should say for this device (the table in the code is a statement; this script is
its evidence).

On a CPU without bf16 units bf16 autocast converts around fp32 arithmetic and a
bf16 step takes many times an fp32 one: ``--precisions fp32`` skips it.

    python -m benchmarks.kernel_table [--rounds 6] [--threads 2] [--configs chapter-1 quick-64]
                                       [--shape 16,2,1,8,4] [--precisions fp32]
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

import torch

from attnlab.cli.process import configure_process
from attnlab.data.dataset import load_token_data
from attnlab.nn.attention import KERNEL_TABLE
from attnlab.train.run_config import RunConfig, load_run_config

from .harness import interleaved, processor, spread, synchronizer
from .train_throughput import attnlab_step, random_tokens

KERNELS = ("naive", "sdpa", "memeff")
# name -> (width, heads, blocks, context, batch): the chapter's config, and the quick
# profile's most-trained shapes (by width × steps: ladder/norm/position at 128, the
# probe language at 64, the 12-block sqrt_dk stack at 32).
CONFIGS = {
    "chapter-1": (128, 4, 1, 128, 64),
    "chapter-2": (128, 4, 2, 128, 64),
    "quick-128": (128, 4, 1, 128, 4),
    "quick-64": (64, 4, 2, 17, 16),
    "quick-32": (32, 4, 12, 128, 2),
}


def config(shape: tuple[int, ...], vocab: int, device: str) -> RunConfig:
    width, heads, blocks, context, batch = shape
    return load_run_config(None, [
        f"model.d_model={width}", f"model.n_head={heads}", f"model.n_layer={blocks}",
        f"model.n_ctx={context}", f"model.vocab_size={vocab}", f"data.vocab_size={vocab}",
        f"train.batch_size={batch}", f"train.device={device}"])


def measure(name: str, cfg: RunConfig, data: Any, args: argparse.Namespace) -> dict:
    """Best seconds per step of every kernel × precision at ``cfg``, interleaved."""
    sides = {}
    for precision in args.precisions:
        for kernel in KERNELS:
            run = cfg.replace(model=cfg.model.replace(backend=kernel))
            sides[(kernel, precision)] = attnlab_step(run, data.train, precision)
    timing = interleaved({f"{k}/{p}": fn for (k, p), fn in sides.items()}, args.rounds,
                         args.round_steps, sync=synchronizer(torch.device(args.device)))
    tokens = cfg.train.batch_size * cfg.model.n_ctx
    m = cfg.model
    print(f"\n### {name}: width {m.d_model}, {m.n_head} heads, {m.n_layer} block(s), context "
          f"{m.n_ctx}, batch {cfg.train.batch_size}\n")
    print("| kernel | precision | tokens/s, best round (median, worst) | ms/step |")
    print("|---|---|---|---:|")
    for key, t in timing.items():
        kernel, precision = key.split("/")
        print(f"| {kernel} | {precision} | {spread(t, tokens, 'tok/s')} | {1e3 * t.best:.1f} |")
    best = {}
    for precision in args.precisions:
        ranked = sorted(KERNELS, key=lambda k: timing[f"{k}/{precision}"].best)
        best[precision] = ranked[0]
        stated = KERNEL_TABLE.get((args.device, precision), "?")
        top = timing[f"{ranked[0]}/{precision}"].best
        others = ", ".join(f"{k} {top / timing[f'{k}/{precision}'].best:.2f}x" for k in ranked[1:])
        print(f"\nfastest {precision} kernel: {ranked[0]} (the others at: {others} its speed); "
              f"the stated table says {stated}")
    if "fp32" in args.precisions and "bf16" in args.precisions:
        ratio = timing[f"{best['fp32']}/fp32"].best / timing[f"{best['bf16']}/bf16"].best
        print(f"bf16 / fp32 speed, each with its fastest kernel: {ratio:.2f}x")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--precisions", nargs="+", choices=("fp32", "bf16"),
                        default=["fp32", "bf16"])
    parser.add_argument("--configs", nargs="*", choices=tuple(CONFIGS), default=None,
                        help="named configurations (default: all, or none with --shape)")
    parser.add_argument("--shape", action="append", default=[], metavar="W,H,L,T,B",
                        help="one more configuration: width, heads, blocks, context, batch")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds per side")
    parser.add_argument("--round-steps", type=int, default=2, help="training steps per round")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--random-data", action="store_true", help="random tokens (smoke tests)")
    parser.add_argument("--corpus", default=None, help="text file (default: Tiny Shakespeare)")
    args = parser.parse_args(argv)
    shapes = {name: CONFIGS[name] for name in
              (args.configs if args.configs is not None else [] if args.shape else CONFIGS)}
    for text in args.shape:
        try:
            width, heads, blocks, context, batch = (int(x) for x in text.split(","))
        except ValueError:
            parser.error(f"--shape {text}: give five whole numbers W,H,L,T,B")
        shapes[f"shape {text}"] = (width, heads, blocks, context, batch)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here")
    torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)
    configure_process()
    data = random_tokens(args.vocab) if args.random_data else load_token_data(args.corpus)
    print(processor())
    print(f"rounds: {args.rounds} of {args.round_steps} steps per contender, interleaved")
    chosen = {name: measure(name, config(shape, args.vocab, args.device), data, args)
              for name, shape in shapes.items()}
    print("\n| configuration | " + " | ".join(f"fastest in {p}" for p in args.precisions) + " |")
    print("|---|" + "---|" * len(args.precisions))
    for name, best in chosen.items():
        print(f"| {name} | " + " | ".join(best[p] for p in args.precisions) + " |")
    print(processor())  # again: the load at the end
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
