"""Run the learner's code in a contained child; compute every verdict here, in the parent.

The parent never imports the learner's code. It runs the exercise's cases and probes itself,
with a *proxy* in place of the learner's function: each call goes to the child
(:mod:`attnlab.labs.child`), which calls the real function and answers with its raw output,
read through :mod:`attnlab.labs.frames` (bounded frames, never unpickled, one deadline for the
whole check). Whatever the learner's code patches in its own process, the cases, the
comparisons and the messages are the parent's.

A **file** runs in a fresh interpreter (``python -I -S``, NumPy on its path, attnlab not) under
bubblewrap where it works (:mod:`attnlab.labs.boundary`: namespaces of its own, the filesystem
read-only with attnlab and the learner's and class folders out of sight, a scratch /tmp, the
limits below set before bwrap starts, no new process). Elsewhere it is not a boundary: a PID
namespace of its own where Linux allows it, the same limits, and an audit hook that refuses
attnlab's modules and files, new processes, signals to other processes and native libraries.
Either way its standard streams go to /dev/null (what it prints is not shown).
A **function** (a notebook's ``check("masks", my_fn)``) lives in the kernel, so its child is a
fork of the kernel with the same limits and hook: for learning, not a boundary. Either child
has a session of its own; at the deadline and at the end the parent freezes and kills it with
everything it started. Where ``fork`` does not exist (Windows) the check runs in this process,
without a time limit or any protection.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from attnlab.i18n import text
from attnlab.labs import boundary, frames
from attnlab.labs.checker import Exercise, Fn, Raised, Result, TimedOut, run_exercise

TIME_LIMIT = 20.0  # seconds for a whole check; every exercise's checker takes well under one
SESSION_LIMIT = 1800.0  # seconds of a whole session (CPU time too): a lab training run is ~1 min
MEMORY_LIMIT = 2 << 30  # bytes of address space for the checked code (a fork: on top of its own)
PROCESS_LIMIT = 16  # processes of the child's user, where the system enforces it (not as root)
FILE_LIMIT = 64 << 20  # bytes of any file the checked code writes
CHILD = Path(__file__).with_name("child.py")
_PACKAGE = str(Path(__file__).resolve().parents[1])  # attnlab's own files: out of the child's reach
_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "LC_ALL": "C.UTF-8"}


class Unusable(Exception):
    """The learner's file cannot be checked: the message is the one line to show."""


def isolated(ex: Exercise, source: Fn | str | Path, lang: str | None = None,
             time_limit: float = TIME_LIMIT, hide: tuple[Path, ...] = (),
             call_limit: float | None = None) -> Result:
    """Check ``source`` (a function, or a file holding ``ex.function``) in a child process;
    a file under the boundary where there is one, with ``hide`` (the class folder, say) out of
    its sight too. With ``call_limit`` (a file only: a class policy's time limit), a call that
    runs past it fails its case alone (:class:`attnlab.labs.checker.TimedOut`) and the check goes
    on in a fresh child; ``time_limit`` still bounds the whole check."""
    seconds = time_limit if math.isfinite(time_limit) and time_limit > 0 else TIME_LIMIT
    deadline = time.monotonic() + seconds
    if not hasattr(os, "fork"):
        return _in_process(ex, source, lang)
    start = None
    if callable(source):
        child = _Child.forked(source, ex.function, seconds)
    else:
        path = Path(source)
        try:
            code = path.read_bytes()
        except OSError:
            return _unusable(ex, text("labs", "unusable.no_file", lang, path=path))

        def start() -> _Child:
            return _Child.spawned(path, code, ex.function, seconds, deadline, hide)

        child = start()
    proxy = _Proxy(child, ex.function, deadline)
    try:
        loaded = child.receive(0, deadline)
        if loaded["kind"] != "ready":
            return _unusable(ex, _load_failure(loaded, source, ex.function, lang))
        if call_limit is not None and start is not None:
            proxy = _Limited(child, ex.function, deadline, call_limit, start)
        return run_exercise(ex, proxy, lang)
    except frames.Stopped as stop:
        return _unusable(ex, _why(stop.why, proxy.child, lang, seconds))
    finally:
        proxy.child.end()


