"""The attention explorer (docs/explorer.md): a self-contained page that shows where tokens look.

- ``show``: the one call for notebooks, ``show(folder_or_model, text)``, or
  ``show(weights=…, tokens=…)`` for weights from any library (``tensors``);
- ``heads``: hand-designed heads over word features (agreement, previous word, subject);
- ``data``: the page's one input, a plain data dict, its checks and its arithmetic;
- ``page``: the page itself (``render_page``, ``ExplorerView``);
- ``build``: data dicts from the hand heads and from traced models;
- ``traces``: what the explorer reads of a model (``LayerTrace``), for attnlab's models;
- ``composed``: attention composed across layers (rollout, value-weighted);
- ``encoding``: float16 / 8-bit matrices in base64 for large pages (``decode.js``);
- ``models``: trained runs and the probe pages; ``hf``: Hugging Face folders;
- ``server``: a small local server that computes the data for typed sentences.
"""

from __future__ import annotations

from attnlab.explorer.build import (
    hand_compute,
    hand_designed_page,
    hand_view,
    page_data,
    view_from_scores,
    view_from_traces,
)
from attnlab.explorer.composed import rollout, value_weighted
from attnlab.explorer.data import DataError, head_weights, validate_data
from attnlab.explorer.encoding import decode_data, encode_page
from attnlab.explorer.heads import SENTENCE, HandHead, feature_matrix, hand_heads
from attnlab.explorer.notebook import show
from attnlab.explorer.page import ExplorerView, render_page, write_page
from attnlab.explorer.server import RunningServer, make_server, serve, start_server
from attnlab.explorer.tensors import weights_page
from attnlab.explorer.traces import LayerTrace

__all__ = [
    "SENTENCE",
    "DataError",
    "ExplorerView",
    "HandHead",
    "LayerTrace",
    "RunningServer",
    "decode_data",
    "encode_page",
    "feature_matrix",
    "hand_compute",
    "hand_designed_page",
    "hand_heads",
    "hand_view",
    "head_weights",
    "make_server",
    "page_data",
    "render_page",
    "rollout",
    "serve",
    "show",
    "start_server",
    "validate_data",
    "value_weighted",
    "view_from_scores",
    "view_from_traces",
    "weights_page",
    "write_page",
]
