"""The chapter's part of "The cost of attention": the figures the textbook published for it
(one naive attention layer, width 512, 8 heads, batch 1, fp32, a laptop GPU), what it
measured with (its budget) and how the measured figures of the same keys are read from the
record (``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, value

F = ChapterFigure

# -- the chapter's part (attnlab.kit.chapter): one naive attention layer (width 512, 8 heads,
# batch 1, fp32, a laptop GPU).
# The chapter took its milliseconds on a laptop GPU and says to read them only by their
# ratios: its times are compared here as the ratio to the row above (the ×4
# of a quadratic layer, ×2 of a linear one) and as exponents, never as milliseconds; its
# peak memory (a GPU allocator's) likewise as a ratio. The n×n bytes are arithmetic.
_COST = ((128, 2.246, 1.324, 0.5, 14.6), (256, 2.855, 2.113, 2.0, 19.2),
         (512, 5.761, 3.105, 8.0, 34.4), (1024, 16.414, 4.008, 32, 89.1),
         (2048, 51.573, 9.989, 128, 296.1), (4096, 225.432, 20.176, 512, 1_100.1),
         (8192, 832.838, 40.106, 2_048, 4_300.1))
_RATIO = "its {what} at n = {n:,} over its {what} at n = {half:,}"
PUBLISHED = (
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


def read_chapter(rec: dict) -> Measured:
    """Ratios to the row above and exponents, never milliseconds (``PUBLISHED``)."""
    out: Measured = {}
    above: dict[str, dict] = {}
    for r in rec.get("records", []):
        prev = above.get(r["kind"])
        above[r["kind"]] = r
        if r.get("status") != "ok":
            continue
        base = f"cost/{r['kind']} n={r['n']}"
        out[f"{base} nn MB"] = r["nn_bytes"] / 2**20
        if prev is None or prev.get("status") != "ok" or prev["n"] * 2 != r["n"]:
            continue
        for what, key in (("time", "total_ms"), ("proj", "proj_ms"), ("peak", "peak_bytes")):
            if r.get(key) and prev.get(key):
                out[f"{base} {what} ratio"] = r[key] / prev[key]
    for kind, fits in rec.get("exponents", {}).items():
        for what in ("time", "memory"):
            if fits.get(what) is not None:
                out[f"cost/{kind} {what} exponent"] = fits[what]
    return out


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "cost.quadratic": {"time": value("cost/naive time exponent"),
                       "memory": value("cost/naive memory exponent")},
}

CHAPTER = Chapter(
    budget=("one layer of width 512 with 8 heads, batch 1, fp32, on a laptop GPU with 8 GB, "
            "n up to 16,384"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)
