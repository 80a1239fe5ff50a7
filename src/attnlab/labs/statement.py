"""An exercise's statement page: the Markdown a teacher reads and edits, read into the texts the
catalogue gives (``attnlab.labs.exercises.words`` hands them to ``attnlab.i18n.own``).

Each exercise's folder holds one page per language, ``statement.md`` (English) and
``statement.es.md`` (Spanish), with the same sections, each headed in its own language::

    # stable softmax                    -> <name>.title

    Write `softmax(x, axis=-1)`: ...    -> <name>.statement: all before the first "##"

    ## What the checker proves          -> <name>.proves (es: ## Lo que prueba el comprobador)

    `[1, e]/(1+e)` by hand, ...

    ## Hint 1                           -> <name>.hint1 (es: ## Pista 1), and so on

    exp(1000) is inf in float64. ...

A section's text is what lies between its heading and the next one, without the blank lines
around it, exactly as the stub, the notebook and ``lab hint`` show it. A ``#`` line inside a
code fence is the code's, and a ``###`` heading the section's own. A page that does not open
with ``# title``, or a ``#`` or ``##`` heading that is none of these, is a ``ValueError``
naming the file and the line.

Left out: the words that are not prose a teacher edits as a page (case titles, mistake
messages, the solution's Spanish comments): they stay in the folder's ``words.json``.
"""

from __future__ import annotations

import re

HEADINGS = {  # language -> (the heading of "proves", the word before a hint's number)
    "en": ("What the checker proves", "Hint"),
    "es": ("Lo que prueba el comprobador", "Pista"),
}
FENCE = "```"


def read(page: str, lang: str, where: str) -> dict[str, str]:
    """The texts of one statement page in ``lang``: section -> text, the sections being
    ``title``, ``statement``, ``proves`` and ``hint1``… . ``where`` names the page in errors.

    >>> read("# mean\\n\\nWrite it.\\n\\n## Hint 1\\n\\nA nudge.\\n", "en", "mean/statement.md")
    {'title': 'mean', 'statement': 'Write it.', 'hint1': 'A nudge.'}
    """
    proves, hint = HEADINGS[lang]
    lines = page.split("\n")
    if not lines[0].startswith("# "):
        raise ValueError(f"{where}:1: a statement page opens with '# ' and the exercise's title")
    sections: dict[str, list[str]] = {"title": [lines[0][2:]], "statement": []}
    current, fenced = "statement", False
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith(FENCE):
            fenced = not fenced
        heading = None if fenced else re.fullmatch(r"(#{1,2}) (.*)", line)
        if heading is None:  # text, a "###" heading of the statement's own included
            sections[current].append(line)
            continue
        numbered = re.fullmatch(rf"{hint} (\d+)", heading.group(2).strip())
        if heading.group(1) == "##" and heading.group(2).strip() == proves:
            current = "proves"
        elif heading.group(1) == "##" and numbered:
            current = f"hint{int(numbered.group(1))}"
        else:
            raise ValueError(f"{where}:{number}: {line!r} is not a section of a statement page "
                             f"(## {proves}, ## {hint} 1, ## {hint} 2, ...)")
        if current in sections:
            raise ValueError(f"{where}:{number}: {line!r} comes twice")
        sections[current] = []
    return {name: "\n".join(body).strip("\n") for name, body in sections.items()}
