"""The chapter's part of "Pre-norm or post-norm": the figures the textbook published for it
(12 blocks, 1,000 steps at 3e-3), what it trained with (its budget) and how the measured
figures of the same keys are read from the record (``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, mean, ratio

# -- the chapter's part (attnlab.kit.chapter): pre-norm or post-norm, 12 blocks,
# 1,000 steps at 3e-3
F = ChapterFigure
PUBLISHED = (
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


def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    out: Measured = {}
    for kind, seeds in rec.get("grad_norms", {}).items():  # kind -> seed -> per-block norms
        first, last = mean([s[0] for s in seeds]), mean([s[-1] for s in seeds])
        out |= {f"norm/grad {kind} first": first, f"norm/grad {kind} last": last,
                f"norm/grad {kind} ratio": mean([s[-1] / s[0] for s in seeds])}
    for cell, runs in rec.get("cells", {}).items():
        out[f"norm/{cell}"] = mean([r["held_ppl"] for r in runs])
    return out


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "norm.post_no_warmup_far_worse": {"": ratio("norm/post/no_warmup", "norm/pre/no_warmup")},
    "norm.post_warmup_matches_pre": {"": ratio("norm/post/warmup", "norm/pre/warmup")},
    "norm.warmup_hardly_matters_for_pre": {"": ratio("norm/pre/no_warmup", "norm/pre/warmup")},
}

CHAPTER = Chapter(
    budget=("12 blocks of width 128, 1,000 steps at 3e-3 of batch 64, one seed"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
