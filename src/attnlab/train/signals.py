"""Ctrl-C and SIGTERM as a request to stop at the next step boundary.

A training step cut in half leaves nothing worth keeping, and a signal that
kills the process at once loses everything since the last checkpoint. So
the trainer turns SIGINT and SIGTERM into a flag it checks between steps:
it finishes the update, writes a checkpoint and stops. A second signal
restores the default handlers and interrupts at once.

Only in the main thread of a single process: under DDP every rank would have
to stop at the same step, so there the signals keep their default effect.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)


@contextmanager
def stop_requests(enabled: bool) -> Iterator[dict[str, int | None]]:
    """Within the block, SIGINT/SIGTERM set ``flag["signal"]`` instead of interrupting."""
    flag: dict[str, int | None] = {"signal": None}
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield flag
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in signals}

    def handler(signum: int, frame: object) -> None:
        if flag["signal"] is not None:
            for s, h in previous.items():
                signal.signal(s, h)
            raise KeyboardInterrupt
        flag["signal"] = signum
        log.warning("stop requested: finishing this step and writing a checkpoint")

    for s in signals:
        signal.signal(s, handler)
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