@contextlib.contextmanager
def session(path: str | Path, function: str, lang: str | None = None,
            seconds: float = SESSION_LIMIT, call_seconds: float = TIME_LIMIT,
            hide: tuple[Path, ...] = ()) -> Iterator[Fn]:
    """The learner's file at ``path`` loaded once in a contained child (as :func:`isolated`
    loads it), and a proxy of its ``function`` for as many calls as the caller makes::

        with session("my-labs/attention.py", "attention") as attention:
            out, weights = attention(q, k, v, mask)   # runs in the child; arrays come back

    The child lives until the block ends, for at most ``seconds`` (wall and CPU time), each
    call for at most ``call_seconds``. A file that cannot be loaded, and a call that runs past
    its limit or ends the child, raise :class:`Unusable` with the one line to show; an error
    the learner's function raises comes back as :class:`attnlab.labs.checker.Raised` (its type's
    name and first line), ``NotImplementedError`` as itself. Where ``fork`` does not exist
    (Windows) the file is imported here, without limits or protection."""
    path = Path(path)
    if not hasattr(os, "fork"):
        yield load_function(path, function, lang)
        return
    try:
        code = path.read_bytes()
    except OSError:
        raise Unusable(text("labs", "unusable.no_file", lang, path=path)) from None
    deadline = time.monotonic() + seconds
    child = _Child.spawned(path, code, function, seconds, deadline, hide)
    try:
        try:
            loaded = child.receive(0, min(deadline, time.monotonic() + call_seconds))
        except frames.Stopped as stop:
            raise Unusable(_why(stop.why, child, lang, call_seconds)) from None
        if loaded["kind"] != "ready":
            raise Unusable(_load_failure(loaded, path, function, lang))
        yield _Proxy(child, function, deadline, call_seconds, lang)
    finally:
        child.end()


class _Proxy:
    """What the cases call in place of the learner's function. With ``call_seconds`` (a
    session) each call has a limit of its own, and the end of the child is :class:`Unusable`;
    without (a check) every call shares the one deadline, and the end is ``frames.Stopped``."""

    def __init__(self, child: _Child, name: str, deadline: float,
                 call_seconds: float | None = None, lang: str | None = None) -> None:
        self.child, self.name, self.deadline, self.calls = child, name, deadline, 0
        self.call_seconds, self.lang = call_seconds, lang
        self.ended = ""  # a session's line once its child stopped answering: every later call's

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.call_seconds is None:
            return self._call(self.deadline, args, kwargs)
        if self.ended:
            raise Unusable(self.ended)
        try:
            return self._call(min(self.deadline, time.monotonic() + self.call_seconds), args,
                              kwargs)
        except frames.Stopped as stop:
            self.ended = _why(stop.why, self.child, self.lang, self.call_seconds)
            raise Unusable(self.ended) from None

    def _call(self, deadline: float, args: tuple, kwargs: dict) -> Any:
        self.calls += 1
        frames.send(self.child.req, (self.calls, self.name, args, kwargs), deadline,
                  self.child.alive)
        answer = self.child.receive(self.calls, deadline)
        if answer["kind"] == "value" and "value" in answer:
            return answer["value"]
        if answer["kind"] != "raised":
            raise frames.Stopped("garbled")
        if answer.get("not_implemented") is True:
            raise NotImplementedError
        message = (text("labs", "fail.unreadable", self.lang) if answer.get("unreadable") is True
                   else frames.clean(answer.get("message")))
        raise Raised(frames.name(answer.get("error")), message)


class _Limited(_Proxy):
    """A check's proxy whose every call also has a limit of its own (a class policy's): a call
    past it ends its child, starts the file afresh in another and raises
    :class:`~attnlab.labs.checker.TimedOut`, so that case fails alone; the check's one deadline
    still ends the whole check."""

    def __init__(self, child: _Child, name: str, deadline: float, limit: float,
                 start: Callable[[], _Child]) -> None:
        super().__init__(child, name, deadline)
        self.limit, self.start = limit, start

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._call(min(self.deadline, time.monotonic() + self.limit), args, kwargs)
        except frames.Stopped as stop:
            if stop.why != "time" or time.monotonic() >= self.deadline:
                raise
        self.child.end()  # stuck in the learner's code: a fresh child for the next case
        self.child, self.calls = self.start(), 0
        if self.child.receive(0, self.deadline)["kind"] != "ready":
            raise frames.Stopped("garbled")
        raise TimedOut(self.limit)


