"""Progress lines: a redrawn bar on a terminal, periodic lines in a log."""

from __future__ import annotations

import io

from attnlab.train.progress import ProgressPrinter, format_duration, format_train_line


def rec(step: int, steps: int = 100, **kw) -> dict:
    return {"kind": "train", "step": step, "steps": steps, "loss": 2.5, "tokens_per_s": 12345.6,
            "eta_s": 245.0, **kw}


def test_format_by_hand():
    assert format_duration(3725) == "1h02m"
    assert format_duration(245) == "4m05s"
    assert format_duration(-3) == "0s"
    line = format_train_line(rec(25))
    assert line == "[#####...............]  25/100  loss 2.5000  12,346 tok/s  ETA 4m05s"


def test_tty_redraws_one_line():
    out = io.StringIO()
    show = ProgressPrinter(out, tty=True)
    show(rec(10))
    show(rec(20))
    assert out.getvalue().count("\r") == 2 and "\n" not in out.getvalue()
    show({"kind": "eval", "step": 20, "steps": 100, "train_ppl": 101.234, "held_ppl": 123.4})
    show(rec(100, eta_s=0))
    lines = out.getvalue().split("\n")
    # The eval line starts on a fresh line after the bar; the last step ends the bar.
    assert lines[1] == "step 20/100: train ppl 101.23, held-out ppl 123.40"
    assert lines[2].startswith("\r[####################] 100/100") and lines[3] == ""


def test_log_gets_periodic_lines():
    now = [0.0]
    out = io.StringIO()
    show = ProgressPrinter(out, tty=False, interval_s=30, clock=lambda: now[0])
    for step in range(1, 101):
        now[0] = step * 1.0  # one second a step
        show(rec(step))
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    steps = [int(line.split("]")[1].split("/")[0]) for line in lines]
    assert steps == [1, 31, 61, 91, 100]  # first, every 30 s, and the last


def test_non_tty_stream_is_detected():
    assert ProgressPrinter(io.StringIO()).tty is False


def test_runs_side_by_side_each_get_their_name_and_their_lines():
    # Two workers' runs interleave in one log: each keeps its own 30 s rhythm.
    now = [0.0]
    out = io.StringIO()
    show = ProgressPrinter(out, tty=False, interval_s=30, clock=lambda: now[0])
    for step in range(1, 101):
        now[0] = step * 1.0
        show(rec(step, run="ladder/row5"))
        show(rec(step, run="ladder/row6"))
    lines = out.getvalue().splitlines()
    for run in ("ladder/row5", "ladder/row6"):
        mine = [line for line in lines if line.startswith(run + ": [")]
        assert [int(line.split("]")[1].split("/")[0]) for line in mine] == [1, 31, 61, 91, 100]
    show({"kind": "eval", "step": 100, "steps": 100, "train_ppl": 1.0, "held_ppl": 2.0,
          "run": "ladder/row5"})
    assert out.getvalue().splitlines()[-1].startswith("ladder/row5: step 100/100")
