"""The experiment record: every registered experiment declares one, and a module whose record
is missing a field fails at load with one line naming the module and the field."""

from __future__ import annotations

import sys

import pytest

import attnlab.experiments
from attnlab import i18n
from attnlab.kit import registry
from attnlab.kit.registry import Experiment, RecordError


def test_every_experiment_declares_its_record():
    for name in registry.EXPERIMENTS:
        exp = registry.load(name)
        assert isinstance(exp, Experiment) and exp.name == name
        assert set(registry.PROFILES) <= set(exp.profiles) and exp.title


@pytest.fixture
def experiment_file(tmp_path, monkeypatch):
    """Write ``attnlab.experiments.<name>`` into a folder on the package's path."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(attnlab.experiments, "__path__",
                        [*attnlab.experiments.__path__, str(tmp_path)])

    def write(name: str, body: str) -> str:
        (tmp_path / f"{name}.py").write_text(body, encoding="utf-8")
        monkeypatch.setattr(registry, "EXPERIMENTS", [*registry.EXPERIMENTS, name])
        monkeypatch.delitem(sys.modules, f"attnlab.experiments.{name}", raising=False)
        return name

    return write


PARTS = """
from attnlab.kit.registry import Experiment

def plan(s): return []
def analyse(s, results, ctx): return {}
def table(record): return ""
def figure(record): return None
"""


def test_a_record_missing_a_field_is_one_line_naming_module_and_field(experiment_file):
    name = experiment_file("nofig", PARTS + """
EXPERIMENT = Experiment(name="nofig", title="T", profiles={"full": 1, "quick": 1, "micro": 1},
                        quick_changes="", plan=plan, analyse=analyse, table=table,
                        needs_corpus=False)
""")
    with pytest.raises(RecordError) as err:
        registry.load(name)
    assert str(err.value) == \
        "attnlab.experiments.nofig: experiment record lacks figure, claims"


def test_no_record_and_a_wrong_name_are_refused(experiment_file):
    with pytest.raises(RecordError, match=r"^attnlab.experiments.bare: defines no EXPERIMENT"):
        registry.load(experiment_file("bare", PARTS))
    other = experiment_file("other", PARTS + """
EXPERIMENT = Experiment(name="else", title="T", profiles={"full": 1, "quick": 1, "micro": 1},
                        quick_changes="", plan=plan, analyse=analyse, table=table,
                        figure=figure, claims=[], needs_corpus=False)
""")
    with pytest.raises(RecordError, match="named 'else', not 'other'"):
        registry.load(other)
    with pytest.raises(RecordError, match="profiles lack micro"):
        Experiment(name="x", title="T", profiles={"full": 1, "quick": 1}, quick_changes="",
                   plan=len, analyse=len, table=len, figure=len, claims=(), needs_corpus=False)


def test_title_and_quick_changes_come_from_the_record_or_its_words(experiment_file, tmp_path):
    def bare(name: str, extra: str = "") -> str:
        return PARTS + f"""
EXPERIMENT = Experiment(name="{name}", profiles={{"full": 1, "quick": 1, "micro": 1}},
                        plan=plan, analyse=analyse, table=table, figure=figure, claims=[],
                        needs_corpus=False{extra})
"""

    with pytest.raises(RecordError, match=r"^attnlab.experiments.untitled: experiment record "
                                          r"lacks title, and its words.json gives none$"):
        registry.load(experiment_file("untitled", bare("untitled")))
    given = experiment_file("given", bare(
        "given", ', title="T", quick_changes="none"'))
    assert (registry.load(given).title, registry.load(given).quick_changes) == ("T", "none")
    # a package's words.json, beside its __init__: the record's title must be its words'
    (tmp_path / "worded").mkdir()
    (tmp_path / "worded" / "words.json").write_text(
        '{"report": {"title.worded": {"en": "Worded", "es": "Con palabras"}},'
        ' "quick_changes": {"worded": {"en": "less", "es": "menos"}}}', encoding="utf-8")
    experiment_file("worded", "")
    (tmp_path / "worded.py").unlink()
    (tmp_path / "worded" / "__init__.py").write_text(bare("worded"))
    assert registry.load("worded").title == "Worded"
    assert registry.load("worded").quick_changes == "less"
    (tmp_path / "worded" / "__init__.py").write_text(bare("worded", ', title="Other"'))
    sys.modules.pop("attnlab.experiments.worded")
    with pytest.raises(RecordError, match="the record's title is not its words.json's"):
        registry.load("worded")
    i18n.own("experiment worded", {"report": {}, "quick_changes": {}})  # gone with its folder
