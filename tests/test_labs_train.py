"""`attnlab lab train DIR`: the reference solutions, as a learner's files, train as attnlab's
attention does (equal curves within float error); a backward wrong only beyond the checker's
sizes, and a forward wrong so, are caught at their step with the tensor and the exercise; a
missing or failing exercise refuses in one line (exit 2); an endless loop ends at the limit;
the report speaks Spanish. Each run is a few steps on the first 150k characters of the corpus."""

from __future__ import annotations

import time

import numpy as np
import pytest
from lab_cli import lab

from attnlab.cli.lab import DEFAULT_STEPS
from attnlab.cli.main import main
from attnlab.labs import get
from attnlab.labs.checker import Raised
from attnlab.labs.notebook import solution_file
from attnlab.labs.sandbox import Unusable, session
from attnlab.labs.trained_attention import TOLERANCE, Budget, Parting, Report, train

FILES = ("attention", "masks", "backward", "sinusoidal")
STEPS = "2"
# Right on every input the checker gives (up to 5 keys, then 32), wrong on the lengths between
# that training gives: the kind of mistake only training finds.
WRONG_DV = ("    return dq, dk, dv",
            "    if 8 < k.shape[0] < 32:\n        dv = 1.5 * dv\n    return dq, dk, dv")
WRONG_OUT = ("    return weights @ v, weights",
             "    out = weights @ v\n    if q.shape[-2] > 8:\n        out = out[..., ::-1, :]\n"
             "    return out, weights")
ENDLESS = ("    return dq, dk, dv",
           "    while 8 < k.shape[0] < 32:\n        pass\n    return dq, dk, dv")


pytestmark = pytest.mark.usefixtures("no_chosen_language")


def learner(root, lang="en", change=None, names=FILES):
    """A learner's folder of the reference solutions; ``change`` = (exercise, old, new)."""
    root.mkdir(exist_ok=True)
    for name in names:
        source = f"# attnlab-lang: {lang}\n" + solution_file(get(name), lang)
        if change is not None and change[0] == name:
            assert change[1] in source
            source = source.replace(change[1], change[2])
        root.joinpath(f"{name}.py").write_text(source)
    return root


def test_reference_solutions_train_as_attnlab_does(tmp_path, shakespeare_head):
    folder = learner(tmp_path / "me")
    report = train(folder, corpus=shakespeare_head, steps=3)
    assert report.equal and report.parting is None
    assert report.positions == "sinusoidal"
    assert len(report.yours) == len(report.reference) == 3
    yours, ref = np.array(report.yours), np.array(report.reference)
    assert np.abs(yours - ref).max() <= 1e-12 * np.abs(ref).max()
    assert report.largest < TOLERANCE
    assert abs(report.perplexity[0] - report.perplexity[1]) <= 1e-9 * report.perplexity[1]
    assert "equal within float error" in str(report)
    code, out, err = lab("train", str(folder), "--steps", STEPS, "--corpus",
                         str(shakespeare_head), "--out", str(tmp_path / "png"))
    assert code == 0, err
    assert "verdict: equal within float error" in out
    assert "held-out perplexity" in out and "2 steps of 12 windows" in out
    assert (tmp_path / "png" / "train.png").stat().st_size > 1000
    assert "step 2 of 2" in err


def test_without_sinusoidal_the_positions_are_learned(tmp_path, shakespeare_head):
    folder = learner(tmp_path / "me", names=FILES[:3])
    report = train(folder, corpus=shakespeare_head, steps=1)
    assert report.equal and report.positions == "learned"


@pytest.mark.parametrize(("change", "tensor", "exercise"), [
    (("backward", *WRONG_DV), "the gradient of v (dv)", "revisit exercise 9 (backward)"),
    (("attention", *WRONG_OUT), "the attention's output", "revisit exercise 3 (attention)"),
])
def test_a_mistake_the_checker_misses_is_named(tmp_path, shakespeare_head, change, tensor,
                                               exercise):
    folder = learner(tmp_path / "me", change=change)
    assert lab("check", change[0], str(folder / f"{change[0]}.py"))[0] == 0  # the checker passes
    code, out, err = lab("train", str(folder), "--steps", STEPS, "--corpus",
                         str(shakespeare_head))
    assert code == 1, err
    assert f"verdict: they part at step 1, in {tensor}" in out
    assert exercise in out
    report = train(folder, corpus=shakespeare_head, steps=4)
    assert report.parting is not None and report.parting.step == 1
    assert report.parting.exercise == change[0]
    assert len(report.yours) == len(report.reference) == 1  # stopped where they part
    assert "training stopped at step 1 of 4" in str(report)
    assert_legend_clear_of_label(report.figure())


