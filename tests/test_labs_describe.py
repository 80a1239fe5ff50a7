"""The shape of a difference: each describer is true of a case built for it and silent on a
near miss, and a failed case no probe recognises ends with its description in both languages."""

from __future__ import annotations

import numpy as np
import pytest
from labs_wrong import WRONG
from labs_wrong_independent import INDEPENDENT

from attnlab import reference as ref
from attnlab.i18n import text
from attnlab.labs import get
from attnlab.labs.checker import run_exercise
from attnlab.labs.describe import GENERIC, MASKS, describe, factor_name, number
from attnlab.labs.exercises.heads.cases import _random_inputs
from attnlab.labs.exercises.heads.describers import DESCRIBERS as MHA_DESCRIBERS
from attnlab.labs.exercises.heads.describers import _head_outputs, _merged_as

W = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75], [1.5, 4.0, -2.5]])
X = np.random.default_rng(0).normal(size=(4, 5))


def says(describers, key, got, want):
    """The fields of the describer ``key`` on ``(got, want)``, or None."""
    (d,) = [d for d in describers if d.key == f"describe.{key}"]
    return d.says(np.asarray(got, dtype=float), np.asarray(want, dtype=float))


def nudged(a, at=(0, 0), by=1e-3):
    a = np.array(a, dtype=float)
    a[at] += by
    return a


# -- any array: true on the case, silent on a near miss ---------------------------------------


@pytest.mark.parametrize(
    "key, got, fields",
    [
        ("transposed", W.T, {}),
        ("sign", -W, {}),
        ("factor", W / np.sqrt(2), {"factor": "÷√2"}),
        ("factor", 2 * W, {"factor": "×2"}),
        ("factor", 0.37 * W, {"factor": "×0.37"}),
        ("rows_reordered", W[[2, 0, 1]], {}),
        ("entries_reordered", W.ravel()[[8, 1, 2, 3, 4, 5, 6, 7, 0]].reshape(3, 3), {}),
    ],
)
def test_a_generic_describer_is_true_of_its_shape_and_silent_on_a_near_miss(key, got, fields):
    assert says(GENERIC, key, got, W) == fields
    assert says(GENERIC, key, nudged(got, (1, 2)), W) is None


def test_the_other_axis_is_named_and_a_near_miss_is_not():
    want, got = ref.softmax(X, -1), ref.softmax(X, 0)
    assert says(GENERIC, "other_axis", got, want) == {"got": 0, "want": 1}
    assert says(GENERIC, "other_axis", nudged(got), want) is None
    assert says(GENERIC, "other_axis", got * 0.9, want) is None  # sums to 0.9 on either axis


def test_a_single_number_is_never_a_constant_factor():
    assert says(GENERIC, "factor", [8.0], [64.0]) is None


def test_describe_gives_the_first_true_shape_and_nothing_for_equal_or_unlike_arrays():
    assert describe(GENERIC, W.T, W) == ("describe.transposed", {})
    assert describe(GENERIC, W, W) is None
    assert describe(GENERIC, W[:2], W) is None
    assert describe(GENERIC, "not an array", W) is None
    assert describe(GENERIC, W + np.arange(3), W) is None  # a difference of no known shape


def test_factors_and_numbers_are_written_as_a_learner_writes_them():
    assert [factor_name(c) for c in (4.0, 0.25, 1 / np.sqrt(3), np.sqrt(8), 2.0)] == [
        "×4", "÷4", "÷√3", "×√8", "×2"]
    assert [number(v) for v in (-1e9, -10000.0, 0.75, np.finfo(float).min)] == [
        "-1e9", "-10000", "0.75", "-1.79769e308"]


# -- masks ------------------------------------------------------------------------------------


def additive(keep):
    return np.where(keep, 0.0, -np.inf)


KEEP = np.tril(np.ones((4, 4), dtype=bool))  # (i, j): j <= i
MASK = additive(KEEP)


