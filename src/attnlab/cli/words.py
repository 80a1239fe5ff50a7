"""The command line's words in the learner's language, chosen once per command.

Every help line, description, argparse section title, summary line and error message of
``attnlab.cli`` comes from the ``cli`` catalogue (``attnlab/i18n/cli.json``) through a
:class:`Words` made for one language. The language is chosen once: ``--lang``, else
``ATTNLAB_LANG``, else the locale (``attnlab.i18n.resolve_lang``); ``lab`` then falls back on
the exercise's own language. argparse builds the help before it parses, so ``attnlab.cli.main``
finds ``--lang`` in the command line first (:func:`prescan`) and builds every parser in that
language, ``--help`` included.

argparse's own words go through the same catalogue: "usage:" and the section titles by
:func:`new_parser`, its error messages (a missing argument, an invalid choice, ...) by
:func:`argparse_message`, which knows the English messages of Python's argparse and of
``attnlab.bounds``; a message it does not know stays as argparse wrote it.

Left out: the option names and metavars (``--profile``, ``RUN``, ``DIR``), which are the
command's own names in every language, as the code names in the docs are.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass

from attnlab.i18n import LANGS, resolve_lang, text

DOMAIN = "cli"


@dataclass(frozen=True)
class Words:
    """The ``cli`` catalogue in one language: ``say("run.help")``, ``say.lang``."""

    lang: str

    def __call__(self, key: str, **fields: object) -> str:
        return text(DOMAIN, key, self.lang, **fields)

    def count(self, n: int) -> str:
        """A whole number as this language groups it: ``1,000`` / ``1000``."""
        from attnlab.kit.quantities import group

        return group(str(n), self.lang)


def words(lang: str | None = None) -> Words:
    """The words of ``lang``, or of the language ``resolve_lang`` chooses."""
    return Words(resolve_lang(lang))


def prescan(argv: Sequence[str]) -> str | None:
    """The language ``argv`` asks for with ``--lang X`` or ``--lang=X`` (the last one, as
    argparse keeps the last), before ``--``; None when none, or one attnlab lacks (argparse
    then refuses it, in the language of the environment).

    >>> prescan(["run", "params", "--lang", "es"]), prescan(["--lang=xx", "run"])
    ('es', None)
    """
    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--lang="):
            found = arg.split("=", 1)[1]
    return found if found in LANGS else None


def formatter(say: Words) -> type[argparse.HelpFormatter]:
    """A help formatter that writes argparse's "usage: " in ``say``'s language."""
    prefix = say("argparse.usage")

    class Formatter(argparse.HelpFormatter):
        def add_usage(self, usage, actions, groups, prefix_=None):  # noqa: ANN001, ANN201
            return super().add_usage(usage, actions, groups,
                                     prefix if prefix_ is None else prefix_)

    return Formatter


def localise(parser: argparse.ArgumentParser, say: Words) -> argparse.ArgumentParser:
    """``parser``'s own words in ``say``'s language: its ``-h``, its section titles, "usage:"
    (a parser made with ``add_help=False``)."""
    parser.formatter_class = formatter(say)
    parser.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                        help=say("argparse.help"))
    parser._positionals.title = say("argparse.positionals")
    parser._optionals.title = say("argparse.options")
    return parser


def new_parser(sub: argparse._SubParsersAction, name: str, say: Words, *, help: str,
               description: str, **kwargs: object) -> argparse.ArgumentParser:
    """``sub.add_parser(name, ...)`` with its argparse words in ``say``'s language."""
    parser = sub.add_parser(name, help=help, description=description, add_help=False,
                            formatter_class=formatter(say), **kwargs)
    return localise(parser, say)


def add_lang(p: argparse.ArgumentParser, say: Words, key: str = "lang") -> None:
    """``--lang``: the language of the command's help and messages (``key``: what else it
    chooses, ``lang.report`` for the report's). Its default is None: the language is then
    chosen as :func:`words` chooses it."""
    p.add_argument("--lang", choices=list(LANGS), default=None, help=say(key))


def lang_of(args: argparse.Namespace) -> Words:
    """The words of the command being run: ``--lang``, else as :func:`words` chooses."""
    return words(getattr(args, "lang", None))


# argparse's English messages (Python 3.11 to 3.13) and attnlab.bounds's, each as a pattern
# whose groups are the fields of the catalogue entry ``argparse.<key>``.
MESSAGES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (key, re.compile(pattern, re.S)) for key, pattern in (
        ("argument", r"argument (?P<name>\S+(?:/\S+)?): (?P<message>.*)"),
        ("required", r"the following arguments are required: (?P<names>.*)"),
        ("one_required", r"one of the arguments (?P<names>.*) is required"),
        ("unrecognised", r"unrecognized arguments: (?P<args>.*)"),
        ("choice", r"invalid choice: (?P<value>.*?) \(choose from (?P<choices>.*)\)"),
        ("invalid_type", r"invalid (?P<type>.+?) value: (?P<value>.*)"),
        ("expected_one", r"expected one argument"),
        ("expected_at_most_one", r"expected at most one argument"),
        ("expected_at_least_one", r"expected at least one argument"),
        ("not_allowed", r"not allowed with argument (?P<name>.*)"),
        ("ambiguous", r"ambiguous option: (?P<option>\S+) could match (?P<matches>.*)"),
        ("whole", r"must be a whole number in \[(?P<low>[\d,]+), (?P<high>[\d,]+)\], "
                  r"got (?P<value>.*)"),
        ("temperature", r"must be 0 \(greedy\) or a number in \[(?P<low>\S+), (?P<high>\S+)\], "
                        r"got (?P<value>.*)"),
    ))


def argparse_message(message: str, say: Words) -> str:
    """An error message of argparse (or of an ``attnlab.bounds`` type) in ``say``'s language;
    one it does not know, as it is.

    >>> argparse_message("argument --lang: invalid choice: 'xx' (choose from 'en', 'es')",
    ...                  words("es"))
    "argumento --lang: opción no válida: 'xx' (elige entre 'en', 'es')"
    """
    if say.lang == "en":
        return message
    for key, pattern in MESSAGES:
        match = pattern.fullmatch(message)
        if match is None:
            continue
        fields = match.groupdict()
        if "message" in fields:
            fields["message"] = argparse_message(fields["message"], say)
        if key == "whole":
            from attnlab.kit.quantities import group

            fields.update({k: group(fields[k].replace(",", ""), say.lang)
                           for k in ("low", "high")})
        return say(f"argparse.{key}", **fields)
    return message


def parser_class(say: Words) -> type[argparse.ArgumentParser]:
    """The parser class of ``attnlab`` and its commands: an error is one line, exit 2
    (argparse's own code), in ``say``'s language."""

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:
            self.exit(2, say("main.usage_error", message=argparse_message(message, say)) + "\n")

    return Parser


__all__ = ["Words", "add_lang", "argparse_message", "formatter", "lang_of", "localise",
           "new_parser", "parser_class", "prescan", "words"]
