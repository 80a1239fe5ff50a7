"""Process-wide settings of the ``attnlab`` program, kept out of library code.

Library functions must not flip switches that outlive them (STYLE.md): a
program embedding attnlab keeps its own allocator. The ``attnlab`` command is
a whole process of its own, so its entry point (``attnlab.cli.main``) applies
these once, before any subcommand runs.

glibc's malloc. A CPU training step allocates and frees the same large
tensors every step: at the defaults the logits and their gradient are 8,192 ×
1,024 floats (32 MiB) each. glibc serves a block that large with fresh
``mmap`` pages and unmaps it on ``free``, so every step the kernel faults in
and zeroes those pages again. Measured on this project's 2-core CPU (default
model, sdpa, 1 thread): a step took 471-501 ms with glibc's defaults and
405-407 ms with the setting below; two blocks 781-794 ms and 633-637 ms.
With ``M_MMAP_MAX = 0`` large blocks come from the heap instead, and a 1 GiB
``M_TRIM_THRESHOLD`` keeps freed heap pages mapped, so the next step reuses
them. The cost: the process holds on to its peak memory until it exits.

Child processes (``torchrun`` ranks started by ``attnlab train``, experiment
workers) get the same setting through the environment: glibc reads
``MALLOC_MMAP_MAX_`` and ``MALLOC_TRIM_THRESHOLD_`` when a process starts, and
``configure_process`` puts them into ``os.environ`` when the user has not set
them. A user who has set either keeps their own values (and this process is
left as glibc configured it from them). Off glibc (macOS, musl) nothing
happens.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys

log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters, from glibc's <malloc.h>
TRIM_THRESHOLD = 1 << 30  # 1 GiB: freed heap pages stay mapped for the next step
# What a child process reads at start-up to get the same behaviour (glibc's names).
MALLOC_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}


def reuse_freed_memory() -> bool:
    """Make glibc's malloc keep freed memory for reuse in this process; True if it took effect.

    Process-wide and not undone (as an ``LD_PRELOAD`` of jemalloc or tcmalloc
    would be). Returns False, doing nothing, off glibc.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    done = mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    log.debug("malloc keeps freed memory for reuse: %s", done)
    return done


def configure_process(environ: dict[str, str] | None = None) -> bool:
    """Apply the allocator setting to this process and export it to its children.

    ``environ`` defaults to ``os.environ``. Returns whether this process's
    malloc was changed (False when the user set the variables themselves, or
    off glibc).
    """
    env = os.environ if environ is None else environ
    if any(name in env for name in MALLOC_ENV):
        return False  # the user chose; glibc has already read their values at start-up
    if not sys.platform.startswith("linux"):
        return False
    env.update(MALLOC_ENV)
    return reuse_freed_memory()
