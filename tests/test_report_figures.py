"""Figures that show the claim: the recurrence reach on a semi-log axis clipped to the trained
curves (saying which curve leaves it), agreement points side by side, induction's phase window
shaded; every experiment's figure has a caption in English and Spanish."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.patches import Polygon, Rectangle
from matplotlib.text import Text

from attnlab.experiments import induction, recurrence
from attnlab.kit.registry import EXPERIMENTS
from attnlab.report.figures import caption, translate


def _recurrence_record() -> dict:
    k = np.arange(1, 32)
    curve = lambda y: [list(map(float, y))] * 2  # noqa: E731 - two seeds, the same curve
    return {
        "reach": {"window": 32, "windows": 4,
                  "rnn": {"trained": curve(0.1 * 0.75 ** k), "init": curve(0.1 * np.exp(-3 * k))},
                  "lstm": {"trained": curve(0.06 * 0.93 ** k), "init": curve(0.06 * 0.9 ** k)},
                  "attention": {"trained": curve(0 * k + 3e-3), "init": curve(0 * k + 3e-3)}},
        "agreement": {"distances": [8, 12, 16],
                      **{m: {"acc": [[0.5, 0.5, 0.5]] * 2}
                         for m in recurrence.AGREEMENT_MODELS}},
        "timing": {"T": [32, 64], "gpu": None,
                   **{m: {"rounds": [[1e-4, 2e-4], [1.1e-4, 2.2e-4]]}
                      for m in recurrence.MODELS}},
    }


def test_the_reach_panel_is_semi_log_and_clipped_to_the_trained_curves():
    fig = recurrence.figure(_recurrence_record())
    reach, acc, _ = fig.axes
    assert reach.get_xscale() == "linear" and reach.get_yscale() == "log"
    low, high = reach.get_ylim()
    trained_min = 0.1 * 0.75 ** 31
    assert low == pytest.approx(trained_min / 3) and high == pytest.approx(0.1 * 0.75 * 3)
    assert "below the axis: RNN init (to 4e-42)" in reach.get_title()  # 0.1·e^(−93): which, how far
    xs = [tuple(np.round(line.get_xdata(), 3)) for line in acc.lines if len(line.get_xdata()) == 3]
    assert len(set(xs)) == 4  # the four models side by side, each visible where they overlap


def test_a_reach_inside_the_axis_says_nothing_is_cut():
    record = _recurrence_record()
    record["reach"]["rnn"]["init"] = record["reach"]["rnn"]["trained"]
    assert "below the axis" not in recurrence.figure(record).axes[0].get_title()


def test_the_induction_phase_window_is_shaded():
    steps = [0, 10, 20, 30, 40]
    snaps = [{"repeat": 3 - i * 0.5, "first": 3.0, "induction": [[0.0], [i / 4]]}
             for i in range(5)]
    record = {"steps": steps, "two": [{"snapshots": snaps, "ablation": {"ind_head": 0},
                                       "phase": {"start": 10, "stop": 30}}]}
    ax = induction.figure(record).axes[0]
    spans = [p for p in ax.patches if isinstance(p, Polygon | Rectangle)]
    assert spans, "no shaded window"
    xs = np.asarray(spans[0].get_xy())[:, 0] if isinstance(spans[0], Polygon) else \
        [spans[0].get_x(), spans[0].get_x() + spans[0].get_width()]
    assert min(xs) == 10 and max(xs) == 30


@pytest.mark.parametrize("lang", ["en", "es"])
def test_every_experiment_has_a_caption_saying_what_to_look_at(lang):
    for name in EXPERIMENTS:
        text = caption(name, lang)
        assert len(text) > 60, (name, lang)
    assert caption("recurrence", "es").startswith("Izquierda: alcance del gradiente")


def test_a_figure_drawn_in_spanish_has_no_english_label_left():
    fig = translate(recurrence.figure(_recurrence_record()), "es")
    texts = {x.get_text() for x in fig.findobj(Text) if x.get_text()}
    assert "concordancia según la distancia" in texts and "atención entrenada" in texts
    assert {"atención (RoPE)", "atención (ALiBi)"} <= texts
    english = {"agreement against distance", "forced-choice accuracy", "k (positions back)",
               "time per token against T", "chance", "RNN trained", "attention"}
    assert not texts & english, texts & english
    assert any(t.startswith("alcance del gradiente") and "bajo el eje" in t for t in texts)


def test_named_ticks_are_named_again_in_spanish():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.bar([0, 1, 2], [1, 2, 3])
    ax.set_xticks([0, 1, 2], ["mean", "one block", "the"])  # "the": a token, left as it is
    translate(fig, "es")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["media", "un bloque", "the"]
