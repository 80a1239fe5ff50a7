"""Run a check in a child process with a time limit, so the learner's code cannot hang us.

The learner's function (or file) runs in a forked child; the child sends back the
:class:`~attnlab.labs.core.Result` through a pipe. An endless loop ends at the time limit, a
crash (a segfault, ``os._exit``) as the child's exit code, a file that cannot be imported or
lacks the function as the first line of why: each is a result of status ``unusable`` whose
headline is one line. What the learner's code prints is swallowed.

Where ``fork`` does not exist (Windows) the check runs in this process, without a time limit.
Left out: memory limits and sandboxing against hostile code; this protects a learner from
their own mistakes, not a server from its users.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import multiprocessing
import sys
from pathlib import Path
from typing import Any

from attnlab.i18n import text
from attnlab.labs.core import Exercise, Fn, Result, run_exercise

TIME_LIMIT = 20.0  # seconds; every exercise's checker takes well under one


def load_function(path: str | Path, name: str, lang: str | None = None) -> Fn:
    """Import the file at ``path`` and return its function ``name``; else :class:`Unusable`."""
    path = Path(path)
    if not path.is_file():
        raise Unusable(text("labs", "unusable.no_file", lang, path=path))
    spec = importlib.util.spec_from_file_location(f"attnlab_learner_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise Unusable(text("labs", "unusable.no_file", lang, path=path))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        raise Unusable(text("labs", "unusable.syntax", lang, path=path, line=err.lineno,
                            message=err.msg)) from None
    except BaseException as err:  # noqa: BLE001 - anything the learner's module does
        raise Unusable(text("labs", "unusable.import", lang, path=path, error=type(err).__name__,
                            message=_first(err))) from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise Unusable(text("labs", "unusable.no_function", lang, path=path, function=name))
    return fn


class Unusable(Exception):
    """The learner's file cannot be checked: the message is the one line to show."""


def isolated(ex: Exercise, source: Fn | str | Path, lang: str | None = None,
             time_limit: float = TIME_LIMIT) -> Result:
    """Check ``source`` (a function, or a file holding ``ex.function``) in a child process."""
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return _check(ex, source, lang)
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(ex, source, lang, send), daemon=True)
    child.start()
    send.close()
    result: Result | None = None
    try:
        if receive.poll(time_limit):
            with contextlib.suppress(EOFError):
                result = receive.recv()
            child.join(2.0)
        elif child.is_alive():
            return _unusable(ex, text("labs", "unusable.time", lang, seconds=f"{time_limit:g}"))
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if result is None:
        return _unusable(ex, text("labs", "unusable.crash", lang, code=child.exitcode))
    return result


def _child(ex: Exercise, source: Fn | str | Path, lang: str | None, send: Any) -> None:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        result = _check(ex, source, lang)
    send.send(result)
    send.close()
    sys.stdout.flush()


def _check(ex: Exercise, source: Fn | str | Path, lang: str | None) -> Result:
    try:
        fn = source if callable(source) else load_function(source, ex.function, lang)
    except Unusable as err:
        return _unusable(ex, str(err))
    return run_exercise(ex, fn, lang)


def _unusable(ex: Exercise, line: str) -> Result:
    return Result(ex.number, ex.name, "unusable", headline=line)


def _first(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [""])[0][:160]
