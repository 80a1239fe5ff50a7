"""No measured figure is typed by hand into a page: a page's measured figures lie in its
generated blocks (rendered from docs/results/*.json by scripts/results_doc.py, whose --check
fails a stale one), and outside them it quotes a measured-looking number (a decimal, a
percentage, a "±", "nats") only where the allow-list below says why it is not a measured result
(a threshold, a setting, a derivation, the chapter's own figure).

A figure outside a block is not let through because some results file holds the same number:
the files' tables hold so many two-digit figures that every hand-typed figure of the old
induction and agreement paragraphs but two (0.13, 0.29, 0.98, 0.79 ± 0.05, 2.81 nats) was found
in one, and a copy would go stale unchecked anyway.

Left out: integers (a step, a count) are not scanned; code blocks are not scanned."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = re.compile(r"<!-- results:(\w+):begin -->.*?<!-- results:\1:end -->", re.S)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
_N = r"\d[\d,]*(?:\.\d+)?"
# a measured-looking figure: 0.29, 19.7 %, 0.79 ± 0.05, 2.81 nats, 5.4x (not 3e-3, not a count)
FIGURE = re.compile(  # not the 127.0 of 127.0.0.1
    rf"(?<![\w.])(?:{_N}\s?±\s?{_N}|{_N}\s?nats|{_N}\s?%|\d[\d,]*\.\d+[x×]?)(?![\w]|\.\d)")

# page -> {a phrase of the page holding a figure: why that figure is not a measured result}
ALLOWED = {
    "docs/experiments.md": {
        "|row 3 / row 2 − 1| ≤ 5%": "threshold of a ladder claim",
        "row 4 / row 1 ≥ 0.95": "threshold of a ladder claim",
        "row 5 / row 4 ≤ 0.9": "threshold of a ladder claim",
        "largest weight > 0.99": "definition of a frozen row",
        "about 0.67·√d_k": "derivation from the initialisation's variances (sqrt_dk's docstring)",
        "(|gap| < 5%)": "threshold of a sqrt_dk claim",
        "(gap > 10%)": "threshold of a sqrt_dk claim",
        "(ratio ≥ 1.2;": "threshold of a norm claim",
        "(within 5%)": "threshold of a norm claim",
        "ratio at 2× > 1.5": "threshold of a position claim",
        "ratio at 4× > 1.5": "threshold of a position claim",
        "1 < ratio at 4× ≤ 1.5": "threshold of a position claim",
        "memory ≥ 1.7, time ≥ 1.5": "thresholds of the cost claims",
        "linearly (≤ 1.3)": "threshold of a cost claim",
        "memory (≤ 1.2)": "threshold of a cost claim",
        "(within 0.01)": "threshold of a params claim",
        "(chance 50%)": "definition: chance of a forced choice between two",
        "(< 0.4)": "threshold of a winograd claim",
        "(> 0.7)": "threshold of a winograd claim",
        "(> 0.95)": "threshold of a winograd claim",
        "(every token within 0.05)": "threshold of a winograd claim",
        "(> 0.1)": "threshold of a winograd claim",
        "subject pronoun (> 0.5)": "threshold of an agreement claim",
        "together > 0.5": "threshold of an agreement claim",
        "falls below 0.7": "definition: the distance the report names per seed",
        "at least 90% of the held-out": "criterion the agreement budget was chosen by (a setting)",
        "r ≤ 0.9 per step": "threshold of a recurrence claim",
        "≥ 0.9) and attention's do not (≤ 0.05)": "thresholds of a recurrence claim",
        "score > 0.5, \"most of its weight\")": "threshold of an induction claim",
        "previous-token score > 0.5)": "threshold of an induction claim",
        "score < 0.25": "threshold of an induction claim",
        "< 0.10, less than": "threshold of an induction claim",
        "at least 2.5 times": "threshold of an induction claim",
        "(relative difference < 0.05)": "threshold of an icl_gd claim",
        "> 0.95; relative": "threshold of an icl_gd claim",
        "(relative MSE difference > 0.10) nor agrees (cosine < 0.90)": "thresholds of icl_gd",
        "within 5%; \"clearly\", \"a large one\", \"differs\" at least 10%; \"far worse\" at least "
        "1.2×": "definitions: the claims' one scale",
        "within 2% and within 5%": "definition: the report's count of figures near the chapter's",
    },
    "docs/training.md": {
        "3·ln V (20.8 nats": "definition: the divergence threshold for V = 1,024",
        "ln V = 6.93": "definition: the loss of a uniform guess over V = 1,024",
    },
    "docs/gpu.md": {},
    "docs/explorer.md": {
        "within 0.01 (bfloat16": "tolerance the explorer checks rows against (a setting)",
        "Â_l = 0.5·A_l + 0.5·I": "definition of rollout's residual term",
        "| 44.1 MB |": "benchmark record: scripts/explorer_page_size.py, its command below it",
        "| 10.1 MB |": "benchmark record: scripts/explorer_page_size.py",
        "took 0.3 s when nothing else ran and 1.6 s under load": "benchmark record naming its "
        "processor (a 2-core Intel Xeon), with its command",
        "0.8 s and 3.6 s": "the same benchmark record",
    },
    "README.md": {
        "**Python 3.11**": "requirement (a version)",
        "torch is 0.7 GB": "install size of a dependency, not an experiment's result (also in "
        "docs/es/README.md, which must show the same figures)",
        "1.8 GB": "install size, not an experiment's result (also in docs/es/README.md)",
        "Tiny Shakespeare (1.1 MB)": "the corpus file's size (a fact of the data)",
    },
}


def prose(text: str) -> str:
    """A page's text as scanned: no generated block, no code block, no link target."""
    return LINK_TARGET.sub("]", FENCE.sub("", GENERATED.sub("", text)))


