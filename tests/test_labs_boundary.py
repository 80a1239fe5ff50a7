"""The checker behind bubblewrap (issue 51): the files that walked around the audit hook, each
of which returns a right answer only when its trick worked, fail; nothing lands outside the
sandbox's /tmp; a classmate's file is neither changed nor run; where there is no bubblewrap,
``lab check`` says so in one line and ``lab grade`` refuses without ``--trust``."""

from __future__ import annotations

import shutil
import socket
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from lab_cli import lab
from test_labs_hostile import answers_of, reaper, survivors  # noqa: F401 - the fixture, by name

from attnlab.i18n import text
from attnlab.labs import boundary, get
from attnlab.labs.notebook import solution_file
from attnlab.labs.sandbox import PROCESS_LIMIT, isolated

BOUNDARY = boundary.available() is not None
needs_boundary = pytest.mark.skipif(not BOUNDARY, reason="no working bubblewrap here")
PACKAGES = [str(p) for p in boundary.packages()]  # every copy a learner could look for
SITE = str(boundary.site_folders()[0])
EXERCISES_DIR = Path(boundary.packages()[0]) / "labs" / "exercises"
RIGHT = """
    x = np.asarray(x, dtype=float)
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0.0, total, 1.0)
"""
SOLUTION = "labs/exercises/softmax/solution.py"

TRICKS = {  # name -> the body of softmax(x, axis=-1) before RIGHT: it returns zeros unless the
    # trick worked (then RIGHT, a pass, would show the boundary broken)
    "dir_fd_reads_the_solution": f"""
        for root in {PACKAGES!r}:
            try:
                folder = os.open(root, os.O_RDONLY)
                fd = os.open("{SOLUTION}", os.O_RDONLY, dir_fd=folder)
            except OSError:
                continue
            names = {{}}
            exec(os.read(fd, 1 << 20).decode(), names)
            return names["softmax"](x, axis)
        return np.zeros_like(np.asarray(x, dtype=float))
    """,
    "empties_the_hook_then_reads": f"""
        import gc
        for obj in gc.get_objects():  # the hook's lists and sets, wherever they are
            if isinstance(obj, (list, set)) and obj and all(isinstance(p, str) for p in obj):
                if any("attnlab" in p for p in obj):
                    obj.clear()
        for root in {PACKAGES!r}:
            try:
                names = {{}}
                exec(open(root + "/{SOLUTION}").read(), names)
                return names["softmax"](x, axis)
            except OSError:
                continue
        return np.zeros_like(np.asarray(x, dtype=float))
    """,
    "plants_a_pth_in_site_packages": f"""
        try:
            with open("{SITE}/zz_attnlab_planted.pth", "w") as planted:
                planted.write("import builtins\\n")
            with open("{SITE}/zz_attnlab_planted_mod.py", "w") as planted:
                planted.write("")
        except OSError:
            return np.zeros_like(np.asarray(x, dtype=float))
    """,
    "connects_to_the_loopback": """
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
        except OSError:
            return np.zeros_like(np.asarray(x, dtype=float))
    """,
    "forks_through_ctypes": f"""
        import ctypes
        libc, started = ctypes.CDLL(None), 0
        for _ in range(200):
            pid = libc.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            started += pid > 0
        if started <= {PROCESS_LIMIT}:
            return np.zeros_like(np.asarray(x, dtype=float))
    """,
}
PORT_LINE = "PORT = {port}\n"


def tricky_file(folder, name, port=0):
    body = textwrap.dedent(TRICKS[name]).strip("\n") + "\n" + textwrap.dedent(RIGHT).strip("\n")
    source = ("import os, socket, sys, time\nimport numpy as np\n" + PORT_LINE.format(port=port)
              + "\n\ndef softmax(x, axis=-1):\n" + textwrap.indent(body, "    ") + "\n")
    path = folder / f"{name}.py"
    path.write_text(source)
    return path


