"""The checked code's side of a lab check: a small server that calls the learner's function.

Runs in the child process and needs the standard library and NumPy only, never attnlab: for a
file it is started as a script in a fresh interpreter (``python -I -S child.py REQ ANS``), for
a notebook's function it is called after a fork. It never sees a case, a tolerance or the
solution: the parent sends calls (a pickle of its own, trusted data), and each answer is the
function's raw output in the frame that :mod:`attnlab.labs.frames` reads::

    frame  = length (4 bytes, big-endian) + header length (4 bytes) + JSON header + blob
    header = {"id": n, "kind": "ready" | "value" | "raised" | "syntax" | "import" | ..., ...}
    value  = None | bool | int | float | {"t": "list" | "tuple", "v": [...]}
           | {"t": "dict", "v": {str: value}} | {"t": "opaque", "type": name}
           | {"t": "array", "dtype": "<f8", "shape": [...], "at": offset, "n": bytes}

Under bubblewrap (``setup["boundary"]``, :mod:`attnlab.labs.boundary`) the operating system is
the boundary: the limits are set before bwrap starts, attnlab is not in the sandbox, and this
script only sends the standard streams to /dev/null and closes every descriptor but its two
pipes (what the learner's code prints never reaches the answers). An import is just an import.

Without it (not a boundary), :func:`contain` puts this process in a PID namespace of its own
where Linux allows (its processes die with it and cannot see the checker), sets resource
limits, sends the standard streams to /dev/null and adds an audit hook that refuses attnlab's
modules and files, new processes, signals to other processes, the /proc files of other
processes (their memory) and loading native libraries.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import sys
import types

REFUSED_REFERENCE = "attnlab's reference is not available inside the check"
REFUSED_PROCESS = "the checked code may not start, signal or look into other processes"
REFUSED_NATIVE = "the checked code may not load native libraries"
REFUSED_WRITE = "the checked code may not change the Python installation that checks it"
PROCESS_EVENTS = frozenset({"os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn",
                            "os.system", "subprocess.Popen", "os.startfile", "pty.spawn"})
PATH_EVENTS = {  # event -> how many of its first arguments are paths
    "open": 1, "os.listdir": 1, "os.scandir": 1, "os.remove": 1, "os.rmdir": 1, "os.truncate": 1,
    "os.chmod": 1, "os.chown": 1, "os.utime": 1, "os.link": 2, "os.symlink": 2, "os.rename": 2,
    "os.replace": 2, "shutil.copyfile": 2, "shutil.copytree": 2}
CLONE_NEWUSER, CLONE_NEWPID, PR_SET_PDEATHSIG = 0x10000000, 0x20000000, 1
MAX_NODES, MAX_DEPTH, MAX_TEXT, MAX_BLOB = 100_000, 32, 10_000, 60 << 20  # the frame's bound


def main(argv: list[str]) -> int:
    """The fresh interpreter's entry: read the parent's setup, contain, load the file, serve."""
    req, ans = int(argv[1]), int(argv[2])
    setup = _read(req)
    if setup is None:
        return 0
    bounded = setup.get("boundary") is True
    if bounded:
        _quiet(req, ans)
    else:
        contain(req, ans, setup["limits"], setup["protect"], namespace=True)
    sys.path.insert(0, setup["numpy"])
    import numpy  # noqa: F401 - before the learner's code, so a patched import cannot stop it

    if bounded:
        state = {"reference": False}
    else:
        state = _guard(setup["protect"])
        _limit(setup["limits"])
    module = types.ModuleType(setup["module"])
    module.__file__ = setup["filename"]
    sys.modules[setup["module"]] = module
    names = module.__dict__
    try:
        code = compile(setup["source"], setup["filename"], "exec")
    except SyntaxError as err:
        _write(ans, {"id": 0, "kind": "syntax", "line": err.lineno or 0, "message": str(err.msg)},
               b"", state)
        return 0
    try:
        exec(code, names)  # noqa: S102 - the learner's file, in the contained child
    except BaseException as err:  # noqa: BLE001 - anything the learner's module does
        _reference(err, state)
        _write(ans, {"id": 0, "kind": "import", **_described(err)}, b"", state)
        return 0
    if not callable(names.get(setup["function"])):
        _write(ans, {"id": 0, "kind": "no_function"}, b"", state)
        return 0
    _write(ans, {"id": 0, "kind": "ready"}, b"", state)
    serve(names, req, ans, state)
    return 0


def forked(fn: object, name: str, req: int, ans: int, limits: dict, protect: list[str]) -> None:
    """A forked child's life (a notebook's function): contain, then serve until the parent is
    done. No namespace: the function lives in the kernel's memory, which this fork shares."""
    contain(req, ans, limits, protect, namespace=False)
    state = _guard(protect)
    _limit(limits)
    _write(ans, {"id": 0, "kind": "ready"}, b"", state)
    serve({name: fn}, req, ans, state)