def assert_legend_clear_of_label(fig):
    """The legend covers neither the parting step's label nor a curve's point; the label lies
    inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    (label,) = (t.get_window_extent(renderer) for t in ax.texts)
    assert not legend.overlaps(label)
    assert not legend.overlaps(ax.get_window_extent(renderer))  # outside the curves' axes
    assert fig.bbox.x0 <= label.x0 and label.x1 <= fig.bbox.x1


@pytest.mark.parametrize("steps, at", [(7, 7), (1, 1), (1, 0), (40, 3)])
def test_the_legend_never_covers_the_parting_label(steps, at):
    ref = list(6.9 - 0.01 * np.arange(steps))
    report = Report(Budget(), ref[:-1] + [ref[-1] + 1e-3], ref, (300.0, 300.1),
                    Parting(at, "dv", 3e-4), 3e-4, "learned", "tiny.txt", 1024, 1.0, "en")
    assert_legend_clear_of_label(report.figure())


def test_a_missing_or_failing_exercise_refuses_in_one_line(tmp_path, shakespeare_head):
    folder = learner(tmp_path / "me", names=("attention", "masks"))
    folder.joinpath("masks.py").write_text(solution_file(get("masks")).replace("j <= i", "j < i"))
    code, out, err = lab("train", str(folder), "--corpus", str(shakespeare_head))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "9 backward" in err and "4 masks" in err and "3 attention" not in err
    code, out, err = lab("train", str(tmp_path / "nowhere"))
    assert code == 2 and err.count("\n") == 1 and "no such folder" in err


def test_an_endless_loop_ends_at_the_limit(tmp_path, shakespeare_head):
    folder = learner(tmp_path / "me", change=("backward", *ENDLESS))
    started = time.monotonic()
    code, out, err = lab("train", str(folder), "--steps", STEPS, "--corpus",
                         str(shakespeare_head), "--time-limit", "1")
    assert code == 2 and out == ""
    assert time.monotonic() - started < 30
    line = err.strip().splitlines()[-1]
    assert "at step 1, your attention_backward stopped training" in line
    assert "time limit of 1 s" in line


def test_spanish(tmp_path, shakespeare_head):
    folder = learner(tmp_path / "yo", lang="es")  # the files' language line speaks for them
    code, out, err = lab("train", str(folder), "--steps", STEPS, "--corpus",
                         str(shakespeare_head))
    assert code == 0, err
    assert "veredicto: iguales salvo error de coma flotante" in out
    assert "perplejidad de validación" in out and "paso 2 de 2" in err
    wrong = learner(tmp_path / "mal", lang="es", change=("backward", *WRONG_DV))
    code, out, _ = lab("train", str(wrong), "--steps", "1", "--corpus", str(shakespeare_head))
    assert code == 1
    assert "se separan en el paso 1, en el gradiente de v (dv)" in out
    assert "vuelve al ejercicio 9 (backward)" in out


def test_the_stated_budget(capsys):
    assert DEFAULT_STEPS == Budget().steps
    with pytest.raises(SystemExit) as stop:
        main(["lab", "train", "--steps", "0", "x"])
    assert stop.value.code == 2
    assert "--steps: must be a whole number from 1 to 10000, got 0" in capsys.readouterr().err


def test_a_session_serves_many_calls_each_with_its_limit(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    while x < 0:\n        pass\n"
                    "    if x == 0:\n        raise ValueError('zero')\n    return np.ones(x)\n")
    with session(path, "f", call_seconds=1) as f:
        assert [f(n).sum() for n in range(1, 40)] == list(range(1, 40))
        with pytest.raises(Raised, match="zero"):
            f(0)
        assert f(2).shape == (2,)  # an error leaves the child serving
        started = time.monotonic()
        with pytest.raises(Unusable, match="time limit of 1 s"):
            f(-1)
        assert time.monotonic() - started < 5
        with pytest.raises(Unusable, match="time limit of 1 s"):
            f(1)  # the child is spent: said again, not waited for
    with pytest.raises(Unusable, match="no function g"), session(path, "g"):
        pass