@needs_boundary
@pytest.mark.parametrize("name", ["dir_fd_reads_the_solution", "empties_the_hook_then_reads",
                                  "forks_through_ctypes"])
def test_a_trick_that_beat_the_hook_fails_behind_the_boundary(name, tmp_path, reaper):  # noqa: F811
    result = isolated(get("softmax"), tricky_file(tmp_path, name), "en")
    assert result.status == "failed", str(result)
    assert survivors() == []


@needs_boundary
def test_a_pth_file_cannot_be_planted_in_site_packages(tmp_path, reaper):  # noqa: F811
    from pathlib import Path

    result = isolated(get("softmax"), tricky_file(tmp_path, "plants_a_pth_in_site_packages"),
                      "en")
    assert result.status == "failed", str(result)
    assert not list(Path(SITE).glob("zz_attnlab_planted*"))


@needs_boundary
def test_a_socket_to_the_loopback_reaches_nothing(tmp_path, reaper):  # noqa: F811
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        listening.setblocking(False)
        path = tricky_file(tmp_path, "connects_to_the_loopback", listening.getsockname()[1])
        result = isolated(get("softmax"), path, "en")
        assert result.status == "failed", str(result)
        with pytest.raises(BlockingIOError):
            listening.accept()  # nobody came


@needs_boundary
def test_what_the_code_sees_reads_and_writes(tmp_path, reaper):  # noqa: F811
    """The file reports through its 'softmax': /etc/passwd is readable (harmless), /tmp is
    writable, every other place it tries is not, and nothing it wrote is on the disk after."""
    from pathlib import Path

    import attnlab

    places = [str(tmp_path), str(Path.home()), SITE, str(Path(np.__file__).parent),
              str(Path(attnlab.__file__).parent), "/var/tmp", "/dev/shm", "/dev", "/etc",
              str(Path(attnlab.__file__).parents[2])]
    path = tmp_path / "looks.py"
    path.write_text("import os\nimport numpy as np\n\n\ndef softmax(x, axis=-1):\n"
                    "    seen = [len(open('/etc/passwd').read()) > 0, os.getuid()]\n"
                    "    for place in ['/tmp'] + " + repr(places) + ":\n"
                    "        try:\n"
                    "            with open(place + '/attnlab_was_here', 'w') as f:\n"
                    "                f.write('x')\n"
                    "            seen.append(1)\n"
                    "        except OSError:\n"
                    "            seen.append(0)\n"
                    "    return np.array(seen)\n")
    result, seen = answers_of(path)
    assert result.status == "failed"
    passwd, uid, scratch, *elsewhere = seen[0].tolist()
    assert (passwd, uid, scratch) == (1, 65534, 1)
    assert elsewhere == [0] * len(places), dict(zip(places, elsewhere, strict=True))
    assert not [p for p in ["/tmp", *places] if Path(p, "attnlab_was_here").exists()]


@needs_boundary
def test_another_checkout_outside_home_is_not_there(tmp_path):
    """A second copy of attnlab's sources that nothing on ``sys.path`` names (a clone in
    /var/tmp, say) is not in the sandbox at all: only the system folders are."""
    other = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        solution = other / "src" / "attnlab" / "labs" / "exercises" / "softmax" / "solution.py"
        solution.parent.mkdir(parents=True)
        solution.write_text((EXERCISES_DIR / "softmax" / "solution.py").read_text())
        assert solution.exists()
        path = tmp_path / "reads.py"
        path.write_text(f"exec(open({str(solution)!r}).read())\n")
        result = isolated(get("softmax"), path, "en")
        assert result.status != "passed", str(result)
    finally:
        shutil.rmtree(other)


CLASSMATE = """
    import glob
    here = os.path.dirname(os.path.abspath(__file__))
    for other in glob.glob(os.path.join(here, "..", "*", "softmax.py")):
        if os.path.dirname(os.path.abspath(other)) == here:
            continue
        try:
            names = {}
            exec(open(other).read(), names)  # a classmate's right answer, run as mine
            with open(other, "w") as theirs:  # and theirs destroyed
                theirs.write("def softmax(x, axis=-1):\\n    return 0\\n")
            return names["softmax"](x, axis)
        except OSError:
            continue
    return np.zeros_like(np.asarray(x, dtype=float))
"""