def serve(names: dict, req: int, ans: int, state: dict) -> None:
    """Answer each call the parent sends with the raw output, until the parent closes."""
    import numpy as np

    while (call := _read(req)) is not None:
        number, name, args, kwargs = call
        try:
            with np.errstate(all="ignore"):  # as the checker always ran it: no warnings
                out = names[name](*args, **kwargs)
        except BaseException as err:  # noqa: BLE001 - KeyboardInterrupt and SystemExit too
            _reference(err, state)
            _write(ans, {"id": number, "kind": "raised", **_described(err)}, b"", state)
            continue
        blob = bytearray()
        try:
            value = _encoded(out, blob, [0], 0)
        except BaseException:  # noqa: BLE001 - an output that cannot be described
            value, blob = {"t": "opaque", "type": _type_name(out)}, bytearray()
        _write(ans, {"id": number, "kind": "value", "value": value}, bytes(blob), state)


def contain(req: int, ans: int, limits: dict, protect: list[str], namespace: bool) -> None:
    """Cut the child off from the checker before the learner's code runs."""
    import resource
    import signal

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    libc = _libc()
    if libc is not None:  # die with the parent, whatever the learner's code does to signals
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != limits["parent"]:
        os._exit(0)  # the checker is gone already
    if namespace and libc is not None and _unshared(libc):
        pid = os.fork()  # its child is PID 1 of a namespace of its own: it sees no checker
        if pid:
            os.close(req)
            os.close(ans)
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status):
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
                os.kill(os.getpid(), os.WTERMSIG(status))
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _quiet(req, ans)


def _quiet(req: int, ans: int) -> None:
    """Standard streams to /dev/null, every other descriptor but the two pipes closed; the
    streams' Python objects then write to the new descriptors (a notebook's kernel had its
    own), so a print, a flush or 5 KB of output is harmless and never reaches the answers."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # what the learner's code writes never reaches the terminal
        os.dup2(null, fd)
    os.close(null)
    keep = sorted({req, ans})
    os.closerange(3, keep[0])
    os.closerange(keep[0] + 1, keep[-1])
    os.closerange(keep[-1] + 1, min(os.sysconf("SC_OPEN_MAX"), 1 << 20))
    sys.stdout = open(1, "w", errors="replace", closefd=False)  # noqa: SIM115 - the child's life
    sys.stderr = open(2, "w", errors="replace", closefd=False)  # noqa: SIM115


def _unshared(libc: object) -> bool:
    flags = CLONE_NEWPID if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWPID
    try:
        return libc.unshare(flags) == 0
    except (AttributeError, OSError):
        return False


def _libc() -> object:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _limit(limits: dict) -> None:
    """Memory, CPU seconds, processes and file size, each where the system enforces it."""
    import resource

    wanted = {"RLIMIT_AS": limits["memory"], "RLIMIT_CPU": limits["cpu"],
              "RLIMIT_NPROC": limits["processes"], "RLIMIT_FSIZE": limits["file"]}
    for name, value in wanted.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        if name == "RLIMIT_AS" and limits.get("memory_on_top"):
            value += _address_space()
        try:
            _, hard = resource.getrlimit(which)
            top = value + 1 if name == "RLIMIT_CPU" else value
            if hard != resource.RLIM_INFINITY:
                value, top = min(value, hard), min(top, hard)
            resource.setrlimit(which, (value, top))
        except (OSError, ValueError):
            pass


def _address_space() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _guard(protect: list[str]) -> dict:
    """The audit hook, which cannot be removed: attnlab stays out of reach of the checked code,
    and so do other processes and the Python installation that checks it."""
    import numpy

    state = {"reference": False}
    roots = [os.path.realpath(p) for p in protect]
    installed = [os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                 os.path.dirname(os.path.dirname(numpy.__file__))}]
    me = os.getpid()
    try:
        own = os.readlink("/proc/self")  # this process's number where /proc is mounted
    except OSError:
        own = ""
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def hook(event: str, args: tuple) -> None:
        if event == "import":
            name = args[0] if args and isinstance(args[0], str) else ""
            if name == "attnlab" or name.startswith("attnlab."):
                state["reference"] = True
                raise ImportError(REFUSED_REFERENCE)
        elif event in PROCESS_EVENTS or (event in ("os.kill", "os.killpg")
                                          and (event == "os.killpg" or args[0] != me)):
            raise PermissionError(REFUSED_PROCESS)
        elif event.startswith("ctypes.dl"):
            raise PermissionError(REFUSED_NATIVE)
        elif event in PATH_EVENTS:
            paths = [p for p in map(_resolved, args[:PATH_EVENTS[event]]) if p]
            if any(_inside(p, roots) for p in paths):
                state["reference"] = True
                raise PermissionError(REFUSED_REFERENCE)
            if event == "open":
                parts = paths[0].split(os.sep) if paths else []
                if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() \
                        and parts[2] != own:  # another process's files: its memory, say
                    raise PermissionError(REFUSED_PROCESS)
                flags = args[2] if len(args) > 2 and type(args[2]) is int else 0
                changes = flags & writing or (isinstance(args[1], str) and
                                              any(c in args[1] for c in "wax+"))
            else:
                changes = event not in ("os.listdir", "os.scandir")
            if changes and any(_inside(p, installed) for p in paths):
                raise PermissionError(REFUSED_WRITE)

    sys.addaudithook(hook)
    return state


def _resolved(arg: object) -> str:
    """A path argument as a real path; "" for a file descriptor or what is not a path."""
    if not isinstance(arg, str | bytes | os.PathLike):
        return ""
    try:
        return os.path.realpath(os.fsdecode(arg))
    except (TypeError, ValueError):
        return ""


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _encoded(x: object, blob: bytearray, nodes: list[int], depth: int) -> object:
    """``x`` as a header value, its arrays' bytes appended to ``blob``."""
    import numpy as np

    nodes[0] += 1
    if nodes[0] > MAX_NODES or depth > MAX_DEPTH:
        raise ValueError("too big")
    kind = type(x)
    if x is None or kind in (bool, int, float):
        return x
    if kind is str:
        return x[:MAX_TEXT]
    if isinstance(x, np.generic | np.ndarray):
        a = np.asarray(x)
        if a.dtype.kind not in "biufc":
            a = a.astype(np.float64)  # an object array of numbers; else: not describable
        at = len(blob)
        if at + a.nbytes > MAX_BLOB:
            raise ValueError("too big")
        blob += np.ascontiguousarray(a).tobytes()
        return {"t": "array", "dtype": a.dtype.str, "shape": list(a.shape), "at": at,
                "n": len(blob) - at, "scalar": isinstance(x, np.generic)}
    if isinstance(x, list | tuple):
        return {"t": "list" if isinstance(x, list) else "tuple",
                "v": [_encoded(v, blob, nodes, depth + 1) for v in x]}
    if isinstance(x, dict) and all(type(k) is str for k in x):
        return {"t": "dict", "v": {k: _encoded(v, blob, nodes, depth + 1) for k, v in x.items()}}
    if isinstance(x, bool | int | float):
        return (bool if isinstance(x, bool) else int if isinstance(x, int) else float)(x)
    return {"t": "opaque", "type": _type_name(x)}


