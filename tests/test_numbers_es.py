"""Spanish numbers follow one convention, the one docs/es/README.md states (the RAE's): a decimal
point as in the code; a narrow no-break space (U+202F) grouping a whole part of five digits or
more, none for four; a space before a percent sign. The formatters write it, and no Spanish text
of the catalogue, the claims' figure labels or the Spanish pages breaks it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import attnlab.labs  # noqa: F401  the exercises' words join the catalogue as their folders load
from attnlab.i18n import catalogue, domains
from attnlab.kit.quantities import group, number, with_se
from attnlab.report.words import numbers

ROOT = Path(__file__).resolve().parents[1]
N = "\u202f"  # the narrow no-break space
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # the code's numbers are the code's
FIELD = re.compile(r"\{\w*\}")
# (what breaks the convention, the pattern that finds it)
BREAKS = (
    ("a thousands separator other than U+202F",
     re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0]|,(?! ))\d{3}(?![\d.,]?\d)")),
    ("a four-digit number grouped", re.compile(rf"(?<![\d.,{N}])\d{N}\d{{3}}(?![\d{N}])")),
    ("a number of five digits or more not grouped", re.compile(r"(?<![\d.\w])\d{5,}(?![\w^])")),
    ("a percent sign without its space", re.compile(r"\d%")),
    ("a decimal comma", re.compile(r"(?<![\d.,])\d+,\d{1,2}(?![\d,])")),
)


def breaks(text: str) -> list[str]:
    """How ``text`` breaks the Spanish number convention, outside its code and fields (a
    formula's base before ``^``, as in ``10000^(2i/d)``, is left as the formula writes it)."""
    prose = FIELD.sub("", CODE.sub("", text))
    return [f"{what}: {m.group(0)!r}" for what, found in BREAKS for m in found.finditer(prose)]


@pytest.mark.parametrize(("written", "expected"), [
    (number(124439808, "es", kind="count"), f"124{N}439{N}808"),
    (number(33792, "es", kind="count"), f"33{N}792"),
    (number(3000, "es", kind="count"), "3000"),
    (number(1217.9, "es", sig=6), "1217.9"),
    (number(12345.6, "es"), f"12{N}300"),
    (number(0.666, "es", kind="percent"), "66.6 %"),
    (number([1.5561, 1.7089], "es"), "1.56–1.71"),
    (with_se(20512.0, 130.0, "es"), (f"20{N}510", "130")),
    (group("-1024.5", "es"), "-1024.5"),
    (numbers("124,439,808 params, 3,000 steps, 1217.90 s, 66.6%; widths 256, 1,024", "es"),
     f"124{N}439{N}808 params, 3000 steps, 1217.90 s, 66.6 %; widths 256, 1024"),
])
def test_the_spanish_formatters_write_the_convention(written, expected):
    assert written == expected
    for text in (written if isinstance(written, tuple) else (written,)):
        assert breaks(text) == []


def test_english_keeps_its_own_numbers():
    assert number(3000, "en", kind="count") == "3,000"
    assert numbers("3,000 steps at 66.6%", "en") == "3,000 steps at 66.6%"


@pytest.mark.parametrize("text", [
    "3 000 pasos", f"3{N}000 pasos", "1,024 tokens", "20000 pasos", "66.6%", "a 0,5 de",
    "n = 8\u00a0192",
])
def test_the_check_finds_what_the_issue_found(text):
    assert breaks(text), text


@pytest.mark.parametrize("text", [
    f"124{N}439{N}808", "3000 pasos", "1217.90", "66.6 %", "p / 10000^(2i/d)", "(0.5, 1.5)",
    "anchuras 32, 256 y 1024", "`20000`", "{steps} pasos", "0.125", "BPE-4096", "(10, 16)",
])
def test_the_check_passes_the_convention(text):
    assert breaks(text) == [], text


def spanish_texts() -> list[tuple[str, str]]:
    """(where, text) of the catalogue's Spanish, the claims' figure labels and docs/es (the
    front page from the line after the ones it keeps in step with the English front door)."""
    from attnlab.kit import registry

    registry.own_all_words()  # the experiments' words join the catalogue
    out = [(f"{d}.{k}", e["es"]) for d in domains() for k, e in catalogue(d).items()]
    out += [(f"{c.id} figure {key}", q.label_es) for name in registry.EXPERIMENTS
            for c in registry.load(name).claims for key, q in c.figures.items()]
    for page in sorted((ROOT / "docs" / "es").glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        out.append((page.name, "\n".join(lines[15 if page.name == "README.md" else 0:])))
    return out


def test_no_spanish_text_breaks_the_convention():
    found = [f"{where}: {'; '.join(bad)}" for where, text in spanish_texts()
             if (bad := breaks(text))]
    assert not found, "\n".join(found)
