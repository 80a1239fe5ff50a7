"""The chapter's part of the Winograd experiment: the figures the textbook published for it, what
it trained with (its budget) and how the measured figures of the same keys are read from
the record (``attnlab.kit.chapter``; the report shows them side by side)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, mean, value

F = ChapterFigure


# -- Winograd referents (held-out forced choice; attention at the scored position) ----------
PUBLISHED = (
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

def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    out: Measured = {f"winograd/{v}/{name}": mean(m["forced"])
                     for v, variant in rec.get("variants", {}).items()
                     for name, m in variant["models"].items()}
    att = rec.get("attention", {})
    for b, block in enumerate(att.get("blocks", []), 1):
        for adj in ("tired", "wet"):
            if block and adj in block:
                words = [adj if t == "{adj}" else t for t in att["tokens"]]
                for w in set(words):  # a word's weight summed over its positions ("the": 3)
                    out[f"winograd/block {b} {adj}/{w}"] = float(
                        sum(x for t, x in zip(words, block[adj], strict=True) if t == w))
    return out


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "winograd.variant_a_mean_suffices": {"answers": value("winograd/A/mean")},
    "winograd.variant_b_needs_order": {"mean": value("winograd/B/mean"),
                                       "one block": value("winograd/B/one block"),
                                       "two blocks": value("winograd/B/two blocks")},
}

CHAPTER = Chapter(
    budget=("the full profile's updates (1,000 on variant A, 3,000 on variant B) of "
                "64 sentences, one seed"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