class _Child:
    """A child process serving calls: its pipes, and how to end it with all it started."""

    def __init__(self, pid: int, req: int, ans: int, popen: subprocess.Popen | None) -> None:
        self.pid, self.req, self.ans, self.popen = pid, req, ans, popen
        self.code: int | None = None  # its exit code, once it has ended
        os.set_blocking(req, False)
        os.set_blocking(ans, False)

    @classmethod
    def spawned(cls, path: Path, code: bytes, function: str, seconds: float,
                deadline: float, hide: tuple[Path, ...] = ()) -> _Child:
        """The file's child: under bubblewrap where it works (:mod:`attnlab.labs.boundary`),
        else a fresh interpreter that contains itself (not a boundary)."""
        import numpy

        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        program = boundary.available()
        try:
            if program is None:
                popen = subprocess.Popen(  # noqa: S603 - our own interpreter and script
                    [sys.executable, "-I", "-S", "-B", str(CHILD), str(req_r), str(ans_w)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, pass_fds=(req_r, ans_w), start_new_session=True,
                    env=_ENV)
            else:
                popen = _bounded(program, path, hide, seconds, req_r, ans_w)
        finally:
            os.close(req_r)
            os.close(ans_w)
        child = cls(popen.pid, req_w, ans_r, popen)
        protect = [_PACKAGE, *map(str, boundary.packages())]  # the hook's, without bwrap
        setup = {"numpy": str(Path(numpy.__file__).resolve().parents[1]), "protect": protect,
                 "limits": _limits(seconds, os.getpid(), on_top=False), "source": code,
                 "filename": str(path.resolve()) if program else str(path),
                 "module": path.stem, "function": function, "boundary": program is not None}
        with contextlib.suppress(frames.Stopped):  # a child that died early says so on reading
            frames.send(req_w, setup, deadline, child.alive)
        return child

    @classmethod
    def forked(cls, fn: Fn, function: str, seconds: float) -> _Child:
        from attnlab.labs import child as serving

        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        limits = _limits(seconds, os.getpid(), on_top=True)
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            try:
                os.setsid()
                serving.forked(fn, function, req_r, ans_w, limits, [_PACKAGE])
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(ans_w)
        return cls(pid, req_w, ans_r, None)

    def receive(self, number: int, deadline: float) -> dict[str, Any]:
        answer = frames.receive(self.ans, deadline, self.alive)
        if answer.get("id") != number:
            raise frames.Stopped("garbled")
        return answer

    def alive(self) -> bool:
        """True while the child runs; its exit code is kept (the process stays unreaped)."""
        if self.code is not None:
            return False
        if not hasattr(os, "waitid"):  # macOS: reaped here, so the group is killed by number
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == 0:
                    return True
                self.code = os.waitstatus_to_exitcode(status)
            return False
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        if info is None:
            return True
        exited = info.si_code == os.CLD_EXITED
        self.code = info.si_status if exited else -info.si_status
        return False

    def exit_code(self, wait: float = 1.0) -> int | None:
        """The child's exit code, after waiting up to ``wait`` seconds for it to end."""
        until = time.monotonic() + wait
        while self.alive() and time.monotonic() < until:
            time.sleep(0.02)
        return self.code

    def end(self) -> None:
        """Freeze the child and every process it started, kill them all, reap the child."""
        kill_tree(self.pid)
        for fd in (self.req, self.ans):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(5.0)
            return
        until = time.monotonic() + 5.0
        while time.monotonic() < until:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                    time.sleep(0.01)
                    continue
            return


def _bounded(program: str, path: Path, hide: tuple[Path, ...], seconds: float, req: int,
             ans: int) -> subprocess.Popen:
    """Start the child script under bwrap, its limits set before bwrap starts (inherited by
    all it runs) and its process filter read by bwrap from a pipe."""
    filtered = boundary.seccomp_program()
    limits = {"RLIMIT_AS": (MEMORY_LIMIT, MEMORY_LIMIT),
              "RLIMIT_CPU": (math.ceil(seconds) + 1, math.ceil(seconds) + 2),
              "RLIMIT_FSIZE": (FILE_LIMIT, FILE_LIMIT), "RLIMIT_CORE": (0, 0)}
    if filtered is None:  # no filter for this machine: the process count, where it binds
        limits["RLIMIT_NPROC"] = (PROCESS_LIMIT, PROCESS_LIMIT)
    fds = [req, ans]
    if filtered is not None:
        rule, writing = os.pipe()
        os.write(writing, filtered)  # a few hundred bytes: well within a pipe's buffer
        os.close(writing)
        fds.append(rule)
    try:
        return subprocess.Popen(  # noqa: S603 - bwrap around our own interpreter and script
            boundary.command(program, CHILD, path, hide, fds[2] if filtered else None,
                             [str(req), str(ans)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=tuple(fds), start_new_session=True, env=_ENV,
            preexec_fn=boundary.limiter(limits))  # noqa: PLW1509 - setrlimit only
    finally:
        if filtered is not None:
            os.close(fds[2])


def kill_tree(root: int) -> None:
    """SIGKILL ``root`` (a session leader, not yet reaped), its process group and every
    descendant, found through /proc while each is frozen by SIGSTOP (so none forks away)."""
    with contextlib.suppress(OSError):
        os.killpg(root, signal.SIGSTOP)
    found = {root}
    while more := {pid for pid, parent in _parents().items()
                   if parent in found and pid not in found}:
        for pid in more:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        found |= more
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(root, signal.SIGKILL)


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc (empty where there is no /proc)."""
    out = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    with open(f"/proc/{entry.name}/stat", "rb") as stat:
                        fields = stat.read().rsplit(b")", 1)[1].split()
                    out[int(entry.name)] = int(fields[1])
    return out


def _limits(seconds: float, parent: int, on_top: bool) -> dict[str, Any]:
    return {"memory": MEMORY_LIMIT, "memory_on_top": on_top, "cpu": math.ceil(seconds) + 1,
            "processes": PROCESS_LIMIT, "file": FILE_LIMIT, "parent": parent}


def _load_failure(loaded: dict[str, Any], path: Any, function: str, lang: str | None) -> str:
    kind = loaded["kind"]
    if kind == "syntax":
        line = loaded.get("line") if type(loaded.get("line")) is int else 0
        return text("labs", "unusable.syntax", lang, path=path, line=line,
                    message=frames.clean(loaded.get("message")))
    if kind == "import":
        message = (text("labs", "fail.unreadable", lang) if loaded.get("unreadable") is True
                   else frames.clean(loaded.get("message")))
        return text("labs", "unusable.import", lang, path=path,
                    error=frames.name(loaded.get("error")), message=message)
    if kind == "no_function":
        return text("labs", "unusable.no_function", lang, path=path, function=function)
    return text("labs", "unusable.garbled", lang)


def _why(why: str, child: _Child, lang: str | None, seconds: float) -> str:
    if why == "time":
        return text("labs", "unusable.time", lang, seconds=f"{seconds:g}")
    if why == "crash":
        return text("labs", "unusable.crash", lang, code=child.exit_code())
    return text("labs", f"unusable.{why}", lang)  # "garbled", "reference"


def load_function(path: str | Path, name: str, lang: str | None = None) -> Fn:
    """Import the file at ``path`` here and return its function ``name``; else
    :class:`Unusable`. Only where no child can be started: it runs the file in this process."""
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
                            message=frames.clean(str(err)))) from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise Unusable(text("labs", "unusable.no_function", lang, path=path, function=name))
    return fn


def _in_process(ex: Exercise, source: Fn | str | Path, lang: str | None) -> Result:
    try:
        fn = source if callable(source) else load_function(source, ex.function, lang)
    except Unusable as err:
        return _unusable(ex, str(err))
    return run_exercise(ex, fn, lang)


def _unusable(ex: Exercise, line: str) -> Result:
    return Result(ex.number, ex.name, "unusable", headline=line)
