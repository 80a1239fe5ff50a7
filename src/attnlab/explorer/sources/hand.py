"""The hand-designed heads as explorer data: one layer of three heads over the words of a
sentence (``attnlab.explorer.sources.heads``), each with its W_Q, W_K and the feature columns
it reads, so the page shows how its q and k are made.

Left out: tokens other than words (the hand heads read whole words, split on spaces).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attnlab.errors import UsageError
from attnlab.explorer.page.data import rounded
from attnlab.explorer.sources.build import page_data
from attnlab.explorer.sources.heads import (
    SENTENCE,
    feature_matrix,
    feature_names,
    hand_heads,
    sentence_note,
    words,
)
from attnlab.i18n import text as text_of

__all__ = ["hand_compute", "hand_designed_page", "hand_view"]

MAX_WORDS = 40  # the hand heads have no context limit; this keeps the page readable


def _labelled(rows: Sequence[str], cols: Sequence[str], values: np.ndarray) -> dict[str, Any]:
    return {"rows": list(rows), "cols": list(cols), "values": np.round(values, 4).tolist()}


def hand_view(
    text: str = SENTENCE, *, max_words: int = MAX_WORDS, lang: str = "en"
) -> dict[str, Any]:
    """The hand-designed heads over the words of ``text`` (one layer, three heads).

    Each head carries its W_Q, W_K and the feature columns it reads (rows that
    are zero in both matrices are left out of the display).
    """
    tokens = words(text)
    if not tokens:
        raise UsageError("the sentence is empty")
    if len(tokens) > max_words:
        raise UsageError("the sentence has %s words; the limit is %s", len(tokens), max_words)
    x = feature_matrix(tokens)  # (n, f)
    cols = feature_names()
    heads = []
    for head in hand_heads():
        used = np.flatnonzero(np.abs(head.w_q).sum(axis=1) + np.abs(head.w_k).sum(axis=1))
        used_names = [cols[f] for f in used]
        said = sentence_note(head, tokens, head.scores(x), lang)  # this sentence, not the default
        heads.append(
            {
                "name": _say(f"hand.name.{head.name}", lang),
                "note": f"{head.note_in(lang)} {said}".strip(),
                "d_k": len(head.latent),
                "q": rounded(x @ head.w_q, 12),  # (n, k)
                "k": rounded(x @ head.w_k, 12),  # (n, k)
                "dims": list(head.latent),
                "w_q": _labelled(used_names, head.latent, head.w_q[used]),  # (f_used, k)
                "w_k": _labelled(used_names, head.latent, head.w_k[used]),
                "features": _labelled(tokens, used_names, x[:, used]),  # (n, f_used)
            }
        )
    return {"name": "hand-designed", "tokens": tokens, "layers": [{"heads": heads}]}


def hand_compute(text: str, lang: str = "en") -> dict[str, Any]:
    """Data for any typed sentence under the hand-designed heads (the server's compute), its
    title, description, head names and notes in ``lang`` (``en`` or ``es``)."""
    return page_data(_say("hand.title", lang), _say("hand.description", lang),
                     [hand_view(text, lang=lang)], causal=False, scale=True)  # fmt: skip


def hand_designed_page(lang: str = "en") -> dict[str, Any]:
    """Data for the chapter's sentence, ``La gata que perseguía al ratón estaba muy cansada``
    (the default in both languages: the hand heads' lexicon is Spanish)."""
    return hand_compute(SENTENCE, lang)


def _say(key: str, lang: str, **fields: object) -> str:
    return text_of("explorer", key, lang, **fields)
