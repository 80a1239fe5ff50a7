"""Recurrent mixers: the models attention replaced, as mixers of the same block.

Dimension legend: ``b`` batch, ``t`` new positions, ``c`` model width (also the
width of the recurrent state).

``ElmanRNN``  h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)          (Elman 1990);
``LSTM``      i, f, g, o = split(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)
              c_t = σ(f) ⊙ c_{t-1} + σ(i) ⊙ tanh(g),  h_t = σ(o) ⊙ tanh(c_t)
              (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000).

Both take the mixers' call signature, ``mixer(x, positions, cache) -> y``, and
return the state h_t at every position (b, t, c): the block adds it to the
residual stream as it adds attention's output. They are causal by construction:
h_t depends on x_1 … x_t only. The input map W_ih x is one matmul over all
positions at once; the recurrence itself is a loop over t, one dependent step per
position, so a forward pass over T tokens has a dependency chain of length T
(``sequential_steps``; ``attnlab.experiments.recurrence.measure`` counts it on the
autograd graph rather than taking it from here). The parameter names and gate
order are those of ``torch.nn.RNN`` / ``torch.nn.LSTM`` (``weight_ih_l0`` is
``ih.weight``, ``bias_hh_l0`` is ``hh.bias``, gates i, f, g, o), and the tests copy
weights from them and compare outputs.

Initialisation: PyTorch's (every weight and bias uniform in ±1/√c, which
``nn.Linear(c, ·)`` draws too), except that the LSTM's forget-gate bias starts
at +1 (Gers et al. 2000; Jozefowicz et al. 2015 found it closes most of the gap
to later gated units), so that at initialisation the cell keeps more than half
of its content per step, as LSTMs are used.

With a ``LayerCache`` (generation) the mixer keeps its last state (h, and c for
the LSTM) and starts the next call from it: the recurrence's own "KV cache",
constant in size. ``trace`` returns the output and a record with no attention
(``weights`` None): a recurrence has no weights over positions to show.

Left out: dropout inside the recurrence, several recurrent layers inside one
mixer (stack blocks instead), bidirectionality, truncated backpropagation
through time (the trainer's window is the whole unroll), and a fused kernel
(cuDNN's): the loop is plain PyTorch so the steps are the ones written here.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnlab.nn.cache import LayerCache
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.trace import BlockTrace

FORGET_BIAS = 1.0  # added to the LSTM's forget-gate bias at initialisation (Gers et al. 2000)


class _Recurrence(nn.Module):
    """What both recurrences share: the input map over all positions, the state kept in a
    cache, the loop's length and an empty trace."""

    n_gates = 1  # blocks of c rows in W_ih and W_hh
    state_names: tuple[str, ...] = ("h",)

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        c = cfg.d_model
        self.width = c
        self.ih = nn.Linear(c, self.n_gates * c)  # W_ih, b_ih: one matmul over all positions
        self.hh = nn.Linear(c, self.n_gates * c)  # W_hh, b_hh: the step that must wait

    def sequential_steps(self, t: int) -> int:
        """Dependent steps of one forward pass over ``t`` new positions: one per position."""
        return t

    def initial(self, x: Tensor, cache: LayerCache | None) -> list[Tensor]:
        """The state before the first new position: zeros, or the last one kept in ``cache``."""
        b, c = x.shape[0], self.width
        states = []
        for name in self.state_names:
            kept = cache.append(name, x.new_empty(b, 0, c), dim=1) if cache is not None else None
            states.append(kept[:, -1] if kept is not None and kept.shape[1] else x.new_zeros(b, c))
        return states

    def keep(self, cache: LayerCache | None, states: list[Tensor]) -> None:
        if cache is not None:
            for name, s in zip(self.state_names, states, strict=True):
                cache.append(name, s[:, None], dim=1)  # (b, 1, c): the newest state last

    def forward(self, x: Tensor, positions: Tensor, cache: LayerCache | None = None) -> Tensor:
        """x (b, t, c) → h (b, t, c); ``positions`` are not used (order is the recurrence)."""
        states = self.initial(x, cache)
        inputs = self.ih(x)  # (b, t, gates·c), every position at once
        out = []
        # unbind, not inputs[:, t]: the backward of one index writes a zero tensor of the
        # whole (b, t, gates·c) per step (quadratic in t); unbind's stacks the steps once
        for step_input in inputs.unbind(1):  # the loop: step t waits for step t - 1
            states = self.step(step_input, states)
            out.append(states[0])
        self.keep(cache, states)
        return torch.stack(out, dim=1)  # (b, t, c)

    def step(self, inputs: Tensor, states: list[Tensor]) -> list[Tensor]:
        raise NotImplementedError

    def trace(self, x: Tensor, positions: Tensor) -> tuple[Tensor, BlockTrace]:
        """The output and a record without attention (no weights over positions)."""
        return self(x, positions), BlockTrace(x, None, None, None, 1.0, None, None, None)


class ElmanRNN(_Recurrence):
    """h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (Elman 1990; ``torch.nn.RNN``)."""

    def step(self, inputs: Tensor, states: list[Tensor]) -> list[Tensor]:
        return [torch.tanh(inputs + self.hh(states[0]))]  # (b, c)


class LSTM(_Recurrence):
    """The LSTM cell with a forget gate (Hochreiter & Schmidhuber 1997, Gers et al. 2000;
    ``torch.nn.LSTM``, gates in its order i, f, g, o)."""

    n_gates = 4
    state_names = ("h", "c")

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        with torch.no_grad():
            self.hh.bias[self.width : 2 * self.width] += FORGET_BIAS  # the f block

    def step(self, inputs: Tensor, states: list[Tensor]) -> list[Tensor]:
        h, c = states
        i, f, g, o = (inputs + self.hh(h)).chunk(4, dim=-1)  # (b, c) each
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return [torch.sigmoid(o) * torch.tanh(c), c]


def build_recurrent(cfg: ModelConfig) -> nn.Module:
    """The recurrent mixer named by ``cfg.mixer`` ("rnn" or "lstm")."""
    if cfg.mixer == "rnn":
        return ElmanRNN(cfg)
    if cfg.mixer == "lstm":
        return LSTM(cfg)
    raise ValueError(f"not a recurrent mixer: {cfg.mixer!r}")


def copy_from_torch(mixer: _Recurrence, reference: nn.RNNBase) -> None:
    """Copy the one-layer weights of a ``torch.nn.RNN`` / ``torch.nn.LSTM`` into ``mixer``."""
    with torch.no_grad():
        mixer.ih.weight.copy_(reference.weight_ih_l0)
        mixer.ih.bias.copy_(reference.bias_ih_l0)
        mixer.hh.weight.copy_(reference.weight_hh_l0)
        mixer.hh.bias.copy_(reference.bias_hh_l0)
