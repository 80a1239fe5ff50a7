"""A Spanish run says its own lines in Spanish: ``attnlab run NAME --profile micro --lang es``
of every experiment whose analysis logs a line of its own (the models, schemes and settings it
names said with its table words, the cost sweep's statuses each in its own template) prints no
English word on the terminal, and ``reproduce --estimate --lang es`` says the estimate in
Spanish, each count in its number, while the English estimate stays as the docs quote it.

The English words looked for are those of the terminal's own templates (the catalogue's ``log``,
``common`` and ``label`` entries) that their Spanish does not share, and the status words the
code chooses; paths, numbers and code names (``d_k=8``) are left out first.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache

import pytest

from attnlab.i18n import catalogue
from attnlab.kit import registry
from attnlab.suite.forecast import Calibration, Estimate

# the experiments whose analysis logs lines of its own, and one line each says in Spanish
SAID = {
    "cost": r"^atención naive, n=16: termina$",
    "position": r"^position aprendida: perplejidad de validación 16: ",
    "recurrence": r"^recurrence: atención \(RoPE\), acierto de concordancia por semilla en "
                  r"d = 8, 12 \| más allá del entrenamiento, 16: ",
    "sqrt_dk": r"^sqrt_dk por defecto d_k=8: diferencia [+-]",
    "translation": r"^translation: bahdanau, acierto por palabra en cada banda, semilla a "
                   r"semilla: ",
    "winograd": r"^winograd B dos bloques: elección forzada de validación 0",
}
STATUSES = {"ok", "oom", "timeout", "error", "failed", "diverged", "done"}  # chosen by code


def words(text: str) -> set[str]:
    """The lowercase words of ``text``, without paths, ``%`` conversions, catalogue fields,
    numbers and code names (``d_k=8``, ``tok/s``)."""
    text = re.sub(r"\{\w*\}", " ", text)
    tokens = [t for t in text.split() if "/" not in t and "=" not in t and "_" not in t]
    return {w.lower() for t in tokens for w in re.findall(r"[^\W\d_]{2,}", t)
            if not re.search(r"%\w", t)}


def vocabulary(entries: list[dict[str, str]]) -> frozenset[str]:
    """The words of the entries' English that their Spanish does not use, names aside."""
    en = set().union(*(words(e["en"]) for e in entries))
    es = set().union(*(words(e["es"]) for e in entries))
    return frozenset(en - es - set(registry.names()))


@cache
def english() -> frozenset[str]:
    """The English words of the terminal's templates, and the statuses code chooses."""
    registry.own_all_words()
    entries = [e for domain in ("log", "common", "label") for e in catalogue(domain).values()]
    return vocabulary(entries) | STATUSES


def english_left(line: str, vocabulary: frozenset[str] | None = None) -> set[str]:
    return words(line) & (english() if vocabulary is None else vocabulary)


def test_the_check_can_fail():
    assert english_left("winograd A two blocks: held-out forced choice 0.500") >= {
        "two", "blocks", "held", "forced", "choice"}
    assert english_left("naive n=16: ok") == {"ok"}
    assert english_left("position learned: perplejidad de validación 16: 1.0") == {"learned"}
    assert english_left("sqrt_dk default d_k=8: diferencia +0.0 %") == {"default"}
    assert english_left("recurrence: atención (RoPE), acierto de concordancia por semilla en "
                        "d = 8 | beyond the training, 16: 0.5") == {"beyond", "the", "training"}
    assert english_left("entrenando position rope semilla 0 (/tmp/the run/of a test)") == set()


