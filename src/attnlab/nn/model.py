"""The decoder-only language model built from one ``ModelConfig``.

Dimension legend: ``b`` batch, ``t`` positions, ``c`` model width, ``v`` vocabulary.

    tokens → embedding (+ absolute positions) → dropout → blocks → [final LN] → linear → logits

``forward`` returns the logits and nothing else; ``trace`` returns them with
what every block's attention computed (``attnlab.nn.trace``), the one way to
look inside; ``next_token_loss`` is the one training cross-entropy.
``generate`` decodes with a KV cache: each step feeds only the new token and
reuses every layer's keys and values (the mean mixer keeps its inputs). A
test shows cache and no-cache logits are the same.
Initialisation is PyTorch's own (``nn.Embedding`` N(0, 1), ``nn.Linear``
Kaiming-uniform), the textbook's "just use the layers" setting; GPT-2's
scaled init is left out.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.nn.block import Block
from attnlab.nn.cache import KVCache
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.positions import AdditivePositions
from attnlab.nn.trace import BlockTrace, Trace


def next_token_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy of ``logits`` (b, t, v) against next tokens ``targets`` (b, t).

    The one place the training loss is computed (trainer, experiments, benchmarks).
    Computed in fp32 (at least) even when the logits come from bf16 autocast.
    """
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class LanguageModel(nn.Module):
    """Every model of attnlab: from the bigram (no context) to GPT-2."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = (
            AdditivePositions(cfg.position, cfg.pos_rows, cfg.d_model)
            if cfg.position in ("learned", "sinusoidal")
            else None
        )
        self.learned = cfg.position == "learned"
        self.drop = nn.Dropout(cfg.dropout) if cfg.dropout > 0 else None  # None: no call
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        final = cfg.norm == "pre"  # pre-norm ends with a LayerNorm (GPT-2's ln_f)
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps) if final else nn.Identity()
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.lm_head_bias)
        if cfg.tie_weights:
            self.head.weight = self.tok.weight  # Press & Wolf 2017

    def num_parameters(self) -> int:
        """Trainable parameters, a tied matrix counted once."""
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx: Tensor, cache: KVCache | None = None) -> Tensor:
        """Logits (b, t, v) for token ids (b, t); ``cache`` carries a KV cache across calls."""
        return self._run(idx, cache, None)

    def trace(self, idx: Tensor) -> Trace:
        """One forward pass that records each block's attention (``attnlab.nn.trace``).

        Attention goes through the readable kernel here, whatever ``cfg.backend``
        says, so the weights exist; the logits equal ``forward``'s (to rounding).
        """
        record: list[BlockTrace] = []
        logits = self._run(idx, None, record)
        return Trace(logits=logits, blocks=record)

    def _run(self, idx: Tensor, cache: KVCache | None, record: list[BlockTrace] | None) -> Tensor:
        if idx.dim() != 2:
            raise ValueError(
                f"expected token ids of shape (batch, positions), got {tuple(idx.shape)}"
            )
        t = idx.shape[1]
        start = cache.length if cache is not None else 0
        if self.learned and start + t > self.cfg.pos_rows:
            raise ValueError(
                f"{start + t} positions exceed the learned position table ({self.cfg.pos_rows} "
                "rows); use a shorter input or a larger n_pos"
            )
        positions = torch.arange(start, start + t, device=idx.device)  # (t,)
        x = self.tok(idx)  # (b, t, c)
        if self.pos is not None:
            x = x + self.pos(start, t)  # (t, c) broadcast over b
        if self.drop is not None:
            x = self.drop(x)
        for i, block in enumerate(self.blocks):
            layer_cache = cache.layers[i] if cache is not None else None
            x = block(x, positions, layer_cache, record)
        if cache is not None:
            cache.length += t
        return self.head(self.norm(x))  # (b, t, v)

    def loss(self, idx: Tensor, targets: Tensor) -> Tensor:
        """Mean next-token cross-entropy of ``idx`` (b, t) against ``targets`` (b, t)."""
        return next_token_loss(self(idx), targets)

    def generate(
        self,
        idx: Tensor,
        max_new_tokens: int,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        seed: int | None = None,
        use_cache: bool = True,
    ) -> Tensor:
        """Sample ``max_new_tokens`` after ``idx`` (b, t); returns (b, t + new).

        ``temperature`` divides the logits (0 means greedy); ``top_k`` keeps the k
        most likely tokens; ``seed`` fixes the sampling generator. Without the cache
        every step recomputes the whole (cropped) context.

        Speed (batch 1 decoding is all per-step overhead, no arithmetic to speak
        of): it runs under ``torch.inference_mode``, which skips autograd's
        bookkeeping on every tensor; the cache is sized once for the whole output
        (``attnlab.nn.cache``); tokens are written into one preallocated output
        instead of a ``torch.cat`` per step.
        """
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        total = idx.shape[1] + max_new_tokens
        if use_cache and self.learned and total > self.cfg.pos_rows:
            raise ValueError(
                f"prompt + new tokens = {total} exceeds the model's {self.cfg.pos_rows} learned "
                "positions; ask for fewer tokens or use use_cache=False (a sliding window)"
            )
        was_training = self.training
        self.eval()
        try:
            with torch.inference_mode():
                out = self._decode(idx, max_new_tokens, temperature, top_k, seed, use_cache)
        finally:
            self.train(was_training)
        return out.clone()  # outside inference mode: an ordinary tensor the caller may reuse

    def _decode(
        self, idx: Tensor, new: int, temperature: float, top_k: int | None, seed: int | None,
        use_cache: bool,
    ) -> Tensor:
        b, t = idx.shape
        gen = torch.Generator(device=idx.device)
        gen.manual_seed(0 if seed is None else seed)
        cache = KVCache(len(self.blocks), capacity=t + new) if use_cache else None
        out = idx.new_empty(b, t + new)  # (b, t + new), filled as tokens come
        out[:, :t] = idx
        step_input = idx
        for end in range(t, t + new):
            if cache is None:  # the whole context again, cropped to the learned table
                step_input = out[:, max(0, end - self.cfg.pos_rows) if self.learned else 0 : end]
            logits = self(step_input, cache=cache)[:, -1, :]  # (b, v)
            step_input = out[:, end : end + 1]  # (b, 1): the token chosen now
            step_input.copy_(_sample(logits, temperature, top_k, gen))
        return out


def _sample(logits: Tensor, temperature: float, top_k: int | None, gen: torch.Generator) -> Tensor:
    if temperature == 0:
        return logits.argmax(-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]  # (b, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=gen)
