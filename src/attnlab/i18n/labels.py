"""Run labels in the reader's language.

A planned run's label (``attnlab.running.spec.seeded``: ``"winograd B two blocks seed 0"``)
is its name for the runner, the caches, the records, the tests and the explorer's presets,
and it stays English there. Where a reader sees it, in a log line or a progress line, it is
said in the reader's language: ``say("winograd B two blocks seed 0", "es")`` is ``"winograd B
dos bloques semilla 0"``. The phrase before the seed is an entry of the catalogue's ``label``
domain, keyed by its English and owned by the experiment that plans it (its ``words.json``);
the seed is said by the shared entry ``common.label.seed``.

Library code marks a label it logs as a ``RunLabel`` (``log.info("training %s (%s)",
RunLabel(spec.label), run_dir)``), so the translating formatter (``attnlab.i18n.logs``) knows
which arguments of a line are labels; a path or an error's own words never are. A progress
line's ``run`` is a label by definition (``attnlab.train.progress``).

Left out: a phrase no entry has (a plugin's that brings none, a label made outside a plan)
stays English, its seed said in the language.
"""

from __future__ import annotations

from attnlab.i18n import catalogue, text

DOMAIN = "label"
SEED = " seed "  # between a run's phrase and its seed: the one form of a seeded label


class RunLabel(str):
    """A run's label given to a log line: the translating formatter says it in the reader's
    language. Otherwise an ordinary ``str``, equal to the label."""

    __slots__ = ()


def seeded(phrase: str, seed: int) -> str:
    """The label of seed ``seed`` of the run ``phrase`` (the inverse of :func:`split`).

    >>> seeded("ladder row 5", 0)
    'ladder row 5 seed 0'
    """
    return f"{phrase}{SEED}{seed}"


def split(label: str) -> tuple[str, int | None]:
    """A label's phrase and seed; a label :func:`seeded` did not make has no seed.

    >>> split("winograd B two blocks seed 12"), split("probe 1L")
    (('winograd B two blocks', 12), ('probe 1L', None))
    """
    phrase, sep, seed = str(label).rpartition(SEED)
    if sep and seed.isascii() and seed.isdigit():
        return phrase, int(seed)
    return str(label), None


def say(label: str, lang: str) -> str:
    """``label`` as a reader of ``lang`` reads it (see the module docstring); English is the
    label itself."""
    if lang == "en":
        return str(label)
    phrase, seed = split(label)
    entry = catalogue(DOMAIN).get(phrase, {})
    said = entry.get(lang) or phrase
    return said if seed is None else text("common", "label.seed", lang, label=said, seed=seed)


__all__ = ["DOMAIN", "SEED", "RunLabel", "say", "seeded", "split"]
