"""The attention explorer (docs/explorer.md): a self-contained page that shows where tokens look.

- ``show``: the one call for notebooks, ``show(folder_or_model, text)``, or
  ``show(weights=…, tokens=…)`` for weights from any library (``tensors``);
- ``notebook``: ``show`` itself.

Four rooms; each imports only the ones above it in this list (``tests/test_imports.py``):

- ``page/``: the page and its one input. ``data`` (the plain data dict, its checks and its
  arithmetic), ``composed`` (attention composed across layers: rollout, value-weighted),
  ``encoding`` (float16 matrices in base64 for large pages), ``render`` (``render_page``,
  ``write_page``, ``ExplorerView``);
- ``web/``: the page's script parts and styles, inlined by ``page.render`` (no Python);
- ``sources/``: where heads come from, each turned into data dicts. ``heads`` and ``hand``
  (hand-designed heads over word features), ``traces`` (what the explorer reads of a model,
  ``LayerTrace``), ``build`` (data dicts from traced layers, shared by every source),
  ``models`` (trained runs and the probe pages), ``translation`` (the ``--translation`` page:
  a translation model's two sequences), ``hf``, ``hf_seq`` and ``hf_files`` (Hugging Face
  folders: causal LMs, encoders and encoder–decoders), ``tensors`` (weights from any library);
- ``server/``: the local server for typed sentences. ``app`` (what it computes and refuses),
  ``connections`` (the lobby and capped reads), ``fields`` (Content-Length and text, read
  strictly), ``httpd`` (the HTTP side).
"""

from __future__ import annotations

from attnlab.explorer.notebook import show
from attnlab.explorer.page.composed import rollout, value_weighted
from attnlab.explorer.page.data import DataError, head_weights, validate_data
from attnlab.explorer.page.encoding import decode_data, encode_page
from attnlab.explorer.page.render import ExplorerView, render_page, write_page
from attnlab.explorer.server.httpd import RunningServer, make_server, serve, start_server
from attnlab.explorer.sources.build import page_data, view_from_scores, view_from_traces
from attnlab.explorer.sources.hand import hand_compute, hand_designed_page, hand_view
from attnlab.explorer.sources.heads import SENTENCE, HandHead, feature_matrix, hand_heads
from attnlab.explorer.sources.tensors import weights_page
from attnlab.explorer.sources.traces import LayerTrace

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
