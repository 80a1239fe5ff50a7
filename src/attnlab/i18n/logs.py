"""Log lines in the command's language.

Library code logs in English through ``logging`` (``log.info("training %s (%s)", label,
path)``) and never chooses a language. The command does: it writes its log lines through a
:class:`Translating` formatter made for the language it resolved, which writes a line whose
English template is an entry of the catalogue's ``log`` domain with that entry's template in
the language, and the same arguments. The shared lines are ``log.json``; an experiment's own
lines are in its ``words.json`` (domain ``log``), owned when it is loaded. A ``log`` entry is
a ``%``-template, as ``logging`` takes it, not a ``{field}`` one; ``check_complete`` checks
that its languages take the same conversions in the same order.

The arguments are written as given (a path, an error's own words), but for two kinds that
library code marks: a run's label, a ``RunLabel`` (``attnlab.i18n.labels``), and a word or
phrase an experiment's code chose, a :class:`Phrase` (winograd's ``"two blocks"``, position's
``"learned"``), said with the words that experiment's tables already have for it. A count or a
status takes the template of its value: code logs ``"... %d run"`` for one and ``"... %d runs"``
otherwise, each an entry (``key.one`` and ``key``, as ``attnlab.report.words.tn`` keys them),
so a language that agrees otherwise can; the cost sweep logs ``"%s n=%d: ok"`` or
``"%s n=%d: oom"``, each an entry of its own.

Errors the same way: an ``AttnlabError`` raised as a template and its values (``attnlab.errors``)
is said by :func:`said` with the template of the catalogue's ``error`` entry in the language
(``error.json``, or a folder's ``words.json`` domain ``error``), its labels and phrases said too,
and a sentence it wraps (an ``attnlab.errors.Said`` value) by that sentence's own entry.
A whole number an English message writes grouped (``[1, 10,000,000]``) is given as a
:class:`Grouped`, said in another language by its own convention (``attnlab.i18n.group``).

Left out: a line no entry has is written in English (its labels and phrases still said in the
language); so is an error raised as one finished string.
"""

from __future__ import annotations

import errno
import logging

from attnlab.errors import OSReason, Said, os_reason
from attnlab.i18n import catalogue, group
from attnlab.i18n.labels import RunLabel, say

DOMAIN = "log"


def template(english: str, lang: str, domain: str = DOMAIN) -> str | None:
    """The ``lang`` template of the ``domain`` entry whose English is ``english``; None if
    none."""
    if lang == "en":
        return None
    for entry in catalogue(domain).values():
        if entry.get("en") == english:
            return entry.get(lang)
    return None


def said(err: BaseException, lang: str) -> str:
    """The message of ``err`` in ``lang``: an ``AttnlabError`` raised as a template and its
    values, by its ``error`` entry (its labels and phrases said too, and an inner error or
    ``Said`` by its own entry); else ``str(err)``."""
    english, values = getattr(err, "template", None), getattr(err, "values", ())
    if english is None or lang == "en":
        return str(err)
    other = template(english, lang, "error")
    if other is None:
        return str(err)
    return other % tuple(said_value(v, lang) for v in values) if values else other


def say_parts(parts: dict, lang: str) -> str:
    """A stored ``Said`` (``attnlab.errors.Said.parts``) in ``lang``: said as a live one is
    (``said_value``), from the ``Said`` its parts make again."""
    return str(said_value(Said.from_parts(parts), lang))


def stored(record: dict, key: str, lang: str) -> str:
    """``record[key]`` in ``lang``, said from ``record[key + "_parts"]`` where it was stored in
    parts (an ``attnlab.errors.Said``); "" when the record has none."""
    parts = record.get(f"{key}_parts")
    if lang == "en" or not parts:
        return record.get(key, "")
    return say_parts(parts, lang)


def reason_in(envelope: dict, lang: str) -> str:
    """The ``reason`` of an experiment's envelope that did not finish, in ``lang`` where it
    was stored in parts (``reason_parts``)."""
    return stored(envelope, "reason", lang)


