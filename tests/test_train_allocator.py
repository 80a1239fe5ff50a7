"""reuse_freed_memory: a large tensor freed and allocated again costs no new page faults."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Page faults (ru_minflt) of touching a fresh 64 MiB tensor, five times over, with
# glibc's defaults and then after reuse_freed_memory(). Counted, not timed.
_SCRIPT = """
import resource, torch
from attnlab.train.runtime import reuse_freed_memory

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        torch.ones(16 * 2**20)  # 64 MiB, written so every page is touched, then freed
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults()
default = faults()
took = reuse_freed_memory()
faults()  # the heap grows to hold the tensor (more than once if a small block lands in it)
print(default, faults(), took)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_freed_large_tensors_come_back_without_page_faults():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         check=True).stdout.split()
    default, reused, took = int(out[0]), int(out[1]), out[2] == "True"
    if not took:
        pytest.skip("this C library has no mallopt (not glibc)")
    pages = 64 * 2**20 // 4096  # of one tensor
    assert default > 4 * pages  # each fresh mmap faults in (most of) its pages again
    assert reused <= pages  # the heap hands the same pages back (at most one more growth)
