"""The transformer block: a context mixer and an MLP, each a residual sublayer.

Dimension legend: ``b`` batch, ``t`` positions, ``c`` model width.

Placement of LayerNorm (Ba et al. 2016) is a field of the config:
``pre``  (GPT-2, Xiong et al. 2020): x + f(LN(x)), and one LN after the last block;
``post`` (Vaswani et al. 2017):      LN(x + f(x));
``none``:                           x + f(x).
With ``residual=False`` each sublayer *replaces* its input: f(LN(x)), LN(f(x)), f(x).
Dropout (GPT-2's places) is applied to each sublayer's output before the sum.
A ``none`` mixer adds no sublayer at all, so the no-context model is exactly
embedding → (MLP) → linear, not embedding doubled by a residual.
"""

from __future__ import annotations

from torch import Tensor, nn

from attnlab.nn.config import ModelConfig
from attnlab.nn.mixers import build_mixer


class MLP(nn.Module):
    """Position-wise c → 4c → c with GELU (Hendrycks & Gimpel 2016), biases on both maps."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        hidden = cfg.mlp_ratio * cfg.d_model
        self.up = nn.Linear(cfg.d_model, hidden)
        self.act = nn.GELU(approximate="tanh" if cfg.gelu == "tanh" else "none")
        self.down = nn.Linear(hidden, cfg.d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.down(self.act(self.up(x)))  # (b, t, c)


class Block(nn.Module):
    """One block: [mixer sublayer] then [MLP sublayer], as the config places norms."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.mixer = build_mixer(cfg) if cfg.mixer != "none" else None
        self.mlp = MLP(cfg) if cfg.mlp else None
        self.norm1 = self._norm() if self.mixer is not None else None
        self.norm2 = self._norm() if self.mlp is not None else None
        self.drop = nn.Dropout(cfg.dropout)

    def _norm(self) -> nn.Module | None:
        if self.cfg.norm == "none":
            return None
        return nn.LayerNorm(self.cfg.d_model, eps=self.cfg.norm_eps)

    def _sublayer(self, x: Tensor, f, norm: nn.Module | None) -> Tensor:  # noqa: ANN001
        norm = norm if norm is not None else nn.Identity()
        if self.cfg.norm == "pre":
            y = self.drop(f(norm(x)))
            return x + y if self.cfg.residual else y
        y = self.drop(f(x))
        return norm(x + y if self.cfg.residual else y)  # post-norm, or no norm at all

    def forward(
        self, x: Tensor, positions: Tensor, cache: dict | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        weights = None
        if self.mixer is not None:

            def mix(h: Tensor) -> Tensor:
                nonlocal weights
                out, weights = self.mixer(h, positions, cache, need_weights)
                return out

            x = self._sublayer(x, mix, self.norm1)
        if self.mlp is not None:
            x = self._sublayer(x, self.mlp, self.norm2)
        return x, weights
