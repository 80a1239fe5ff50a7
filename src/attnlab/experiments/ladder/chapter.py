"""The chapter's part of the ladder: the figures the textbook published for it, what
it trained with (its budget) and how the measured figures of the same keys are read from
the record (``attnlab.kit.chapter``; the report shows them side by side)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, mean, ratio

F = ChapterFigure


# -- the ladder: held-out perplexity per row (row 8, the MLP, only through row 9) ------------
PUBLISHED = (
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

def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    out: Measured = {}
    rows = {r["row"]: r for r in rec.get("rows", [])}
    for n, r in rows.items():
        out[f"ladder/row {n}/held"] = mean(r["held_ppl"])
        out[f"ladder/row {n}/train"] = mean(r["train_ppl"])
    for n, above in ((6, 5), (9, 8)):
        if n in rows and above in rows:
            out[f"ladder/row {n}/params added"] = rows[n]["params"] - rows[above]["params"]
    return out


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "ladder.mean_worse_than_nothing": {"": ratio("ladder/row 2/held", "ladder/row 1/held")},
    "ladder.positions_barely_help": {"": ratio("ladder/row 3/held", "ladder/row 2/held")},
    "ladder.residual_mean_no_better": {"": ratio("ladder/row 4/held", "ladder/row 1/held")},
    "ladder.head_beats_mean": {"": ratio("ladder/row 5/held", "ladder/row 4/held")},
    "ladder.four_heads_beat_one": {"": ratio("ladder/row 6/held", "ladder/row 5/held")},
    "ladder.replacing_worse": {"": ratio("ladder/row 7/held", "ladder/row 5/held")},
    "ladder.mlp_and_norm_help": {"MLP": ratio("ladder/row 8/held", "ladder/row 6/held"),
                                 "LayerNorm": ratio("ladder/row 9/held", "ladder/row 8/held")},
    "ladder.two_blocks_overfit": {"train": ratio("ladder/row 10/train", "ladder/row 9/train"),
                                  "held-out": ratio("ladder/row 10/held", "ladder/row 9/held")},
}

CHAPTER = Chapter(
    budget=("width 128, context 128, 3,000 AdamW steps at 1e-3 of batch 64, one seed"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
