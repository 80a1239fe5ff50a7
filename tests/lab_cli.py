"""What the lab command tests share: ``lab(*argv)`` runs ``attnlab lab ...`` in this process and
returns ``(exit code, stdout, stderr)``."""

from __future__ import annotations

import contextlib
import io

from attnlab.cli.main import main


def lab(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["lab", *map(str, argv)])
    return code, out.getvalue(), err.getvalue()


def without_note(err: str) -> str:
    """``err`` without its first line when that is the note that there is no operating-system
    boundary here (``lab check`` where bubblewrap does not work), in either language."""
    from attnlab.i18n import LANGS, text

    notes = {text("labs", "unusable.no_boundary", lang) + "\n" for lang in LANGS}
    first = err.split("\n", 1)[0] + "\n"
    return err[len(first):] if first in notes else err
