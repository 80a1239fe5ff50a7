"""Position: five schemes trained on 64 tokens, evaluated on 64, 128 and 256
(docs/experiments.md, "Position").

Dimension legend: ``b`` batch, ``t`` positions, ``c`` model width, ``h`` heads.

Each scheme is the default block (width 128, four heads, pre-norm, MLP) with
only ``position`` changed: learned absolute (GPT-2), sinusoidal (Vaswani et al.
2017), RoPE (Su et al. 2021), ALiBi (Press et al. 2022), and none (the
control: a causal model can still tell positions apart by how many tokens it
sees). All train with a 64-token context; held-out perplexity is then measured
over the *whole* held-out split in non-overlapping windows of 64, 128 and 256
tokens (docs/data.md). The learned table has 256 rows (``n_pos``), so positions
64..255 exist but keep their untrained N(0, 1) initial vectors (they get no
gradient; only AdamW's decoupled weight decay shrinks them, by (1 − lr·wd)^steps
≈ 0.97 over the full run — a test checks exactly that).

Longer windows give each token more context on average, so a scheme that
extrapolates perfectly *improves* with the window; one that does not gets
worse. That is what the table and figure show.

Permutation equivariance. Self-attention without positions and without the
causal mask is equivariant: f(Px) = P f(x) for any permutation P of the
tokens. We check it on the projections and ``W_o`` of a ``MultiHeadAttention``
run through ``attention(causal=False)``, and show it breaks with the causal
mask (a causal LM is *not* equivariant) and with each position scheme
(the positions stay at slots 0..t-1 while the tokens move). For ALiBi run
non-causally, keys after the query get no penalty (``alibi_bias`` clamps the
distance at 0); the bias still depends on the slot, which is enough to break it.

Left out: sliding-window evaluation, RoPE/ALiBi interpolation tricks.
"""

from __future__ import annotations

import logging

from attnlab.data.perplexity import perplexity
from attnlab.experiments.position.chapter import CHAPTER
from attnlab.experiments.position.claims import CLAIMS
from attnlab.experiments.position.measure import PERMUTATION_CASES, permutation_check
from attnlab.experiments.position.settings import (
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    SCHEMES,
    Settings,
)
from attnlab.experiments.position.view import figure, table
from attnlab.i18n.logs import Phrase
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import fmt_ms, settings_dict
from attnlab.nn.model_config import POSITIONS, ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig
from attnlab.train.runtime import autocast

log = logging.getLogger(__name__)


def model_config(s: Settings, scheme: str) -> ModelConfig:
    """The default block with ``scheme``; a learned table sized for the longest evaluation."""
    if scheme not in POSITIONS:
        raise ValueError(f"unknown position scheme {scheme!r}; choose from {', '.join(POSITIONS)}")
    longest = max(s.eval_lengths)
    if longest < s.n_ctx:
        raise ValueError(f"eval lengths must reach the training context {s.n_ctx}")
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       n_head=s.n_head, position=scheme,
                       n_pos=longest if scheme == "learned" else None)


def plan(settings: Settings) -> list[RunSpec]:
    """Every scheme for every seed."""
    s = settings
    data = s.data_config()
    return [spec for scheme in s.schemes
            for spec in seeded(f"position {scheme}",
                               RunConfig(model=model_config(s, scheme), train=s.train_config(),
                                         data=data), s.seeds)]


def analyse(settings: Settings, results: Results, ctx: Context) -> dict:
    """Each scheme at every length; then the permutation checks.

    The trained length is the trainer's own held-out perplexity (the same windows, batch and
    precision), not measured twice; the longer ones are measured here under the run's
    precision, so every ratio compares like with like.
    """
    s = settings
    held = ctx.token_data(s.vocab_size).held
    rows = []
    for scheme in s.schemes:
        runs = results.seeds(f"position {scheme}")
        ppl: dict[str, list[float]] = {str(n): [] for n in s.eval_lengths}
        for r in runs:
            longer = [n for n in s.eval_lengths if n != s.n_ctx]
            model = ctx.trained(r) if longer else None
            for n in s.eval_lengths:
                if n == s.n_ctx:
                    ppl[str(n)].append(r["held_ppl"])
                    continue
                with autocast(ctx.device, r.get("precision", "fp32")):  # as the trainer
                    ppl[str(n)].append(perplexity(model, held, n, s.eval_batch_size,
                                                  ctx.device))
        rows.append({"scheme": scheme, "params": runs[0]["params"], "ppl": ppl,
                     "train_ppl": [r["train_ppl"] for r in runs],
                     "wall_s": [r["wall_s"] for r in runs],
                     "run_dirs": [r["run_dir"] for r in runs]})
        log.info("position %s: %s", Phrase(scheme, NAME),
                 ", ".join(f"{n}: {fmt_ms(v)}" for n, v in ppl.items()))
    perm = [{"position": p, "causal": c,
             "max_diff": permutation_check(p, c, s.perm_tokens, s.perm_d_model)}
            for p, c in PERMUTATION_CASES]
    return {"settings": settings_dict(s), "seeds": s.seeds, "rows": rows, "permutation": perm}


__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PERMUTATION_CASES", "PROFILES", "SCHEMES",
    "Settings", "analyse", "figure", "model_config", "permutation_check", "plan", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
