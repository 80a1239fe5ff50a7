"""``attnlab explore --translation`` at the micro profile's budget (seconds of training): the
page's five views, their shapes and kinds (/work/FORMAT.md), the transformer's own weights
recomputed from the q and k the page carries, the gold alignment, both languages, and the
one-line refusals of a sentence outside the translation language."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attnlab.cli import main as cli_main
from attnlab.data.translation import translate
from attnlab.explorer.page.data import head_weights, validate_data, view_attends
from attnlab.explorer.page.encoding import decode_data
from attnlab.explorer.sources.translation import SENTENCE

KINDS = ["cross", "cross", "bidirectional", "causal", "cross"]
NAMES = {
    "en": ["additive model: alignment", "gold alignment", "transformer: encoder self-attention",
           "transformer: decoder self-attention", "transformer: cross-attention"],
    "es": ["modelo aditivo: alineamiento", "alineamiento correcto",
           "transformer: autoatención del codificador",
           "transformer: autoatención del decodificador", "transformer: atención cruzada"],
}  # fmt: skip


@pytest.fixture(scope="module")
def micro(tmp_path_factory):
    """The translation experiment's quick profile replaced by its micro one, and one --work."""
    from attnlab.experiments import translation

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(translation.PROFILES, "quick", translation.PROFILES["micro"])
        yield tmp_path_factory.mktemp("translation")


def _page(path) -> dict:
    html = path.read_text(encoding="utf-8")
    return decode_data(json.loads(re.search(r'id="attnlab-data">(.*?)</script>', html, re.S)[1]))


def _explore(micro, name: str, *argv: str) -> dict:
    out = micro / f"{name}.html"
    args = ["explore", "--translation", "--work", str(micro / "w"), "--out", str(out), *argv]
    assert cli_main.main(args) == 0
    return _page(out)


@pytest.fixture(scope="module")
def pages(micro) -> dict[str, dict]:
    return {lang: _explore(micro, lang, "--lang", lang) for lang in ("en", "es")}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_page_has_five_labelled_views_of_the_right_shapes(pages, lang: str) -> None:
    data = pages[lang]
    validate_data(data)
    pair = translate(SENTENCE)
    written, read = [*pair.target, "<eos>"], ["<bos>", *pair.target]
    source = [*pair.source, "<eos>"]
    views = data["views"]
    assert [v["name"] for v in views] == NAMES[lang]
    assert [view_attends(v) for v in views] == KINDS
    assert [v["tokens"] for v in views] == [written, written, source, read, written]
    assert [v.get("sources") for v in views] == [source, source, None, None, source]
    assert ["fixed" in v for v in views] == [True, True, False, False, False]
    shapes = [(len(v["tokens"]), len(v.get("sources", v["tokens"]))) for v in views]
    for v, shape in zip(views, shapes, strict=True):
        assert len(v["layers"]) == 1  # micro: one layer on each side
        for layer in v["layers"]:
            assert len(layer["heads"]) == (1 if "fixed" in v else 2)  # micro: two heads
            for h in layer["heads"]:
                assert np.asarray(h["weights"]).shape == shape, v["name"]
    gold = np.asarray(views[1]["layers"][0]["heads"][0]["weights"])
    assert gold[:-1, :-1].tolist() == pair.alignment_matrix().tolist() and not gold[-1].any()
    additive = np.asarray(views[0]["layers"][0]["heads"][0]["weights"])
    np.testing.assert_allclose(additive.sum(-1), 1.0, atol=1e-6)


def test_the_transformers_weights_are_its_q_and_k_under_its_own_mask(pages) -> None:
    for v in pages["en"]["views"][2:]:
        for h in v["layers"][0]["heads"]:
            recomputed = head_weights(h, causal=False, scale=True, attends=view_attends(v))
            np.testing.assert_allclose(recomputed, h["weights"], atol=2e-6, err_msg=v["name"])
    decoder = np.asarray(pages["en"]["views"][3]["layers"][0]["heads"][0]["weights"])
    assert (decoder[np.triu_indices(len(decoder), 1)] == 0).all()


def test_the_page_says_which_target_it_shows_in_each_language(pages) -> None:
    en, es = pages["en"], pages["es"]
    assert "teacher forcing" in en["description"] and "greedy" in en["description"]
    assert "“la niña callada que perseguía al ratón estaba muy cansada .”" in en["description"]
    assert "como en el entrenamiento" in es["description"] and "voraz" in es["description"]
    assert es["title"].startswith("Donde nació la atención")
    assert "vᵀ tanh(W s + U h)" in es["views"][0]["fixed"] and "correcto" in es["views"][1]["name"]
    number = re.compile(r"\d+")
    assert number.findall(en["description"]) == number.findall(es["description"])


def test_text_takes_an_english_sentence_of_the_language(micro) -> None:
    data = _explore(micro, "typed", "--text", "The tired hen that pushed a cow was happy")
    assert data["views"][4]["sources"] == [*"the tired hen that pushed a cow was happy .".split(),
                                           "<eos>"]  # fmt: skip
    assert data["views"][4]["tokens"][:3] == ["la", "gallina", "cansada"]


@pytest.mark.parametrize(("argv", "said"), [
    (["--text", "the cat was tired ."],
     "--text: “cat” is not a word of the translation language; its words are: . that was very"),
    (["--text", "the girl was .", "--lang", "es"],
     "--text: no es una frase del lenguaje de traducción (expected an adjective"),
    (["--serve"], "--translation writes a page for one sentence (--text): --serve does not go"),
])  # fmt: skip
def test_a_sentence_outside_the_language_is_one_line_before_any_training(
        micro, capsys, argv: list[str], said: str) -> None:  # fmt: skip
    work = micro / "refused"
    out = [] if "--serve" in argv else ["--out", str(micro / "refused.html")]
    assert cli_main.main(["explore", "--translation", "--work", str(work), *out, *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err
    assert not work.exists()  # refused before a run was trained
