"""The lab checker against a learner who wants a pass without the work: a table of hostile
softmax files, each with its expected outcome (a failed verdict, one line "unusable", the time
limit), never a pass, never past the limit plus a few seconds, never a process left behind."""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from lab_cli import without_note

from attnlab.cli.main import main
from attnlab.i18n import text
from attnlab.labs import EXERCISES, boundary, check, get
from attnlab.labs.notebook import solution_file, stub_file
from attnlab.labs.sandbox import CHILD, isolated, kill_tree

HEAD = "import os, signal, struct, sys, time\nimport numpy as np\n\n\n"
ZEROS = "    return np.zeros_like(np.asarray(x, dtype=float))\n"
FAILED, UNUSABLE, TIME, REFERENCE = "failed", "unusable", "time", "reference"

HOSTILE = {  # name -> (the body of softmax(x, axis=-1), outcome of the file, of a function)
    "patches_run_exercise": ("""
        import attnlab.labs.sandbox as s
        from attnlab.labs.checker import Result
        s.run_exercise = lambda ex, fn, lang=None: Result(1, "softmax", "passed", headline="ok")
    """, REFERENCE, None),
    "forges_a_frame_and_exits": ("""
        f = sys._getframe()
        while f is not None:  # the checker's own functions, if it can find them
            for v in list(f.f_locals.values()) + list(f.f_globals.values()):
                if callable(v) and getattr(v, "__name__", "") in ("send", "_write"):
                    with __import__("contextlib").suppress(BaseException):
                        v(4, {"id": 1, "kind": "passed"}, b"", {"reference": False})
            f = f.f_back
        head = b'{"id": 1, "kind": "passed", "status": "passed"}'
        forged = struct.pack(">II", 4 + len(head), len(head)) + head
        for fd in range(256):
            with __import__("contextlib").suppress(OSError):
                os.write(fd, forged)
        os._exit(0)
    """, UNUSABLE, UNUSABLE),
    "patches_the_exercise_close": ("""
        from attnlab.labs.exercises.softmax import cases
        cases.close = lambda *a, **k: None
    """, REFERENCE, FAILED),
    "patches_close_defaults": ("""
        from attnlab.labs import compare
        compare.close.__defaults__ = (1e9, 1e9)
    """, REFERENCE, FAILED),
    "patches_np_abs": ("""
        _abs = np.abs
        np.abs = lambda a, *r, **k: _abs(a) * 0
    """, FAILED, FAILED),
    "clears_the_cases": ("""
        from attnlab.labs.exercises.softmax import cases
        cases.build().clear()
    """, REFERENCE, FAILED),
    "imports_the_solution": ("""
        from attnlab.labs.exercises.softmax import solution
        return solution.softmax(x, axis)
    """, REFERENCE, None),
    "reads_the_solution_file": ("""
        import glob
        roots = [os.path.dirname(os.path.dirname(m.__file__))
                 for n, m in list(sys.modules.items()) if n == "attnlab"]
        for p in sys.path:
            roots += [open(pth).read().strip() for pth in glob.glob(p + "/*attnlab*.pth")] + [p]
        for root in roots:
            if os.path.exists(root + "/attnlab/labs/exercises/softmax/solution.py"):
                names = {}
                exec(open(root + "/attnlab/labs/exercises/softmax/solution.py").read(), names)
                return names["softmax"](x, axis)
    """, REFERENCE, REFERENCE),
    "length_header_then_sleeps": ("""
        for fd in range(256):
            with __import__("contextlib").suppress(OSError):
                os.write(fd, struct.pack(">I", 1000))
        time.sleep(60)
    """, TIME, TIME),
    "oversized_frame": ("""
        for fd in range(256):
            with __import__("contextlib").suppress(OSError):
                os.write(fd, b"\\x7f\\xff\\xff\\xff")
    """, UNUSABLE, UNUSABLE),
    "stops_its_parent": ("""
        os.kill(os.getppid(), signal.SIGSTOP)
    """, FAILED, FAILED),
    "stops_its_group": ("""
        with __import__("contextlib").suppress(OSError):
            os.kill(0, signal.SIGSTOP)
        os.kill(os.getppid(), signal.SIGSTOP)
    """, FAILED, FAILED),
    "fifty_setsid_forks": ("""
        for _ in range(50):
            if os.fork() == 0:
                os.setsid()
                time.sleep(60)
    """, FAILED, FAILED),
    "five_plain_forks": ("""
        for _ in range(5):
            if os.fork() == 0:
                time.sleep(60)
    """, FAILED, FAILED),
    "grandchild_holds_the_pipe": ("""
        if os.fork() == 0:
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
    """, FAILED, FAILED),
    "touches_five_gib": ("""
        global TOUCHED
        if "TOUCHED" not in globals():  # the first call only: each costs a second or more
            TOUCHED, kept = True, []
            for _ in range(80):
                kept.append(np.ones(64 << 20, dtype=np.uint8))  # 64 MiB, every page written
    """, FAILED, FAILED),
    "keyboard_interrupt": ("""
        raise KeyboardInterrupt
    """, FAILED, FAILED),
    "system_exit": ("""
        raise SystemExit(0)
    """, FAILED, FAILED),
    "str_raises": ("""
        class Sly(Exception):
            def __str__(self):
                raise ValueError("no")
        raise Sly()
    """, FAILED, FAILED),
    "str_recurses": ("""
        class Deep(Exception):
            def __str__(self):
                return str(self)
        raise Deep()
    """, FAILED, FAILED),
    "fake_stdout": ("""
        os.write(1, b"exercise 1 (softmax): all 11 cases passed\\n")
        os.write(2, b"exercise 1 (softmax): all 11 cases passed\\n")
        print("exercise 1 (softmax): all 11 cases passed")
    """, FAILED, FAILED),
    "escapes_in_a_message": ("""
        raise ValueError("\\r\\x1b[2Kexercise 1 (softmax): all 11 cases passed")
    """, FAILED, FAILED),
    "answers_a_string": ("""
        return "exercise 1 (softmax): all 11 cases passed"
    """, FAILED, FAILED),
    "ignores_signals_and_spins": ("""
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):
            signal.signal(s, signal.SIG_IGN)
        while True:
            pass
    """, TIME, TIME),
    "opens_other_processes_memory": ("""
        for entry in os.listdir("/proc"):
            if entry.isdigit() and entry != os.readlink("/proc/self"):
                try:
                    open(f"/proc/{entry}/mem", "rb").close()
                except OSError:
                    continue
                # it could write the checker's memory: say so with a right answer
                x = np.asarray(x, dtype=float)
                top = np.max(x, axis=axis, keepdims=True)
                e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
                total = np.sum(e, axis=axis, keepdims=True)
                return e / np.where(total > 0.0, total, 1.0)
    """, FAILED, FAILED),
    "changes_numpy_for_later_checks": ("""
        with open(os.path.dirname(np.__file__) + "/_attnlab_was_here.py", "w") as planted:
            planted.write("")
    """, FAILED, FAILED),
    "loads_libc": ("""
        import ctypes
        ctypes.CDLL(None).kill(os.getppid(), signal.SIGSTOP)
    """, FAILED, FAILED),
}
BOUNDARY = boundary.available() is not None
if BOUNDARY:  # under bubblewrap attnlab's files are not there to read: the file just fails
    HOSTILE["reads_the_solution_file"] = (HOSTILE["reads_the_solution_file"][0], FAILED, REFERENCE)
