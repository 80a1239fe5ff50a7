"""The chapter's part of "Where the parameters are": the figures the textbook published for
GPT-2 small's parameters, what it counted (its budget) and how the measured figures of the
same keys are read from the record (``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, value

# -- the chapter's part (attnlab.kit.chapter): GPT-2 small's parameters
F = ChapterFigure
PUBLISHED = (
    F("params/gpt2 embedding", "GPT-2 small: token and position embeddings", 39_383_808,
      "token embedding 38,597,376 + positions 786,432"),
    F("params/gpt2 block", "GPT-2 small: one block", 7_087_872),
    F("params/gpt2 blocks", "GPT-2 small: twelve blocks", 85_054_464),
    F("params/gpt2 final norm", "GPT-2 small: final LayerNorm", 1_536),
    F("params/gpt2 total", "GPT-2 small: total", 124_439_808),
)


def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    for m in rec.get("models", []):
        if m["name"] == "GPT-2 small":
            return {"params/gpt2 embedding": m["embedding"],
                    "params/gpt2 block": sum(m["per_block"][0].values()),
                    "params/gpt2 blocks": m["blocks"], "params/gpt2 final norm": m["final_norm"],
                    "params/gpt2 total": m["total"]}
    return {}


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "params.gpt2_small_count": {"formula and ours": value("params/gpt2 total",
                                                          ("parameters", "parámetros"),
                                                          "count")},
}

CHAPTER = Chapter(
    budget=("analytic: GPT-2 small's configuration"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
