"""A training run's errors in the learner's language: the run directory's, the runtime's, the
trainer's and a divergence's are raised as templates and their values, a divergence's reason
and a damaged envelope's reason are kept in parts (``Said``), and each is said whole in
Spanish (an inner error or reason by its own entry), the English unchanged."""

from __future__ import annotations

import math

import pytest

from attnlab.cli.reproduce import check_no_damaged_results
from attnlab.cli.words import Words
from attnlab.errors import DataError, Said, UsageError
from attnlab.i18n.logs import said, say_parts
from attnlab.kit.envelope import ENVELOPE, damage
from attnlab.train import runtime
from attnlab.train.divergence import LossGuard, diverged, record_divergence
from attnlab.train.run_config import RunConfig
from attnlab.train.rundir import (
    DIVERGED,
    TrainingDiverged,
    read_diverged,
    read_run_config,
    write_run_config,
)

TRY = "Prueba con un valor menor de train.lr, train.warmup_steps o train.grad_clip."


def test_a_divergence_is_said_in_spanish_with_its_reason(tmp_path):
    guard = LossGuard(vocab_size=1024, window=2)
    assert guard.check(7.0) is None
    err = diverged(guard.check(40.0), 5, 100, tmp_path, 3)
    assert str(err) == (  # the English as before
        f"mean loss 23.5 over the last 2 steps exceeds 3·ln V = 20.8 at step 5 of 100; the last "
        f"good checkpoint (step 3) is kept in {tmp_path / 'checkpoint'}. Try a lower train.lr, "
        "train.warmup_steps or train.grad_clip.")
    assert said(err, "en") == str(err)
    assert said(err, "es") == (
        f"la pérdida media 23.5 de los últimos 2 pasos supera 3·ln V = 20.8 en el paso 5 de 100; "
        f"el último punto de control bueno (paso 3) se conserva en {tmp_path / 'checkpoint'}. "
        + TRY)
    early = diverged(LossGuard(1024).check(math.nan), 1, 10, tmp_path, None)
    assert said(early, "es") == ("pérdida no finita (nan) en el paso 1 de 10; aún no se había "
                                 "escrito ningún punto de control. " + TRY)


@pytest.mark.parametrize(("loss", "ppl", "english", "spanish"), [
    (3768.5, {}, "final loss 3768 exceeds 3·ln V = 20.8", "la pérdida final 3768 supera"),
    (3.1, {"held_ppl": math.nan}, "the trained model gives NaN held-out perplexity",
     "el modelo entrenado da una perplejidad de validación NaN"),
    (3.1, {"train_ppl": math.nan}, "the trained model gives NaN training perplexity",
     "el modelo entrenado da una perplejidad de entrenamiento NaN"),
    (3.1, {"held_ppl": math.inf}, "held-out perplexity inf exceeds 1.07e+09 (a loss of 3·ln V = "
     "20.8)", "la perplejidad de validación inf supera 1.07e+09 (una pérdida de 3·ln V = 20.8)"),
    (3.1, {"train_ppl": 2e9}, "training perplexity 2e+09 exceeds 1.07e+09 (a loss of 3·ln V = "
     "20.8)", "la perplejidad de entrenamiento 2e+09 supera 1.07e+09"),
])
def test_each_final_reason_has_its_spanish(loss, ppl, english, spanish):
    reason = LossGuard(1024).final_reason(loss, ppl)
    assert reason == english and say_parts(reason.parts(), "es").startswith(spanish)


def test_a_recorded_divergence_is_said_again_in_spanish(tmp_path):
    write_run_config(tmp_path, RunConfig())
    err = diverged(Said("non-finite loss (%s)", "nan"), 4, 8, tmp_path, 2)
    record_divergence(tmp_path, 4, 8, math.nan, err.values[0], 2, err)
    stored = read_diverged(tmp_path)
    assert isinstance(stored["message"], Said) and stored["message"] == str(err)
    with pytest.raises(TrainingDiverged) as caught:
        runtime.load_trained(tmp_path, "cpu")
    assert str(caught.value) == f"run {tmp_path} diverged: {err}"
    assert said(caught.value, "es") == f"la ejecución {tmp_path} divergió: {said(err, 'es')}"
    (tmp_path / DIVERGED).write_text("{")  # damaged: still a divergence, said so
    with pytest.raises(TrainingDiverged) as caught:
        runtime.load_trained(tmp_path, "cpu")
    assert said(caught.value, "es") == (f"la ejecución {tmp_path} divergió: lo dice "
                                        f"{tmp_path / DIVERGED} (el propio registro está dañado)")


def test_a_damaged_config_is_said_whole_in_spanish(tmp_path):
    (tmp_path / "config.json").write_text('{"config": ')
    with pytest.raises(DataError) as caught:
        read_run_config(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'config.json'} is damaged: not valid JSON")
    spanish = said(caught.value, "es")  # the inner error and the advice, each by its entry
    assert spanish.startswith(f"{tmp_path / 'config.json'} está dañado: no es JSON válido ("), \
        spanish
    assert spanish.endswith("; restáuralo desde una copia, o bórralo y reanuda la ejecución con "
                            "`attnlab train` y su configuración (el archivo se escribe de nuevo, "
                            "comprobado con el punto de control)")
    with pytest.raises(UsageError) as caught:
        read_run_config(tmp_path / "nada")
    assert said(caught.value, "es") == ("no se encuentra la carpeta de la ejecución: "
                                        f"{tmp_path / 'nada'}")


def test_the_bf16_refusal_is_said_whole_in_spanish(monkeypatch):
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda: False)
    with pytest.raises(UsageError) as caught:
        runtime.check_precision("bf16", "cpu")
    assert "where bf16 trains at about 0.06x fp32's speed" in str(caught.value)
    assert "entrena a unas 0.06x la velocidad de fp32 con anchura 128" in \
        said(caught.value, "es")


def test_a_damaged_envelope_is_named_in_the_commands_language(tmp_path):
    path = tmp_path / "ladder" / ENVELOPE
    path.parent.mkdir()
    path.write_text('{"name": ')
    why = damage(path)
    assert why.startswith("not valid JSON (") and \
        say_parts(why.parts(), "es").startswith("no es JSON válido (")
    path.write_text("[]")
    assert damage(path) == "expected a JSON object, got list"
    for lang, said_why in (("en", "is damaged: expected a JSON object, got list;"),
                           ("es", "está dañado: se esperaba un objeto JSON y se encontró list;")):
        with pytest.raises(DataError) as caught:
            check_no_damaged_results(tmp_path, ["ladder"], "quick", None, Words(lang))
        assert f"{path} {said_why}" in str(caught.value)