class Phrase(str):
    """A word or phrase an experiment's code chose, given to a log line (a model's kind, a
    position scheme, a setting) with the experiment whose tables say it: the formatter says it
    by the ``tables`` entry ``"<experiment>: <phrase>"``, else the shared ``"*: <phrase>"``
    (the keys of ``attnlab.report.table_words``); a phrase neither has is a name and stays as it
    is (``rope``, ``LSTM``). Otherwise an ordinary ``str``, equal to the phrase.

    >>> Phrase("two blocks", "winograd") == "two blocks"
    True
    """

    experiment: str

    def __new__(cls, phrase: str, experiment: str) -> Phrase:
        made = super().__new__(cls, phrase)
        made.experiment = experiment
        return made

    def __getnewargs__(self) -> tuple[str, str]:  # a copy or a pickle keeps its experiment
        return str(self), self.experiment

    def say(self, lang: str) -> str:
        """The phrase in ``lang``: its experiment's table words, the shared ones, or itself."""
        if lang == "en":
            return str(self)
        tables = catalogue("tables")
        entry = tables.get(f"{self.experiment}: {self}") or tables.get(f"*: {self}") or {}
        return entry.get(lang) or str(self)


class Grouped(int):
    """A whole number given to an error or a log line that English writes with its thousands
    grouped (``10,000,000``); another language writes it by its own convention
    (``attnlab.i18n.group``: Spanish ``10 000 000`` with narrow spaces, ``1024`` alone).
    Otherwise an ordinary ``int``.

    >>> str(Grouped(10_000_000)), "got %s" % Grouped(65536), said_value(Grouped(1024), "es")
    ('10,000,000', 'got 65,536', '1024')
    >>> said_value(Grouped(65536), "es") == "65\u202f536"
    True
    """

    __slots__ = ()

    def __str__(self) -> str:
        return f"{int(self):,}"


def said_value(arg: object, lang: str) -> object:
    """A log line's or an error's argument in ``lang``: a run's label or a phrase said, a
    grouped number in the language's grouping, a ``Said`` (a sentence an error holds: the
    one a damaged checkpoint's advice wraps) by its ``error`` entry with its own values
    said, else its English template; the system's reason an ``OSError`` gave (an
    ``OSReason``) by its errno's entry; an inner attnlab error raised as a template by its own
    entry; the rest as given."""
    if isinstance(arg, RunLabel):
        return say(arg, lang)
    if isinstance(arg, Phrase):
        return arg.say(lang)
    if isinstance(arg, Grouped):
        return group(str(int(arg)), lang)
    if isinstance(arg, OSReason) and lang != "en":  # the system's words, by its errno's entry
        return os_words(arg, lang)
    if isinstance(arg, Said) and lang != "en":
        chosen = template(arg.template, lang, "error") or arg.template
        values = tuple(said_value(v, lang) for v in arg.values)
        return chosen % values if values else chosen
    if isinstance(arg, BaseException) and getattr(arg, "template", None) is not None:
        return said(arg, lang)  # an inner attnlab error ("%s; move it away"), by its own entry
    return arg


def os_words(reason: OSReason, lang: str) -> str:
    """The system's reason in ``lang``: the ``os.<ERRNO NAME>`` entry of the ``error``
    catalogue (``os.ENOENT``: "no existe el archivo o la carpeta"), else the system's own words.

    >>> os_words(OSReason("No such file or directory", 2), "es")
    'no existe el archivo o la carpeta'
    """
    name = errno.errorcode.get(reason.errno) if reason.errno is not None else None
    entry = catalogue("error").get(f"os.{name}", {}) if name else {}
    return entry.get(lang) or str(reason)


def reason_said(err: BaseException, lang: str) -> str:
    """Why ``err`` failed, in ``lang``, for a sentence of the catalogue (a lab's, a command's):
    the system's reason by its errno's entry, else the error said as a command would."""
    return str(said_value(os_reason(err), lang))


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
                any(isinstance(a, RunLabel | Phrase | Grouped) for a in args):
            changes["args"] = tuple(said_value(a, self.lang) for a in args)
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


__all__ = ["Grouped", "Phrase", "Translating", "reason_in", "reason_said", "said",
           "said_value", "say_parts", "speak", "stored", "template"]
