"""The allocator setting of the ``attnlab`` program: a large tensor freed and allocated
again costs no new page faults, in the process and in the children it starts.

The setting lives in the command-line entry point (``attnlab.cli.process``), not in
library code; children get it through glibc's environment variables.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attnlab.cli.process import MALLOC_ENV, configure_process

# Page faults (ru_minflt) of touching a fresh 64 MiB tensor, five times over, counted (not
# timed) once with glibc's defaults and then in five more rounds after SWITCH. With the
# setting the heap grows until the tensor fits in freed memory (more than once when a small
# block lands in the freed chunk, which depends on what else the process has allocated), and
# from then on a round costs no faults: the fewest faults of those rounds is what is compared.
# With glibc's defaults every round faults in every tensor again.
_SCRIPT = """
import resource, sys, torch
from attnlab.cli.process import reuse_freed_memory  # imported before counting: imports allocate

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        torch.ones(16 * 2**20)  # 64 MiB, written so every page is touched, then freed
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults()
default = faults()
took = {switch}
print(default, min(faults() for _ in range(5)), took)
"""
PAGES = 64 * 2**20 // 4096  # of one tensor
_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")


def _counts(switch: str, env: dict[str, str]) -> tuple[int, int, bool]:
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(switch=switch)],
                         capture_output=True, text=True, check=True, env=env).stdout.split()
    return int(out[0]), int(out[1]), out[2] == "True"


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in MALLOC_ENV}


@_linux
def test_the_switch_stops_page_faults_of_freed_large_tensors():
    default, reused, took = _counts("reuse_freed_memory()", _clean_env())
    if not took:
        pytest.skip("this C library has no mallopt (not glibc)")
    assert default > 4 * PAGES  # each fresh mmap faults in (most of) its pages again
    assert reused <= PAGES  # the heap hands the same pages back (at most one more growth)


@_linux
def test_children_get_the_setting_through_the_environment():
    # A worker process that never calls mallopt, started with what configure_process
    # exports: glibc applies it at start-up. Counted by the same script as above, with and
    # without the variables (the "switch" does nothing here).
    _, with_env, _ = _counts("True", {**_clean_env(), **MALLOC_ENV})
    _, without, _ = _counts("True", _clean_env())
    assert without > 4 * PAGES  # glibc's defaults: every fresh mmap faults in again
    assert with_env <= PAGES


def test_configure_process_keeps_the_users_own_settings():
    env = {"MALLOC_MMAP_MAX_": "65536"}
    assert configure_process(env) is False
    assert env == {"MALLOC_MMAP_MAX_": "65536"}


def test_only_the_program_flips_the_process_switch():
    # main(argv) (tests, a program embedding attnlab) leaves the process alone; main()
    # as the program exports the setting for its children.
    code = ("import os, sys; from attnlab.cli.main import main; "
            "main(['params']); print('ENV', os.environ.get('MALLOC_MMAP_MAX_')); "
            "sys.argv = ['attnlab', 'params']; main(); "
            "print('ENV', os.environ.get('MALLOC_MMAP_MAX_'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=_clean_env()).stdout.splitlines()
    expected = MALLOC_ENV["MALLOC_MMAP_MAX_"] if sys.platform.startswith("linux") else "None"
    assert [line for line in out if line.startswith("ENV ")] == ["ENV None", f"ENV {expected}"]
