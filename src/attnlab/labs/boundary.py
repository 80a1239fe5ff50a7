"""The operating-system boundary around a checked file: bubblewrap, where it works.

On Linux with ``bwrap`` (Debian's ``bubblewrap``, the sandbox Flatpak uses) on ``PATH``, a
learner's file runs in namespaces of its own, built by :func:`command`::

    bwrap --unshare-all --unshare-user --uid 65534 --gid 65534 --disable-userns
          --die-with-parent --new-session --cap-drop ALL --as-pid-1
          --ro-bind /usr /usr --symlink usr/bin /bin ... --ro-bind /etc /etc
          --dev /dev --proc /proc --size 64M --tmpfs /tmp
          --ro-bind <kept> <kept> ... --tmpfs <hidden inside a kept one> ...
          --remount-ro <hidden> ... --remount-ro /dev --seccomp FD --chdir /tmp
          --clearenv --setenv ... PYTHON -I -S -B child.py REQ ANS

- **who**: user, PID, network, IPC, UTS and cgroup namespaces of its own (no network but a
  loopback nobody listens on), uid and gid 65534, no capabilities, no further user namespace,
  PID 1 of its namespace (it sees no other process), killed when the checker dies;
- **what it sees**: the system folders (:data:`SYSTEM`: ``/usr``, ``/etc`` and the library
  folders) read-only, and nothing else of the machine but what the check needs, bound
  read-only: the Python installation, the site-packages that hold NumPy, the harness
  (``labs/child.py``, no solution) and the learner's one file. Home folders, other checkouts,
  the class folder and other learners' files are not there at all; a copy of attnlab's package
  inside a visible folder (every copy that ``sys.path`` or a ``.pth`` file names, with its
  source checkout) is an empty read-only tmpfs;
- **where it writes**: a fresh ``/tmp`` of at most :data:`SCRATCH_LIMIT` bytes (a tmpfs, gone
  with the sandbox); ``/dev`` is read-only;
- **limits**: the launching process sets memory, CPU time, file size, processes and core dumps
  (``resource`` in ``preexec_fn``), which bwrap and the child inherit; a seccomp filter
  refuses every new process (``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``;
  ``clone3`` answers ENOSYS so threads fall back to ``clone``), since ``RLIMIT_NPROC`` does
  not bind a checker run as root; the wall-clock limit is the parent's deadline.

Where there is no such tool (macOS, Windows, a container without user namespaces) or the env
var ``ATTNLAB_BWRAP`` is set empty, :func:`available` is None and the checker runs the file in
the older contained child, which is not a boundary. ``ATTNLAB_BWRAP=/path/to/bwrap`` names the
program. Left out: a cgroup (memory is bounded by address space, not resident pages), and a
copy of attnlab inside the system folders that nothing on ``sys.path`` names.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

PROGRAM_ENV = "ATTNLAB_BWRAP"  # "" -> no boundary; a path -> that program; unset -> PATH
SCRATCH = "/tmp"  # the one writable folder inside, where the child starts
SCRATCH_LIMIT = 64 << 20  # bytes of the scratch tmpfs
NOBODY = "65534"
# What is visible inside besides what a check needs: the system's programs, libraries and
# settings. Everything else (home folders, other checkouts of attnlab, other learners' work,
# /opt, /srv, /var ...) is not there at all.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
_ENV = {"HOME": SCRATCH, "TMPDIR": SCRATCH, "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{SCRATCH}/matplotlib", "PATH": "/usr/bin:/bin"}

# seccomp: a classic BPF program over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}
_LD, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|..., BPF_RET
_ALLOW, _ERRNO, _CLONE_THREAD = 0x7FFF0000, 0x00050000, 0x00010000
_ARCHES = {  # machine -> (AUDIT_ARCH_*, syscall numbers of what starts a process)
    "x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "clone3": 435}),
    "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435}),
}


def available() -> str | None:
    """The bwrap program to run checks under, or None where it is missing or cannot build its
    namespaces here (tried once per program, with the same flags a check uses)."""
    if not sys.platform.startswith("linux"):
        return None
    chosen = os.environ.get(PROGRAM_ENV)
    if chosen == "":
        return None
    found = shutil.which(chosen or "bwrap")
    return found if found is not None and _works(found) else None


@functools.cache
def _works(program: str) -> bool:
    try:
        done = subprocess.run([program, *_namespaces(), "--ro-bind", "/", "/", "true"],  # noqa: S603
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _namespaces() -> list[str]:
    return ["--unshare-all", "--unshare-user", "--uid", NOBODY, "--gid", NOBODY,
            "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--as-pid-1"]


def command(program: str, harness: Path, file: Path, hide: Iterable[Path], seccomp_fd: int | None,
            args: list[str]) -> list[str]:
    """The argv that runs ``python -I -S -B harness *args`` under ``program`` (bwrap) with
    ``file`` (the learner's) the one file visible in its folder, ``hide`` (the class folder,
    say) and attnlab's copies out of sight."""
    python = os.path.realpath(sys.executable)
    hidden = {_real(p) for p in [*hidden_folders(), Path.home(), file.parent, *hide]}
    kept = {_real(p) for p in [Path(sys.base_prefix), Path(sys.prefix), Path(python).parent,
                               *site_folders()]}
    marks = {p: "hide" for p in hidden if p != "/" and os.path.isdir(p)}
    marks.update({p: "keep" for p in kept if p != "/" and os.path.isdir(p)})
    marks.update({_real(harness): "file", _real(file): "file", SCRATCH: "scratch"})
    argv = [program, *_namespaces(), *_system(), "--dev", "/dev", "--proc", "/proc"]
    made: dict[str, str] = {p: "keep" for p in SYSTEM if os.path.isdir(p)}
    for path in sorted(marks, key=lambda p: (p.count("/"), p)):
        kind, above = marks[path], _nearest(path, made)
        if kind == "hide" and above in (None, "hide"):
            continue  # already out of sight: outside the system folders, or under a hidden one
        if kind in ("keep", "file") and above in ("keep", "file"):
            continue  # already visible, read-only
        made[path] = kind
        if kind == "scratch":
            argv += ["--size", str(SCRATCH_LIMIT), "--tmpfs", path]
        elif kind == "hide":
            argv += ["--tmpfs", path]
        else:
            argv += ["--ro-bind", path, path]
    for path, kind in made.items():  # after every bind inside them: nothing writable there
        if kind == "hide":
            argv += ["--remount-ro", path]
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]  # the folders made for the binds too
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", SCRATCH, "--clearenv"]
    for key, value in _ENV.items():
        argv += ["--setenv", key, value]
    return [*argv, python, "-I", "-S", "-B", _real(harness), *args]


