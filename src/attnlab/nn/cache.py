"""The KV cache: what incremental decoding keeps from one step to the next.

Dimension legend: ``b`` batch, ``h`` heads, ``s`` positions kept, ``d`` head width,
``c`` model width.

Decoding one token at a time, each layer needs the keys and values of every
earlier position (the mean mixer: its earlier inputs). Appending with
``torch.cat`` would copy everything kept so far at every step: O(s) work per
token, O(s²) per generation, and a fresh allocation each time. Here each kept
tensor lives in a buffer with room to spare, and a step only writes its new
positions into it; the layer reads back a view of the filled part. The buffer
is sized once when the caller knows the final length (``generate`` does) and
doubles when it runs out, so appending stays O(new positions) on average.

For inference only (``torch.no_grad`` or ``torch.inference_mode``): the
buffers are written in place, which autograd cannot differentiate through.
"""

from __future__ import annotations

from torch import Tensor


class LayerCache:
    """One layer's kept tensors, each growing along one axis (keys and values along s)."""

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity  # positions to make room for at the first append (None: grow)
        self._buffers: dict[str, Tensor] = {}
        self._used: dict[str, int] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._buffers

    def append(self, name: str, new: Tensor, dim: int) -> Tensor:
        """Append ``new`` along ``dim`` to the tensor kept as ``name``; return all of it so far.

        The result is a view into the buffer (positions 0 … kept + new - 1 along ``dim``).

        >>> import torch
        >>> cache = LayerCache()
        >>> _ = cache.append("x", torch.zeros(1, 2), dim=1)
        >>> cache.append("x", torch.ones(1, 1), dim=1).tolist()
        [[0.0, 0.0, 1.0]]
        """
        used, n = self._used.get(name, 0), new.shape[dim]
        buffer = self._buffers.get(name)
        if buffer is None or used + n > buffer.shape[dim]:
            room = max(self.capacity or 0, 2 * (used + n))
            shape = (*new.shape[:dim], room, *new.shape[dim + 1 :])
            grown = new.new_empty(shape)
            if buffer is not None:  # out of room: move what is kept into a buffer twice as long
                grown.narrow(dim, 0, used).copy_(buffer.narrow(dim, 0, used))
            buffer = self._buffers[name] = grown
        buffer.narrow(dim, used, n).copy_(new)
        self._used[name] = used + n
        return buffer.narrow(dim, 0, used + n)


class KVCache:
    """Per-layer state for incremental decoding, and how many positions it holds.

    ``capacity``: the total positions the caller will feed (prompt + new tokens), so
    each buffer is allocated once; None lets the buffers grow as needed.
    """

    def __init__(self, n_layer: int, capacity: int | None = None) -> None:
        self.layers = [LayerCache(capacity) for _ in range(n_layer)]
        self.length = 0
