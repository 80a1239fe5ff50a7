"""The claim table a reader meets shows no code key and no unrounded float, in English and in
Spanish: every claim of the last published quick run (docs/results/claims.json), its numbers
under the keys the claims return, rendered by the functions the report calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attnlab.kit import registry
from attnlab.kit import verdict_words as w
from attnlab.report.claim_figures import claim_figures

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = {c.id: c for n in registry.EXPERIMENTS for c in registry.load(n).claims}

# math a reader of the chapter reads as such: d_k, g_k, x_{T−k}, ℓ_T, n_ctx in a formula
MATH = {"d_k", "g_k", "n_ctx", "x_", "ℓ_T"}
IDENTIFIER = re.compile(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b|\b\w+\[[^\]\s]*\]|\b[a-z]+[A-Z]\w*\b"
                        r"|\b[A-Z][a-z]+[A-Z][a-z]\w*\b")
PROPER = {"LayerNorm", "RoPE", "ALiBi"}


def identifiers(text: str) -> list[str]:
    return [m for m in IDENTIFIER.findall(text) if m not in MATH | PROPER
            and not any(m.startswith(x) for x in ("x_", "d_k"))]


def long_floats(text: str) -> list[str]:
    """Numbers written with more than four significant digits (thousands grouped or not)."""
    out = []
    for m in re.findall(r"\d[\d,\u202f]*(?:\.\d+)?(?:e-?\d+)?", text):
        digits = re.sub(r"[,\u202f]", "", m).split("e")[0]
        if "." not in digits:  # a whole number: its trailing zeros are not significant
            continue  # (counts such as 124,439,808 are exact and asked for)
        sig = digits.replace(".", "").lstrip("0")
        if len(sig) > 4:
            out.append(m)
    return out


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    out, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        if text.startswith(sep, i) and depth == 0:
            out.append(cur)
            cur, i = "", i + len(sep)
            continue
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        cur += text[i]
        i += 1
    return [*out, cur]


def _numbers(item: str) -> dict:
    numbers = {}
    for pair in _split(item, ", "):
        key, _, value = pair.rpartition(" ")
        if " [" in pair:
            key, value = pair.split(" [")[0], "[" + pair.split(" [")[1]
        try:
            numbers[key] = json.loads(value if value.startswith("[") else value.replace(",", ""))
        except ValueError:
            numbers[key] = value
    return numbers


def verdicts() -> list[dict]:
    """Each published claim rebuilt as a verdict: its parts, their numbers under the claims'
    own keys, made-up margins in the part's unit (one part of zero spread)."""
    out = []
    for c in json.loads((ROOT / "docs" / "results" / "claims.json").read_text())["claims"]:
        claim = CLAIMS[c["id"]]
        names = {p.name: p for p in claim.parts}
        cells = dict(c.get("numbers", {}))  # the published numbers, under their own keys
        for item in _split(c["measured"], "; ") if not cells else []:  # an older file
            name, _, rest = item.partition(": ") if ": " in item and \
                item.split(": ")[0] in names else ("", "", item)
            if not rest.startswith("×"):
                cells[name] = _numbers(rest)
        parts = []
        for i, p in enumerate(claim.parts):
            margins = [0.0] * 5 if i == 1 else [0.0291, 0.041, 0.0172, 0.0339, 0.0243]
            parts.append({"name": p.name, "rule": p.rule, "unit": p.unit,
                          "numbers": cells.get(p.name, {}), "margins": margins,
                          "mean": sum(margins) / 5, "se": 0.0 if i == 1 else 0.00412,
                          "status": "inconclusive"})
        out.append({"id": c["id"], "text": claim.text, "status": c["status"], "seeds": 5,
                    "trained": claim.trained, "over": claim.over, "parts": parts})
    return out


@pytest.mark.parametrize("lang", ["en", "es"])
def test_no_code_key_and_no_unrounded_float_in_the_claim_cells(lang):
    rows = verdicts()
    assert len(rows) == sum(len(registry.load(n).claims) for n in registry.EXPERIMENTS)
    for v in rows:
        cells = [claim_figures(v, lang)["measured"], w.rule(v, lang)]
        cells += [w.margin_text(p, lang) for p in v["parts"]]
        for cell in cells:
            assert not identifiers(cell), (v["id"], cell)
            assert not long_floats(cell), (v["id"], cell)


def test_the_published_keys_are_all_labelled():
    shown = " ".join(claim_figures(v)["measured"] for v in verdicts())
    for key in ("gap_short_32", "raw_score_std_256_init", "learned_ppl_64", "mlp_share",
                "mean_A", "one block_B", "block1_max_abs_diff", "rnn_rate", "acc_smallest_d",
                "smallest_min_ratio_lstm_over_attention", "attention_exponent"):
        assert key not in shown
    # the time exponent's range in three digits (1.72–1.80), not 1.7205427865812236
    assert re.search(r"exponent of time its timing spread allows, naive attention: "
                     r"\d\.\d\d–\d\.\d\d(?![\d])", shown), shown
    assert re.search(r"against T, attention: 0(?![.\d])", shown)  # 3.6e-17 is written 0


def test_the_detector_finds_what_it_should():
    assert identifiers("gap_short_32 0.0557, mlp_share[default] 0.666, largestWeight 1")
    assert not identifiers("perplexity, row 2 ÷ row 1: 2.03; d_k = 256; LayerNorm")
    assert long_floats("range [1.5561299273732834, 1.7]") == ["1.5561299273732834"]
    assert not long_floats("124,439,808 parameters, 0.029 ± 0.011")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_margin_of_no_spread_is_the_value_alone(lang):
    from attnlab.kit.tables import fmt_ms

    flat = {"mean": 0.5, "se": 0.0, "unit": "fraction", "margins": [0.4, 0.5, 0.6]}
    text = w.margin_text(flat, lang)
    assert "±" not in text and "0.0000" not in text
    assert ("no spread over the seeds" if lang == "en" else "sin dispersión entre semillas"
            ) in text
    same = {**flat, "margins": [0.5, 0.5, 0.5]}  # every seed the same: says that instead
    assert "±" not in w.margin_text(same, lang) and "0.5" in w.margin_text(same, lang)
    one = {**flat, "margins": [0.5]}  # one evaluation: no seeds to spread over
    assert w.margin_text(one, lang).count("(") == 1
    assert "± 0.0058" in w.margin_text({**flat, "se": 0.0058}, lang)
    assert fmt_ms([1.0, 1.0, 1.0], 4) == "1.0000 ± 0" and fmt_ms([1.0, 1.1]) == "1.05 ± 0.07"