def _system() -> list[str]:
    """The system folders, read-only (a folder that is a link, as ``/bin`` -> ``usr/bin`` on a
    merged ``/usr``, made the same link): everything else on the machine is out of sight."""
    argv: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    return argv


def _real(path: Path | str) -> str:
    return os.path.realpath(os.fspath(path))


def _nearest(path: str, made: dict[str, str]) -> str | None:
    """The kind of the deepest mount already made above ``path``."""
    parent = os.path.dirname(path)
    while True:
        if parent in made:
            return made[parent]
        if parent in ("/", ""):
            return None
        parent = os.path.dirname(parent)


def packages() -> list[Path]:
    """Every copy of attnlab's package this Python could find: the one running, and those that
    ``sys.path``, the site folders or a ``.pth`` file in them (an editable install) name."""
    import attnlab

    found = {Path(attnlab.__file__).resolve().parent}
    for entry in _path_entries():
        candidate = entry / "attnlab"
        if (candidate / "__init__.py").is_file():
            found.add(candidate.resolve())
    return sorted(found)


def hidden_folders() -> list[Path]:
    """:func:`packages`, and the source checkout each sits in (a ``src/`` folder beside a
    ``pyproject.toml``: its tests, docs and git objects hold the solutions too)."""
    out = set(packages())
    for package in packages():
        if package.parent.name == "src" and (package.parent.parent / "pyproject.toml").is_file():
            out.add(package.parent.parent)
    return sorted(out)


def site_folders() -> list[Path]:
    """The site-packages folders that hold NumPy (and what a learner may import beside it)."""
    import numpy

    return [Path(numpy.__file__).resolve().parents[1]]


def _path_entries() -> list[Path]:
    """``sys.path``, the site folders, and every folder a ``.pth`` file in them names."""
    import site

    roots = [Path(p) for p in sys.path if p]
    try:
        roots += [Path(p) for p in site.getsitepackages()]
    except AttributeError:  # a virtualenv's old site.py
        pass
    out = list(roots)
    for root in roots:
        try:
            pths = sorted(root.glob("*.pth"))
        except OSError:
            continue
        for pth in pths:
            try:
                lines = pth.read_text(errors="replace").splitlines()
            except OSError:
                continue
            out += [Path(line.strip()) for line in lines
                    if line.strip() and not line.startswith(("#", "import"))]
    return [p for p in out if p.is_dir()]


def seccomp_program() -> bytes | None:
    """The filter that refuses starting a process (threads are allowed), or None on a machine
    whose syscall numbers are not written here."""
    machine = _ARCHES.get(platform.machine())
    if machine is None:
        return None
    arch, nr = machine
    eagain, enosys = _ERRNO | errno.EAGAIN, _ERRNO | errno.ENOSYS

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    body = [op(_LD, 4), op(_JEQ, arch, 1, 0), op(_RET, enosys), op(_LD, 0)]  # another ABI: no
    if "fork" in nr:  # x86_64: the x32 ABI's numbers have bit 30 set
        body += [op(_JGE, 0x40000000, 0, 1), op(_RET, enosys)]
    for name in ("fork", "vfork"):
        if name in nr:
            body += [op(_JEQ, nr[name], 0, 1), op(_RET, eagain)]
    body += [op(_JEQ, nr["clone3"], 0, 1), op(_RET, enosys),  # glibc falls back to clone
             op(_JEQ, nr["clone"], 0, 4), op(_LD, 16),  # clone's flags: args[0], low half
             op(_JSET, _CLONE_THREAD, 0, 1), op(_RET, _ALLOW), op(_RET, eagain),
             op(_RET, _ALLOW)]
    return b"".join(body)


def limiter(limits: dict[str, tuple[int, int]]) -> Callable[[], None]:
    """A ``preexec_fn`` that sets ``limits`` (resource name -> (soft, hard)) in the launched
    process, each lowered to the current hard limit where that is lower. Everything is settled
    here, so the function run between fork and exec only calls ``setrlimit``."""
    import resource

    settled = []
    for name, (soft, hard) in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, now = resource.getrlimit(which)
        if now != resource.RLIM_INFINITY:
            soft, hard = min(soft, now), min(hard, now)
        settled.append((which, (soft, hard)))

    def apply() -> None:
        for which, pair in settled:
            resource.setrlimit(which, pair)

    return apply
