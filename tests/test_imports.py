"""No import circle anywhere in ``attnlab``: no module imports one that imports it back, through
any chain, function-level imports included (they hide a circle from Python, not from a reader).

Every module is parsed with ``ast``; every ``import`` and ``from … import`` in it (top level,
in functions, under ``TYPE_CHECKING``) is an edge to the module it names, with relative imports
resolved and ``from pkg import name`` pointing at ``pkg.name`` when that is a module (and
at ``pkg`` otherwise). The parents a Python import runs first are not edges: every
submodule import would be a circle with a package that re-exports it. A package's
``__init__`` is a module like the others. Strings handed to ``importlib`` are not edges: the
registry loads experiments by name, which is the point of a registry.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attnlab

ROOT = Path(attnlab.__file__).resolve().parent  # src/attnlab


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The attnlab modules ``name`` (at ``path``) imports, anywhere in its body."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # "from pkg import mod" imports pkg.mod; "from pkg import name" imports pkg
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known
                       else origin for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # "attnlab.x.y.Name" -> "attnlab.x.y"
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    known = {"attnlab", "attnlab.a", "attnlab.b", "attnlab.pkg", "attnlab.pkg.c"}
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from attnlab.b import thing\n    from .pkg import c\n")
    assert imports("attnlab.a", a, known) == {"attnlab.b", "attnlab.pkg.c"}
    assert find_cycle({"x": {"y"}, "y": {"z"}, "z": {"x"}}) == ["x", "y", "z", "x"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None


def test_no_import_circle_in_attnlab():
    edges = graph()
    assert "attnlab.running.runner" in edges and "attnlab.suite" in edges
    cycle = find_cycle(edges)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_layers_point_down():
    """The lab never imports the experiments, the suite, the report or the CLI; the
    experiments never import the suite, the report or the CLI; the report not the suite."""
    edges = graph()

    def reaches(prefix: str, banned: tuple[str, ...]) -> list[str]:
        return sorted(f"{m} -> {t}" for m, ts in edges.items() if m.startswith(prefix)
                      for t in ts if t.startswith(banned))

    assert reaches("attnlab.lab", ("attnlab.experiments", "attnlab.suite", "attnlab.report",
                                   "attnlab.cli")) == []
    assert reaches("attnlab.experiments", ("attnlab.suite", "attnlab.report",
                                           "attnlab.cli")) == []
    assert reaches("attnlab.report", ("attnlab.suite", "attnlab.cli",
                                      "attnlab.experiments")) == []


def test_the_explorer_rooms_point_down():
    """Inside the explorer: the page never imports where heads come from or the server;
    the sources never import the server or the notebook entry; the server not the notebook."""
    edges = graph()

    def reaches(prefix: str, banned: tuple[str, ...]) -> list[str]:
        return sorted(f"{m} -> {t}" for m, ts in edges.items() if m.startswith(prefix)
                      for t in ts if t.startswith(banned))

    ex = "attnlab.explorer."
    assert f"{ex}page.render" in edges and f"{ex}sources.build" in edges
    assert reaches(f"{ex}page", (f"{ex}sources", f"{ex}server", f"{ex}notebook")) == []
    assert reaches(f"{ex}sources", (f"{ex}server", f"{ex}notebook")) == []
    assert reaches(f"{ex}server", (f"{ex}notebook",)) == []
    assert reaches("attnlab.explorer", ("attnlab.cli",)) == []


# An experiment package's parts, in the one order they may import each other: a part imports
# only parts before it, and no part imports the package's face (its __init__). ``margins``
# is optional: the per-seed margins of claims too many to read in one file with them.
PARTS = ("settings", "measure", "margins", "claims", "view", "chapter")


def test_every_experiment_is_one_entry_whose_parts_point_one_way():
    from attnlab.kit import registry

    folder = ROOT / "experiments"
    entries = sorted(p.stem if p.is_file() else p.name for p in folder.iterdir()
                     if p.name != "__init__.py" and not p.name.startswith((".", "_"))
                     and (p.suffix == ".py" or (p / "__init__.py").is_file()))
    assert entries == sorted(registry.EXPERIMENTS)  # one module or one package each
    edges = graph()
    wrong = []
    for name in registry.EXPERIMENTS:
        package = folder / name
        if not package.is_dir():
            continue
        face = f"attnlab.experiments.{name}"
        parts = sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__")
        assert set(parts) <= set(PARTS), f"{name}: parts outside {PARTS}: {parts}"
        for part in parts:
            for target in edges[f"{face}.{part}"]:
                if target == face or target.startswith(face + ".") and \
                        PARTS.index(target.rpartition(".")[2]) >= PARTS.index(part):
                    wrong.append(f"{face}.{part} -> {target}")
    assert wrong == [], "parts that import the face or a later part"


def documented_layers() -> dict[str, int]:
    """docs/design.md's layer block: top-level package or module of attnlab -> its layer."""
    page = (ROOT.parents[1] / "docs" / "design.md").read_text(encoding="utf-8")
    block = page.split("<!-- layers:begin -->")[1].split("<!-- layers:end -->")[0]
    layers: dict[str, int] = {}
    for line in block.splitlines():
        head, _, rest = line.partition("  ")
        if not head.isdigit():
            continue  # the fence, or a description's second line
        for word in rest.split():
            if not word.endswith(("/", ".py")):
                break  # the description starts
            name = word.rstrip("/").removesuffix(".py")
            assert name not in layers, f"{word} is in two layers of docs/design.md"
            layers[name] = int(head)
    return layers