def unexplained(text: str, allowed: dict[str, str]) -> list[str]:
    """The measured-looking figures of ``text``, outside generated blocks, that no allowed
    phrase explains."""
    scanned = _lines(prose(text))
    for phrase in sorted(allowed, key=len, reverse=True):  # "within 5%" inside a longer one
        scanned = scanned.replace(phrase, " ")
    return FIGURE.findall(scanned)


def _lines(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text)  # a phrase may be wrapped across lines


@pytest.mark.parametrize("page", sorted(ALLOWED))
def test_no_page_quotes_a_figure_no_results_file_holds(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    if page == "README.md":  # its first lines are the front door's two commands
        text = "\n".join(text.splitlines()[15:])
    found = unexplained(text, ALLOWED[page])
    assert not found, (f"{page} quotes {found} by hand: render it from docs/results "
                       "(scripts/results_doc.py) or remove it, or say in ALLOWED why it is not "
                       "a measured result")


@pytest.mark.parametrize("page", sorted(ALLOWED))
def test_every_allowed_phrase_is_still_on_its_page(page):
    text = _lines(prose((ROOT / page).read_text(encoding="utf-8")))
    gone = [p for p in ALLOWED[page] if p not in text]
    assert not gone, f"drop these from ALLOWED, {page} no longer says them: {gone}"


def test_the_check_finds_hand_typed_figures():
    """What docs/experiments.md said before its figures were generated fails the check."""
    old = """the one-block model forms no induction head (best score 0.13) but its repeat
    loss (2.81 nats) is 19.7% below the first occurrence's (3.50) ... and ends at 0.79 ± 0.05.
    At the quick profile on 2026-12-01 (3 seeds) the first is **not held** (largest subject
    weight 0.29) and the curriculum's is **held** (largest subject + stems 0.98)."""
    found = unexplained(old, ALLOWED["docs/experiments.md"])
    assert found == ["0.13", "2.81 nats", "19.7%", "3.50", "0.79 ± 0.05", "0.29", "0.98"]
    assert unexplained("<!-- results:x:begin -->\n0.29\n<!-- results:x:end -->", {}) == []
    assert unexplained("a threshold (> 0.5)", {"(> 0.5)": "threshold"}) == []
