"""Generation speed: attnlab's KV cache against Hugging Face's cached ``generate``, and
against recomputing the whole context; with proof that they all say the same.

1. Against Hugging Face. attnlab's default model with 2 blocks (learned
   positions sized for prompt + output) and a ``GPT2LMHeadModel`` at the same
   sizes (``common.hf_gpt2``: Hugging Face's defaults, dropout off) each decode
   ``--new`` (512) tokens greedily after the same 16-token prompt, batch 1, in
   interleaved rounds (best round each, spread printed). Target: attnlab ≥ 2.5×
   Hugging Face's tokens/s. Also timed: attnlab holding the Hugging Face
   model's own weights (``attnlab.nn.gpt2.from_hf``: GPT-2's settings), so the
   very same network runs on both sides. Two checks are printed: attnlab's
   cached output equals its uncached one (every step re-running the whole
   sequence), and Hugging Face's ``generate`` equals attnlab's uncached path on
   the same weights.
2. The KV cache against recomputation, for ``--lengths`` new tokens (default
   model, one block, or ``--run DIR`` for a trained run): tokens/s of each, the
   speed-up (best of ``--table-rounds`` interleaved rounds), and whether the outputs
   are identical. Without the cache a step
   costs O(t) projections and O(t²) scores, so the speed-up grows with length.

Weights are the seeded initial ones: equality does not depend on training.

On a GPU (``--device cuda``) every model and prompt lives there and each timed
round ends with a synchronisation.

    python -m benchmarks.generate [--new 512] [--rounds 5] [--threads 2] [--lengths 128 512 1024]
    python -m benchmarks.generate --device cuda
"""

from __future__ import annotations

import argparse
from functools import partial

import torch

from attnlab.nn.gpt2 import from_hf
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig

from .harness import device_line, hf_gpt2, interleaved, processor, spread, synchronizer, verdict

PROMPT = 16
TARGET = 2.5  # attnlab / HF tokens/s (issue 12)


def greedy(model: LanguageModel, prompt: torch.Tensor, new: int, use_cache: bool = True):
    """attnlab's greedy decoding: (1, PROMPT + new) token ids."""
    return model.generate(prompt, new, temperature=0, use_cache=use_cache)


def hf_greedy(hf, prompt: torch.Tensor, new: int) -> torch.Tensor:  # noqa: ANN001 - HF type
    """Hugging Face's cached greedy ``generate``, at its defaults (its KV cache, sdpa)."""
    return hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new,
                       min_new_tokens=new, do_sample=False)


def model_config(args: argparse.Namespace, n_layer: int, new: int) -> ModelConfig:
    """The default model at the command line's sizes, its learned table sized for the output."""
    return ModelConfig(n_layer=n_layer, d_model=args.d_model, n_head=args.n_head,
                       vocab_size=args.vocab, n_ctx=min(128, PROMPT + new), n_pos=PROMPT + new)


