"""The attention explorer (SPEC §5): a self-contained page that shows where words look.

- ``heads``: hand-designed heads over word features (agreement, previous word, subject);
- ``page``: the page itself, from one plain data dict (``render_page``, ``ExplorerView``);
- ``build``: data dicts from the hand heads and from models (adapters);
- ``server``: a small local server that computes the data for typed sentences.
"""

from __future__ import annotations

from attnlab.explorer.build import (
    hand_compute,
    hand_designed_page,
    hand_view,
    page_data,
    view_from_scores,
)
from attnlab.explorer.heads import SENTENCE, HandHead, feature_matrix, hand_heads
from attnlab.explorer.page import DataError, ExplorerView, render_page, validate_data, write_page
from attnlab.explorer.server import RunningServer, make_server, serve, start_server

__all__ = [
    "SENTENCE",
    "DataError",
    "ExplorerView",
    "HandHead",
    "RunningServer",
    "feature_matrix",
    "hand_compute",
    "hand_designed_page",
    "hand_heads",
    "hand_view",
    "make_server",
    "page_data",
    "render_page",
    "serve",
    "start_server",
    "validate_data",
    "view_from_scores",
    "write_page",
]
