"""Progress of a long run, rendered for a terminal or for a log file.

The trainer calls ``progress(record)`` with a dict per log line: ``kind``
("train" or "eval"), ``step``, ``steps`` (total), and for "train" ``loss``,
``tokens_per_s``, ``eta_s``; for "eval" ``train_ppl`` and ``held_ppl``.
``ProgressPrinter`` turns those into one line that redraws itself with ``\\r``
on a terminal, and into periodic plain lines otherwise (CI logs, files), so a
log is neither silent for an hour nor a wall of carriage returns. A record
with a ``run`` label (an experiment's runs, maybe several training side by
side in worker processes) is shown under that label in the printer's language
(``attnlab.i18n.labels.say``), and under the ``node`` it trains on where it has one
(a Ray cluster's).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from attnlab.i18n import group, text
from attnlab.i18n.labels import say

BAR_WIDTH = 20

Progress = Callable[[dict[str, Any]], None]  # a sink of progress dicts (the one alias)


def format_duration(seconds: float) -> str:
    """Seconds as ``1h02m``, ``4m05s`` or ``12s``.

    >>> format_duration(3725), format_duration(245), format_duration(12.4)
    ('1h02m', '4m05s', '12s')
    """
    s = max(int(round(seconds)), 0)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def format_train_line(record: dict[str, Any], lang: str = "en") -> str:
    """``[#####...............]  120/3000  loss 5.123  12,345 tok/s  ETA 4m05s`` in ``lang``."""
    step, total = record["step"], record["steps"]
    filled = int(BAR_WIDTH * step / total) if total else BAR_WIDTH
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    width = len(str(total))
    return text("common", "progress.train", lang, bar=bar, step=f"{step:>{width}}", steps=total,
                loss=f"{record['loss']:.4f}", speed=group(f"{record['tokens_per_s']:.0f}", lang),
                eta=format_duration(record["eta_s"]))


def format_eval_line(record: dict[str, Any], lang: str = "en") -> str:
    """``step 500/3000: train ppl 101.20, held-out ppl 123.40`` in ``lang``."""
    return text("common", "progress.eval", lang, step=record["step"], steps=record["steps"],
                train=f"{record['train_ppl']:.2f}", held=f"{record['held_ppl']:.2f}")


class ProgressPrinter:
    """Callable progress sink for ``train(..., progress=ProgressPrinter(sys.stderr))``.

    On a TTY each training record redraws one line; elsewhere a line is written
    at most every ``interval_s`` seconds per run and always for the last step.
    Eval records always get a line of their own. Lines of a named run start
    with its name. Its words are ``lang``'s (the command's language).
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        interval_s: float = 30.0,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        lang: str = "en",
    ) -> None:
        self.stream = stream
        self.lang = lang  # the language of its lines (the command's)
        self.interval_s = interval_s
        isatty = getattr(stream, "isatty", None)
        self.tty = bool(isatty and isatty()) if tty is None else tty
        self.clock = clock
        self._last: dict[str, float] = {}  # when each run (its name) last got a line
        self._open_line = False  # a \r line is on screen and needs a newline first

    def __call__(self, record: dict[str, Any]) -> None:
        name = self.name(record)
        if record.get("kind") == "eval":
            self._line(name + format_eval_line(record, self.lang))
            return
        line = name + format_train_line(record, self.lang)
        last_step = record["step"] >= record["steps"]
        if self.tty:
            self.stream.write("\r" + line + "  ")
            self._open_line = True
            if last_step:
                self.stream.write("\n")
                self._open_line = False
            self.stream.flush()
            return
        now = self.clock()
        if last_step or name not in self._last or now - self._last[name] >= self.interval_s:
            self._last[name] = now
            self._line(line)

    def name(self, record: dict[str, Any]) -> str:
        """What a run's lines start with: its label in the printer's language, and the node it
        trains on where the record names one (``"ladder row 5 seed 0 on 10.0.0.2 (1f0c9a): "``);
        nothing for a record without a label."""
        run = record.get("run")
        if not run:
            return ""
        label = say(run, self.lang)
        node = record.get("node")
        return (text("common", "progress.on_node", self.lang, run=label, node=node)
                if node else label) + ": "

    def _line(self, line: str) -> None:
        if self._open_line:
            self.stream.write("\n")
            self._open_line = False
        self.stream.write(line + "\n")
        self.stream.flush()
