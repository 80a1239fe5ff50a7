"""The explorer's translation preset (``attnlab explore --translation``): where attention was
born, on one sentence.

Dimension legend: ``S`` source words (the final "." included), ``T`` target words, ``s = S + 1``
source positions and ``t = T + 1`` decoder positions (the eos on each side), ``L`` layers,
``H`` heads, ``d`` query/key width of a head.

The additive (Bahdanau) model and the transformer of "Where attention was born"
(docs/experiments.md; the quick profile's budget, seed 0: the experiment's own runs, taken
from its plan through its record (``planned_run``) and shared through the run cache when
both use the same ``--work``) on one English sentence of the translation language
(``attnlab.data.translation``; by default ``SENTENCE``: a relative clause, and an adjective
that Spanish puts after its noun). The target shown is the language's own translation, fed to
each decoder word by word as in training (teacher forcing): every view then has the same
rows, and the gold alignment lines up with them; what each model writes by itself (greedy)
is said in the description. Views, rows the target and columns the source (FORMAT: a view's
``sources`` and ``attends``, ``attnlab.explorer.page.data``):

- the additive model's alignment, its weights at each decoder step (fixed: its score is a
  small network of the pair, vᵀ tanh(W s + U h), with no q·k for the switches to redo);
- the gold alignment (fixed: the language's, not a model's);
- the transformer's encoder self-attention (bidirectional, s × s), decoder self-attention
  (causal, t × t) and cross-attention (t × s), per layer and head, with their q and k
  (``TransformerEncoderDecoder.trace``).

The rows of the cross-attention and both alignments are the word each decoder step writes
(the target, then eos); the decoder's self-attention is over the words it reads (bos, then
the target), as its keys are. Left out: the model without attention (it has no weights over
the source), beam search, sentences outside the language.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.data.translation import BOS, EOS, SPECIALS, Pair, encode_batch, translate
from attnlab.errors import UsageError
from attnlab.explorer.page.data import rounded
from attnlab.explorer.page.render import say
from attnlab.explorer.sources.build import page_data
from attnlab.explorer.sources.models import planned_run
from attnlab.nn.seq2seq import greedy_decode
from attnlab.train.progress import Progress

__all__ = ["RUNS", "SENTENCE", "source_pair", "translation_page"]

SENTENCE = "the quiet girl that chased the mouse was very tired ."
RUNS = {"additive": "translation bahdanau seed 0", "transformer": "translation transformer seed 0"}


def source_pair(text: str, vocab: Any) -> Pair:
    """The pair of an English sentence of the language: lower-cased, the final "." split from
    its word or added. A word outside ``vocab`` (the source vocabulary) or a sentence outside
    the grammar is a one-line UsageError that names it (and lists the words, or shows the
    grammar), said in the command's language by its ``error`` entry."""
    words = text.lower().split()
    if words and words[-1].endswith(".") and words[-1] != ".":
        words[-1:] = [words[-1][:-1], "."]
    if not words or words[-1] != ".":
        words.append(".")
    known = [w for w in vocab.words if w not in SPECIALS]
    for w in words:
        if w not in known:
            raise UsageError("--text: “%s” is not a word of the translation language; its "
                             "words are: %s", w, " ".join(known))
    try:
        return translate(words)
    except ValueError as err:
        raise UsageError("--text: not a sentence of the translation language (%s); its "
                         "sentences read NP (that VERB NP)* was [very] ADJECTIVE ., with NP = "
                         "the|a [[very] ADJECTIVE] NOUN, e.g. “%s”", err, SENTENCE) from err


def _heads(records: list[Any], lang: str) -> list[dict[str, Any]]:
    """The page's layers of one kind of attention: each head's q, k and the model's weights
    (batch item 0 of each ``BlockTrace``)."""
    layers = []
    for r in records:
        q, k, w = (x[0].to("cpu", torch.float64).numpy() for x in (r.q, r.k, r.weights))
        layers.append({"heads": [
            {"name": say("tensors.head", lang, n=h + 1), "d_k": int(q.shape[-1]),
             "q": rounded(q[h]), "k": rounded(k[h]), "weights": np.round(w[h], 7).tolist()}
            for h in range(q.shape[0])]})  # fmt: skip
    return layers


