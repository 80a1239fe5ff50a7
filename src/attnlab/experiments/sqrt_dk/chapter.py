"""The chapter's part of "Why divide by √d_k": the figures the textbook published for it, what
it trained with (its budget) and how the measured figures of the same keys are read from
the record (``attnlab.kit.chapter``; the report shows them side by side)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, growth, mean, value

F = ChapterFigure


# -- why divide by √d_k ------------------------------------------------------------------------
PUBLISHED = (
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

def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    out: Measured = {f"sqrt_dk/var d={v['d']}": v["var"] for v in rec.get("variance", [])}
    out |= {f"sqrt_dk/eff unscaled d={r['d']}": r["eff_unscaled"] for r in rec.get("one_row", [])}
    for r in rec.get("frozen", []):
        out[f"sqrt_dk/frozen unscaled d={r['d']}"] = r["frozen_unscaled"]
        out[f"sqrt_dk/jacobian scaled d={r['d']}"] = r["jac_scaled"]
    for t in rec.get("training", []):
        if t["setting"] != "short":  # the chapter's widths 32, 256, 1,024 are the short setting's
            continue
        d, raw, scaled = t["d_k"], t["unscaled"], t["scaled"]
        out[f"sqrt_dk/gap d_k={d}"] = mean(raw["held_ppl"]) - mean(scaled["held_ppl"])
        out[f"sqrt_dk/score std init d_k={d} raw"] = mean(raw["init"]["score_std"])
        out[f"sqrt_dk/score std after d_k={d} raw"] = mean(raw["after"]["score_std"])
        out[f"sqrt_dk/frozen after d_k={d} raw"] = mean(raw["after"]["frozen"])
        out[f"sqrt_dk/score std after d_k={d} scaled"] = mean(scaled["after"]["score_std"])
    return out


POINTS = ("perplexity points (unscaled − scaled: a difference, where attnlab measures the ratio)",
          "puntos de perplejidad (sin escalar − escalada: una diferencia; attnlab mide el "
          "cociente)")

# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "sqrt_dk.matters_only_when_wide": {
        "d_k 256": value("sqrt_dk/gap d_k=256", POINTS),
        "d_k 1024": value("sqrt_dk/gap d_k=1024", POINTS)},
    "sqrt_dk.unscaled_collapses": {
        "spread grows at 1024": growth("sqrt_dk/score std init d_k=1024 raw",
                                       "sqrt_dk/score std after d_k=1024 raw"),
        "collapse": value("sqrt_dk/frozen after d_k=1024 raw")},
}

CHAPTER = Chapter(
    budget=("20,000 pairs and 2,000 rows of 64 scores; training in the short setting "
               "(one head, no norm) for 1,500 steps of batch 32, one seed"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