@pytest.mark.parametrize(
    "key, got, fields, miss",
    [
        ("mask_finite", np.where(KEEP, 0.0, -1e4), {"value": "-10000"},
         np.where(KEEP, 0.0, np.where(np.eye(4, k=1) > 0, -1e4, -1e5))),  # two values
        ("mask_transposed", MASK.T, {}, additive(KEEP.T & ~np.eye(4, k=3, dtype=bool))),
        ("mask_inverted", additive(~KEEP), {}, additive(~KEEP | np.eye(4, dtype=bool))),
        ("mask_future_shown", additive(np.tri(4, k=1, dtype=bool)), {"count": 3},
         additive(np.tri(4, k=1, dtype=bool) & ~np.eye(4, dtype=bool))),
        ("mask_past_hidden", additive(np.tri(4, k=-1, dtype=bool)), {"count": 4},
         additive(np.tri(4, k=-1, dtype=bool) | np.eye(4, k=1, dtype=bool))),
        ("mask_both_wrong", additive(np.tri(4, k=1, dtype=bool) & ~np.eye(4, dtype=bool)),
         {"shown": 3, "hidden": 4}, additive(np.tri(4, k=1, dtype=bool))),
    ],
)
def test_a_mask_describer_names_its_region_and_is_silent_on_a_near_miss(key, got, fields, miss):
    assert says(MASKS, key, got, MASK) == fields
    assert says(MASKS, key, miss, MASK) is None


def test_queries_at_the_start_are_named_with_their_counts():
    want = additive(np.arange(4)[None, :] <= np.arange(2)[:, None] + 2)  # (2, 4), offset 2
    start = additive(np.tril(np.ones((2, 4), dtype=bool)))
    assert says(MASKS, "mask_at_start", start, want) == {"n_query": 2, "n_key": 4}
    assert says(MASKS, "mask_at_start", nudged(start, (1, 1), -np.inf), want) is None
    assert says(MASKS, "mask_at_start", MASK, MASK) is None  # square: no start to sit at


def test_only_the_square_part_right_is_named_and_a_near_miss_is_not():
    want = additive(np.arange(5)[None, :] <= np.arange(2)[:, None] + 3)  # (2, 5), offset 3
    padded = np.concatenate([np.full((2, 3), -np.inf), MASK[:2, :2]], axis=1)
    assert says(MASKS, "mask_square_only", padded, want) == {"n_query": 2, "past": 3}
    assert says(MASKS, "mask_square_only", nudged(padded, (1, 4), -np.inf), want) is None
    one_past_seen = padded.copy()
    one_past_seen[0, 0] = 0.0
    assert says(MASKS, "mask_square_only", one_past_seen, want) is None
    assert describe(MASKS, padded, want)[0] == "describe.mask_square_only"  # before past_hidden


# -- heads ------------------------------------------------------------------------------------


def test_the_heads_in_another_order_are_named_and_a_near_miss_is_not():
    x, ws, h = _random_inputs()[1]  # (2, 5, 8), 4 heads
    want = ref.multi_head_attention(x, *ws, None, h)[0]
    heads = _head_outputs(x, ws, h)  # (b, h, n, d_k)
    got = _merged_as(heads[:, [1, 0, 2, 3]], x) @ ws[3].T
    assert says(MHA_DESCRIBERS, "heads_order", got, want) == {"order": "1, 0, 2, 3", "last": 3}
    assert says(MHA_DESCRIBERS, "heads_order", nudged(got, (0, 0, 0)), want) is None
    assert says(MHA_DESCRIBERS, "heads_order", got, nudged(want, (0, 0, 0))) is None


def test_heads_mixed_with_positions_are_named_and_a_near_miss_is_not():
    x, ws, h = _random_inputs()[2]  # (2, 4, 6), 3 heads
    want = ref.multi_head_attention(x, *ws, None, h)[0]
    got = _head_outputs(x, ws, h, straight=True).reshape(x.shape) @ ws[3].T
    assert says(MHA_DESCRIBERS, "heads_positions", got, want) == {"h": 3}
    assert says(MHA_DESCRIBERS, "heads_positions", nudged(got, (1, 2, 3)), want) is None


# -- end to end: the checker's words ----------------------------------------------------------


