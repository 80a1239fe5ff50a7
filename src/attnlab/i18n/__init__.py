"""One message catalogue for every text a learner or a reader sees, in English and Spanish.

Each domain (``labs``, ``explorer``, ...) maps a key to its text in every language:
``{"key": {"en": "...", "es": "..."}}``. The words every part shares are one JSON file per domain
beside this module; the words an experiment's or an exercise's folder owns stay in that folder
and join the catalogue through :func:`own` when the folder is loaded, so a plugin brings its
words the same way. Code never writes a
user-facing sentence itself; it asks ``text(domain, key, lang, **fields)``. A key that lacks a
language is a bug that ``check_complete`` (run by the tests) names.

Left out: plural rules and right-to-left scripts; two languages need neither.
"""

from __future__ import annotations

import json
import locale
import os
from functools import cache
from importlib import resources

from attnlab.errors import UsageError

LANGS = ("en", "es")  # every catalogue entry has each of these
DEFAULT = "en"
THIN = "\u202f"  # groups thousands in Spanish


def resolve_lang(lang: str | None = None) -> str:
    """The language to speak: ``lang`` if given, else ``ATTNLAB_LANG`` (``es``, or a locale name
    such as ``es_ES.UTF-8``), else the locale's (``LC_ALL``, ``LC_MESSAGES``, ``LANG``), else
    English. An unknown ``lang`` is a ``UsageError`` (a ``ValueError``) naming the choices; an
    ``ATTNLAB_LANG`` that names no language of attnlab is passed over, as an unknown locale
    is."""
    if lang is not None:
        if lang not in LANGS:
            raise UsageError("unknown language %r; choose one of: %s", lang, ", ".join(LANGS))
        return lang
    chosen = _code(os.environ.get("ATTNLAB_LANG", ""))
    if chosen in LANGS:
        return chosen
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            code = _code(value)
            return code if code in LANGS else DEFAULT
    code = _code(locale.getlocale()[0] or "")
    return code if code in LANGS else DEFAULT


def _code(name: str) -> str:
    """The language of a locale name: ``es_ES.UTF-8`` -> ``es``, ``EN`` -> ``en``."""
    return name.strip().split("_")[0].split(".")[0].split("@")[0].lower()


Entries = dict[str, dict[str, str]]  # key -> {language: text}
_OWNED: dict[str, dict[str, Entries]] = {}  # domain -> owner -> its entries
_MERGED: dict[str, Entries] = {}


@cache
def _shared(domain: str) -> Entries:
    """The shared entries of one domain (``labs.json``, ``explorer.json``, ...), or none."""
    path = resources.files(__package__) / f"{domain}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def own(owner: str, words: dict[str, Entries]) -> None:
    """Add the words a folder owns (``{domain: {key: {"en": ..., "es": ...}}}``) to the
    catalogue under ``owner`` (``experiment ladder``, ``exercise softmax``). Owning the same
    words again replaces them; a key another owner or the shared file already has is a
    ``ValueError`` naming both."""
    for domain, entries in words.items():
        taken = dict.fromkeys(_shared(domain), "the shared catalogue")
        for other, theirs in _OWNED.get(domain, {}).items():
            if other != owner:
                taken.update(dict.fromkeys(theirs, other))
        clash = sorted(set(entries) & set(taken))
        if clash:
            raise ValueError(f"{owner} and {taken[clash[0]]} both define {domain}.{clash[0]}")
        _OWNED.setdefault(domain, {})[owner] = dict(entries)
        _MERGED.pop(domain, None)


def owners(domain: str) -> dict[str, Entries]:
    """Each owner's entries of ``domain``, as :func:`own` received them."""
    return dict(_OWNED.get(domain, {}))


def catalogue(domain: str) -> Entries:
    """Every entry of one domain: the shared file's and every owner's."""
    if domain not in _MERGED:
        merged = dict(_shared(domain))
        for entries in _OWNED.get(domain, {}).values():
            merged.update(entries)
        _MERGED[domain] = merged
    return _MERGED[domain]


def domains() -> list[str]:
    """Every domain: the shared files and the domains owned words add to."""
    shared = {p.name[:-5] for p in resources.files(__package__).iterdir()
              if p.name.endswith(".json")}
    return sorted(shared | set(_OWNED))


def text(domain: str, key: str, lang: str | None = None, **fields: object) -> str:
    """The entry ``key`` of ``domain`` in ``lang``, formatted with ``fields``."""
    entry = catalogue(domain)[key]
    return entry[resolve_lang(lang)].format(**fields)


def check_complete() -> list[str]:
    """Every (domain, key) that lacks a language or whose languages take different fields."""
    import string

    problems = []
    for domain in domains():
        for key, entry in catalogue(domain).items():
            missing = [lang for lang in LANGS if not entry.get(lang)]
            if missing:
                problems.append(f"{domain}.{key}: no {', '.join(missing)} text")
                continue
            names = [{f for _, f, _, _ in string.Formatter().parse(entry[lang]) if f}
                     for lang in LANGS]
            if any(n != names[0] for n in names):
                problems.append(f"{domain}.{key}: the languages take different fields")
            if domain in ("log", "error"):  # %-templates (i18n.logs): the same conversions
                if any(conversions(entry[lang]) != conversions(entry["en"]) for lang in LANGS):
                    problems.append(f"{domain}.{key}: the languages take different conversions")
    return problems


def conversions(template: str) -> list[str]:
    """The ``%`` conversions of a log template (``attnlab.i18n.logs``), in order.

    >>> conversions("training %s (%d of %.2f)")
    ['%s', '%d', '%.2f']
    """
    import re

    return re.findall(r"%[-+ #0]*\d*(?:\.\d+)?[sdfrgx%]", template)


def group(digits: str, lang: str) -> str:
    """``1234567`` -> ``1,234,567`` (en) or ``1 234 567`` with narrow spaces (es); Spanish
    leaves a whole part of four digits alone.

    >>> group("1024", "en"), group("1024", "es"), group("-33792.5", "es") == "-33\u202f792.5"
    ('1,024', '1024', True)
    """
    sign, digits = ("-", digits[1:]) if digits.startswith("-") else ("", digits)
    head, _, tail = digits.partition(".")
    if lang == "en":
        grouped = f"{int(head):,}"
    else:
        grouped = head if len(head) <= 4 else f"{int(head):,}".replace(",", THIN)
    return sign + grouped + (f".{tail}" if tail else "")
