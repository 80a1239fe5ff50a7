"""Errors in the user's language. An attnlab error raised as a ``%``-template and its values
(or as one constant sentence) keeps them, and the command writes it with its ``error`` entry's
template in the language it chose (``attnlab.i18n.logs.said``); every templated error anywhere
has its Spanish entry, and the modules a learner's commands go through raise no message made
up before it was raised (an f-string, which no entry can match)."""

from __future__ import annotations

import ast
import copy
import json
import pickle
from pathlib import Path

import pytest

from attnlab.cli.main import main as cli_main
from attnlab.errors import UsageError
from attnlab.i18n import catalogue, check_complete
from attnlab.i18n.logs import said
from attnlab.kit import registry

SRC = Path(__file__).resolve().parents[1] / "src" / "attnlab"
ERRORS = {"AttnlabError", "UsageError", "DataError", "WriteError", "CorpusError", "RunFailed",
          "NewerRun", "TrainingDiverged", "RecordError"}
# what a learner's commands (lab, run, reproduce, train, generate, explore) go through first:
# each error they raise is said in the learner's language
LEARNER = ["data/corpus.py", "kit/registry.py", "train/run_config.py", "cli/generate.py",
           "cli/explore.py", "explorer/sources/translation.py", "files.py",
           "train/checkpoint.py", "data/tokenizer.py", "data/dataset.py",
           "train/kept_steps.py", "train/newer_version.py", "train/rundir.py",
           "train/runtime.py", "train/trainer.py", "train/divergence.py", "kit/envelope.py",
           "explorer/page/data.py", "explorer/sources/tensors.py", "explorer/sources/hf_files.py",
           "explorer/sources/hf.py", "explorer/sources/hf_seq.py", "explorer/sources/models.py",
           "explorer/notebook.py", "explorer/server/httpd.py",
           "running/cluster.py", "running/ray_preflight.py", "running/executors.py",
           "nn/model_config.py", "interp/scores.py", "bounds.py", "errors.py", "data/cache.py"]


