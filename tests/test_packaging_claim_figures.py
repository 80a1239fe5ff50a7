"""The claim summary's measured figure and the chapter's (report.claim_figures): read from
the verdict's own numbers and from each experiment's chapter part, never written down; each
named for a reader, in its unit, in English and Spanish."""

from __future__ import annotations

from attnlab.kit import registry
from attnlab.kit.claims import Margins, Part, claim, decide
from attnlab.kit.quantities import Quantity
from attnlab.report.claim_figures import claim_figures

BY_KEY = {f.key: f for name in registry.names() for f in registry.chapter(name).figures}


def _verdict(cid: str, parts: list[tuple[str, dict]]) -> dict:
    """A verdict as an older results.json holds it: numbers without their labels."""
    return {"id": cid, "parts": [{"name": n, "numbers": numbers} for n, numbers in parts]}


def test_a_ratio_claim_shows_its_ratio_and_the_chapters():
    v = _verdict("ladder.mean_worse_than_nothing",
                 [("", {"held_row2": 300.0, "held_row1": 150.0, "ratio_2_over_1": 2.034})])
    chapter = BY_KEY["ladder/row 2/held"].value / BY_KEY["ladder/row 1/held"].value
    assert claim_figures(v) == {"measured": "perplexity, row 2 ÷ row 1: 2.03",
                                "chapter": f"{chapter:.2f}†"}
    assert claim_figures(v, "es")["measured"] == "perplejidad, fila 2 ÷ fila 1: 2.03"


def test_the_measured_figure_moves_with_the_records():
    a = _verdict("norm.post_no_warmup_far_worse", [("", {"ratio": 2.46})])
    b = _verdict("norm.post_no_warmup_far_worse", [("", {"ratio": 1.10})])
    assert claim_figures(a)["measured"].endswith(": 2.46")
    assert claim_figures(b)["measured"].endswith(": 1.1")
    assert claim_figures(a)["chapter"] == "8.15"  # 308.05 / 37.82, not derived


def test_parts_are_named_and_a_claim_without_a_chapter_figure_shows_a_dash():
    v = _verdict("ladder.mlp_and_norm_help", [("MLP", {"ratio_8_over_6": 0.8}),
                                              ("LayerNorm", {"ratio_9_over_8": 0.99})])
    assert claim_figures(v)["measured"] == ("MLP — perplexity, row 8 ÷ row 6: 0.8; "
                                            "LayerNorm — perplexity, row 9 ÷ row 8: 0.99")
    assert claim_figures(v)["chapter"].startswith("MLP — 0.92†; LayerNorm — 0.95†")
    other = _verdict("agreement.subject_head", [("", {"largest_subject_weight": 0.29})])
    assert claim_figures(other) == {
        "measured": "largest weight of one head on the subject: 0.29", "chapter": "–"}


def test_a_chapter_figure_in_another_unit_says_so():
    v = _verdict("sqrt_dk.matters_only_when_wide", [("d_k 256", {"gap_short_256": 0.148})])
    figures = claim_figures(v)
    assert figures["measured"] == ("held-out perplexity unscaled ÷ scaled − 1, d_k = 256 "
                                   "(short setting): 14.8 %")
    assert figures["chapter"].startswith("18 perplexity points (unscaled − scaled: a difference")


def test_counts_zeros_and_ranges_read_as_numbers():
    count = _verdict("params.gpt2_small_count", [("formula and ours", {"formula": 124439808})])
    assert claim_figures(count)["measured"] == "count by the formula: 124,439,808 parameters"
    assert claim_figures(count, "es")["measured"] == \
        "recuento por la fórmula: 124\u202f439\u202f808 parámetros"
    flat = _verdict("recurrence.sequential_steps",
                    [("attention", {"attention_exponent": 1.04e-16})])
    assert claim_figures(flat)["measured"].endswith(": 0")
    span = _verdict("cost.quadratic", [("time", {"naive time exponent range":
                                                 [1.5561299273732834, 1.7089859649680834]})])
    assert claim_figures(span)["measured"].endswith(": 1.56–1.71")


def test_every_mapped_claim_and_figure_exists():
    for name in registry.EXPERIMENTS:
        record = registry.load(name)
        claims = {c.id: c for c in record.claims}
        for cid, parts in record.chapter.claims.items():
            assert cid in claims, cid  # an experiment maps only its own claims
            names = {p.name for p in claims[cid].parts}
            for part in parts:
                assert part in names, (cid, part)
                for lang in ("en", "es"):  # its chapter keys resolve
                    assert record.chapter.claim_figure(cid, part, lang)


def test_a_decided_verdict_carries_its_labels_through():
    c = claim("x.y", "t", "x", Part("r", lambda rec: Margins([0.1], {"ratio": 1.5})),
              trained=False, figures={"ratio": Quantity("a ratio", "un cociente", kind="ratio")})
    verdict = decide(c, {"x": {}})
    assert verdict["parts"][0]["figures"]["ratio"]["es"] == "un cociente"
    assert claim_figures(verdict)["measured"] == "a ratio: 1.5"
