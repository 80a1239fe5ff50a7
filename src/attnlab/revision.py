"""The code a result came from: attnlab's version and, from a git checkout of attnlab, its
commit. One low module (it imports nothing of attnlab's but the version), so that the run
directories (``train.rundir``), the report's meta (``report.provenance``), the suite and the cluster
preflight all record the same thing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def code_revision(package: Path | None = None) -> dict[str, Any]:
    """The code a result came from: attnlab's version and, where the package is imported from
    a git checkout of attnlab (an editable install, a clone on ``sys.path``), that checkout's
    commit and whether its tracked files have local changes.

    The repository is the package's own: its ``__init__.py`` must be a file that repository
    tracks. A wheel installed into a venv that sits inside some other repository (the user's
    project) records no commit, never that project's: ``commit`` and ``dirty`` are None.
    """
    import attnlab

    package = Path(attnlab.__file__).resolve().parent if package is None else package
    out: dict[str, Any] = {"version": attnlab.__version__, "commit": None, "dirty": None,
                           "source": "installed package"}
    init = package / "__init__.py"

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=package, capture_output=True, text=True,
                              timeout=10)

    try:
        if git("ls-files", "--error-unmatch", init.name).returncode != 0:
            return out  # not tracked there: no repository, or one it merely sits inside
        rev = git("rev-parse", "HEAD")
        if rev.returncode != 0:
            return out
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return out
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return {**out, "commit": rev.stdout.strip(), "dirty": dirty, "source": "git checkout"}