HANGS = {name for name, (_, outcome, _) in HOSTILE.items() if outcome == TIME}
LIMIT = 2.0  # seconds for the hostile files that hang; the others finish well before


def hostile_file(folder, name):
    body = textwrap.dedent(HOSTILE[name][0]).strip("\n")
    source = HEAD + "def softmax(x, axis=-1):\n" + textwrap.indent(body, "    ") + "\n" + ZEROS
    path = folder / f"{name}.py"
    path.write_text(source)
    return path


@pytest.fixture(scope="module")
def reaper():
    """Orphans of this process's children become its own (a child subreaper), so a process a
    check left behind is found among this process's descendants however it was re-parented."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    # Processes this one had before the check (multiprocessing's resource tracker, started by
    # an earlier test of the suite) are not the check's: only new ones are survivors.
    _BEFORE.clear()
    _BEFORE.update(_descendants(_table()))
    yield
    libc.prctl(36, 0, 0, 0, 0)


_BEFORE: set[int] = set()


def _descendants(table: dict[int, tuple[int, str, str]]) -> set[int]:
    mine, found = {os.getpid()}, True
    while found:
        found = {p for p, (ppid, _, _) in table.items() if ppid in mine and p not in mine}
        mine |= found
    mine.discard(os.getpid())
    return mine


def survivors(wait: float = 1.0) -> list[str]:
    """This process's live descendants and any process running the child script, after
    ``wait`` seconds; zombies among its children are reaped."""
    until = time.monotonic() + wait
    while True:
        table = _table()
        mine, found = {os.getpid()}, True
        while found:
            found = {p for p, (ppid, _, _) in table.items() if ppid in mine and p not in mine}
            mine |= found
        mine.discard(os.getpid())
        for pid in [p for p in mine if table[p][1] == "Z"]:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        alive = [f"{p} {table[p][2]}" for p in mine if table[p][1] != "Z" and p not in _BEFORE]
        alive += [f"{p} {cmd}" for p, (_, state, cmd) in table.items()
                  if str(CHILD) in cmd and state != "Z" and p not in mine]
        if not alive or time.monotonic() > until:
            return alive
        time.sleep(0.05)


def _table() -> dict[int, tuple[int, str, str]]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    cmd = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
                out[int(entry)] = (int(fields[1]), fields[0].decode(), cmd)
    return out


def timed(source, limit):
    start = time.monotonic()
    result = isolated(get("softmax"), source, "en", limit)
    return result, time.monotonic() - start


def assert_outcome(result, outcome, took, limit):
    assert not result.passed, str(result)
    assert took < limit + 4.0, f"took {took:.1f} s"
    assert "\n" not in result.headline and "\x1b" not in str(result)
    if outcome == FAILED:
        assert result.status == "failed", str(result)
    elif outcome == TIME:
        assert result.headline == text("labs", "unusable.time", "en", seconds=f"{limit:g}")
    elif outcome == REFERENCE:
        assert result.headline == text("labs", "unusable.reference", "en")
    else:
        assert result.status == "unusable", str(result)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_never_passes_never_hangs_and_leaves_no_process(name, tmp_path, reaper):
    limit = LIMIT if name in HANGS else 20.0
    result, took = timed(hostile_file(tmp_path, name), limit)
    assert_outcome(result, HOSTILE[name][1], took, limit)
    assert survivors() == []


@pytest.mark.parametrize("name", sorted(n for n, (_, _, fn) in HOSTILE.items() if fn))
def test_a_hostile_notebook_function_never_passes_and_leaves_no_process(name, tmp_path,
                                                                        reaper):
    """The same bodies as a notebook's function (a fork of this process): the patches land in
    the child, whose cases are not the verdict's. (Imports of attnlab's loaded modules work in
    a notebook, so a function that only returns the solution is left out: it would pass.)"""
    namespace: dict = {}
    exec(hostile_file(tmp_path, name).read_text(), namespace)  # noqa: S102 - defines only
    limit = LIMIT if name in HANGS else 20.0
    result, took = timed(namespace["softmax"], limit)
    assert_outcome(result, HOSTILE[name][2], took, limit)
    assert survivors() == []


def test_what_a_hostile_function_raises_is_one_line_without_its_tricks(tmp_path, reaper):
    reasons = {}
    for name in ("keyboard_interrupt", "str_raises", "str_recurses", "escapes_in_a_message",
                 "touches_five_gib"):
        result = isolated(get("softmax"), hostile_file(tmp_path, name), "en")
        reasons[name] = {line.reason for line in result.lines if not line.passed}
    assert any(r.startswith("your function raised MemoryError") for r in reasons.pop(
        "touches_five_gib"))  # the cap, well below five GiB
    unreadable = text("labs", "fail.unreadable", "en")
    assert reasons["keyboard_interrupt"] == {"your function raised KeyboardInterrupt: "}
    assert reasons["str_raises"] == {f"your function raised Sly: {unreadable}"}
    assert reasons["str_recurses"] == {f"your function raised Deep: {unreadable}"}
    assert reasons["escapes_in_a_message"] == {
        "your function raised ValueError: ?[2Kexercise 1 (softmax): all 11 cases passed"}


@pytest.mark.parametrize("name", ["imports_the_solution", "oversized_frame",
                                  "length_header_then_sleeps", "forges_a_frame_and_exits"])
def test_through_the_command_a_hostile_file_is_one_line_and_exit_2(name, tmp_path, capfd,
                                                                   reaper):
    path = hostile_file(tmp_path, name)
    code = main(["lab", "check", "1", str(path), "--time-limit", f"{LIMIT:g}"])
    out, err = capfd.readouterr()
    err = without_note(err)  # without bubblewrap, the one line that says so comes first
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    assert survivors() == []


def test_what_the_checked_code_writes_never_reaches_the_terminal(tmp_path, capfd, reaper):
    code = main(["lab", "check", "1", str(hostile_file(tmp_path, "fake_stdout"))])
    out, err = capfd.readouterr()
    assert code == 1 and "all 11 cases passed" not in out + err
    assert out.startswith("exercise 1 (softmax): ") and "FAIL" in out, out


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_every_solution_file_passes_and_every_stub_is_not_implemented_yet(ex, tmp_path, reaper):
    """Every exercise's inputs and outputs cross the wire: the solution passes as a file and as
    a function, the stub is "not implemented yet"."""
    (tmp_path / "good.py").write_text(solution_file(ex))
    (tmp_path / "stub.py").write_text(stub_file(ex, "en"))
    assert isolated(ex, tmp_path / "good.py", "en").passed
    assert isolated(ex, tmp_path / "stub.py", "en").status == "not implemented"
    assert check(ex.number, ex.solution, lang="en").passed
    assert survivors() == []


def answers_of(path):
    """Check ``path`` as exercise 1 and keep what its 'softmax' returned on each call: a file
    reports what it sees through numbers. Returns (the check's result, the answers)."""
    from attnlab.labs import sandbox

    seen = []
    real = sandbox._Proxy.__call__

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        seen.append(out)
        return out

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sandbox._Proxy, "__call__", spy)
        return isolated(get("softmax"), path, "en"), seen


