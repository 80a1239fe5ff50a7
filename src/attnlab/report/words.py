"""The report's words in the reader's language: the catalogue, verdicts, durations, numbers.

Every interface string of the report (headings, table headers, verdict words, captions, the
glance table) is an entry of the catalogue's ``report`` domain in English and Spanish:
``attnlab/i18n/report.json`` for the words every page shares, an experiment's ``words.json`` for
its own (``title.<name>``, ``caption.<name>``, ``chapter.<name>``, ``budget.<name>``, its
figures' ``fig.*`` and chapter words' ``cw.*``); code asks ``t(key, lang)``, and ``of(name)``
first where the words are one experiment's. Measured numbers and the chapter's figures are the
same in both languages: a decimal point, as in the code. Spanish groups a whole part of five
digits or more with narrow spaces (``124 439 808``), never a comma or a dot, and leaves four
digits alone (``3000``), so a list of numbers is never ambiguous; a percentage takes a space
before its sign (``66.6 %``). The convention is ``attnlab.kit.quantities``'s, written on the
Spanish front page.

The experiments' own tables (``table.md``, written in English by the experiments) are
said in the page's language by ``attnlab.report.table_words``, from the ``tables`` domain.
"""

from __future__ import annotations

import math
import re
from typing import Any

from attnlab.i18n import catalogue, resolve_lang
from attnlab.i18n import text as _text
from attnlab.kit.registry import own_words

_GROUPED = re.compile(r"(?<![\d.])(?<!\d,)\d{1,3}(?:,\d{3})+(?!\d|,\d)")  # 124,439,808
_PERCENT = re.compile(r"(?<=\d)%(?!\w)")  # 66.6%


def t(key: str, lang: str, **fields: object) -> str:
    """The report's entry ``key`` in ``lang``, formatted with ``fields``."""
    return _text("report", key, lang, **fields)


def has(key: str) -> bool:
    return key in catalogue("report")


def of(name: str) -> str:
    """``name``, once experiment ``name``'s words are in the catalogue (none: a name that is
    no longer an experiment, as in an older results.json)."""
    own_words(name)
    return name


def verdict(status: str, lang: str) -> str:
    """The verdict word as the tables print it: ``HELD`` / ``MANTENIDA``."""
    return t(f"verdict.{status}", lang)


def counted(status: str, lang: str) -> str:
    """The verdict as counts print it: ``held`` / ``mantenidas``."""
    return t(f"count.{status}", lang)


def duration(seconds: float | None, lang: str = "en") -> str:
    """``12.5 s`` under a minute, else ``4m05s`` / ``1h02m``; ``–`` when unknown; a time
    too short for a tenth of a second is said so, not ``0.0 s``; none at all is ``0 s``.

    >>> duration(0.0014), duration(0), duration(11.04), duration(1504.2)
    ('< 0.1 s', '0 s', '11.0 s', '25m04s')
    """
    if seconds is None or not math.isfinite(seconds):
        return "–"
    from attnlab.train.progress import format_duration

    if seconds <= 0:
        return "0 s"
    if seconds < 0.05:
        return "< 0.1 s"
    return f"{seconds:.1f} s" if seconds < 60 else format_duration(seconds)


def numbers(text: str, lang: str) -> str:
    """``text`` (written with English numbers) with its thousands separators and percent signs
    as the language writes them.

    >>> numbers("124,439,808 and [0.5, 1.25]", "es") == "124\u202f439\u202f808 and [0.5, 1.25]"
    True
    >>> numbers("3,000 steps at 66.6%; sizes 256, 1,024", "es")
    '3000 steps at 66.6 %; sizes 256, 1024'
    """
    if lang == "en":
        return text
    from attnlab.kit.quantities import group

    text = _GROUPED.sub(lambda m: group(m.group(0).replace(",", ""), lang), text)
    return _PERCENT.sub(" %", text)


def claim_text(verdict_: dict[str, Any], lang: str) -> str:
    """The claim in the reader's language (the claims' own words, ``attnlab.kit.verdict_words``)."""
    from attnlab.kit.verdict_words import claim_text as words

    return words(verdict_, lang)


def phrases(lang: str, prefix: str) -> tuple[tuple[str, str], ...]:
    """(English, ``lang``) pairs of the catalogue's ``prefix`` entries, the longest first
    (not cached: the catalogue grows as experiments' words join it)."""
    pairs = [(e["en"], e[lang]) for k, e in catalogue("report").items() if k.startswith(prefix)]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def translated(text: str, lang: str, prefix: str, shortest: int = 4) -> str:
    """``text`` in ``lang``: whole when the ``prefix`` entries have it, else phrase by phrase,
    each as whole words (a phrase under ``shortest`` characters only as the whole text: in a
    figure "the" is a token of the data too)."""
    if lang == "en" or not text.strip():
        return text
    pairs = phrases(lang, prefix)
    whole = dict(pairs)
    if text in whole:
        return whole[text]
    for en, other in pairs:
        if len(en) >= shortest and en in text:
            text = re.sub(rf"(?<!\w){re.escape(en)}(?!\w)", other.replace("\\", "\\\\"),
                          text)
    return text


def budget(name: str, lang: str) -> str:
    """The chapter's budget for experiment ``name`` in ``lang`` ("" when none is written): its
    chapter part's (``Experiment.chapter``), in another language the catalogue's."""
    from attnlab.kit.registry import chapter

    if lang != "en" and has(f"budget.{of(name)}"):
        return t(f"budget.{name}", lang)
    part = chapter(name)
    return part.budget if part is not None else ""


def title(name: str, envelope: dict[str, Any], lang: str) -> str:
    """An experiment's title in ``lang`` (the catalogue's, else the one it recorded)."""
    if lang != "en" and has(f"title.{of(name)}"):
        return t(f"title.{name}", lang)
    return envelope.get("title") or name


__all__ = ["budget", "claim_text", "counted", "duration", "has", "numbers", "of", "phrases",
           "resolve_lang", "t", "title", "translated", "verdict"]
