"""An experiment's own table in the page's language.

Each experiment's ``table(record)`` writes its table, and the notes around it, in English
(``<name>/table.md``); the report shows it in the reader's language by replacing its words,
phrase by phrase, with those of the catalogue's ``tables`` domain: the experiment's own in its
``words.json``, those of every experiment in ``attnlab/i18n/tables.json``. A key is
``<experiment>: <English phrase>`` (``*`` for every experiment), its entry the phrase in each
language. Numbers stay as the code wrote them (``0.75``, ``1,000``: the page's ``numbers``
groups the thousands), and so does what is data, not words: a token or sentence in backticks,
«quoted» or “quoted”, and an *italic* word.

Left out: a phrase the catalogue lacks stays English (the Spanish-tables test lists the
words that must not); the experiments are not asked to write Spanish themselves, so a table
already written (a finished run's ``table.md``) reads in Spanish without running again.
"""

from __future__ import annotations

import re
from functools import cache

from attnlab.i18n import catalogue
from attnlab.kit.registry import own_words

# data the words must not touch: `tokens`, «a sentence», “a sentence”, *a word*
DATA = re.compile(r"`[^`\n]*`|«[^»\n]*»|“[^”\n]*”|\*[^*\s][^*\n]*?\*(?!\*)")
ZERO_SPREAD = re.compile(r"± 0\.0+(?![\d.])")  # a spread that rounds to zero is written 0


@cache
def _pattern(name: str, lang: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One alternation of the phrases of ``name`` (and ``*``), the longest first, each as
    whole words where it starts or ends with a letter; and the phrase -> ``lang`` text."""
    entries = catalogue("tables").items()
    words = {e["en"]: e[lang] for k, e in entries if k.startswith("*: ")}
    words.update({e["en"]: e[lang] for k, e in entries if k.startswith(f"{name}: ")})
    if not words:
        return None, words

    def alternative(en: str) -> str:
        start = r"(?<!\w)" if en[0].isalnum() else ""
        end = r"(?!\w)" if en[-1].isalnum() else ""
        return start + re.escape(en) + end

    ordered = sorted(words, key=len, reverse=True)
    return re.compile("|".join(map(alternative, ordered))), words


def speak(name: str, text: str, lang: str) -> str:
    """``text``, experiment ``name``'s table as its ``table`` wrote it, in ``lang``; a spread
    written ``± 0.0000`` as ``± 0`` in every language.

    >>> speak("position", "| scheme | ppl @ 64 |\\n| none | 68.1 ± 0.000 |", "es")
    '| esquema | ppl @ 64 |\\n| ninguna | 68.1 ± 0 |'
    """
    text = ZERO_SPREAD.sub("± 0", text)
    if lang == "en":
        return text
    own_words(name)  # before its pattern is made, once
    pattern, words = _pattern(name, lang)
    if pattern is None:
        return text
    out, at = [], 0
    for data in DATA.finditer(text):  # words between the data, the data as it is
        out += [pattern.sub(lambda m: words[m.group(0)], text[at:data.start()]), data.group(0)]
        at = data.end()
    out.append(pattern.sub(lambda m: words[m.group(0)], text[at:]))
    return "".join(out)


__all__ = ["speak"]