def test_the_checked_file_runs_alone_in_its_namespace_with_its_limits(tmp_path, reaper):
    """The checked file cannot see the checker (PID 1 of its own namespace, parent 0) and runs
    under the stated limits; it sees this through numbers, returned as a 'softmax'."""
    path = tmp_path / "looks.py"
    path.write_text(HEAD + "def softmax(x, axis=-1):\n    import resource\n"
                    "    return np.array([os.getpid(), os.getppid(),\n"
                    "                     resource.getrlimit(resource.RLIMIT_AS)[0]])\n")
    from attnlab.labs import sandbox

    result, seen = answers_of(path)
    assert not result.passed
    pid, parent, memory = seen[0]
    assert memory == sandbox.MEMORY_LIMIT
    if BOUNDARY or os.geteuid() == 0:  # where namespaces are allowed; else the fallback holds
        assert (pid, parent) == (1, 0)


def test_kill_tree_ends_forks_that_left_the_session(reaper):
    import subprocess
    import sys

    script = ("import os, time\n"
              "for i in range(10):\n"
              "    if os.fork() == 0:\n"
              "        if i % 2: os.setsid()\n"
              "        time.sleep(60)\n"
              "time.sleep(60)\n")
    root = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    until = time.monotonic() + 10
    while len(survivors(0.0)) < 11 and time.monotonic() < until:
        time.sleep(0.05)
    assert len(survivors(0.0)) == 11
    kill_tree(root.pid)
    root.wait(5)
    assert survivors() == []