@needs_boundary
def test_in_a_grade_a_learner_cannot_run_or_rewrite_a_classmates_file(tmp_path, reaper):  # noqa: F811
    root = tmp_path / "class"
    (root / "aaa").mkdir(parents=True)
    (root / "bob").mkdir()
    right = solution_file(get("softmax"))
    (root / "bob" / "softmax.py").write_text(right)
    (root / "aaa" / "softmax.py").write_text(
        "import os\nimport numpy as np\n\n\ndef softmax(x, axis=-1):\n"
        + textwrap.indent(textwrap.dedent(CLASSMATE).strip("\n"), "    ") + "\n")
    code, _, _ = lab("grade", root, "--out", tmp_path / "sheet", "--lang", "en")
    assert code == 0
    rows = (tmp_path / "sheet" / "sheet.csv").read_text().splitlines()
    assert rows[1].startswith("aaa,1,softmax,failed,"), rows
    assert rows[2].startswith("bob,1,softmax,passed,13,13"), rows  # 11 cases, 2 grade-only
    assert (root / "bob" / "softmax.py").read_text() == right


def test_without_bubblewrap_check_says_so_in_one_line_and_grade_needs_trust(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv(boundary.PROGRAM_ENV, "")
    assert boundary.available() is None
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "softmax.py").write_text(solution_file(get("softmax")))
    code, out, err = lab("check", "1", tmp_path / "ana" / "softmax.py", "--lang", "en")
    assert code == 0 and out.startswith("exercise 1 (softmax): all 11 cases passed")
    assert err == text("labs", "unusable.no_boundary", "en") + "\n"
    code, out, err = lab("grade", tmp_path, "--lang", "en", "--out", tmp_path / "sheet")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert text("labs", "grade.no_boundary", "en", folder=tmp_path) in err
    assert not (tmp_path / "sheet").exists()
    code, out, _ = lab("grade", tmp_path, "--lang", "en", "--out", tmp_path / "sheet", "--trust")
    assert code == 0 and (tmp_path / "sheet" / "sheet.csv").is_file()


@needs_boundary
def test_the_sandbox_command_hides_attnlab_and_binds_the_harness_and_file_back(tmp_path):
    from attnlab.labs.sandbox import CHILD

    learner = tmp_path / "ana" / "softmax.py"
    learner.parent.mkdir()
    learner.write_text("")
    argv = boundary.command("bwrap", CHILD, learner, (tmp_path,), 9, ["3", "4"])
    pairs = list(zip(argv, argv[1:], strict=False))
    hidden = {b for a, b in pairs if a == "--tmpfs"}
    bound = {b for a, b in pairs if a == "--ro-bind"}
    assert "/tmp" in hidden and ("--size", str(boundary.SCRATCH_LIMIT)) in pairs
    def under(path, folders):
        return any(path == f or path.startswith(f + "/") for f in folders)

    for package in PACKAGES:  # each copy of attnlab out of sight: under a tmpfs of its own or
        # its checkout's, or under no folder bound in (then only the harness is bound back)
        assert under(package, hidden) or not any(under(package, [b]) for b in bound), package
        inside = {b for b in bound if under(b, [package])}
        assert inside <= {str(CHILD.resolve())}, inside
    assert not under(str(learner.parent.resolve()), bound - {str(learner.resolve())})
    assert str(CHILD.resolve()) in bound and str(learner.resolve()) in bound
    assert argv.index("/") > max(i for i, a in enumerate(argv) if a == "--ro-bind")  # ro last
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--disable-userns"):
        assert flag in argv
    assert ("--uid", "65534") in pairs and ("--seccomp", "9") in pairs
