"""The figures the textbook chapter published for its own settings, as data.

The chapter reports one run of each experiment at its own budget (the ``full``
profile: width 128, context 128, 3,000 AdamW steps at 1e-3, batch 64, BPE
vocabulary 1,024 on Tiny Shakespeare, 90/10 split, one seed). The report
shows these figures beside the measured ones (``attnlab.report.fidelity``),
so that a reader can tell "the chapter is wrong" from "this budget is too
small to see it". They are facts to show, never targets: no setting of any
profile is chosen to move a measured figure toward one of them.

Each figure has a ``key``, ``<experiment>/<quantity>``, by which the report
finds the measured figure of the same quantity in that experiment's record.
Where the chapter states only a difference ("14 points better than row 4"),
the absolute figure is the earlier figure plus that difference, and
``derived`` says so in words: the report marks such figures as derived from
the text. Where the chapter states a figure in words ("attends to one
token"), ``derived`` says that too.

Left out: the chapter's qualitative statements (learned positions "fall off
a cliff"; RoPE "degrades gently"), which the claims decide instead, and the
figures of the verification table and the tokenizer, which no experiment
record holds (``attnlab verify`` and the data tests check them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChapterFigure:
    """One figure the chapter published."""

    key: str  # "<experiment>/<quantity>": where the report looks for the measured figure
    label: str  # what the figure is, in words, as a table row names it
    value: float  # the chapter's figure (or the one derived from its text)
    derived: str = ""  # how the figure follows from the chapter's text; "" when printed as is

    @property
    def experiment(self) -> str:
        return self.key.split("/", 1)[0]


F = ChapterFigure

# -- the ladder: held-out perplexity per row (row 8, the MLP, only through row 9) ------------
LADDER = (
    F("ladder/row 1/held", "row 1 no context: held-out ppl", 59.71),
    F("ladder/row 2/held", "row 2 uniform mean replacing: held-out ppl", 247.71,
      "row 1 + the 188-point gap the mean opened (the text: about 4× worse than row 1)"),
    F("ladder/row 3/held", "row 3 + learned positions: held-out ppl", 245.57,
      "row 2 − 2.14 (2.14 points better than row 2)"),
    F("ladder/row 4/held", "row 4 mean + residual: held-out ppl", 60.45),
    F("ladder/row 5/held", "row 5 one head: held-out ppl", 46.45,
      "row 4 − 14 (14 points better than the mean with residual)"),
    F("ladder/row 6/held", "row 6 four heads: held-out ppl", 43.45,
      "row 5 − 3 (3 points better than one head)"),
    F("ladder/row 6/params added", "row 6 four heads: parameters over row 5", 16_512),
    F("ladder/row 7/held", "row 7 head replacing: held-out ppl", 55.45,
      "row 5 + 9 (9 points worse than the head added)"),
    F("ladder/row 8/held", "row 8 + MLP: held-out ppl", 39.87,
      "row 9 + 1.8 (LayerNorm is 1.8 points better than row 8)"),
    F("ladder/row 9/params added", "row 9 LayerNorm: parameters over row 8", 768),
    F("ladder/row 9/train", "row 9 one block: train ppl", 18.77),
    F("ladder/row 9/held", "row 9 one block: held-out ppl", 38.07),
    F("ladder/row 10/train", "row 10 two blocks: train ppl", 14.49),
    F("ladder/row 10/held", "row 10 two blocks: held-out ppl", 40.57),
)

# -- why divide by √d_k ------------------------------------------------------------------------
SQRT_DK = (
    *(F(f"sqrt_dk/var d={d}", f"Var(q·k) at d = {d:,}", v)
      for d, v in ((4, 3.975), (16, 16.071), (64, 64.249), (256, 253.065), (1024, 1015.562))),
    F("sqrt_dk/eff unscaled d=256", "a fresh unscaled row of 64 scores at d_k = 256: "
      "effective tokens", 1.0, "the text: it attends to one token"),
    F("sqrt_dk/frozen unscaled d=1024", "unscaled at d_k = 1,024: fraction of random rows "
      "frozen", 0.7, "the text: 7 of 10 sampled rows"),
    F("sqrt_dk/jacobian scaled d=1024", "scaled at d_k = 1,024: mean Jacobian trace", 0.96,
      "the text: stays about 0.96"),
    F("sqrt_dk/gap d_k=256", "trained at d_k = 256: held-out ppl unscaled − scaled", 18.0),
    F("sqrt_dk/gap d_k=1024", "trained at d_k = 1,024: held-out ppl unscaled − scaled", 17.0),
    F("sqrt_dk/score std init d_k=1024 raw", "d_k = 1,024 unscaled: score std at "
      "initialisation", 21.0),
    F("sqrt_dk/score std after d_k=1024 raw", "d_k = 1,024 unscaled: score std after "
      "training", 5_147.0),
    F("sqrt_dk/frozen after d_k=1024 raw", "d_k = 1,024 unscaled, after training: fraction of "
      "rows with > 0.99 on one token", 0.999),
    F("sqrt_dk/score std after d_k=1024 scaled", "d_k = 1,024 scaled: score std after "
      "training", 3.44),
)

# -- pre-norm or post-norm (12 blocks, 1,000 steps, lr 3e-3) ---------------------------------
NORM = (
    F("norm/grad pre first", "gradient norm at initialisation, pre-norm, block 1", 0.0498),
    F("norm/grad pre last", "gradient norm at initialisation, pre-norm, block 12", 0.0657),
    F("norm/grad pre ratio", "pre-norm: last / first block", 1.32),
    F("norm/grad post first", "gradient norm at initialisation, post-norm, block 1", 0.0977),
    F("norm/grad post last", "gradient norm at initialisation, post-norm, block 12", 0.1613),
    F("norm/grad post ratio", "post-norm: last / first block", 1.65),
    F("norm/pre/no_warmup", "pre-norm, no warmup: held-out ppl", 37.82),
    F("norm/pre/warmup", "pre-norm, 200 warmup steps: held-out ppl", 37.62),
    F("norm/post/no_warmup", "post-norm, no warmup: held-out ppl", 308.05),
    F("norm/post/warmup", "post-norm, 200 warmup steps: held-out ppl", 37.88),
)

# -- position (trained at 64) -----------------------------------------------------------------
POSITION = (
    F("position/alibi@64", "ALiBi: held-out ppl at 64 tokens", 44.95),
    F("position/alibi@256", "ALiBi: held-out ppl at 256 tokens", 42.49),
)

# -- cost of one naive attention layer (width 512, 8 heads, batch 1, fp32, a laptop GPU) ------
# The chapter took its milliseconds on a laptop GPU and says to read them only by their
# ratios: its times are compared here as the ratio to the row above (the ×4
# of a quadratic layer, ×2 of a linear one) and as exponents, never as milliseconds; its
# peak memory (a GPU allocator's) likewise as a ratio. The n×n bytes are arithmetic.
_COST = ((128, 2.246, 1.324, 0.5, 14.6), (256, 2.855, 2.113, 2.0, 19.2),
         (512, 5.761, 3.105, 8.0, 34.4), (1024, 16.414, 4.008, 32, 89.1),
         (2048, 51.573, 9.989, 128, 296.1), (4096, 225.432, 20.176, 512, 1_100.1),
         (8192, 832.838, 40.106, 2_048, 4_300.1))
_RATIO = "its {what} at n = {n:,} over its {what} at n = {half:,}"
COST = (
    *(F(f"cost/naive n={n} nn MB", f"naive, n = {n:,}: MB of the n×n scores", nn_mb)
      for n, _, _, nn_mb, _ in _COST),
    *(f for (half, t0, p0, _, m0), (n, t1, p1, _, m1) in zip(_COST, _COST[1:], strict=False)
      for f in (
          F(f"cost/naive n={n} time ratio", f"naive, n = {n:,}: time ÷ time at {half:,}",
            t1 / t0, _RATIO.format(what="ms in total", n=n, half=half)),
          F(f"cost/naive n={n} proj ratio", f"naive, n = {n:,}: projections' time ÷ theirs "
            f"at {half:,}", p1 / p0, _RATIO.format(what="ms in the projections", n=n,
                                                   half=half)),
          F(f"cost/naive n={n} peak ratio", f"naive, n = {n:,}: peak memory ÷ at {half:,}",
            m1 / m0, _RATIO.format(what="peak MB", n=n, half=half)))),
    F("cost/naive time exponent", "naive: fitted time exponent, last four sizes", 1.91),
    F("cost/naive memory exponent", "naive: fitted memory exponent, last four sizes", 1.87),
)

# -- GPT-2 small's parameters ------------------------------------------------------------------
PARAMS = (
    F("params/gpt2 embedding", "GPT-2 small: token and position embeddings", 39_383_808,
      "token embedding 38,597,376 + positions 786,432"),
    F("params/gpt2 block", "GPT-2 small: one block", 7_087_872),
    F("params/gpt2 blocks", "GPT-2 small: twelve blocks", 85_054_464),
    F("params/gpt2 final norm", "GPT-2 small: final LayerNorm", 1_536),
    F("params/gpt2 total", "GPT-2 small: total", 124_439_808),
)

# -- Winograd referents (held-out forced choice; attention at the scored position) ----------
WINOGRAD = (
    F("winograd/A/mean", "variant A, uniform mean: held-out forced choice", 1.0),
    F("winograd/A/one block", "variant A, one block: held-out forced choice", 0.917),
    F("winograd/B/mean", "variant B, uniform mean: held-out forced choice", 0.279),
    F("winograd/B/one block", "variant B, one block: held-out forced choice", 0.927),
    F("winograd/B/two blocks", "variant B, two blocks: held-out forced choice", 1.0),
    *(F(f"winograd/block 1 tired/{w}", f"block 1 at the scored position: weight on `{w}`", v)
      for w, v in (("animal", 0.70), ("street", 0.06), (",", 0.05), ("the", 0.19))),
    F("winograd/block 2 tired/tired", "block 2, with `tired`: weight on `tired`", 1.0),
    *(F(f"winograd/block 2 wet/{w}", f"block 2, with `wet`: weight on `{w}`", v)
      for w, v in (("street", 0.49), ("too", 0.20), ("the", 0.25))),
)

FIGURES: tuple[ChapterFigure, ...] = (*LADDER, *SQRT_DK, *NORM, *POSITION, *COST, *PARAMS,
                                      *WINOGRAD)
BY_KEY: dict[str, ChapterFigure] = {f.key: f for f in FIGURES}

# What the chapter trained with, per experiment: said beside every claim that a smaller
# budget leaves not held or inconclusive.
BUDGETS: dict[str, str] = {
    "ladder": "width 128, context 128, 3,000 AdamW steps at 1e-3 of batch 64, one seed",
    "sqrt_dk": "20,000 pairs and 2,000 rows of 64 scores; training in the short setting "
               "(one head, no norm) for 1,500 steps of batch 32, one seed",
    "norm": "12 blocks of width 128, 1,000 steps at 3e-3 of batch 64, one seed",
    "position": "a 64-token context, 3,000 steps at 1e-3 of batch 64, one seed",
    "cost": "one layer of width 512 with 8 heads, batch 1, fp32, on a laptop GPU with 8 GB, "
            "n up to 16,384",
    "params": "analytic: GPT-2 small's configuration",
    "winograd": "the full profile's updates (1,000 on variant A, 3,000 on variant B) of "
                "64 sentences, one seed",
    "agreement": "the curriculum's small model (no published figure); quick is full",
    "recurrence": "none: the chapter states the argument and measures none of it (the full "
                  "profile: 1,500 agreement updates, the ladder's full settings)",
}

__all__ = ["BUDGETS", "BY_KEY", "FIGURES", "ChapterFigure"]