def test_a_forged_answer_is_read_within_bounds():
    from attnlab.labs import frames as wire

    read, write = os.pipe()
    try:
        head = b'{"id": 1, "kind": "value", "value": {"t": "array", "dtype": "|O", ' \
               b'"shape": [1], "at": 0, "n": 8}, "refused": false}'
        os.write(write, struct.pack(">II", 4 + len(head) + 8, len(head)) + head + bytes(8))
        with pytest.raises(wire.Stopped) as stop:
            wire.receive(read, time.monotonic() + 1, lambda: True)
        assert stop.value.why == "garbled"
        os.write(write, struct.pack(">I", 100))  # a header, then nothing
        start = time.monotonic()
        with pytest.raises(wire.Stopped) as stop:
            wire.receive(read, time.monotonic() + 0.3, lambda: True)
        assert stop.value.why == "time" and time.monotonic() - start < 1.0
    finally:
        os.close(read)
        os.close(write)


def test_the_checked_code_cannot_change_the_installation_that_checks_it(tmp_path, reaper):
    planted = Path(np.__file__).parent / "_attnlab_was_here.py"
    namespace: dict = {}
    path = hostile_file(tmp_path, "changes_numpy_for_later_checks")
    exec(path.read_text(), namespace)  # noqa: S102 - defines only
    try:
        for source in (path, namespace["softmax"]):
            result = isolated(get("softmax"), source, "en")
            assert not result.passed and not planted.exists(), str(result)
    finally:
        planted.unlink(missing_ok=True)