def reasons(name, fn, lang):
    result = run_exercise(get(name), fn, lang)
    assert result.status == "failed" and result.mistakes == ()
    return result, [line.reason for line in result.lines if not line.passed]


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize(
    "name, label, key, fields",
    [
        ("masks", "minus_1e4", "mask_finite", {"value": "-10000"}),
        ("masks", "window", "mask_past_hidden", {"count": 1}),
        ("softmax", "axis0_default", "other_axis", {"got": 0, "want": 1}),
        ("backward", "dk_scaled_twice", "factor", {"factor": "÷√2"}),  # d_k = 2: ÷√d_k
        ("backward", "dq_unscaled", "factor", {"factor": "×√2"}),
        ("mean", "transposed", "transposed", {}),
        ("heads", "reversed", "heads_order", {"order": "1, 0", "last": 1}),
        ("heads", "split_straight", "heads_positions", {"h": 2}),
        ("cache", "keys_in_front", "rows_reordered", {}),
    ],
)
def test_a_failed_case_no_probe_recognises_ends_with_its_shape(name, label, key, fields, lang):
    result, said = reasons(name, INDEPENDENT[name, label][0], lang)
    sentence = text("labs", f"describe.{key}", lang, **fields)
    assert any(reason.endswith("; " + sentence) for reason in said), said
    assert f"describe.{key}" in result.described
    assert sentence in str(result)


def test_the_english_words_read_as_a_teacher_would_say_them():
    _, said = reasons("masks", INDEPENDENT["masks", "window"][0], "en")
    assert said[0] == ("-inf at index (2, 0), expected 0.0; keys at or before their query "
                       "that are hidden: 1 (a query sees itself and the past)")
    _, said = reasons("backward", INDEPENDENT["backward", "dk_scaled_twice"][0], "es")
    assert "tu salida es igual a la esperada ÷2: sobra o falta un factor constante" in said[1]


def test_no_description_follows_a_recognised_mistake():
    result = run_exercise(get("masks"), WRONG["masks", "diagonal_hidden"], "en")
    assert result.mistakes == ("masks.mistake.diagonal_hidden",) and result.described == ()
    assert not any("keys at or before" in line.reason for line in result.lines)  # yet true


def test_a_difference_of_no_known_shape_gets_no_description():
    result, said = reasons("attention", INDEPENDENT["attention", "mask_times"][0], "en")
    assert result.described == () and said


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("label, key", [("triu", "transposed"), ("square_padded", "square_only")])
def test_a_mask_once_only_described_is_a_mistake_counted_in_the_header(label, key, lang):
    """A transposed mask was named on each failed line but counted "mistakes recognised: 0"
    in the header and the grading sheet (which counts ``result.mistakes``); it is a mistake."""
    result = run_exercise(get("masks"), INDEPENDENT["masks", label][0], lang)
    assert result.mistakes == (f"masks.mistake.{key}",)
    failed = sum(not line.passed for line in result.lines) - 1
    assert result.headline == text("labs", "result.failed", lang, number=4, name="masks",
                                   failed=failed, cases=len(result.lines) - 1, mistakes=1)
    assert text("labs", f"masks.mistake.{key}", lang) in str(result)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_described_difference_is_counted_in_the_header_and_the_sheet(lang):
    """A shape named only on the failed lines (a constant factor) is a named mistake: the
    header counts it and the grading sheet shows the checker's words for it."""
    from attnlab.labs.grade import Mark, Sheet, csv_text, markdown

    result, said = reasons("backward", INDEPENDENT["backward", "dq_unscaled"][0], lang)
    words = text("labs", "describe.factor", lang, factor="×√2")
    assert result.named == (("describe.factor", words),)
    failed = sum(not line.passed for line in result.lines)
    assert result.headline == text("labs", "result.failed", lang, number=get("backward").number,
                                   name="backward", failed=failed, cases=len(result.lines),
                                   mistakes=1)
    mark = Mark("failed", len(result.lines) - failed, len(result.lines),
                tuple(key for key, _ in result.named), words=(words,))
    sheet = Sheet("k", ("ana",), (get("backward"),), {"ana": {"backward": mark}}, lang, 20.0)
    assert sheet.common()[0][1:] == ("describe.factor", words, ["ana"])
    assert words in markdown(sheet) and words in csv_text(sheet)