def _fixed_view(name: str, tokens: list[str], sources: list[str], head: str, weights: Any,
                why: str) -> dict[str, Any]:
    """A view given by its weights alone (t × s), the reason in ``fixed``."""
    return {"name": name, "tokens": tokens, "sources": sources, "attends": "cross", "fixed": why,
            "layers": [{"heads": [{"name": head, "d_k": 1,
                                   "weights": np.round(weights, 7).tolist()}]}]}  # fmt: skip


def _hits(weights: np.ndarray, pair: Pair) -> int:
    """Target words (rows < T) whose largest weight (t, s) lies on their gold source word."""
    return sum(int(np.argmax(weights[k])) == j for k, j in enumerate(pair.alignment)
               if j is not None)  # fmt: skip


def translation_page(work: str | Path = "runs", progress: Progress | None = None,
                     lang: str = "en", text: str | None = None) -> dict[str, Any]:
    """The page: the trained additive model and transformer on ``text`` (default
    ``SENTENCE``), its words in ``lang`` (``en`` or ``es``)."""
    from attnlab.running.context import Context

    specs = {m: planned_run("translation", "quick", label)[1] for m, label in RUNS.items()}
    data = specs["transformer"].data
    pair = source_pair(text if text is not None else SENTENCE, data.source_vocab)
    ctx = Context.local(Path(work), progress=progress)
    models, steps = {}, 0
    for m, spec in specs.items():
        record = ctx.train(f"explorer translation {m}", spec.config.model, spec.config.train,
                           data_cfg=spec.config.data, data=spec.data)  # fmt: skip
        models[m], steps = ctx.load_model(record), record["steps"]
    batch = encode_batch([pair], data.source_vocab, data.target_vocab)
    src, lengths, tgt_in = (torch.from_numpy(np.asarray(a))
                            for a in (batch.src, batch.src_lengths, batch.tgt_in))  # fmt: skip
    with torch.no_grad():
        additive = models["additive"].attention_weights(src, lengths, tgt_in)[0].double()  # (t, s)
        trace = models["transformer"].trace(src, lengths, tgt_in)
    written = [*pair.target, "<eos>"]  # the word each decoder step writes: the rows
    read = ["<bos>", *pair.target]  # the words the decoder reads: its self-attention's keys
    source = [*pair.source, "<eos>"]
    gold = np.zeros((len(written), len(source)))
    gold[: len(pair.target), : len(pair.source)] = pair.alignment_matrix()
    views = [
        _fixed_view(say("translation.view.additive", lang), written, source,
                    say("translation.head.additive", lang), additive.numpy(),
                    say("translation.fixed.additive", lang)),
        _fixed_view(say("translation.view.gold", lang), written, source,
                    say("translation.head.gold", lang), gold, say("translation.fixed.gold", lang)),
        {"name": say("translation.view.encoder", lang), "tokens": source,
         "attends": "bidirectional", "layers": _heads(trace.encoder, lang)},
        {"name": say("translation.view.decoder", lang), "tokens": read, "attends": "causal",
         "layers": _heads(trace.decoder, lang)},
        {"name": say("translation.view.cross", lang), "tokens": written, "sources": source,
         "attends": "cross", "layers": _heads(trace.cross, lang)},
    ]  # fmt: skip
    cross = torch.stack([r.weights[0] for r in trace.cross]).double().numpy()  # (L, H, t, s)
    per_head = [[_hits(cross[li, h], pair) for h in range(cross.shape[1])]
                for li in range(cross.shape[0])]  # fmt: skip
    best = np.unravel_index(int(np.argmax(per_head)), cross.shape[:2])
    description = say(
        "translation.description", lang, steps=steps, source=" ".join(pair.source),
        target=" ".join(pair.target), additive=_greedy(models["additive"], src, lengths, data),
        transformer=_greedy(models["transformer"], src, lengths, data),
        a_hits=_hits(additive.numpy(), pair), words=sum(j is not None for j in pair.alignment),
        t_hits=per_head[best[0]][best[1]],
        best=say("translation.best", lang, layer=best[0] + 1, head=best[1] + 1))
    return page_data(say("translation.title", lang), description, views, causal=True)


def _greedy(model: Any, src: torch.Tensor, lengths: torch.Tensor, data: Any) -> str:
    """What ``model`` writes by itself for the source (b = 1), each word its most likely, up to
    eos (or twice the source's length and a few words more)."""
    ids = greedy_decode(model, src, lengths, BOS, EOS, 2 * src.shape[1] + 4)[0].tolist()
    ids = ids[: ids.index(EOS)] if EOS in ids else ids
    return data.target_vocab.decode(ids)
