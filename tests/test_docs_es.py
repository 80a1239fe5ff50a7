"""The Spanish front page, docs/es/README.md, says what the README's front door says: the same
commands (Spanish ones differ only by ``--lang es`` and the folder a learner names) and the same
figures, and the README links it in its first lines. The Spanish pages beside it (labs,
explorer, experiments) show the same ``attnlab`` commands and the same figures as their English
pages, and the front page links each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

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


# ---- the Spanish pages beside the front page: each kept in step with its English page(s) ----

DOCS = ROOT / "docs"
# Spanish page -> the English pages it stands for
PAGES = {
    "labs.md": ("labs.md",),
    "explorer.md": ("explorer.md", "explorer-views.md"),
    "experiments.md": ("experiments.md",),
}
PAGE_FOLDERS = {**FOLDERS, "mis-labs": "my-labs", "clase-3b": "class-3b", "hojas": "sheets"}
ATTNLAB = re.compile(r"^(?:\.venv/bin/)?attnlab\s+[a-z]")  # a command line, not a word
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+\.png)\)")


def attnlab_commands(text: str) -> set[str]:
    """The ``attnlab …`` command lines of a page's code blocks, comments left out, in one
    language: ``--lang es`` dropped, the folders named as in English, ``.venv/bin/`` dropped."""
    out = set()
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("#"):
                continue
            for cmd in (part.strip() for part in line.split("&&")):
                if not ATTNLAB.match(cmd):
                    continue
                cmd = cmd.removeprefix(".venv/bin/").replace(" --lang es", "")
                for es, en in PAGE_FOLDERS.items():
                    cmd = re.sub(rf"\b{es}\b", en, cmd)
                out.add(" ".join(cmd.split()))
    return out


def images(text: str, page: Path) -> set[Path]:
    """The figures a page shows (its images), as files."""
    return {(page.parent / target).resolve() for target in IMAGE.findall(text)}


def generated_sections(text: str) -> set[str]:
    """The anchors of the sections of an English page that hold a generated block of measured
    figures (``<!-- results:NAME:begin -->``)."""
    out = set()
    for m in re.finditer(r"<!-- results:\w+:begin -->", text):
        heading = re.findall(r"^## (.+)$", text[:m.start()], re.M)[-1]
        out.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return out


def _pair(name: str) -> tuple[str, list[tuple[Path, str]]]:
    es = _text(DOCS / "es" / name)
    return es, [(DOCS / en, _text(DOCS / en)) for en in PAGES[name]]


def test_every_spanish_page_exists_and_the_front_page_links_it():
    front = _text(ES)
    for name in PAGES:
        assert (DOCS / "es" / name).is_file(), f"docs/es/{name} is missing"
        assert f"]({name})" in front or f"]({name}#" in front, f"docs/es/README.md lacks {name}"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_spanish_page_gives_its_english_pages_commands(name):
    es, english = _pair(name)
    en = set().union(*(attnlab_commands(text) for _, text in english))
    got = attnlab_commands(es)
    assert sorted(en - got) == [], f"docs/es/{name} lacks these commands"
    assert sorted(got - en) == [], f"docs/es/{name} has commands its English page lacks"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_spanish_page_shows_its_english_pages_figures(name):
    """The same images, and a link to each section whose measured figures are generated (in
    English, from docs/results by scripts/results_doc.py) rather than a copy of them."""
    es, english = _pair(name)
    en = set().union(*(images(text, page) for page, text in english))
    assert images(es, DOCS / "es" / name) == en, f"docs/es/{name}: not the English page's images"
    for page, text in english:
        for anchor in generated_sections(text):
            assert f"](../{page.name}#{anchor})" in es, f"docs/es/{name} lacks a link to #{anchor}"
        assert not GENERATED.search(es)  # generated in English: linked, not copied


def test_the_spanish_labs_lists_are_generated_in_spanish():
    import importlib.util

    spec = importlib.util.spec_from_file_location("labs_doc", ROOT / "scripts" / "labs_doc.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = _text(DOCS / "es" / "labs.md")
    assert page == script.render(page, "es"), "run .venv/bin/python scripts/labs_doc.py"
    assert "| N | nombre | minutos |" in page and "muestras en los tamaños" in page
    assert "**4. máscaras causales" in page  # the mistakes under the exercises' Spanish titles


def test_the_spanish_experiments_page_has_each_experiments_spanish_title():
    from attnlab.kit import registry

    headings = re.findall(r"^## (.+)$", _text(DOCS / "es" / "experiments.md"), re.M)
    names = registry.names()
    assert len(names) >= 11
    for name in names:
        words = json.loads((ROOT / "src" / "attnlab" / "experiments" / name / "words.json")
                           .read_text(encoding="utf-8"))
        assert words["report"][f"title.{name}"]["es"] in headings, name


def test_the_page_checks_can_fail():
    es, english = _pair("labs.md")
    dropped = es.replace("attnlab lab hint 4 ", "attnlab lab pista 4 ")
    en = set().union(*(attnlab_commands(text) for _, text in english))
    assert "attnlab lab hint 4" in en - attnlab_commands(dropped)
    es, english = _pair("explorer.md")
    gone = es.replace("](../explorer-long.png)", "](../explorer.png)")
    assert images(gone, DOCS / "es" / "explorer.md") != images(es, DOCS / "es" / "explorer.md")
    es, english = _pair("experiments.md")
    assert generated_sections(english[0][1]) >= {"agreement", "induction-heads"}
