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
