"""A verdict in a reader's words, in English or Spanish: the claim, each part's name and rule,
what it measured, and its margin said as what it is.

Reads the verdict dicts of ``attnlab.kit.claims`` (also as read back from ``results.json``);
decides nothing. The claims' Spanish words are the catalogue's ``claims`` domain, which each
experiment's ``words.json`` fills (key: the claim id, which begins with the experiment's
name, and ``<id>/<part name>/rule`` / ``/name`` for its parts); the labels of the measured
numbers come with the verdict (``attnlab.kit.quantities``).

- ``measured_text(part, lang)``: ``perplexity, row 5 ÷ row 4: 0.93``;
- ``margin_text(part, lang)``: ``short of its threshold by 0.029 ± 0.011 (perplexity
  ratio)``; a margin of zero spread says so (``past its threshold by 0.5 (fraction; no
  spread over the seeds)``, never ``± 0.0000``); an exact count says the counts agree;
- ``claim_text``, ``part_name``, ``part_rule``, ``evaluations`` (``5 seeds`` /
  ``4 rounds`` / ``1 evaluation``), ``version`` (``rule v2``; ``rule version not recorded``
  for a verdict read from a record made before versions were), ``why`` (a failed
  premise's reason) and ``not_counted`` (the seeds that did not learn, left out).
"""

from __future__ import annotations

from typing import Any

from attnlab import i18n
from attnlab.i18n import catalogue
from attnlab.kit.quantities import number, with_se
from attnlab.kit.registry import own_words

# A part's margin unit (``Part.unit``) -> (English, Spanish): what one unit of margin is.
MARGIN_UNITS: dict[str, tuple[str, str]] = {
    "× ppl": ("perplexity ratio", "cociente de perplejidades"),
    "gap": ("relative perplexity gap", "diferencia relativa de perplejidad"),
    "× std": ("ratio of score spreads", "cociente de dispersiones de puntuación"),
    "fraction": ("fraction", "fracción"),
    "accuracy": ("accuracy", "acierto"),
    "words": ("words of distance", "palabras de distancia"),
    "exponent": ("exponent", "exponente"),
    "per step": ("factor per step", "factor por paso"),
    "R²": ("R²", "R²"),
    "decades": ("decades", "órdenes de magnitud"),
    "ln ratio": ("ln of the time ratio", "ln del cociente de tiempos"),
    "score": ("score", "puntuación"),
    "share": ("share", "proporción"),
    "weight": ("attention weight", "peso de atención"),
    "relative loss": ("relative loss", "pérdida relativa"),
    "relative": ("relative difference", "diferencia relativa"),
    "cosine": ("cosine", "coseno"),
    "max difference": ("largest difference", "mayor diferencia"),
}
# Units whose margin is a yes/no (+1 / −1) or an exact equality (0.5 − the difference).
YES_NO, EXACT = "yes/no", "parameters"

WORDS = {
    "past": ("past its threshold by {m}", "supera su umbral por {m}"),
    "short": ("short of its threshold by {m}", "le faltan {m} para su umbral"),
    "at": ("exactly at its threshold", "justo en su umbral"),
    "same": ("{m} on every seed", "{m} en cada semilla"),
    "flat": ("no spread over the seeds", "sin dispersión entre semillas"),
    "yes": ("yes", "sí"), "no": ("no", "no"),
    "equal": ("the counts agree exactly", "los recuentos coinciden exactamente"),
    "differ": ("the counts differ by {n}", "los recuentos difieren en {n}"),
    "seeds": ("{n} seeds", "{n} semillas"), "seed": ("1 seed", "1 semilla"),
    "of": ("{n} of {m} seeds", "{n} de {m} semillas"),
    "rounds": ("{n} rounds", "{n} rondas"), "round": ("1 round", "1 ronda"),
    "evaluation": ("1 evaluation", "1 evaluación"),
}


def _w(key: str, lang: str, **fields: object) -> str:
    en, es = WORDS[key]
    return (en if lang == "en" else es).format(**fields)


def _spanish(key: str) -> str | None:
    own_words(key.split(".")[0])  # the experiment a claim id begins with
    entry = catalogue("claims").get(key)
    return entry.get("es") if isinstance(entry, dict) else None


def claim_text(verdict: dict[str, Any], lang: str = "en") -> str:
    """The claim in ``lang``."""
    text = verdict.get("text", "")
    return text if lang == "en" else (_spanish(verdict.get("id", "")) or text)


def part_name(verdict: dict[str, Any], part: dict[str, Any], lang: str = "en") -> str:
    """A part's short name in ``lang`` ("" for a claim of one part)."""
    name = part.get("name", "")
    if lang == "en" or not name:
        return name
    return _spanish(f"{verdict.get('id', '')}/{name}/name") or name


def part_rule(verdict: dict[str, Any], part: dict[str, Any], lang: str = "en") -> str:
    """A part's rule in ``lang``."""
    rule = part.get("rule", "")
    if lang == "en":
        return rule
    return _spanish(f"{verdict.get('id', '')}/{part.get('name', '')}/rule") or rule


