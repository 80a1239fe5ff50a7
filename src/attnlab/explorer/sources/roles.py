"""The explorer's head-roles view and the ``attnlab explore --induction`` page.

``roles_data(scores)`` turns ``attnlab.interp.head_scores`` into the page's
``data.roles``: for each score a grid of layers × heads that ``roles.js`` draws
shaded by the score, a click opening the head. ``induction_page(work)`` trains (or
reuses, through the runner's cache) seed 0 of the ``induction`` experiment's
final two-block model (the run of its plan, read through its record: ``planned_run``)
and shows it on a repeated sequence of random tokens: the induction head's stripe (each
token of the repeat looking at the token after its first occurrence) and the block-1
previous-token head it reads from.

Left out: roles of heads in views other than the one the scores were measured on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnlab.data.repeated import repeated_probe
from attnlab.explorer.page.render import say
from attnlab.explorer.sources.build import view_from_traces
from attnlab.explorer.sources.models import model_page, planned_run
from attnlab.explorer.sources.traces import attnlab_traces
from attnlab.interp import SCORES, HeadScores, head_scores
from attnlab.train.progress import Progress

PROBE_HALF = 12  # tokens before the repeat on the --induction page
RUN = "induction 2L seed 0"  # the run of the experiment's plan this page shows
SCORE_NAMES = {"previous": "roles.score.previous", "induction": "roles.score.induction",
               "duplicate": "roles.score.duplicate", "sink": "roles.score.sink"}  # catalogue keys


def roles_data(scores: HeadScores, note: str = "", lang: str = "en") -> dict[str, Any]:
    """``data.roles``: each score's grid (layers × heads, in [0, 1]), its name and the words
    above it, in ``lang``."""
    n, t = scores.probe.shape
    return {"title": say("roles.title", lang),
            "note": note or say("roles.note", lang, rows=n, tokens=t // 2),
            "names": {k: say(SCORE_NAMES[k], lang) for k in SCORES},
            "scores": {k: [[round(float(v), 4) for v in row] for row in scores.scores[k]]
                       for k in SCORES}}


def with_roles(data: dict[str, Any], model: Any, lang: str = "en") -> dict[str, Any]:
    """The page data with the head-roles view of ``model`` (an attnlab or Hugging Face
    model) on the standard probe."""
    return {**data, "roles": roles_data(head_scores(model), lang=lang)}


def induction_page(work: str | Path = "runs", progress: Progress | None = None,
                   lang: str = "en") -> dict[str, Any]:
    """The trained two-block induction model on a repeated random sequence, with its roles;
    its text in ``lang`` (``en`` or ``es``)."""
    from attnlab.running.context import Context

    s, spec = planned_run("induction", "quick", RUN)
    ctx = Context.local(Path(work), progress=progress)
    record = ctx.train("explorer induction model", spec.config.model, spec.config.train,
                       data_cfg=spec.config.data, data=spec.data)
    model = ctx.load_model(record)
    ids = repeated_probe(s.vocab_size, PROBE_HALF, n=1, seed=1)[0].tolist()
    tokens = [f"t{i}" for i in ids]
    view = view_from_traces(say("induction.view", lang), tokens, attnlab_traces(model, ids),
                            lang=lang)
    scores = head_scores(model)
    il, ih, iv = scores.best("induction")
    pl, ph, pv = scores.best("previous")
    description = say("induction.description", lang, steps=record["steps"], half=PROBE_HALF,
                      il=il + 1, ih=ih + 1, iv=f"{iv:.2f}", gap=PROBE_HALF - 1, pl=pl + 1,
                      ph=ph + 1, pv=f"{pv:.2f}")
    data = model_page(model, [view], say("induction.title", lang), description)
    return {**data, "roles": roles_data(scores, lang=lang)}
