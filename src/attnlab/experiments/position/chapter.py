"""The chapter's part of the position schemes: the figures the textbook published for it, what
it trained with (its budget) and how the measured figures of the same keys are read from
the record (``attnlab.kit.chapter``; the report shows them side by side)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, mean

F = ChapterFigure


# -- position (trained at 64) -----------------------------------------------------------------
PUBLISHED = (
    F("position/alibi@64", "ALiBi: held-out ppl at 64 tokens", 44.95),
    F("position/alibi@256", "ALiBi: held-out ppl at 256 tokens", 42.49),
)

def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    return {f"position/{r['scheme']}@{n}": mean(v) for r in rec.get("rows", [])
            for n, v in r.get("ppl", {}).items()}


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {

}

CHAPTER = Chapter(
    budget=("a 64-token context, 3,000 steps at 1e-3 of batch 64, one seed"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
