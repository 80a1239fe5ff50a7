"""The running machinery's log lines in the learner's language: every line the runner, the
executors (the local pool and Ray's), the preflight and the cluster connection log has its
Spanish entry in ``i18n/log.json``, a run's label in them is marked to be said in the language,
and a count is said in its number in both languages (``1 unreadable line``, ``2 líneas``).
Beyond the machinery, every line a command shows (info and above, anywhere in attnlab) has its
Spanish entry too."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import pytest

from attnlab.i18n import catalogue, conversions
from attnlab.i18n.logs import Translating
from attnlab.kit import registry

SRC = Path(__file__).resolve().parents[1] / "src" / "attnlab"
MODULES = [*sorted((SRC / "running").glob("*.py")), SRC / "train" / "rundir.py"]
LEVELS = {"debug", "info", "warning", "error", "exception", "critical"}
LABEL = re.compile(r"(?:^|\.)label$|^run$|\[['\"]run['\"]\]$")  # what names a run's label


def is_log_call(node: ast.AST, levels: set[str] = LEVELS) -> bool:
    """``node`` is a ``log.<level>(...)`` call at one of ``levels``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in levels and isinstance(node.func.value, ast.Name) \
        and node.func.value.id == "log"


def templates(call: ast.Call) -> list[str]:
    """The English templates of a log call: both of ``one if n == 1 else many``."""
    first = call.args[0]
    branches = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
    return [ast.literal_eval(b) for b in branches]


def log_calls(path: Path) -> list[tuple[int, list[str], list[ast.expr]]]:
    """Each ``log.<level>(template, *args)`` of ``path``: its line, its English templates (both
    of ``one if n == 1 else many``) and its arguments."""
    return [(node.lineno, templates(node), node.args[1:])
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if is_log_call(node)]


def line(lang: str, msg: str, *args: object) -> str:
    record = logging.LogRecord("attnlab", logging.INFO, __file__, 1, msg, args, None)
    return Translating(lang).format(record)


def test_every_running_log_line_has_its_spanish():
    registry.own_all_words()
    english = {e["en"] for e in catalogue("log").values()}
    calls = {f"{path.name}:{n}": templates for path in MODULES
             for n, templates, _ in log_calls(path)}
    assert len(calls) >= 20 and any("ray_executor" in where for where in calls)
    missing = {where: t for where, templates in calls.items() for t in templates
               if t not in english}
    assert missing == {}, "give these lines their entry in src/attnlab/i18n/log.json"


def test_every_line_a_command_shows_has_its_spanish():
    """Every line anywhere in attnlab (the experiments', the cost sweep's, the explorer's),
    the templates chosen by value included, and the debug lines --verbose shows."""
    from attnlab.timing.cost import SWEPT

    registry.own_all_words()
    english = {e["en"] for e in catalogue("log").values()}
    shown, chosen = {}, []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if is_log_call(node):
                where = f"{path.relative_to(SRC)}:{node.lineno}"
                if isinstance(node.args[0], ast.Subscript):  # a template chosen by value
                    chosen.append(where.split(":")[0])
                else:
                    shown[where] = templates(node)
    assert chosen == ["timing/cost.py"] and len(shown) >= 40
    missing = {where: t for where, found in shown.items() for t in found if t not in english}
    missing.update({f"SWEPT[{k!r}]": t for k, t in SWEPT.items() if t not in english})
    assert missing == {}, "give these lines their Spanish (log.json, or the experiment's log)"


def test_a_run_label_in_a_log_line_is_marked_as_one():
    unmarked = [f"{path.name}:{n}: {ast.unparse(arg)}" for path in MODULES
                for n, _, args in log_calls(path) for arg in args
                if LABEL.search(ast.unparse(arg)) and not (
                    isinstance(arg, ast.Call) and ast.unparse(arg.func) == "RunLabel")]
    assert unmarked == [], "wrap a run's label in RunLabel: the formatter says it in Spanish"
    assert LABEL.search("spec.label") and LABEL.search('info["run"]')  # the check can fail


def test_a_count_is_said_in_its_number():
    entries = catalogue("log")
    ones = [k for k in entries if k.endswith(".one")]
    assert {"rundir.unreadable.one", "ray_executor.preflight.one",
            "ray_executor.interrupted.one"} <= set(ones)
    for key in ones:
        many = entries[key.removesuffix(".one")]
        assert conversions(many["en"]) == conversions(entries[key]["en"]), key
    assert not [e["en"] for e in entries.values() if re.search(r"\w\(s\)", e["en"])]
    assert line("es", "%s: skipped %d unreadable line", "m.jsonl", 1) == \
        "m.jsonl: se salta 1 línea ilegible"
    assert line("es", "%s: skipped %d unreadable lines", "m.jsonl", 2) == \
        "m.jsonl: se saltan 2 líneas ilegibles"


def test_the_metrics_reader_counts_its_unreadable_lines_in_number(tmp_path, caplog):
    from attnlab.train.rundir import METRICS, read_metrics

    said = []
    for bad in (1, 2):
        (tmp_path / METRICS).write_text('{"step": 1}\n' + "not json\n" * bad)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="attnlab.train.rundir"):
            assert read_metrics(tmp_path) == [{"step": 1}]
        said += [r.getMessage().split(": ", 1)[1] for r in caplog.records]
    assert said == ["skipped 1 unreadable line", "skipped 2 unreadable lines"]


def test_the_ray_driver_says_its_starts_and_retries_in_spanish(caplog):
    pytest.importorskip("ray")
    from attnlab.running.ray_executor import RayExecutor

    registry.own_words("norm")

    class Queue:  # the progress queue as the driver drains it
        def __init__(self, items: list[dict]) -> None:
            self.items = items

        def qsize(self) -> int:
            return len(self.items)

        def get_nowait_batch(self, n: int) -> list[dict]:
            batch, self.items = self.items[:n], self.items[n:]
            return batch

    node = "10.0.0.2 (1f0c9a)"
    start = {"kind": "start", "run": "norm post warmup=False seed 0", "node": node}
    step = {"kind": "eval", "step": 1, "steps": 2, "run": start["run"], "node": node}
    shown: list[dict] = []
    with caplog.at_level(logging.INFO, logger="attnlab.running.ray_executor"):
        RayExecutor(ray=None)._drain(Queue([start, step, start]), shown.append)
    assert shown == [step]  # progress goes on with its label and node; the printer names both
    said = [Translating("es").format(r) for r in caplog.records]
    assert said == [
        f"entrenando norm post sin calentamiento semilla 0 en el nodo {node}",
        f"entrenando norm post sin calentamiento semilla 0 en el nodo {node} (intento 2: se "
        "reanuda desde su punto de control)"]
    assert [r.getMessage() for r in caplog.records][1].startswith(
        "training norm post warmup=False seed 0 on node 10.0.0.2 (1f0c9a) (attempt 2:")
