"""Every figure a claim shows, named for a reader and written in its unit, in English and Spanish.

A claim's part returns its deciding numbers under keys (``gap_short_256``,
``ratio_5_over_4``): programs read those keys in ``results.json``. A reader reads a
label, a value and a unit instead. Each experiment declares, once, a ``Quantity`` per
key pattern (``"gap_{setting}_{d_k}"``: the braces match any text and fill the label);
``attnlab.kit.claims.decide`` attaches the labels to each part of a verdict
(``part["figures"]``), so a verdict read back from JSON renders the same.

How a number is written (``number``):

- at most three significant digits, and none the standard error does not support
  (a margin ``0.0291 ± 0.0113`` is written ``0.029 ± 0.011``);
- a value below 1e-12 of its scale is 0 (float rounding, not a measurement);
- very small or large values as ``4.5 × 10⁻⁸``; ranges as ``1.56–1.71``;
- counts as whole numbers with thousands grouped: ``124,439,808`` in English; in Spanish
  (RAE, ISO 80000) a narrow no-break space groups a whole part of five digits or more
  (``124 439 808``, ``33 792``) and none of four (``3000``). Both languages write decimals
  with a point, as the code does (the RAE recommends it too), so a list of numbers is never
  ambiguous; a percentage takes a space before its sign (``14.8 %``).

Left out: units of measurement systems (every unit here is a ratio, a count or a fraction).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from attnlab.i18n import group  # the one grouping rule, which the layers below share

ZERO = 1e-12  # below this fraction of its scale a value is rounding noise, written 0
KINDS = ("value", "ratio", "count", "percent", "range", "flag", "threshold")


@dataclass(frozen=True)
class Quantity:
    """What one number of a claim is, for a reader."""

    label: str  # in English; ``{field}``s are filled from the key pattern
    label_es: str  # the same in Spanish
    unit: str = ""  # written after the value ("" for a pure number)
    unit_es: str = ""
    kind: str = "value"  # how it is written (KINDS); "threshold": the rule's, not shown
    scale: float = 1.0  # a value below ZERO · scale is 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown quantity kind {self.kind!r}; choose one of {KINDS}")


# What a field of a key names, for a reader: (English, Spanish).
NAMES: dict[str, tuple[str, str]] = {
    "learned": ("learned positions", "posiciones aprendidas"),
    "sinusoidal": ("sinusoids", "sinusoides"), "rope": ("RoPE", "RoPE"),
    "alibi": ("ALiBi", "ALiBi"), "none": ("no positions", "sin posiciones"),
    "naive": ("naive attention", "atención ingenua"),
    "memeff": ("memory-efficient attention", "atención eficiente en memoria"),
    "memory": ("memory", "memoria"), "time": ("time", "tiempo"),
    "projections": ("the projections' time", "tiempo de las proyecciones"),
    "mean": ("the uniform mean", "la media uniforme"),
    "one_block": ("one block", "un bloque"), "one block": ("one block", "un bloque"),
    "two_blocks": ("two blocks", "dos bloques"), "two blocks": ("two blocks", "dos bloques"),
    "short": ("short", "corto"), "default": ("default", "por defecto"),
    "pre": ("pre-norm", "pre-norm"), "post": ("post-norm", "post-norm"),
    "held": ("held-out", "de validación"), "train": ("training", "de entrenamiento"),
    "GPT-2 small": ("GPT-2 small", "GPT-2 small"),
    "rnn": ("the RNN", "la RNN"), "lstm": ("the LSTM", "la LSTM"),
    "attention": ("attention", "la atención"),
}


@cache
def _pattern(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", pattern)
    regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+)"
                    for i, p in enumerate(parts))
    return re.compile(regex + r"\Z")


def describe(table: Mapping[str, Quantity], numbers: Mapping[str, Any]) -> dict[str, dict]:
    """For each key of ``numbers`` that a pattern of ``table`` matches: its label, unit and
    kind in both languages, as ``decide`` stores them beside the numbers.

    >>> q = Quantity("gap at d_k = {d_k}", "diferencia a d_k = {d_k}", kind="percent")
    >>> describe({"gap_{setting}_{d_k}": q}, {"gap_short_256": 0.148})["gap_short_256"]["en"]
    'gap at d_k = 256'
    """
    out = {}
    for key in numbers:
        for pattern, q in table.items():
            match = _pattern(pattern).match(key)
            if match:
                fields = match.groupdict()
                en = {k: NAMES.get(v, (v, v))[0] for k, v in fields.items()}
                es = {k: NAMES.get(v, (v, v))[1] for k, v in fields.items()}
                out[key] = {"en": q.label.format(**en), "es": q.label_es.format(**es),
                            "unit": q.unit, "unit_es": q.unit_es, "kind": q.kind,
                            "scale": q.scale}
                break
    return out


# -- numbers -------------------------------------------------------------------

_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _decimals(x: float, sig: int) -> int:
    """Decimal places that keep ``sig`` significant digits of ``x``."""
    return max(0, sig - 1 - math.floor(math.log10(abs(x))))


def number(x: Any, lang: str = "en", kind: str = "value", scale: float = 1.0,
           sig: int = 3) -> str:
    """One value as a reader reads it (see the module docstring).

    >>> number(1.04e-16), number(124439808, kind="count"), number([1.5561, 1.7089])
    ('0', '124,439,808', '1.56–1.71')
    >>> number(4.47e-08), number(0.14812, kind="percent"), number(12345.6, "es")
    ('4.47 × 10⁻⁸', '14.8 %', '12\u202f300')
    """
    if x is None:
        return "–"
    if isinstance(x, bool):
        return {("en", True): "yes", ("en", False): "no", ("es", True): "sí",
                ("es", False): "no"}[lang, x]
    if isinstance(x, str):
        return flag(x, lang)
    if isinstance(x, (list, tuple)):
        return "–".join(number(v, lang, kind, scale, sig) for v in x)
    x = float(x)
    if not math.isfinite(x):
        return "–"
    if kind == "count":
        return group(str(round(x)), lang)
    if kind == "percent":
        return f"{number(100 * x, lang, 'value', scale * 100, sig)} %"
    if abs(x) < ZERO * scale or x == 0:
        return "0"
    if abs(x) < 1e-3 or abs(x) >= 1e7:
        exp = math.floor(math.log10(abs(x)))
        mantissa = round(x / 10**exp, sig - 1)
        if abs(mantissa) >= 10:
            mantissa, exp = mantissa / 10, exp + 1
        return f"{mantissa:.{sig - 1}f} × 10{str(exp).translate(_SUPER)}"
    decimals = _decimals(x, sig)
    if decimals == 0:  # round to sig digits left of the point: 12,345.6 -> 12,300
        rounded = round(x, sig - 1 - math.floor(math.log10(abs(x))))
        return group(str(int(rounded)), lang)
    return group(_exact(x, decimals), lang)


def _exact(x: float, decimals: int) -> str:
    """``x`` to ``decimals`` places, without the trailing zeros of a value that is exactly
    that short (0.5, 1, 0.25: a threshold or a count, not a rounded measurement)."""
    text = f"{x:.{decimals}f}"
    short = text.rstrip("0").rstrip(".")
    return short if float(short) == x else text


def with_se(mean: float, se: float | None, lang: str = "en") -> tuple[str, str]:
    """``(mean, se)`` as text: the standard error to two significant digits and the mean to
    the same decimal place (at most four significant digits); se None: the mean alone.

    >>> with_se(0.02914, 0.01127), with_se(-3.0, 0.0), with_se(0.5, None)
    (('0.029', '0.011'), ('-3', '0'), ('0.5', ''))
    """
    if se is None or not math.isfinite(se):
        return number(mean, lang), ""
    if se == 0 or abs(se) < ZERO * max(abs(mean), 1.0):
        return number(mean, lang), "0"
    decimals = _decimals(se, 2)
    if mean != 0 and math.isfinite(mean):
        decimals = min(decimals, _decimals(mean, 4)) if abs(mean) > se else decimals
    if decimals == 0:
        place = 2 - 1 - math.floor(math.log10(abs(se)))
        return (group(str(int(round(mean, place))), lang),
                group(str(int(round(se, place))), lang))
    m = round(mean, decimals)
    return (group(f"{m:.{decimals}f}", lang) if m != 0 else "0",
            group(f"{se:.{decimals}f}", lang))


FLAGS = {"ok": ("completes", "termina"), "oom": ("out of memory", "sin memoria"),
         "skipped": ("not run", "no ejecutado"), "error": ("failed", "falló")}


def flag(word: str, lang: str) -> str:
    """A status word a record holds (``ok``, ``oom``) in words."""
    en, es = FLAGS.get(word, (word, word))
    return en if lang == "en" else es
