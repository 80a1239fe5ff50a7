"""Every notebook in notebooks/ and its Spanish twin in notebooks/es/ runs from top to bottom,
offline, in seconds. A Spanish notebook whose code is its English twin's, cell for cell
(tests/test_notebooks_es.py holds which differ: only by ``lang="es"``), runs the same code, so
it runs with ``-m slow``; the ones whose code differs run by default.

Each is executed by nbclient in a fresh kernel of *this* interpreter (a kernel spec written
into a temporary JUPYTER_PATH, so a clean clone needs nothing registered), in a temporary
folder, with ``ATTNLAB_DATA`` made absolute. The notebooks in git stay without outputs: a
notebook saved with its outputs fails here, so what a reader opens is what runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from notebook_support import kernel_spec_root

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb")) + sorted((FOLDER / "es").glob("*.ipynb"))
KERNEL = "attnlab-test"
SPANISH_CODE = ("02_ladder", "04_agreement")  # Spanish notebooks whose code is not the English


def _code(path: Path) -> list[str]:
    return [c["source"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def _runs(path: Path):
    """A notebook to execute: a Spanish one whose code is its twin's only with ``-m slow``."""
    if path.parent.name == "es" and path.stem not in SPANISH_CODE:
        return pytest.param(path, marks=pytest.mark.slow)
    return path


@pytest.fixture(scope="module")
def kernel_path(tmp_path_factory) -> Path:
    """A JUPYTER_PATH holding one kernel spec that starts this interpreter's ipykernel."""
    return kernel_spec_root(tmp_path_factory.mktemp("jupyter"), KERNEL, "attnlab test")


def name(path: Path) -> str:
    return "/".join(path.relative_to(FOLDER).with_suffix("").parts)


def test_there_are_notebooks_in_both_languages():
    english = [p.name for p in NOTEBOOKS if p.parent == FOLDER]
    assert [n[:3] for n in english] == ["01_", "02_", "03_", "04_", "05_", "06_"]
    assert [p.name for p in NOTEBOOKS if p.parent == FOLDER / "es"] == english


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_the_spanish_notebooks_run_by_default_are_those_whose_code_differs():
    differ = sorted(p.stem for p in FOLDER.glob("es/*.ipynb")
                    if _code(p) != _code(FOLDER / p.name))
    assert differ == sorted(SPANISH_CODE)


@pytest.mark.parametrize("path", [_runs(p) for p in NOTEBOOKS], ids=name)
def test_notebook_runs(path, kernel_path, tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_path))
    if os.environ.get("ATTNLAB_DATA"):
        monkeypatch.setenv("ATTNLAB_DATA", str(Path(os.environ["ATTNLAB_DATA"]).resolve()))
    monkeypatch.delenv("ATTNLAB_REPORT", raising=False)
    report = tmp_path / "report"  # a finished run for 02 to find: one hand-made ladder row
    report.mkdir()
    ladder = {"profile": "quick", "seeds": 3, "record": {"rows": [
        {"row": 1, "held_ppl": [150.0, 152.0, 154.0], "train_ppl": [140.0] * 3, "params": 10}]}}
    (report / "results.json").write_text(json.dumps({"experiments": {"ladder": ladder}}))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=180,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell that failed
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs)
    assert "Traceback" not in text and text.strip()
    if path.stem == "02_ladder":
        assert "profile quick, 3 seed(s)" in text and "measured   152.00" in text
    if path.parent.name == "es" and path.stem in ("02_ladder", "04_agreement"):
        pages = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb.cells
                        if c.cell_type == "code" for o in c.outputs)
        assert "&lt;html lang=&quot;es&quot;&gt;" in pages  # the explorer speaks Spanish
