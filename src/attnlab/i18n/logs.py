"""Log lines in the command's language.

Library code logs in English through ``logging`` (``log.info("training %s (%s)", label,
path)``) and never chooses a language. The command does: it writes its log lines through a
:class:`Translating` formatter made for the language it resolved, which writes a line whose
English template is an entry of the catalogue's ``log`` domain with that entry's template in
the language, and the same arguments. The shared lines are ``log.json``; an experiment's own
lines are in its ``words.json`` (domain ``log``), owned when it is loaded. A ``log`` entry is
a ``%``-template, as ``logging`` takes it, not a ``{field}`` one; ``check_complete`` checks
that its languages take the same conversions in the same order.

The arguments are written as given (a path, an error's own words), but for a run's label,
which library code marks as a ``RunLabel`` and the formatter says in the language
(``attnlab.i18n.labels``). A count takes the template of its number: code logs
``"... %d run"`` for one and ``"... %d runs"`` otherwise, each an entry (``key.one`` and
``key``, as ``attnlab.report.words.tn`` keys them), so a language that agrees otherwise can.

Left out: a line no entry has is written in English (its labels still said in the language).
"""

from __future__ import annotations

import logging

from attnlab.i18n import catalogue
from attnlab.i18n.labels import RunLabel, say

DOMAIN = "log"


def template(english: str, lang: str) -> str | None:
    """The ``lang`` template of the ``log`` entry whose English is ``english``; None if none."""
    if lang == "en":
        return None
    for entry in catalogue(DOMAIN).values():
        if entry.get("en") == english:
            return entry.get(lang)
    return None


class Translating(logging.Formatter):
    """A formatter that writes each log line it knows in ``lang`` (see the module docstring)."""

    def __init__(self, lang: str, fmt: str = "%(message)s") -> None:
        super().__init__(fmt)
        self.lang = lang

    def format(self, record: logging.LogRecord) -> str:
        changes: dict[str, object] = {}
        other = template(record.msg, self.lang) if isinstance(record.msg, str) else None
        if other is not None:
            changes["msg"] = other
        args = record.args
        if self.lang != "en" and isinstance(args, tuple) and \
                any(isinstance(a, RunLabel) for a in args):
            changes["args"] = tuple(say(a, self.lang) if isinstance(a, RunLabel) else a
                                    for a in args)
        if changes:
            record = logging.makeLogRecord({**record.__dict__, **changes})
        return super().format(record)


def speak(lang: str, handlers: list[logging.Handler] | None = None) -> None:
    """Write the log lines of ``handlers`` in ``lang``; by default the root logger's plain
    stream handlers (``logging.basicConfig``'s: not a test runner's capture, a subclass)."""
    if handlers is None:
        handlers = [h for h in logging.getLogger().handlers if type(h) is logging.StreamHandler]
    for handler in handlers:
        handler.setFormatter(Translating(lang, getattr(handler.formatter, "_fmt", None)
                                         or "%(message)s"))


__all__ = ["Translating", "speak", "template"]
