"""The Spanish front page, docs/es/README.md, says what the README's front door says: the same
commands (Spanish ones differ only by ``--lang es`` and the folder a learner names) and the same
figures, and the README links it in its first lines."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "docs" / "es" / "README.md"
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)
GENERATED = re.compile(r"<!-- results:(\w+):begin -->.*?<!-- results:\1:end -->", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
# a figure: 3.11, 0.7, 1; not the 256 of sha256 nor the 2 of a word's suffix
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
FOLDERS = {"ejercicios": "exercises"}  # what a learner names their folder, in each language


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def front_door(text: str) -> str:
    """The README up to its experiments: the two commands, requirements, install, five
    minutes, the quick profile."""
    return text.split("\n## The experiments", 1)[0]


def commands(text: str) -> list[str]:
    """Every command of the page's code blocks, comments left out, in one language:
    ``--lang es`` dropped and the learner's folder named as in English."""
    out = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            cmd = line.split("  #", 1)[0].strip()
            if not cmd or cmd.startswith("#"):
                continue
            cmd = cmd.replace(" --lang es", "")
            for es, en in FOLDERS.items():
                cmd = re.sub(rf"\b{es}\b", en, cmd)
            out.append(cmd)
    return out


def figures(text: str) -> set[str]:
    """The numbers a page's prose shows, outside code, link targets and generated blocks."""
    prose = LINK_TARGET.sub("]", GENERATED.sub("", FENCE.sub("", text)))
    prose = re.sub(r"`[^`]*`", "", prose)
    return set(NUMBER.findall(prose))


def test_the_readme_links_the_spanish_page_in_its_first_lines_and_back():
    first = "\n".join(_text(ROOT / "README.md").splitlines()[:5])
    assert "[Español](docs/es/README.md)" in first
    assert "[English](../../README.md)" in "\n".join(_text(ES).splitlines()[:5])


def test_the_spanish_page_gives_the_front_doors_commands():
    readme = _text(ROOT / "README.md")
    es, door, every = commands(_text(ES)), commands(front_door(readme)), commands(readme)
    assert len(door) >= 10  # the parse found the commands at all
    assert [c for c in door if c not in es] == [], "the Spanish page lacks these"
    assert [c for c in es if c not in every] == [], "the README lacks these"
    assert es[:2] == door[:2]  # the two commands open both pages
    spanish = _text(ES)
    for said in ("lab start 1 ejercicios --lang es", "explore --lang es",
                 "reproduce --profile quick --out report --lang es"):
        assert said in spanish


def test_the_spanish_page_shows_the_front_doors_figures():
    readme, es = _text(ROOT / "README.md"), figures(_text(ES))
    door = figures(front_door(readme))
    assert {"3.11", "0.7", "1.8", "1.1"} <= door  # the parse found the figures at all
    assert sorted(door - es) == [], "the Spanish page lacks these figures"
    assert sorted(es - figures(readme)) == [], "the Spanish page shows figures the README does not"


def test_the_check_can_fail():
    readme = _text(ROOT / "README.md")
    changed = readme.replace("0.7 GB", "0.8 GB").replace("--out preview", "--out vista")
    assert figures(front_door(changed)) - figures(_text(ES)) == {"0.8"}
    assert "attnlab reproduce --profile micro --out vista" not in commands(_text(ES))
    assert ".venv/bin/attnlab reproduce --profile micro --out vista" in commands(changed)


def test_spanish_numbers_are_written_as_in_code():
    """One convention for Spanish: the decimal point (0.75), no thousands separator."""
    prose = FENCE.sub("", _text(ES))
    assert re.findall(r"\d,\d", prose) == []
    assert re.findall(r"(?<![\d.])[1-9]\d{0,2}\.\d{3}(?!\d)", prose) == []
