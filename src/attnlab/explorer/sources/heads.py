"""Hand-designed attention heads over word features a reader can name.

Dimension legend: ``n`` words (positions), ``f`` named features (the columns of
X), ``k`` query/key width of one head (``d_k``), ``d`` width of the sinusoidal
position encoding.

Each word is a row of a small feature matrix ``X`` (n, f): word class
(noun, verb, …), gender, its role (subject) and clause, and its position as a
sinusoidal encoding. A head is a pair of explicit matrices ``W_Q``, ``W_K``
(f, k) so that its raw scores are ``(X W_Q)(X W_K)ᵀ`` (n, n); nothing is
learned. The explorer page turns the scores into weights itself (softmax,
optional √d_k division and causal mask), so the heads here stop at the scores.

Three heads over ``La gata que perseguía al ratón estaba muy cansada``:

- *agreement*: an adjective looks for a noun of its own gender that is a
  subject, so ``cansada`` attends to ``gata`` and not to the nearer ``ratón``;
- *previous word*: built on the rotation property of the sinusoidal encoding
  (Vaswani et al. 2017, §3.5): ``PE(p - 1)`` is ``PE(p)`` rotated, pair by pair,
  by a fixed angle, so a query ``PE(p) R`` against keys ``PE(j)`` peaks at
  ``j = p - 1``;
- *subject*: a verb looks for the subject of its own clause (``estaba`` →
  ``gata``, ``perseguía`` → ``que``).

Each head's note states its rule for any sentence; ``sentence_note`` adds
what the head does on the sentence shown (the page shows both).

Left out: real parsing. Word features come from a tiny lexicon and roles from
a toy rule (``que`` opens a relative clause that ends at the first noun after
its verb; the first noun outside it is the subject), enough for sentences
shaped like the example, wrong for most others. Unknown words get position
features only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from attnlab.i18n import text
from attnlab.reference.positions import sinusoidal


def _say(key: str, lang: str, **fields: object) -> str:
    return text("explorer", key, lang, **fields)


SENTENCE = "La gata que perseguía al ratón estaba muy cansada"

# Named features of a word; the position encoding columns follow them in X.
WORD_FEATURES = (
    "determiner", "noun", "pronoun", "verb", "adjective", "adverb",
    "feminine", "masculine", "subject", "main clause", "relative clause",
)  # fmt: skip

# Word class and gender by word (lower case). A read-only mapping, not state.
LEXICON = MappingProxyType(
    {
        "la": ("determiner", "feminine"),
        "el": ("determiner", "masculine"),
        "una": ("determiner", "feminine"),
        "un": ("determiner", "masculine"),
        "al": ("determiner", "masculine"),  # a + el: the article part is what agrees
        "a": (),
        "gata": ("noun", "feminine"),
        "gato": ("noun", "masculine"),
        "rata": ("noun", "feminine"),
        "ratón": ("noun", "masculine"),
        "perra": ("noun", "feminine"),
        "perro": ("noun", "masculine"),
        "niña": ("noun", "feminine"),
        "niño": ("noun", "masculine"),
        "que": ("pronoun",),
        "perseguía": ("verb",),
        "mordió": ("verb",),
        "vio": ("verb",),
        "estaba": ("verb",),
        "era": ("verb",),
        "muy": ("adverb",),
        "cansada": ("adjective", "feminine"),
        "cansado": ("adjective", "masculine"),
        "contenta": ("adjective", "feminine"),
        "contento": ("adjective", "masculine"),
    }
)

PE_WIDTH = 16  # d of the position encoding: small enough to print, 8 frequencies
AGREEMENT_GAIN = 3.0  # how strongly a matched feature counts; sets how peaked the rows are
SUBJECT_GAIN = 4.0
PREVIOUS_GAIN = 16.0  # PE(p-1)·PE(p-1) = d/2 beats its neighbours by only ~0.5, so amplify


@dataclass(frozen=True)
class HandHead:
    """One hand-designed head: explicit W_Q, W_K over the columns of X."""

    name: str
    note: str
    w_q: np.ndarray  # (f, k)
    w_k: np.ndarray  # (f, k)
    latent: tuple[str, ...]  # names of the k query/key dimensions
    asks: str | None = None  # the word class whose rows the sentence note describes
    gain: float = 0.0  # how strongly a match counts (the previous-word note says it)

    def note_in(self, lang: str) -> str:
        """The head's rule for any sentence, in ``lang`` (``note`` is the English)."""
        return _say(f"hand.note.{self.name}", lang, gain=f"{self.gain:g}")

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Raw, unscaled scores ``(X W_Q)(X W_K)ᵀ``, shape (n, n)."""
        return (x @ self.w_q) @ (x @ self.w_k).T  # (n, k) @ (k, n)


def words(text: str) -> list[str]:
    """Split a sentence into words on white space (punctuation stays on its word)."""
    return text.split()


def _key(word: str) -> str:
    return re.sub(r"[^\w]", "", word.lower())


def position_names(d: int = PE_WIDTH) -> list[str]:
    """Column names of the sinusoidal encoding: ``sin p·ω0``, ``cos p·ω0``, …"""
    return [f"{fn} p·ω{i}" for i in range(d // 2) for fn in ("sin", "cos")]


def feature_names(d: int = PE_WIDTH) -> list[str]:
    """All columns of X: the named word features, then the position encoding."""
    return list(WORD_FEATURES) + position_names(d)


def _roles(classes: list[tuple[str, ...]]) -> list[set[str]]:
    """Toy clause and subject rule (see the module docstring), one role set per word."""
    roles: list[set[str]] = []
    in_relative, seen_verb, main_subject = False, False, False
    for i, cls in enumerate(classes):
        role: set[str] = set()
        if "pronoun" in cls:  # `que` opens a relative clause and is its subject
            in_relative, seen_verb = True, False
            nxt = classes[i + 1] if i + 1 < len(classes) else ()
            role.add("relative clause")
            if "verb" in nxt:
                role.add("subject")
        elif in_relative:
            role.add("relative clause")
            seen_verb = seen_verb or "verb" in cls
            if seen_verb and "noun" in cls:  # the object closes the clause
                in_relative = False
        else:
            role.add("main clause")
            if "noun" in cls and not main_subject:
                role.add("subject")
                main_subject = True
        roles.append(role)
    return roles


def feature_matrix(tokens: list[str], d: int = PE_WIDTH) -> np.ndarray:
    """X for a list of words, shape (n, f): 0/1 word features, then PE(position)."""
    classes = [LEXICON.get(_key(t), ()) for t in tokens]
    named = np.zeros((len(tokens), len(WORD_FEATURES)))
    for i, (cls, role) in enumerate(zip(classes, _roles(classes), strict=True)):
        for name in (*cls, *role):
            named[i, WORD_FEATURES.index(name)] = 1.0
    return np.concatenate([named, sinusoidal(len(tokens), d)], axis=1)  # (n, f)


def previous_rotation(d: int = PE_WIDTH) -> np.ndarray:
    """The (d, d) matrix R with ``PE(p) @ R == PE(p - 1)`` for every p.

    Pair i holds ``(sin pω, cos pω)`` with ``ω = 10000^(-2i/d)``; turning it back
    by ω gives ``(sin(p-1)ω, cos(p-1)ω)``. As a row vector times a matrix, the
    2×2 block is ``[[cos ω, sin ω], [-sin ω, cos ω]]``. The block does not
    depend on p: that is the rotation property.
    """
    omega = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    rot = np.zeros((d, d))
    for i, w in enumerate(omega):
        c, s = np.cos(w), np.sin(w)
        rot[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    return rot


def _projection(rows: dict[str, dict[str, float]], latent: list[str]) -> np.ndarray:
    """W (f, k) from {feature: {latent dim: value}}; every other entry is zero."""
    cols = feature_names()
    w = np.zeros((len(cols), len(latent)))
    for feat, entries in rows.items():
        for dim, value in entries.items():
            w[cols.index(feat), latent.index(dim)] = value
    return w


def agreement_head(gain: float = AGREEMENT_GAIN) -> HandHead:
    """An adjective asks for a subject noun of its own gender."""
    latent = ["feminine", "masculine", "noun", "subject"]
    w_q = _projection(
        {
            "feminine": {"feminine": gain},
            "masculine": {"masculine": gain},
            "adjective": {"noun": gain, "subject": gain},
        },
        latent,
    )
    w_k = _projection(
        {"feminine": {"feminine": 1.0}, "masculine": {"masculine": 1.0},
         "noun": {"noun": 1.0}, "subject": {"subject": 1.0}},
        latent,
    )  # fmt: skip
    note = _say("hand.note.agreement", "en")
    return HandHead("agreement", note, w_q, w_k, tuple(latent), asks="adjective", gain=gain)


def subject_head(gain: float = SUBJECT_GAIN) -> HandHead:
    """A verb asks for a subject; every word asks for its own clause."""
    latent = ["subject", "main clause", "relative clause"]
    w_q = _projection(
        {
            "verb": {"subject": gain},
            "main clause": {"main clause": gain},
            "relative clause": {"relative clause": gain},
        },
        latent,
    )
    w_k = _projection(
        {"subject": {"subject": 1.0}, "main clause": {"main clause": 1.0},
         "relative clause": {"relative clause": 1.0}},
        latent,
    )  # fmt: skip
    note = _say("hand.note.subject", "en")
    return HandHead("subject", note, w_q, w_k, tuple(latent), asks="verb", gain=gain)


def previous_word_head(gain: float = PREVIOUS_GAIN, d: int = PE_WIDTH) -> HandHead:
    """Queries ``gain · PE(p) R = gain · PE(p-1)``, keys ``PE(j)``: peaks at ``j = p - 1``.

    The score is ``gain · Σ_i cos((p - 1 - j) ω_i)``, largest (``gain · d/2``)
    when ``j = p - 1``. Without the causal mask ``j = p - 2`` and ``j = p`` tie
    for second place, one step away on either side.
    """
    n_named = len(WORD_FEATURES)
    latent = [f"pe{i}" for i in range(d)]
    w_q = np.zeros((n_named + d, d))
    w_k = np.zeros((n_named + d, d))
    w_q[n_named:] = gain * previous_rotation(d)
    w_k[n_named:] = np.eye(d)
    note = _say("hand.note.previous word", "en", gain=f"{gain:g}")
    return HandHead("previous word", note, w_q, w_k, tuple(latent), gain=gain)


def sentence_note(
    head: HandHead, tokens: list[str], scores: np.ndarray, lang: str = "en"
) -> str:
    """What ``head`` does on *this* sentence: each row of the word class it is built for
    (``head.asks``) and the word it scores highest, e.g. ``‘cansada’ → ‘gata’ (9 vs 3 on
    the next best ‘ratón’)``; empty for a head that is the same on every sentence."""
    if head.asks is None:
        return ""
    column = WORD_FEATURES.index(head.asks)
    rows = [i for i, row in enumerate(feature_matrix(tokens)) if row[column]]
    if not rows:
        return _say("hand.none", lang, asks=_say(f"hand.asks.{head.asks}", lang))
    parts = []
    for i in rows:
        order = np.argsort(-scores[i], kind="stable")  # keys, highest score first
        best, second = int(order[0]), int(order[1]) if len(order) > 1 else None
        nxt = "" if second is None else _say("hand.next", lang, score=f"{scores[i, second]:g}",
                                              other=tokens[second])  # fmt: skip
        parts.append(_say("hand.part", lang, query=tokens[i], best=tokens[best],
                          score=f"{scores[i, best]:g}", next=nxt))  # fmt: skip
    return _say("hand.in_sentence", lang, parts="; ".join(parts))


def hand_heads() -> list[HandHead]:
    """The heads shown on the hand-designed page, in display order."""
    return [agreement_head(), previous_word_head(), subject_head()]