def raises(path: Path) -> list[tuple[int, list[ast.expr]]]:
    """Each ``raise <attnlab error>(...)`` of ``path``: its line and its arguments."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                isinstance(node.exc.func, ast.Name) and node.exc.func.id in ERRORS:
            found.append((node.lineno, node.exc.args))
    return found


def made(path: Path) -> list[tuple[int, list[ast.expr]]]:
    """Each attnlab error or ``Said`` made in ``path``, raised or not (a reason, an error a
    function returns to be raised): its line and its arguments."""
    return [(node.lineno, node.args) for node in ast.walk(ast.parse(path.read_text("utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id in ERRORS | {"Said"}]


def _constant(arg: ast.expr) -> bool:
    return isinstance(arg, ast.Constant) and isinstance(arg.value, str)


def test_every_templated_error_has_its_spanish():
    registry.own_all_words()
    english = {e["en"] for e in catalogue("error").values()}
    templated = {f"{path.relative_to(SRC)}:{n}": args[0].value
                 for path in sorted(SRC.rglob("*.py")) for n, args in made(path)
                 if args and _constant(args[0]) and (len(args) > 1 or
                                                    str(path.relative_to(SRC)) in LEARNER)}
    assert len(templated) >= 10
    missing = {where: t for where, t in templated.items() if t not in english}
    assert missing == {}, "give these errors their entry in src/attnlab/i18n/error.json"
    assert [p for p in check_complete() if p.startswith("error.")] == []
    english_of = [e["en"] for e in catalogue("error").values()]
    twice = sorted({t for t in english_of if english_of.count(t) > 1})
    assert twice == [], "one entry per English template (the first found would win)"


@pytest.mark.parametrize("module", LEARNER)
def test_the_modules_a_learner_meets_raise_no_made_up_message(module):
    made = [n for n, args in raises(SRC / module) if args and not _constant(args[0])]
    assert made == [], f"{module}: raise these as a template and its values (lines {made})"


def test_an_error_is_said_in_the_language_with_its_values():
    err = UsageError("unknown experiment %r; choose one of: %s", "ladr", "ladder, norm")
    assert str(err) == "unknown experiment 'ladr'; choose one of: ladder, norm"
    assert said(err, "en") == str(err)
    assert said(err, "es") == "experimento desconocido 'ladr'; elige uno de: ladder, norm"
    for kept in (pickle.loads(pickle.dumps(err)), copy.copy(err)):  # a worker's, a copy
        assert said(kept, "es") == said(err, "es") and str(kept) == str(err)
    made_up = UsageError(f"unknown experiment {'ladr'!r}")  # no entry matches a finished line
    assert said(made_up, "es") == str(made_up)
    assert said(UsageError("seeds must be at least 1, got %s", 0), "es").startswith(
        "las semillas deben")
    assert said(ValueError("not attnlab's"), "es") == "not attnlab's"


def test_the_command_writes_its_error_in_spanish(tmp_path, capsys, monkeypatch):
    assert cli_main(["--lang", "es", "run", "ladr"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnlab: error: experimento desconocido 'ladr'; elige uno de: ")
    monkeypatch.setenv("ATTNLAB_LANG", "es")
    missing = tmp_path / "nada.txt"
    assert cli_main(["run", "ladder", "--profile", "micro", "--corpus", str(missing),
                     "--out", str(tmp_path / "o"), "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert f"el archivo del corpus {missing} no existe o no es un archivo" in err, err
    monkeypatch.setenv("ATTNLAB_LANG", "en")
    assert cli_main(["run", "ladr"]) == 2
    assert "unknown experiment 'ladr'; choose one of: " in capsys.readouterr().err


def test_a_bound_in_an_error_is_written_in_the_languages_numbers(tmp_path, capsys):
    """English groups with commas; Spanish with narrow spaces from five digits on
    (docs/es/README.md), as every other Spanish number."""
    argv = ["train", "tiny", "--set", "train.steps=0", "--run-dir", str(tmp_path / "r")]
    assert cli_main(["--lang", "es", *argv]) == 2
    assert "train.steps debe estar en [1, 10\u202f000\u202f000]; se dio 0" in \
        capsys.readouterr().err
    assert cli_main(["--lang", "en", *argv]) == 2
    assert "train.steps must be in [1, 10,000,000]" in capsys.readouterr().err


def test_an_error_that_wraps_a_sentence_says_both_in_the_language(tmp_path):
    """A damaged checkpoint's advice wraps the error it advises on, and a newer attnlab's run
    names what it holds: each part is said by its own entry (a ``Said`` value), the English
    unchanged."""
    from attnlab.errors import DataError
    from attnlab.train.checkpoint import advised, read_state
    from attnlab.train.newer_version import refuse_newer_config

    ckpt = tmp_path / "checkpoint"
    err = advised(DataError("checkpoint file %s is missing", ckpt / "model.safetensors"), ckpt)
    assert str(err) == (f"checkpoint file {ckpt / 'model.safetensors'} is missing; restore it "
                        f"from a copy, or delete {ckpt} (and result.json, if the run had "
                        "finished) to train the run again from the start")
    assert said(err, "es") == (f"falta el archivo del punto de control {ckpt / 'model.safetensors'}"
                               f"; restáuralo desde una copia, o borra {ckpt} (y result.json, "
                               "si la ejecución había terminado) para entrenar de nuevo la "
                               "ejecución desde el principio")
    assert said(pickle.loads(pickle.dumps(err)), "es") == said(err, "es")
    ckpt.mkdir()
    (ckpt / "state.json").write_text('{"format": 99, "step": 1}', encoding="utf-8")
    with pytest.raises(DataError) as newer:  # no meta.json: the version is not recorded
        read_state(ckpt)
    assert str(newer.value).startswith(f"{ckpt / 'state.json'} has format 99 (this attnlab "
                                       "reads format 1): it was written by a newer attnlab (")
    assert said(newer.value, "es").startswith(
        f"{ckpt / 'state.json'} tiene el formato 99 (este attnlab lee el formato 1): lo "
        "escribió un attnlab más nuevo (")
    for version, spanish in (("0.0.1", "o se editó"), ("999.0", "lo escribió attnlab 999.0;")):
        meta = {"versions": {"attnlab": version}}
        (tmp_path / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        with pytest.raises(DataError) as newer:
            refuse_newer_config(tmp_path, tmp_path / "config.json", {"no_such_field": 1})
        line = said(newer.value, "es")
        assert line.startswith(f"{tmp_path / 'config.json'} tiene el campo de configuración "), line
        assert spanish in line and "la ejecución" in line and "attnlab" in str(newer.value)


def test_the_explorer_says_its_errors_in_the_language(tmp_path, capsys):
    """The explorer's sources, its page data and its server say their errors in Spanish: an
    error chosen by what was found (a causal or a bidirectional view, a 5-D tensor) is its own
    template, and what a tokenizer is needed for is a sentence of its own (a ``Said``); the
    English unchanged."""
    from attnlab.errors import DataError, Said
    from attnlab.explorer.page.data import validate_data
    from attnlab.explorer.server.httpd import make_server
    from attnlab.explorer.sources.hf_files import check_tokenizer_files
    from attnlab.explorer.sources.tensors import weights_page

    view = {"name": "v", "tokens": ["a"], "sources": ["x"], "attends": "bidirectional",
            "layers": []}
    with pytest.raises(DataError) as err:
        validate_data({"title": "t", "description": "d", "views": [view]})
    assert str(err.value) == ("views[0].sources: a bidirectional self-attention has no sources "
                              "(its keys are its own tokens)")
    assert said(err.value, "es").startswith("views[0].sources: una autoatención bidireccional")
    with pytest.raises(UsageError) as err:
        weights_page([[[[[1.0]]]]], ["a"])
    assert str(err.value).endswith("got (1, 1, 1, 1, 1) (one sentence at a time: index the "
                                   "batch first)")
    assert said(err.value, "es").endswith("se dio (1, 1, 1, 1, 1) (una frase cada vez: indexa "
                                          "primero el lote)")
    with pytest.raises(DataError) as err:
        check_tokenizer_files(tmp_path, Said("an encoder–decoder reads its source and writes "
                                             "its target with it"))
    assert ", …): an encoder–decoder reads its source and writes its target with it: save " \
        in str(err.value)
    assert ", …): un codificador–decodificador lee su origen y escribe su destino con él: " \
        "guarda el tokenizador" in said(err.value, "es")
    with pytest.raises(UsageError) as err:
        make_server(lambda text: {}, port=70000)
    assert said(err.value, "es") == "port debe estar en 0..65535; se dio 70000"
    assert cli_main(["--lang", "es", "explore", "--hf-model", str(tmp_path),
                     "--out", str(tmp_path / "p.html")]) == 2
    assert f"{tmp_path} no contiene config.json: no es la carpeta de un modelo de Hugging " \
        "Face" in capsys.readouterr().err


def test_a_model_check_is_said_in_the_language_after_its_section(capsys):
    """``ModelConfig``'s own checks raise templates: after ``model: `` the check is said in the
    language too, its bounds in the language's numbers; the English is as it was."""
    assert cli_main(["--lang", "es", "params", "--set", "d_model=1000000000"]) == 2
    assert capsys.readouterr().err.strip() == (
        "attnlab: error: model: d_model debe estar en [1, 65\u202f536]; se dio "
        "1\u202f000\u202f000\u202f000")
    assert cli_main(["--lang", "es", "params", "--set", "n_head=3"]) == 2
    assert "model: n_head=3 no divide a d_model=128: cada cabeza" in capsys.readouterr().err
    assert cli_main(["--lang", "en", "params", "--set", "d_model=1000000000"]) == 2
    assert "model: d_model must be in [1, 65,536], got 1,000,000,000" in capsys.readouterr().err