def rule(verdict: dict[str, Any], lang: str = "en") -> str:
    """All parts' rules in one line, named where the claim has several."""
    parts = verdict.get("parts") or []
    if len(parts) == 1:
        return part_rule(verdict, parts[0], lang)
    return "; ".join(f"{part_name(verdict, p, lang)}: {part_rule(verdict, p, lang)}"
                     for p in parts)


def _item(key: str, value: Any, figure: dict[str, Any] | None, lang: str) -> str:
    if figure is None:  # undeclared: shown under its key, which the figure test refuses
        return f"{key} {number(value, lang)}"
    label = figure["en"] if lang == "en" else figure["es"]
    unit = figure["unit"] if lang == "en" else figure.get("unit_es") or figure["unit"]
    text = number(value, lang, figure.get("kind", "value"), figure.get("scale", 1.0))
    return f"{label}: {text}" + (f" {unit}" if unit else "")


def measured_text(part: dict[str, Any], lang: str = "en") -> str:
    """What one part measured, each number with its label and unit; a part that has ratios
    shows those alone (the figure its rule compares); thresholds are the rule's, not shown."""
    numbers = part.get("numbers") or {}
    figures = part.get("figures") or {}
    shown = {k: v for k, v in numbers.items()
             if (figures.get(k) or {}).get("kind") != "threshold"}
    ratios = {k: v for k, v in shown.items() if (figures.get(k) or {}).get("kind") == "ratio"}
    items = [_item(k, v, figures.get(k), lang) for k, v in (ratios or shown).items()]
    return "; ".join(items) or "–"


def margin_text(part: dict[str, Any], lang: str = "en") -> str:
    """The margin said as what it is: how far past (or short of) the threshold, ± its
    standard error, in the margin's unit."""
    if "mean" not in part:
        return "–"
    mean, se, unit = part["mean"], part.get("se"), part.get("unit", "")
    margins = part.get("margins") or [mean]
    if unit == YES_NO:
        return _w("yes" if mean > 0 else "no", lang)
    if unit == EXACT:
        off = round(0.5 - mean)
        return _w("equal", lang) if off == 0 else _w("differ", lang, n=number(off, lang,
                                                                               "count"))
    same = len(margins) > 1 and len(set(margins)) == 1
    m, s = with_se(abs(mean), None if same else se, lang)
    if mean == 0:
        text = _w("at", lang)
    else:  # a standard error of 0 is no spread, not "± 0.0000"
        text = _w("past" if mean > 0 else "short", lang, m=f"{m} ± {s}" if s not in ("", "0")
                  else m)
    words = MARGIN_UNITS.get(unit)
    said = [words[0] if lang == "en" else words[1]] if words else []
    if s == "0" and len(margins) > 1:
        said.append(_w("flat", lang))
    if said:
        text += f" ({'; '.join(said)})"
    if same:
        text += "; " + _w("same", lang, m=number(margins[0], lang))
    return text


def evaluations(verdict: dict[str, Any], lang: str = "en") -> str:
    """``5 seeds``, ``4 rounds`` (a benchmark's) or ``1 evaluation`` (no training)."""
    if not verdict.get("trained", True):
        return _w("evaluation", lang)
    n = verdict.get("seeds", 0)
    premise = verdict.get("premise") or {}
    if premise.get("seeds_not_learning") and premise.get("learning_seeds"):
        return _w("of", lang, n=n, m=premise.get("seeds", n))  # the others did not learn
    over = "rounds" if verdict.get("over") == "rounds" else "seeds"
    if n == 1:
        return _w(over[:-1], lang)
    return _w(over, lang, n=n)


def version(verdict: dict[str, Any], lang: str = "en") -> str:
    """``rule v2``: the version of the rule that decided ``verdict``; a verdict that records
    none (made before versions were recorded) says so, and no number is made up for it."""
    number = verdict.get("version")
    if number is None:
        return i18n.text("report", "claims.no_version", lang)
    return i18n.text("report", "claims.version", lang, version=number)


def why(verdict: dict[str, Any], lang: str = "en") -> str:
    """The verdict's reason; a failed premise's in ``lang``."""
    premise = verdict.get("premise") or {}
    if premise.get("held") is not True and premise.get("why"):
        return premise["why"] if lang == "en" else premise.get("why_es") or premise["why"]
    return verdict.get("why", "")


def not_counted(verdict: dict[str, Any], lang: str = "en") -> str:
    """The seeds left out of a decided claim because they did not learn, in ``lang``
    (``not counted (did not learn: …): seed 3; decided on the other 3 of 4 seeds``); "" when
    none were, or when the claim could not be tested (its reason names them already)."""
    premise = verdict.get("premise") or {}
    if premise.get("held") is not True or not premise.get("not_counted"):
        return ""
    return premise["not_counted"] if lang == "en" else (premise.get("not_counted_es")
                                                          or premise["not_counted"])


def quick_changes(name: str, lang: str = "en", recorded: str = "") -> str:
    """What the quick profile of experiment ``name`` changes, in ``lang`` (the catalogue's
    words, else the ``recorded`` text of its envelope)."""
    own_words(name)
    entry = catalogue("quick_changes").get(name)
    if isinstance(entry, dict) and entry.get(lang):
        return entry[lang]
    return recorded
