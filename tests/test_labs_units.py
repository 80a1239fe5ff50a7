"""Exercises as units: each is one folder of labs/exercises/ named in the registry, whose parts
import one way (the solution nothing of attnlab), and docs/labs.md's two lists are what
scripts/labs_doc.py makes of the registry and the catalogue."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from test_imports import graph

from attnlab.labs import EXERCISES
from attnlab.labs.exercises import NOTEBOOKS, REGISTRY, groups
from attnlab.labs.notebook import GROUPS

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "src" / "attnlab" / "labs" / "exercises"
# An exercise's parts, in the one order they may import each other: a part imports only parts
# before it in its own folder, never the face (its __init__) and never another exercise. The
# mutation table (wrong.py) imports only the solution, apart from the probes it tests.
PARTS = ("solution", "measure", "cases", "mistakes", "describers", "hidden")
TABLE = "wrong"


def _labs_doc():
    spec = importlib.util.spec_from_file_location("labs_doc", ROOT / "scripts" / "labs_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_labs_page_lists_are_generated_from_the_exercises():
    page = (ROOT / "docs" / "labs.md").read_text(encoding="utf-8")
    assert page == _labs_doc().render(page), \
        "docs/labs.md is out of date: run .venv/bin/python scripts/labs_doc.py"


def test_every_folder_is_one_registry_line_and_the_numbers_are_the_lines():
    folders = sorted(p.name for p in FOLDER.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(name for name, _ in REGISTRY)
    assert [(ex.number, ex.name) for ex in EXERCISES] == [
        (n, name) for n, (name, _) in enumerate(REGISTRY, start=1)]
    assert GROUPS == groups() and list(GROUPS) == list(NOTEBOOKS)
    assert sorted(n for _, numbers in GROUPS.values() for n in numbers) == [
        ex.number for ex in EXERCISES]


def allowed(face: str, part: str | None, target: str) -> bool:
    """May ``face.part`` (the face itself when ``part`` is None) import ``target``?"""
    own = target.rpartition(".")[2] if target.startswith(face + ".") else None
    if part == TABLE:
        return not target.startswith("attnlab") or own == "solution"
    if not target.startswith("attnlab.labs.exercises"):
        return part != "solution" or not target.startswith("attnlab")  # lab solution prints it
    if own not in PARTS:
        return False  # another exercise, the face, or the mutation table
    return part is None or PARTS.index(own) < PARTS.index(part)


def test_each_exercise_imports_its_parts_one_way():
    edges = graph()
    wrong = []
    for name, _ in REGISTRY:
        face = f"attnlab.labs.exercises.{name}"
        parts = sorted(p.stem for p in (FOLDER / name).glob("*.py") if p.stem != "__init__")
        assert {"solution", "cases", "mistakes", TABLE} <= set(parts), name
        assert set(parts) <= {*PARTS, TABLE}, f"{name}: parts outside {PARTS}: {parts}"
        for part in [None, *parts]:
            module = face if part is None else f"{face}.{part}"
            wrong += [f"{module} -> {t}" for t in edges[module] if not allowed(face, part, t)]
    assert wrong == [], f"imports against the order {', '.join(PARTS)}"