@pytest.mark.parametrize("name", sorted(SAID))
def test_a_spanish_micro_run_prints_no_english_line(name, tmp_path, shakespeare_head):
    argv = [sys.executable, "-m", "attnlab.cli.main", "run", name, "--profile", "micro",
            "--lang", "es", "--jobs", "1", "--corpus", str(shakespeare_head),
            "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert any(re.search(SAID[name], line) for line in lines), done.stderr
    left = {line: sorted(found) for line in lines if (found := english_left(line))}
    assert left == {}, "give these lines their Spanish (a log entry, or a Phrase argument)"


def estimate(runs: dict[str, int], workers: int, calibrated: bool = True) -> Estimate:
    calibration = Calibration({"a": 10.0, "b": 20.0}, {"a": 12.0, "b": 15.0},
                              {"a": 1, "b": 2}, [("a", 1.2), ("b", 0.75), ("b", 0.7)],
                              profiles={"quick"}, profile="full") if calibrated else None
    return Estimate("full", workers, "cpu", per_experiment={"a": 100.0, "b": 4000.0},
                    runs=runs, wall_s=3725.0, timing_s=46.3, extra_seeds=1,
                    seeds={"a": 3, "b": 5}, sharing=4, raw={"a": 90.0, "b": 3900.0},
                    calibration=calibration)


def test_the_estimate_speaks_spanish_in_number():
    one = estimate({"a": 1, "b": 5}, workers=1).text("es").splitlines()
    assert one == [
        "estimación (full, cpu, 1 proceso de trabajo): el entrenamiento debería durar unos "
        "1h02m (entre 47m45s y 1h16m) en esta máquina",
        "  a: 1 ejecución, 1m40s del tiempo de un proceso de trabajo (cronometrado: 1m30s × "
        "1.20)",
        "  b: 5 ejecuciones, 1h06m del tiempo de un proceso de trabajo (cronometrado: 1h05m × "
        "0.75)",
        "  (a partir de cronometrajes de 2 pasos de cada modelo, el mejor de 2 rondas, 46 s; "
        "el análisis se suma aparte)",
        "  comprobada con las 3 ejecuciones terminadas de esta caché (estimadas como arriba, "
        "medidas por sus propios registros):",
        "    a: 1 ejecución, estimado 10s, medido 12s: ×1.20",
        "    b: 2 ejecuciones, estimado 20s, medido 15s: ×0.75",
        "  (solo son ejecuciones quick: las ejecuciones full son más largas y pueden diferir "
        "más de lo que dice el margen de error; cuando terminen algunas, también se "
        "comprobarán)",
        "  (cada experimento se corrige con su propio cociente, y uno sin ejecuciones "
        "terminadas, con la mediana, ×0.97; margen de error ×0.77–×1.23: la dispersión de los "
        "cocientes en torno a la mediana y la de cada ejecución en torno al de su experimento)",
        "  (4 procesos de trabajo compartirán 1 GPU; se cuentan como uno por GPU, así que lo "
        "que se gane al compartir queda fuera)",
        "  (no incluida: la ronda adicional de 1 semilla para cada experimento que quede con "
        "una afirmación de entrenamiento no concluyente con 3 o más semillas: hasta 1/3 o 1/5 "
        "más de su entrenamiento)"]
    many = estimate({"a": 2, "b": 5}, workers=2, calibrated=False).text("es")
    assert many.startswith("estimación (full, cpu, 2 procesos de trabajo): ")
    assert "  a: 2 ejecuciones, 1m40s del tiempo de un proceso de trabajo\n" in many
    assert "(sin comprobar: esta caché no tiene ninguna ejecución terminada" in many
    nothing = estimate({}, workers=2).text("es")
    assert nothing.splitlines()[0] == \
        "estimación (full): nada que entrenar, todas las ejecuciones previstas han terminado"


def test_the_english_estimate_is_the_one_the_docs_quote():
    text = estimate({"a": 1, "b": 5}, workers=1).text()
    assert text == estimate({"a": 1, "b": 5}, workers=1).text("en")
    assert text.splitlines()[:3] == [
        "estimate (full, cpu, 1 worker): training should take about 1h02m (between 47m45s "
        "and 1h16m) on this machine",
        "  a: 1 run, 1m40s of one worker's time (timed 1m30s × 1.20)",
        "  b: 5 runs, 1h06m of one worker's time (timed 1h05m × 0.75)"]
    assert "  checked against the 3 finished runs of this cache (estimated as above, " \
        "measured by their own records):" in text
    assert "(not included: the extra round of 1 seed for each experiment" in text


@pytest.mark.usefixtures("no_chosen_language")
def test_reproduce_estimate_speaks_the_commands_language(tmp_path, capsys):
    from attnlab.cli.main import main

    estimate_words = vocabulary([e for k, e in catalogue("report").items()
                                 if k.startswith("estimate.")])
    assert {"worker", "runs", "training", "estimate"} <= estimate_words  # the check can fail
    dirs = ["--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]
    argv = ["reproduce", "--profile", "micro", "--only", "agreement", "--estimate", *dirs]
    assert main([*argv, "--lang", "es"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("estimación (micro, cpu, ") and "  agreement: 1 ejecución, " in out
    left = {line: found for line in out.splitlines()
            if (found := english_left(line, estimate_words))}
    assert left == {}
    assert main(argv) == 0
    english = capsys.readouterr().out
    assert english.startswith("estimate (micro, cpu, ") and "  agreement: 1 run, " in english
