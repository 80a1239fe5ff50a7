"""One Spanish word per idea: the glossary docs/es/glosario.md names, per idea, the Spanish term
and the variants and calques not to use, and nothing attnlab says in Spanish uses one — the
catalogue, the labels of each claim's figures, the Spanish pages and Spanish notebooks."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

import attnlab.labs  # noqa: F401  the exercises' words join the catalogue as their folders load
from attnlab.i18n import catalogue, domains

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "es" / "glosario.md"
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # code names are the code's, not words
FIELD = re.compile(r"\{\w*\}")  # a catalogue field such as {steps}
LINK = re.compile(r"\]\([^)]*\)")


@cache
def glossary() -> list[dict[str, object]]:
    """The glossary's rows: English, Spanish, the variants not to use (as written), note."""
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 4 or cells[0] in ("English", "---"):
            continue
        english, spanish, avoid, note = cells
        rows.append({"en": english, "es": spanish, "note": note,
                     "avoid": re.findall(r"`([^`]+)`", avoid)})
    return rows


def pattern(variant: str) -> re.Pattern[str]:
    """A variant as a pattern: whole words, any spacing, ``#`` a number, ``…`` any text in the
    same sentence, and the first letter in either case (a sentence may start with it).

    >>> bool(pattern("dividir por").search("Dividir por √d_k"))
    True
    >>> bool(pattern("laboratorio #").search("un laboratorio de la atención"))
    False
    """
    parts = []
    for word in variant.split():
        if word == "…":
            parts.append(r"[^.\n]*?")
        elif word == "#":
            parts.append(r"\d+")
        else:
            parts.append(re.escape(word))
    body = r"\s+".join(parts)
    first = variant[0]
    if first.isalpha():
        body = f"[{first.lower()}{first.upper()}]" + body[1:]
    return re.compile(rf"(?<!\w){body}(?!\w)")


def prose(text: str) -> str:
    """``text`` without its code, its catalogue fields and its link targets."""
    return LINK.sub("]", FIELD.sub("", CODE.sub("", text)))


def spanish_texts() -> list[tuple[str, str]]:
    """(where, text) of everything attnlab says in Spanish."""
    from attnlab.kit import registry
    from attnlab.kit.quantities import NAMES
    from attnlab.kit.verdict_words import MARGIN_UNITS, WORDS

    registry.own_all_words()  # the experiments' words join the catalogue
    out = [(f"{d}.{k}", e["es"]) for d in domains() for k, e in catalogue(d).items()]
    for name in registry.EXPERIMENTS:
        for c in registry.load(name).claims:
            for key, q in c.figures.items():
                out.append((f"{c.id} figure {key}", f"{q.label_es} {q.unit_es}"))
    for table, label in ((NAMES, "quantities.NAMES"), (MARGIN_UNITS, "claim_words.MARGIN_UNITS"),
                         (WORDS, "claim_words.WORDS")):
        out += [(f"{label}[{k}]", es) for k, (_, es) in table.items()]
    for page in sorted((ROOT / "docs" / "es").glob("*.md")):
        if page == GLOSSARY:
            continue
        out.append((str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")))
    for book in sorted((ROOT / "notebooks").glob("**/es/*.ipynb")):
        cells = json.loads(book.read_text(encoding="utf-8"))["cells"]
        out += [(f"{book.relative_to(ROOT)} cell {i}", "".join(c["source"]))
                for i, c in enumerate(cells) if c["cell_type"] == "markdown"]
    return out


def uses(text: str) -> list[str]:
    """The variants not to use that ``text`` uses, each with the term to use instead."""
    text = prose(text)
    return [f"{v!r} (use {row['es']!r})" for row in glossary() for v in row["avoid"]
            if pattern(v).search(text)]


def test_the_glossary_has_one_spanish_term_per_idea():
    rows = glossary()
    assert len(rows) >= 30
    english = [r["en"] for r in rows]
    assert len(set(english)) == len(english), "an idea twice"
    assert all(r["es"] for r in rows)
    for row in rows:  # a chosen term is not another row's variant
        assert not uses(str(row["es"])), row


@pytest.mark.parametrize("calque", [
    "perplejidad sobre datos no vistos", "perplejidad en datos reservados",
    "MSE de validación", "un paso de GD", "Dividir por √d_k", "La MLP tiene dos tercios",
    "cabeza de token previo", "currículo: softmax", "los pesos se usan transpuestos",
    "Laboratorio 1: softmax", "Ablar la cabeza de token anterior", "con ella ablada",
    "tu rate es 1/r", "se emparejan las dims i e i + d/2", "caen por un precipicio",
    "pierde menos de 1 década", "la perplejidad lado a lado", "pasar las pruebas",
    "Laboratorios: atención", "el perfil rápido es el completo", "la frase fuente",
    "las palabras objetivo", "la alineación de referencia",
])
def test_the_issues_variants_and_calques_fail_the_glossary(calque):
    assert uses(calque), calque


@pytest.mark.parametrize("term", [
    "perplejidad de validación", "ECM de validación", "un paso de descenso de gradiente",
    "Dividir entre √d_k", "El MLP tiene dos tercios", "cabeza de token anterior",
    "la máscara está traspuesta", "Ejercicio 1: softmax", "un laboratorio de la atención",
    "tu tasa es 1/r", "devuelve `rate`", "keepdims=True", "se desploman", "un orden de magnitud",
    "uno junto a otro", "superar las pruebas", "{batch} ventanas", "el perfil quick",
    "la atención cruzada del destino sobre el origen", "el alineamiento de referencia",
    "las cifras del capítulo nunca son objetivos", "lo que otras fuentes escriben",
])
def test_the_chosen_terms_pass(term):
    assert not uses(term), term


def test_nothing_said_in_spanish_uses_a_variant_the_glossary_rules_out():
    found = [f"{where}: {', '.join(bad)}" for where, text in spanish_texts()
             if (bad := uses(text))]
    assert not found, "\n".join(found)
