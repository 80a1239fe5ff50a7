"""An experiment from another package (entry-point group ``attnlab.experiments``): a tiny
package written here, on ``sys.path`` with a ``.dist-info`` carrying its ``entry_points.txt``
as pip would install it, is picked up by ``run``, ``reproduce``, ``--estimate`` and the
report, with attnlab unchanged. Its experiment trains one micro model on a synthetic
language (no corpus, no tokenizer: seconds). It brings its words as attnlab's own experiments
do: a ``words.json`` beside its module, from which its record takes its English title and
quick changes and its report its Spanish."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from attnlab.cli.main import main
from attnlab.kit import registry

PLUGIN = '''
"""A plugin experiment: one small model on a cyclic language, against a uniform guess."""
from dataclasses import dataclass

import numpy as np

from attnlab.kit.claims import Margins, Part, claim
from attnlab.running.context import SentenceStream
from attnlab.kit.registry import Experiment
from attnlab.running.runner import seeded
from attnlab.nn.model_config import ModelConfig
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

VOCAB = 16


@dataclass(frozen=True)
class Settings:
    d_model: int = 32
    steps: int = 200
    seeds: int = 3


PROFILES = {"full": Settings(), "quick": Settings(steps=100),
            "micro": Settings(d_model=16, steps=3, seeds=1)}


def plan(s):
    text = np.arange(4_000, dtype=np.int64) % VOCAB  # 0 1 2 ... 15 0 1 ...
    model = ModelConfig(vocab_size=VOCAB, n_ctx=16, d_model=s.d_model, n_head=2)
    train = TrainConfig(steps=s.steps, batch_size=4, lr=3e-3, eval_every=0,
                        eval_batch_size=64, ckpt_every=s.steps)
    cfg = RunConfig(model=model, train=train, data=DataConfig(vocab_size=VOCAB))
    return seeded("hello", cfg, s.seeds, data=SentenceStream(train=text[:3_000],
                                                             held=text[3_000:]))


def analyse(s, results, ctx):
    return {"vocab": VOCAB, "held_ppl": [r["held_ppl"] for r in results.seeds("hello")]}


def table(record):
    return "| seed | held-out ppl |\\n|---|---|\\n" + "".join(
        f"| {i} | {p:.1f} |\\n" for i, p in enumerate(record["held_ppl"]))


def figure(record):
    from matplotlib.figure import Figure
    fig = Figure()
    fig.add_subplot().plot(record["held_ppl"])
    return fig


def _below_uniform(records):
    rec = records["hello"]
    return Margins([1 - p / rec["vocab"] for p in rec["held_ppl"]],
                   {"held_ppl": rec["held_ppl"][0]})


CLAIMS = [claim("hello.better_than_uniform", "A trained model beats a uniform guess.",
                "hello", Part("held-out ppl / vocabulary < 1", _below_uniform, "share"))]

EXPERIMENT = Experiment(name="hello", profiles=PROFILES, plan=plan, analyse=analyse,
                        table=table, figure=figure, claims=CLAIMS, needs_corpus=False)
'''

WORDS = {  # attnlab_hello/words.json: the same domains and keys as attnlab's own experiments'
    "claims": {
        "hello.better_than_uniform": {"en": "A trained model beats a uniform guess.",
                                      "es": "Un modelo entrenado supera a una apuesta uniforme."},
        "hello.better_than_uniform//rule": {
            "en": "held-out ppl / vocabulary < 1",
            "es": "perplejidad de validación / vocabulario < 1"}},
    "quick_changes": {"hello": {"en": "fewer steps", "es": "menos pasos"}},
    "report": {"title.hello": {"en": "Hello from a plugin", "es": "Hola desde un complemento"}},
    "tables": {"hello: held-out ppl": {"en": "held-out ppl",
                                       "es": "perplejidad de validación"}},
}


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    (site / "attnlab_hello").mkdir(parents=True)
    (site / "attnlab_hello" / "__init__.py").write_text("")
    (site / "attnlab_hello" / "experiment.py").write_text(PLUGIN)
    (site / "attnlab_hello" / "words.json").write_text(json.dumps(WORDS), encoding="utf-8")
    info = site / "attnlab_hello-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: attnlab-hello\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""\
        [attnlab.experiments]
        hello = attnlab_hello.experiment
        ladder = attnlab_hello.experiment
        """))  # the second cannot replace attnlab's own ladder
    monkeypatch.syspath_prepend(str(site))
    for name in [m for m in sys.modules if m.startswith("attnlab_hello")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_registry_lists_and_loads_it(plugin):
    assert registry.names()[: len(registry.EXPERIMENTS)] == registry.EXPERIMENTS
    assert registry.names()[len(registry.EXPERIMENTS):] == ["hello"]
    assert registry.load("hello").title == "Hello from a plugin"
    assert registry.load("ladder").title != "Hello from a plugin"
    assert registry.select(["hello", "params"]) == ["params", "hello"]


def test_run_reproduce_estimate_and_report_pick_it_up(plugin, capsys):
    common = ["--profile", "micro", "--work", "runs", "--jobs", "1"]
    assert main(["reproduce", "--only", "hello", "--estimate", *common]) == 0
    estimate = capsys.readouterr().out
    assert "hello" in estimate and "1 run" in estimate
    assert main(["run", "hello", *common, "--out", "rep"]) == 0
    assert "A trained model beats a uniform guess." in capsys.readouterr().out
    assert main(["reproduce", "--only", "hello", *common, "--out", "rep"]) == 0  # reuses it
    report = (plugin / "rep" / "report.md").read_text()
    assert "Hello from a plugin" in report and "A trained model beats a uniform guess." in report
    results = json.loads((plugin / "rep" / "results.json").read_text())
    assert "hello.better_than_uniform" in json.dumps(results["claims"])
    capsys.readouterr()
    assert main(["report", "--profile", "micro", "--out", "rep"]) == 0
    assert "Hello from a plugin" in (plugin / "rep" / "report.md").read_text()


def test_its_words_join_the_catalogue_and_its_report_speaks_both_languages(plugin, capsys):
    from attnlab import i18n

    registry.own_all_words()
    assert i18n.owners("claims")["experiment hello"] == WORDS["claims"]
    assert i18n.check_complete() == []
    assert registry.load("hello").quick_changes == "fewer steps"  # from its words, not its module
    common = ["--profile", "micro", "--work", "runs", "--jobs", "1", "--only", "hello"]
    assert main(["reproduce", *common, "--out", "en", "--lang", "en"]) == 0
    assert main(["reproduce", *common, "--out", "es", "--lang", "es"]) == 0
    capsys.readouterr()
    english = (plugin / "en" / "report.md").read_text(encoding="utf-8")
    spanish = (plugin / "es" / "report.md").read_text(encoding="utf-8")
    for domain, key in (("report", "title.hello"), ("claims", "hello.better_than_uniform"),
                        ("claims", "hello.better_than_uniform//rule"),
                        ("tables", "hello: held-out ppl")):
        entry = WORDS[domain][key]
        assert entry["en"] in english and entry["es"] in spanish, key
        assert entry["en"] not in spanish, key


def test_a_plugin_that_does_not_import_is_one_line(plugin):
    info = next(plugin.glob("site/*.dist-info"))
    (info / "entry_points.txt").write_text("[attnlab.experiments]\nbroken = no_such_module\n")
    with pytest.raises(registry.RecordError, match=r"^entry point broken = no_such_module: "):
        registry.load("broken")