def compare_with_hf(args: argparse.Namespace) -> dict[str, object]:
    """Section 1 of the module docstring; returns the ratios and the two checks."""
    cfg = model_config(args, args.blocks, args.new)
    device = torch.device(args.device)
    torch.manual_seed(0)
    ours = LanguageModel(cfg).eval().to(device)
    hf = hf_gpt2(cfg).eval()
    same_weights = from_hf(hf).to(device)
    hf = hf.to(device)
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, cfg.vocab_size, (1, PROMPT), generator=gen).to(device)  # (1, T)

    cached = greedy(ours, prompt, args.new)
    plain = greedy(ours, prompt, args.new, use_cache=False)
    hf_out = hf_greedy(hf, prompt, args.new)
    same_plain = greedy(same_weights, prompt, args.new, use_cache=False)
    checks = {"attnlab cached == attnlab uncached": torch.equal(cached, plain),
              "HF generate == attnlab uncached, same weights": torch.equal(hf_out, same_plain)}

    timing = interleaved({
        "attnlab": lambda: greedy(ours, prompt, args.new),
        "attnlab, HF's weights": lambda: greedy(same_weights, prompt, args.new),
        "HF GPT-2": lambda: hf_greedy(hf, prompt, args.new),
    }, args.rounds, sync=synchronizer(device))
    print(f"model: {cfg.n_layer} blocks, width {cfg.d_model}, {cfg.n_head} heads, vocabulary "
          f"{cfg.vocab_size}; prompt {PROMPT} tokens, {args.new} new, greedy, batch 1; HF "
          f"attention {hf.config._attn_implementation}")
    for side, t in timing.items():
        print(f"  {side}: {spread(t, args.new, 'tok/s')}")
    ratio = timing["HF GPT-2"].best / timing["attnlab"].best
    same = timing["HF GPT-2"].best / timing["attnlab, HF's weights"].best
    median = timing["HF GPT-2"].median / timing["attnlab"].median
    print(f"ratio generate: attnlab / HF tokens/s = {ratio:.2f}x best rounds ({median:.2f}x "
          f"medians; {same:.2f}x with HF's own weights and settings) ({verdict(ratio, TARGET)})")
    for name, ok in checks.items():
        print(f"check {name}: {'yes' if ok else 'NO'}")
    return {"ratio": ratio, "same_weights_ratio": same, **checks}


def cache_table(args: argparse.Namespace) -> None:
    """Section 2 of the module docstring."""
    if args.run:
        from attnlab.train.runtime import load_trained

        _, model, _, _ = load_trained(args.run)
    else:
        torch.manual_seed(0)
        model = LanguageModel(model_config(args, 1, max(args.lengths)))
    device = torch.device(args.device)
    model.eval().to(device)
    cfg = model.cfg
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, cfg.vocab_size, (1, PROMPT), generator=gen).to(device)  # (1, T)
    greedy(model, prompt, 4)  # warm-up
    print(f"model: {cfg.n_layer} block(s), width {cfg.d_model}, {cfg.n_head} heads, position "
          f"{cfg.position}; prompt {PROMPT} tokens; greedy")
    print()
    print("| new tokens | cache tok/s | no-cache tok/s | speed-up | identical output |")
    print("|---|---|---|---|---|")
    for new in args.lengths:
        if cfg.position == "learned" and PROMPT + new > cfg.pos_rows:
            print(f"| {new} | (exceeds the model's {cfg.pos_rows} learned positions) ||||")
            continue
        same = torch.equal(greedy(model, prompt, new), greedy(model, prompt, new, use_cache=False))
        timing = interleaved({"cache": partial(greedy, model, prompt, new),
                              "no cache": partial(greedy, model, prompt, new, use_cache=False)},
                             args.table_rounds, warmup=0, sync=synchronizer(device))
        t_cached, t_plain = timing["cache"].best, timing["no cache"].best
        print(f"| {new} | {new / t_cached:,.1f} | {new / t_plain:,.1f} | "
              f"{t_plain / t_cached:.1f}x | {'yes' if same else 'NO'} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new", type=int, default=512, help="new tokens against HF")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per side")
    parser.add_argument("--lengths", type=int, nargs="*", default=[128, 512, 1024],
                        help="new tokens for the cache vs no-cache table (none: skip it)")
    parser.add_argument("--run", default=None, help="a trained run for the cache table")
    parser.add_argument("--table-rounds", type=int, default=2,
                        help="interleaved rounds per cell of the cache table (best kept)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where every model decodes (default: cpu)")
    for name, default in (("blocks", 2), ("d-model", 128), ("n-head", 4), ("vocab", 1024)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here")
    torch.set_num_threads(args.threads)
    print(processor())
    if args.device == "cuda":
        print(device_line(torch.device("cuda")))
    compare_with_hf(args)
    if args.lengths:
        print()
        cache_table(args)
    print(processor())  # again: the load at the end
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
