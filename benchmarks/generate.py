"""Generation speed with and without the KV cache, and proof that both say the same.

For 128, 512 and 1,024 new tokens after a 16-token prompt, the default model
(width 128, 4 heads, one block; learned positions sized for the longest
output so that neither path crops its context) decodes greedily (top-k 1)
twice: with the KV cache (each step feeds one token and reuses every earlier
key and value) and without it (each step re-runs the whole sequence). Printed:
tokens/s of each, the speed-up, and whether the two outputs are identical.
Without the cache a step costs O(t) projections and O(t²) scores, so the
speed-up grows with the length. Weights are the seeded initial ones (or
``--run DIR`` for a trained run): equality does not depend on training.

    python benchmarks/generate.py [--lengths 128 512 1024] [--run runs/<hash>]
"""

from __future__ import annotations

import argparse
import time

import torch

from attnlab.nn.config import ModelConfig
from attnlab.nn.model import LanguageModel

PROMPT = 16


def timed(model: LanguageModel, prompt: torch.Tensor, new: int, use_cache: bool):
    t0 = time.perf_counter()
    out = model.generate(prompt, new, top_k=1, seed=0, use_cache=use_cache)
    return out, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512, 1024])
    parser.add_argument("--run", default=None, help="a trained run directory to load instead")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.run:
        from attnlab.train.runtime import load_trained

        _, model, _, _ = load_trained(args.run)
    else:
        torch.manual_seed(0)
        model = LanguageModel(ModelConfig(n_pos=PROMPT + max(args.lengths)))
    model.eval()
    cfg = model.cfg
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, cfg.vocab_size, (1, PROMPT), generator=gen)  # (1, T)
    timed(model, prompt, 4, True)  # warm-up
    print(f"model: {cfg.n_layer} block(s), width {cfg.d_model}, {cfg.n_head} heads, "
          f"position {cfg.position}; prompt {PROMPT} tokens; greedy (top-k 1); "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print()
    print("| new tokens | cache tok/s | no-cache tok/s | speed-up | identical output |")
    print("|---|---|---|---|---|")
    for new in args.lengths:
        if cfg.position == "learned" and PROMPT + new > cfg.pos_rows:
            print(f"| {new} | (exceeds the model's {cfg.pos_rows} learned positions) ||||")
            continue
        cached, t_cached = timed(model, prompt, new, True)
        plain, t_plain = timed(model, prompt, new, False)
        same = torch.equal(cached, plain)
        print(f"| {new} | {new / t_cached:,.1f} | {new / t_plain:,.1f} | "
              f"{t_plain / t_cached:.1f}x | {'yes' if same else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
