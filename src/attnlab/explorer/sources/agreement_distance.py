"""The explorer's long-range agreement preset (``attnlab explore --agreement-distance``).

The attention model of "Why attention replaced recurrence" (docs/experiments.md; two
pre-norm blocks of four heads, RoPE, the quick profile's budget: the experiment's own run
for seed 0, taken from its plan through its record (``planned_run``) and shared through the
run cache when both use the same ``--work``) on the
explainers' sentence with its relative clause grown to ``DISTANCE`` words:
«la gata que perseguía al ratón … estaba muy ___». The page opens on the row of ``muy``,
the position that predicts the adjective; the description gives P(cansada), P(cansado)
and the largest weight any head of that row puts on «gata» and on «ratón».

Left out: the recurrences (they have no attention to show) and other distances (the
experiment's table has the accuracy at each).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnlab.data import gender
from attnlab.explorer.page.render import counted, say
from attnlab.explorer.sources.models import (
    _strongest,
    checkpoint_view,
    last_row_weights,
    model_page,
    next_word_probs,
    planned_run,
)
from attnlab.train.progress import Progress

DISTANCE = 32  # words from «gata» to the adjective: half the quick profile's 64-word window
RUN = "agreement attention seed 0"  # the run of the experiment's plan this page shows


def sentence_text(d: int = DISTANCE) -> str:
    """``. la gata que perseguía al ratón {fillers} estaba muy``: the input up to the adjective."""
    fillers = [gender.FILLERS[i % len(gender.FILLERS)] for i in range(gender.n_fillers(d, "ratón"))]
    words = gender.sentence("gata", "perseguía", "ratón", fillers, "cansad")
    return " ".join([".", *words[:-2]])


def agreement_distance_page(work: str | Path = "runs", progress: Progress | None = None,
                            lang: str = "en") -> dict[str, Any]:
    """The page: the trained attention model on the gata sentence at distance ``DISTANCE``,
    its text in ``lang`` (``en`` or ``es``)."""
    from attnlab.running.context import Context

    s, spec = planned_run("recurrence", "quick", RUN)
    cfg = spec.config.model
    vocab = gender.vocab()  # the language's one vocabulary, whatever its settings
    ctx = Context.local(Path(work), progress=progress)
    record = ctx.train("explorer agreement-distance probe", cfg, spec.config.train,
                       data_cfg=spec.config.data, data=spec.data)
    model = ctx.load_model(record)
    d = min(DISTANCE, s.max_d)  # a distance the model was trained on
    text = sentence_text(d)
    p = next_word_probs(model, vocab, text, ("cansada", "cansado"))
    tokens = text.split()
    w = last_row_weights(model, vocab, text)  # (L, H, n): the row of «muy»
    on_gata = _strongest(w[..., tokens.index("gata")], lang)
    on_raton = _strongest(w[..., tokens.index("ratón")], lang)
    view = checkpoint_view(model, vocab, text, name=f"d = {d}", lang=lang)
    description = say("distance.description", lang, blocks=counted(cfg.n_layer, "block", lang),
                      heads=counted(cfg.n_head, "head", lang), steps=record["steps"], d=d,
                      cansada=f"{p['cansada']:.3f}", cansado=f"{p['cansado']:.3f}",
                      gata=on_gata, raton=on_raton)
    return model_page(model, [view], say("distance.title", lang), description)
