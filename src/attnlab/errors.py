"""The errors attnlab reports to its user in one line, and nothing else.

Every failure the user can fix (bad input, a damaged or missing file, a full
disk) is raised as one of these; the ``attnlab`` command turns them into one
line on stderr and exit code 2. Anything else is a bug and keeps its
traceback (shown in full with ``-v``), so a bug never passes for bad input.

``UsageError`` and ``DataError`` are also ``ValueError``s, so code and tests
that expect a ``ValueError`` for bad input keep working.

An error can be said in the user's language: raised as a ``%``-template and its values
(``UsageError("no experiment named %s; choose one of: %s", name, names)``), or as one
constant sentence, it keeps both (``template``, ``values``) beside its English message, and
the command writes it with the template of the catalogue's ``error`` entry in its language
(``attnlab.i18n.logs.said``), as it writes a log line. An error whose message was made
before it was raised (an f-string) has no entry to find and stays English.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class Templated:
    """An exception kept as a ``%``-template and its values beside its message: ``X(template,
    *values)`` is the message ``template % values`` (the module docstring). Mixed into
    attnlab's errors, and into any other exception attnlab raises for a command to say.

    >>> err = UsageError("no run at %s", "runs/x")
    >>> str(err), err.template, err.values
    ('no run at runs/x', 'no run at %s', ('runs/x',))
    """

    template: str | None = None
    values: tuple[object, ...] = ()

    def __init__(self, message: object = "", *values: object) -> None:
        super().__init__(str(message) % values if values else message)
        if isinstance(message, str):
            self.template, self.values = message, values

    def __reduce__(self):  # noqa: ANN204 - a copy or a pickle (a worker's) keeps its parts
        return _remade, (type(self), self.template, self.values, self.args, self.__dict__)


def _remade(cls: type, template: str | None, values: tuple, args: tuple,
            state: dict) -> BaseException:
    err = cls.__new__(cls)
    BaseException.__init__(err, *args)
    err.__dict__.update(state)
    err.template, err.values = template, values
    return err


class AttnlabError(Templated, Exception):
    """A failure the user can act on: reported as one line, exit code 2 (a ``Templated``)."""


class UsageError(AttnlabError, ValueError):
    """Bad input: an argument, option, config value or name that cannot be used."""


class DataError(AttnlabError, ValueError):
    """A file or folder that cannot be used: missing, damaged, of the wrong shape or kind."""


class WriteError(AttnlabError, OSError):
    """A file that could not be written (full disk, no permission); nothing was half-written."""


class Said(str):
    """A line made from a ``%``-template and its values (each a string or another ``Said``),
    kept in parts so that a record can store it and a report say it in another language
    (``parts``; ``attnlab.i18n.logs.say_parts``). Otherwise an ordinary ``str``.

    >>> reason = Said("cannot plan: %s", Said("seeds must be at least 1, got %s", 0))
    >>> str(reason), reason.parts()["values"][0]["values"]
    ('cannot plan: seeds must be at least 1, got 0', [0])
    """

    template: str
    values: tuple[object, ...]

    def __new__(cls, template: str, *values: object) -> Said:
        made = super().__new__(cls, template % values if values else template)
        made.template, made.values = template, values
        return made

    def __getnewargs__(self) -> tuple[object, ...]:  # a copy or a pickle keeps its parts
        return (self.template, *self.values)

    def parts(self) -> dict[str, object]:
        """``{"template": ..., "values": [...]}``, JSON: each value a number, a string or its
        parts."""
        def part(v: object) -> object:  # a number stays one, to be written in a language's way
            if isinstance(v, Said):
                return v.parts()
            return v if type(v) in (int, float) else int(v) if isinstance(v, int) and \
                not isinstance(v, bool) else str(v)

        return {"template": self.template, "values": [part(v) for v in self.values]}

    @classmethod
    def from_parts(cls, parts: dict) -> Said:
        """The ``Said`` whose ``parts()`` are ``parts`` (its values numbers, strings or parts,
        as stored): a ``TypeError``, ``KeyError`` or ``ValueError`` where they are not such
        parts.

        >>> Said.from_parts(Said("cannot plan: %s", Said("got %s", 0)).parts())
        'cannot plan: got 0'
        """
        values = [cls.from_parts(v) if isinstance(v, dict) else v for v in parts["values"]]
        if not isinstance(parts["template"], str):
            raise TypeError("a Said's template is a string")
        return cls(parts["template"], *values)

    @classmethod
    def of(cls, err: BaseException) -> Said:
        """``one_line(err)`` in parts: its type and its message (its template and values
        where it was raised as them)."""
        template = getattr(err, "template", None)
        message = Said(template, *err.values) if template is not None else first_line(err)
        if not str(err).strip():
            return cls("%s", type(err).__name__)
        return cls("%s: %s", type(err).__name__, message)


def first_line(err: BaseException | str) -> str:
    """The first non-empty line of ``str(err)``, or the exception's type name.

    >>> first_line(ValueError("\\nno such file\\nmore")), first_line(KeyError())
    ('no such file', 'KeyError')
    """
    for line in str(err).splitlines():
        if line.strip():
            return line.strip()
    return type(err).__name__


class OSReason(str):
    """The operating system's reason a file or network operation failed (an ``OSError``'s
    ``strerror``), with its ``errno``, so that another language can say it by its ``os.<NAME>``
    entry (``attnlab.i18n.logs.said_value``). Otherwise an ordinary ``str``, the system's words.

    >>> reason = os_reason(FileNotFoundError(2, "No such file or directory"))
    >>> str(reason), reason.errno
    ('No such file or directory', 2)
    """

    errno: int | None

    def __new__(cls, text: str, errno: int | None = None) -> OSReason:
        made = super().__new__(cls, text)
        made.errno = errno
        return made

    def __getnewargs__(self) -> tuple[str, int | None]:  # a copy or a pickle keeps its errno
        return str(self), self.errno


def os_reason(err: BaseException) -> object:
    """Why ``err`` failed, to put in a message: its ``strerror`` as an ``OSReason`` where it
    has one, else the error itself (said by its own message, or its template's entry).

    >>> os_reason(ValueError("not a number"))
    ValueError('not a number')
    """
    strerror = getattr(err, "strerror", None)
    return OSReason(strerror, getattr(err, "errno", None)) if strerror else err


def one_line(err: BaseException) -> str:
    """``Type: first line of the message``: how a failure is named in a record or a report.

    >>> one_line(ValueError("bad width\\n(details)"))
    'ValueError: bad width'
    """
    text = str(err).strip()
    return f"{type(err).__name__}: {first_line(err)}" if text else type(err).__name__


def install_hint(extra: str) -> str:
    """How to install one of attnlab's extras (pyproject.toml's optional dependencies).

    >>> install_hint("hf")
    "pip install 'attnlab[hf]'"
    """
    return f"pip install 'attnlab[{extra}]'"


def require(package: str, extra: str, purpose: str) -> ModuleType:
    """``package`` imported, or a one-line ``UsageError`` naming the extra that installs it:
    ``reading a Hugging Face folder needs transformers, which is not installed here: pip
    install 'attnlab[hf]'``."""
    try:
        return importlib.import_module(package)
    except ImportError as err:
        if package in str(err):
            raise UsageError("%s needs %s, which is not installed here: %s", Said(purpose),
                             package, install_hint(extra)) from None
        raise UsageError("%s needs %s, which is broken here (%s): %s", Said(purpose), package,
                         first_line(err), install_hint(extra)) from None