def test_a_clusters_errors_are_said_in_the_language():
    from attnlab.running.cluster import cluster_kind, probe

    with pytest.raises(UsageError) as wrong:
        cluster_kind(None, {"ATTNLAB_CLUSTER": "slurm"})
    assert said(wrong.value, "es") == "ATTNLAB_CLUSTER debe ser uno de local, ray; se dio 'slurm'"
    with pytest.raises(UsageError) as nobody:  # port 1: nobody listens there
        probe("127.0.0.1", 1, "127.0.0.1:1", "start one (...)", connect_s=1.0)
    assert said(nobody.value, "es").startswith("ningún clúster de Ray responde en 127.0.0.1:1 (")


def test_a_nodes_preflight_problems_are_said_in_the_language(tmp_path, monkeypatch):
    """A node's problems come back from it as sentences in parts (``Said``, pickled as Ray
    does), so the driver says them, and the line that joins them, in its language."""
    from attnlab.running.ray_preflight import PROBE_DIR, check_node, joined, node_facts
    from attnlab.train import runtime

    (tmp_path / PROBE_DIR).mkdir()
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda *a: False)
    facts = node_facts()
    problems = pickle.loads(pickle.dumps(  # no probe file; another torch; no bf16 units
        check_node(str(tmp_path), "t", {**facts, "torch": "0.0.1"}, bf16=True)))
    err = UsageError("preflight: node %s %s (and %s more node(s))", "10.0.0.3 (1a2b3c)",
                     joined(problems, "; "), 1)
    assert str(err).startswith("preflight: node 10.0.0.3 (1a2b3c) has no bf16 units")
    assert str(err).endswith(f"runs differently here: torch {facts['torch']} (driver: 0.0.1) "
                             "(and 1 more node(s))")
    line = said(pickle.loads(pickle.dumps(err)), "es")
    assert line.startswith("comprobación previa: nodo 10.0.0.3 (1a2b3c): no tiene unidades "
                           "bf16 (AVX512-BF16, AMX), y sin ellas bf16 entrena a unas 0.06x")
    assert f"; no ve {tmp_path / PROBE_DIR / 't.txt'}, que escribió el proceso principal" in line
    assert line.endswith(f"; aquí se ejecuta de otra manera: torch {facts['torch']} (proceso "
                         "principal: 0.0.1) (y 1 nodo(s) más)"), line