def top_level(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_design_md_layers_are_the_imports():
    layers = documented_layers()
    present = {top_level(m) for m in modules()} | {
        p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert present - set(layers) == set(), "not in docs/design.md's layers"
    assert set(layers) - present == set(), "in docs/design.md's layers but not in src/attnlab"
    up = sorted(f"{m} -> {t} (layer {layers[top_level(m)]} -> {layers[top_level(t)]})"
                for m, ts in graph().items() for t in ts
                if top_level(m) != top_level(t)
                and layers[top_level(t)] >= layers[top_level(m)])
    assert up == [], "imports that reach a layer at or above their own"


# -- nothing outside an experiment imports its internals --------------------------------------
# Outside ``attnlab.experiments.<name>`` (the rest of attnlab, another experiment, scripts/,
# tests/), code imports the experiment's face ``attnlab.experiments.<name>`` (or reads its
# record through ``attnlab.kit.registry.load``), never one of its parts
# ``attnlab.experiments.<name>.<part>``: the parts can move inside the folder without a
# change anywhere else. One allowance: ``tests/test_exp_<name>.py``, the unit tests of that
# experiment, may import its own parts (they test a part's helpers one by one).

EXPERIMENTS = "attnlab.experiments."


def part_of(module: str) -> tuple[str, str] | None:
    """``(experiment, part)`` of a module inside an experiment's folder, None otherwise.

    >>> part_of("attnlab.experiments.induction.measure"), part_of("attnlab.experiments.ladder")
    (('induction', 'measure'), None)
    """
    if not module.startswith(EXPERIMENTS):
        return None
    names = module[len(EXPERIMENTS):].split(".")
    return (names[0], names[1]) if len(names) > 1 else None


def reaches_inside(edges: dict[str, set[str]], allowed: dict[str, str] | None = None
                   ) -> list[str]:
    """``importer -> part`` for every import of an experiment's part from outside that
    experiment; ``allowed`` maps an importer to the one experiment whose parts it may use."""
    allowed = allowed or {}
    wrong = []
    for importer, targets in edges.items():
        for target in targets:
            inside = part_of(target)
            if inside is None:
                continue
            name = inside[0]
            if importer == EXPERIMENTS + name or importer.startswith(EXPERIMENTS + name + "."):
                continue  # the experiment's own face and parts
            if allowed.get(importer) == name:
                continue
            wrong.append(f"{importer} -> {target}")
    return sorted(wrong)


def outside_files() -> dict[str, Path]:
    """tests/ and scripts/, each file as a pseudo-module ``tests.<stem>`` / ``scripts.<stem>``."""
    repo = ROOT.parents[1]
    return {f"{folder}.{p.stem}": p for folder in ("tests", "scripts")
            for p in sorted((repo / folder).glob("*.py"))}


def test_the_check_of_experiment_parts_sees_a_part_imported_from_outside():
    edges = {"attnlab.explorer.x": {"attnlab.experiments.recurrence.measure"},
             "attnlab.explorer.y": {"attnlab.experiments.recurrence", "attnlab.kit.registry"},
             "attnlab.experiments.recurrence": {"attnlab.experiments.recurrence.view",
                                                "attnlab.experiments.ladder"},
             "attnlab.experiments.induction": {"attnlab.experiments.ladder.settings"},
             "tests.test_exp_induction": {"attnlab.experiments.induction.measure"},
             "tests.test_other": {"attnlab.experiments.induction.claims"}}
    assert reaches_inside(edges, {"tests.test_exp_induction": "induction"}) == [
        "attnlab.experiments.induction -> attnlab.experiments.ladder.settings",
        "attnlab.explorer.x -> attnlab.experiments.recurrence.measure",
        "tests.test_other -> attnlab.experiments.induction.claims"]


def test_nothing_outside_an_experiment_imports_its_parts():
    edges = graph()
    known = set(edges)
    assert "attnlab.experiments.recurrence.measure" in known  # the walk sees the parts
    files = outside_files()
    assert "tests.test_exp_recurrence" in files and "scripts.rule_versions" in files
    edges.update({name: imports(name, path, known) for name, path in files.items()})
    allowed = {name: name.removeprefix("tests.test_exp_") for name in files
               if name.startswith("tests.test_exp_")}
    assert reaches_inside(edges, allowed) == [], \
        "imports of an experiment's part from outside it (import its face instead)"
