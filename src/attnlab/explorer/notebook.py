"""``show``: the explorer inline in a Jupyter notebook, for any model the explorer reads.

::

    import attnlab.explorer as ax
    ax.show("runs/<hash>", "ROMEO: what light")       # a run of `attnlab train`
    ax.show("path/to/hf-folder", "The cat sat")        # a local Hugging Face model
    ax.show("path/to/t5-folder", "Hello", target="Hallo")  # an encoder–decoder, teacher-forced
    ax.show(model, "the cat sat", tokenizer=vocab)     # an attnlab LanguageModel in memory
    ax.show()                                          # the hand-designed heads
    ax.show(weights=pattern, tokens=strings)           # weights from any library: (L, H, n, n)

The returned ``ExplorerView`` displays itself (``_repr_html_``) as the whole
self-contained page inside a sandboxed ``<iframe srcdoc>``: its script runs
even where a notebook does not run scripts in outputs, it needs no network
(nothing is fetched, at display time or later), and ``.save(path)`` writes
the same page to a file.

Left out: the served text box (a notebook cell is the place to type), and
Hugging Face model objects in memory (pass their folder, or their
``output_attentions`` as ``weights=``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnlab.errors import AttnlabError, DataError, UsageError
from attnlab.explorer.page.render import ExplorerView, say
from attnlab.explorer.sources.hand import hand_compute
from attnlab.explorer.sources.heads import SENTENCE
from attnlab.i18n import resolve_lang
from attnlab.i18n.logs import said

__all__ = ["show"]


def _folder_kind(folder: Path) -> str:
    """``hf`` for a Hugging Face model folder, ``run`` for a run of ``attnlab train``."""
    config = folder / "config.json"
    if not config.is_file():
        raise DataError("%s holds no config.json: neither a run of `attnlab train` nor a "
                        "Hugging Face model folder", folder)  # fmt: skip
    try:
        fields = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise DataError("%s is not readable JSON: %s", config, err) from err
    if isinstance(fields, dict) and "model_type" in fields:
        return "hf"
    run = fields.get("config", fields) if isinstance(fields, dict) else None
    if isinstance(run, dict) and "model" in run and "train" in run:  # {"hash", "config": {…}}
        return "run"
    raise DataError("%s is neither an attnlab run config nor a Hugging Face one", config)


def show(
    source: Any = None,
    text: str | None = None,
    *,
    tokenizer: Any = None,
    target: str | None = None,
    weights: Any = None,
    tokens: Sequence[str] | None = None,
    height: int = 900,
    lang: str | None = None,
) -> ExplorerView:
    """The explorer for ``source`` on ``text``, ready to display inline in Jupyter.

    ``source`` is a folder (a run of ``attnlab train``, or a Hugging Face causal LM,
    encoder or encoder–decoder saved with ``save_pretrained``; ``target`` is an
    encoder–decoder's target text, by default its own greedy output), an attnlab
    ``LanguageModel`` (with ``tokenizer=``: anything with ``encode``, e.g. a ``BPETokenizer`` or a
    synthetic ``Vocab``), or None for the hand-designed heads (``text``
    defaults to their Spanish sentence). Models run on the resolved device.

    ``show(weights=…, tokens=…)`` shows attention weights from any library
    (``attnlab.explorer.sources.tensors``): shaped (L, H, n, n), (H, n, n) or (n, n),
    NumPy or torch, with one token string per position; the switches are off
    (no q and k were given) and the page says so.

    ``lang`` (``"en"`` or ``"es"``; default from the locale, then English) is the language of
    the page's buttons, switches, captions and notes; the hand-designed page's title, heads
    and notes follow it too.
    """
    lang = resolve_lang(lang)
    try:
        return _show(source, text, tokenizer, target, weights, tokens, height, lang)
    except AttnlabError as err:
        if lang == "en":
            raise
        raise type(err)(said(err, lang)) from err  # a notebook has no command to say it


def _show(source: Any, text: str | None, tokenizer: Any, target: str | None, weights: Any,
          tokens: Sequence[str] | None, height: int, lang: str) -> ExplorerView:
    """``show``'s work, in English errors (``show`` says them in ``lang``)."""
    if weights is not None or tokens is not None:
        if source is not None or text is not None or weights is None or tokens is None:
            raise UsageError("show(weights=..., tokens=...) takes both, and no source or text")
        from attnlab.explorer.sources.tensors import weights_page

        return ExplorerView(weights_page(weights, tokens, lang=lang), height=height, lang=lang)
    if source is None or source == "hand":
        data = hand_compute(SENTENCE if text is None else text, lang)
        return ExplorerView(data, height=height, lang=lang)
    if text is None or not str(text).strip():
        raise UsageError("show(source, text): give the sentence to show")
    hf = isinstance(source, (str, Path)) and Path(source).is_dir() and \
        _folder_kind(Path(source)) == "hf"  # fmt: skip
    if target is not None and not hf:
        raise UsageError("show(..., target=...) is for a Hugging Face encoder–decoder folder")
    if isinstance(source, (str, Path)):
        folder = Path(source)
        if not folder.is_dir():
            raise DataError("no folder at %s", folder)
        if hf:
            from attnlab.explorer.sources.hf import hf_compute

            data = hf_compute(folder, target=target, lang=lang)(text)
            return ExplorerView(data, height=height, lang=lang)
        from attnlab.explorer.sources.models import checkpoint_compute

        return ExplorerView(checkpoint_compute(folder, lang)(text), height=height, lang=lang)
    from attnlab.nn.model import LanguageModel

    if isinstance(source, LanguageModel):
        if tokenizer is None or not hasattr(tokenizer, "encode"):
            raise UsageError("show(model, text, tokenizer=...): a LanguageModel needs the "
                             "tokenizer its ids come from")  # fmt: skip
        from attnlab.explorer.sources.models import checkpoint_view, describe, model_page

        view = checkpoint_view(source, tokenizer, text, name=text)
        title = say("model.title", lang)
        description = say("model.description", lang, model=describe(source.cfg, lang))
        data = model_page(source, [view], title, description)
        return ExplorerView(data, height=height, lang=lang)
    raise UsageError("show() takes a folder, an attnlab LanguageModel, None or weights=, not a "
                     "%s (for a Hugging Face model, pass its folder)", type(source).__name__)