def test_a_broken_experiment_record_is_said_in_the_language():
    from attnlab.errors import Said
    from attnlab.kit.registry import RecordError, _checked

    def broken() -> None:
        raise RecordError("experiment record lacks %s", "plan, table")

    with pytest.raises(RecordError) as err:
        _checked("mine", Said("entry point %s = %s", "mine", "pkg.mine"), broken)
    assert str(err.value) == "entry point mine = pkg.mine: experiment record lacks plan, table"
    assert said(pickle.loads(pickle.dumps(err.value)), "es") == (
        "punto de entrada mine = pkg.mine: al registro del experimento le falta: plan, table")


def test_the_heads_probe_past_the_context_is_said_in_the_language():
    from attnlab.interp import head_scores
    from attnlab.nn.model import LanguageModel
    from attnlab.nn.model_config import ModelConfig

    model = LanguageModel(ModelConfig(vocab_size=32, n_ctx=16, d_model=8, n_head=2))
    with pytest.raises(ValueError) as err:  # a UsageError, still a ValueError to its callers
        head_scores(model, half=20_000)
    assert str(err.value) == ("the probe of 20,000 tokens repeated once (40,000) exceeds the "
                              "model's context of 16; use at most 8")
    assert said(err.value, "es") == ("la sonda de 20\u202f000 tokens repetidos una vez "
                                     "(40\u202f000) supera el contexto del modelo, de 16; usa "
                                     "como mucho 8")


def test_what_a_message_names_for_its_caller_is_said_too():
    """A phrase a caller gives an error (what the text is, what a package is needed for) is a
    ``Said`` with its own entry, so the Spanish line has no English left."""
    from attnlab.bounds import check_text
    from attnlab.errors import require

    with pytest.raises(UsageError) as err:
        check_text("a\udcff", "--prompt", "prompt")
    assert str(err.value) == ("--prompt is not valid UTF-8 (byte 0xff) at character 2: pass the "
                              "prompt as UTF-8 text")
    assert said(err.value, "es") == ("--prompt no es UTF-8 válido (byte 0xff) en el carácter 2: "
                                     "pasa el texto de --prompt como texto UTF-8")
    with pytest.raises(UsageError) as err:
        require("no_such_package_here", "hf", "reading a Hugging Face folder")
    assert said(err.value, "es") == ("para leer una carpeta de Hugging Face hace falta "
                                     "no_such_package_here, que no está instalado aquí: pip "
                                     "install 'attnlab[hf]'")


def test_show_in_a_notebook_raises_in_its_language(tmp_path):
    """A notebook has no command to say an error: ``show(..., lang="es")`` raises it said in
    Spanish (the same class); in English, the error as raised."""
    from attnlab.errors import DataError
    from attnlab.explorer import show

    with pytest.raises(DataError) as err:
        show(tmp_path / "nada", "la gata", lang="es")
    assert str(err.value) == f"no hay ninguna carpeta en {tmp_path / 'nada'}"
    with pytest.raises(UsageError, match="give the sentence to show"):
        show(tmp_path, lang="en")
    with pytest.raises(UsageError) as err:
        show(tmp_path, lang="es")
    assert str(err.value) == "show(source, text): da la frase que quieres mostrar"



def test_the_systems_reason_is_said_in_the_language(tmp_path, capsys):
    """An error that names why the system refused (an ``OSError``'s strerror) says that
    reason in the learner's language too, by its errno, in a command and after a pickle; an
    errno without its entry keeps the system's words."""
    import errno
    import os

    from attnlab.errors import OSReason, WriteError, os_reason
    from attnlab.files import write_text
    from attnlab.i18n.logs import said_value

    for key, entry in catalogue("error").items():  # each entry is the system's own words
        if key.startswith("os.") and hasattr(errno, key[3:]):
            assert entry["en"] == os.strerror(getattr(errno, key[3:])), key
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(WriteError) as caught:
        write_text(blocker / "sub" / "out.txt", "y")
    err = pickle.loads(pickle.dumps(caught.value))
    assert str(err).endswith(": Not a directory")
    assert said(err, "es") == \
        f"no se pudo escribir {blocker / 'sub' / 'out.txt'}: no es una carpeta"
    assert said_value(OSReason("Exec format error", errno.ENOEXEC), "es") == "Exec format error"
    assert os_reason(ValueError("no")).args == ("no",)  # no strerror: the error itself
    from attnlab.errors import DataError
    from attnlab.labs import policy

    with pytest.raises(DataError, match="es una carpeta"):  # a lab's words say it too
        policy.read(tmp_path, "es")
