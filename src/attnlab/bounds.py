"""The stated range of every numeric command-line option, checked as the option is parsed
(used by the CLI and by the lab's cluster options, so it sits below both).

Each option's ``type=`` is ``whole(name)`` or ``real(name)``: argparse calls it on the
text before any work, and a value outside the range (or not a number) is argparse's
one line, exit 2, naming the range::

    attnlab: error: argument --threads: must be a whole number in [1, 256], got 99999

The ranges are wide enough for any real use and narrow enough that nothing past
them is silently accepted and then fails deep inside (a thread count that
segfaults libgomp, a seed that overflows a C integer, a seed count that takes
minutes to plan). The config fields have their own ranges, checked by the
config classes (``attnlab.train.run_config``, ``attnlab.nn.model_config``).

A text option (a prompt, a sentence, a folder's name) must be UTF-8 text
(``check_text``): bytes that are not reach Python as lone surrogates, which cannot be
written anywhere, so they are one line before any work.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from attnlab.errors import Said, UsageError

SEED_MAX = 2**32 - 1  # as train.seed: NumPy's legacy seeding and every C int take it

# option -> (lowest, highest), both included
WHOLE: dict[str, tuple[int, int]] = {
    "--threads": (1, 256),
    "--seeds": (1, 1000),
    "--extra-seeds": (0, 1000),
    "--jobs": (1, 512),
    "--runs-per-gpu": (1, 64),
    "--tokens": (0, 100_000),
    "--top-k": (1, 1 << 20),
    "--seed": (0, SEED_MAX),
    "--rows": (1, 1024),  # heads: probe rows (the probe's memory grows with them)
    "--half": (2, 1 << 20),  # heads: tokens before the repeat (also at most half the context)
    "--port": (0, 65_535),  # explore --serve (0: any free port)
}
TEMPERATURE = (0.01, 100.0)  # or exactly 0 (greedy): below 0.01 a float32 logit / T overflows


def whole(option: str) -> Callable[[str], int]:
    """argparse ``type=`` for a whole number in ``WHOLE[option]``."""
    lo, hi = WHOLE[option]

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be a whole number in [{lo:,}, {hi:,}], got {_short(text)}")
        return value

    parse.__name__ = "whole number"
    return parse


def temperature(text: str) -> float:
    """argparse ``type=`` of ``--temperature``: 0 (greedy) or a number in ``TEMPERATURE``."""
    lo, hi = TEMPERATURE
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if value != 0 and not lo <= value <= hi:  # nan fails the comparison
        raise argparse.ArgumentTypeError(
            f"must be 0 (greedy) or a number in [{lo}, {hi}], got {_short(text)}")
    return value


def check_text(text: str, flag: str = "--text", what: str = "sentence") -> str:
    """``text`` if it is valid Unicode; a UsageError for bytes that were not UTF-8.

    Python turns such bytes of a command-line argument into lone surrogates
    (``\udcff`` for the byte 0xff), which cannot be written to a page.
    """
    for i, c in enumerate(text):
        if "\ud800" <= c <= "\udfff":
            said = Said(what)  # what it names, said in the command's language (error.json)
            if ord(c) >= 0xDC80:
                raise UsageError("%s is not valid UTF-8 (byte 0x%02x) at character %s: pass the "
                                 "%s as UTF-8 text", flag, ord(c) - 0xDC00, i + 1, said)
            raise UsageError("%s is not valid UTF-8 at character %s: pass the %s as UTF-8 text",
                             flag, i + 1, said)
    return text


def _short(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
