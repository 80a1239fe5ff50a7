"""The claim summary's measured figure and the chapter's (report.claim_figures): read from
the verdict's own numbers and from chapter.py's figures, never written down."""

from __future__ import annotations

from attnlab.lab.claims import decide
from attnlab.report.chapter import BY_KEY
from attnlab.report.claim_figures import CHAPTER, claim_figures


def _verdict(cid: str, parts: list[tuple[str, dict]]) -> dict:
    return {"id": cid, "parts": [{"name": n, "numbers": numbers} for n, numbers in parts]}


def test_a_ratio_claim_shows_its_ratio_and_the_chapters():
    v = _verdict("ladder.mean_worse_than_nothing",
                 [("", {"held_row2": 300.0, "held_row1": 150.0, "ratio_2_over_1": 2.034})])
    chapter = BY_KEY["ladder/row 2/held"].value / BY_KEY["ladder/row 1/held"].value
    assert claim_figures(v) == {"measured": "×2.03", "chapter": f"×{chapter:.2f}†"}


def test_the_measured_figure_moves_with_the_records():
    a = _verdict("norm.post_no_warmup_far_worse", [("", {"ratio": 2.46})])
    b = _verdict("norm.post_no_warmup_far_worse", [("", {"ratio": 1.10})])
    assert claim_figures(a)["measured"] == "×2.46" and claim_figures(b)["measured"] == "×1.10"
    assert claim_figures(a)["chapter"] == "×8.15"  # 308.05 / 37.82, not derived


def test_parts_are_named_and_a_claim_without_a_chapter_figure_shows_a_dash():
    v = _verdict("ladder.mlp_and_norm_help", [("MLP", {"ratio_8_over_6": 0.8}),
                                              ("LayerNorm", {"ratio_9_over_8": 0.99})])
    assert claim_figures(v)["measured"] == "MLP: ×0.80; LayerNorm: ×0.99"
    assert claim_figures(v)["chapter"].startswith("MLP: ×0.92†; LayerNorm: ×0.95†")
    other = _verdict("agreement.subject_head", [("", {"largest_subject_weight": 0.29})])
    assert claim_figures(other) == {"measured": "largest_subject_weight 0.29", "chapter": "–"}


def test_every_mapped_claim_and_figure_exists():
    from attnlab.lab import registry

    claims = {c.id: c for name in registry.EXPERIMENTS for c in registry.load(name).claims}
    for cid, parts in CHAPTER.items():
        assert cid in claims, cid
        names = {p.name for p in claims[cid].parts}
        for part, figure in parts.items():
            assert part in names, (cid, part)
            assert figure()  # its chapter keys resolve


def test_a_decided_verdict_carries_them_through():
    from attnlab.lab.claims import Margins, Part, claim

    c = claim("x.y", "t", "x", Part("r", lambda rec: Margins([0.1], {"ratio": 1.5})),
              trained=False)
    assert claim_figures(decide(c, {"x": {}}))["measured"] == "×1.50"
