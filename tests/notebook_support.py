"""The kernel spec the notebook tests run their notebooks under: this interpreter's ipykernel."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def kernel_spec_root(root: Path, name: str, display_name: str) -> Path:
    """A JUPYTER_PATH under ``root`` holding one kernel spec ``name`` that starts this
    interpreter's ipykernel."""
    spec = root / "kernels" / name
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps(
        {"argv": argv, "display_name": display_name, "language": "python"}))
    return root