def _reference(err: BaseException, state: dict) -> None:
    """Under the boundary attnlab is simply not there: an import of it that fails is said to be
    a use of the reference, as the hook says it (a learner's own ``refused`` only hurts them)."""
    try:
        name = getattr(err, "name", None) if isinstance(err, ImportError) else None
        if type(name) is str and name.split(".")[0] == "attnlab":
            state["reference"] = True
    except BaseException:  # noqa: BLE001, S110 - the learner's exception may do anything
        pass


def _described(err: BaseException) -> dict:
    """What the parent says of an exception: its type's name and its message's first line, read
    defensively (a ``__str__`` that raises or recurses gives a placeholder)."""
    try:
        message = str(err)
        if type(message) is not str:
            raise TypeError
        line = (message.strip().splitlines() or [""])[0][:160]
        unreadable = False
    except BaseException:  # noqa: BLE001 - the learner's __str__ may do anything
        line, unreadable = "", True
    try:
        is_stub = isinstance(err, NotImplementedError)
    except BaseException:  # noqa: BLE001
        is_stub = False
    return {"error": _type_name(err), "message": line, "unreadable": unreadable,
            "not_implemented": is_stub}


def _type_name(x: object) -> str:
    try:
        name = type(x).__name__
        return name[:60] if type(name) is str else "object"
    except BaseException:  # noqa: BLE001
        return "object"


def _read(fd: int) -> object:
    """The parent's next message (a pickle of trusted data), or None when it has closed."""
    head = _exactly(fd, 4)
    if head is None:
        return None
    body = _exactly(fd, struct.unpack(">I", head)[0])
    return None if body is None else pickle.loads(body)  # noqa: S301 - the parent's own data


def _exactly(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except InterruptedError:
            continue
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write(fd: int, header: dict, blob: bytes, state: dict) -> None:
    header["refused"] = state["reference"]
    head = json.dumps(header).encode()
    frame = struct.pack(">II", 4 + len(head) + len(blob), len(head)) + head + blob
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view):]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
