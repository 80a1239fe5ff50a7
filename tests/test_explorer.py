"""The explorer without a browser: hand-designed heads, page data and escaping, server, CLI."""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

from attnlab.explorer import (
    SENTENCE,
    DataError,
    ExplorerView,
    feature_matrix,
    hand_compute,
    hand_designed_page,
    render_page,
    start_server,
    validate_data,
    view_from_scores,
    write_page,
)
from attnlab.explorer.page.data import effective_tokens, head_weights, page_weights
from attnlab.explorer.page.render import script_json
from attnlab.explorer.server.httpd import make_server
from attnlab.explorer.sources.heads import (
    WORD_FEATURES,
    agreement_head,
    previous_rotation,
    previous_word_head,
    subject_head,
    words,
)

TOKENS = SENTENCE.split()  # La gata que perseguía al ratón estaba muy cansada


def _head(data: dict, name: str) -> dict:
    return next(h for h in data["views"][0]["layers"][0]["heads"] if h["name"] == name)


# --- hand-designed heads ----------------------------------------------------------------


def test_sentence_features_name_what_a_reader_sees() -> None:
    x = feature_matrix(TOKENS)
    named = {
        t: {f for f, v in zip(WORD_FEATURES, row, strict=False) if v}
        for t, row in zip(TOKENS, x, strict=True)
    }
    assert named["gata"] == {"noun", "feminine", "subject", "main clause"}
    assert named["ratón"] == {"noun", "masculine", "relative clause"}
    assert named["que"] == {"pronoun", "subject", "relative clause"}
    assert named["cansada"] == {"adjective", "feminine", "main clause"}


def test_agreement_head_cansada_attends_to_gata_not_raton() -> None:
    x = feature_matrix(TOKENS)
    scores = agreement_head().scores(x)
    i, gata, raton = TOKENS.index("cansada"), TOKENS.index("gata"), TOKENS.index("ratón")
    # by hand: q(cansada) = 3·(feminine, noun, subject); k(gata) has all three, k(ratón) only noun
    assert scores[i, gata] == pytest.approx(9.0)
    assert scores[i, raton] == pytest.approx(3.0)
    for causal in (False, True):
        for scale in (False, True):
            w = page_weights(scores, 4, causal=causal, scale=scale)
            assert int(np.argmax(w[i])) == gata
            assert w[i, gata] > 0.75 and w[i, raton] < 0.1


def test_previous_rotation_maps_each_position_to_the_one_before() -> None:
    d = 16
    rot = previous_rotation(d)
    p = np.arange(-1, 12, dtype=np.float64)
    angle = p[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)  # (n, d/2)
    pe = np.empty((len(p), d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    np.testing.assert_allclose(pe[1:] @ rot, pe[:-1], atol=1e-12)  # PE(p) R = PE(p - 1)
    np.testing.assert_allclose(rot @ rot.T, np.eye(d), atol=1e-12)  # a rotation


@pytest.mark.parametrize("n", [9, 40])
def test_previous_word_head_peaks_one_step_back(n: int) -> None:
    tokens = TOKENS if n == 9 else [f"w{i}" for i in range(n)]
    scores = previous_word_head().scores(feature_matrix(tokens))
    w = page_weights(scores, 16, causal=True)
    assert [int(np.argmax(w[i])) for i in range(1, n)] == list(range(n - 1))
    assert w[0, 0] == 1.0
    assert np.all(w[np.triu_indices(n, 1)] == 0.0)
    # the peak score is gain · d/2 (every pair's cosine is 1), unscaled
    np.testing.assert_allclose(np.diag(scores, -1), 16.0 * 8)


def test_subject_head_finds_each_verbs_subject() -> None:
    scores = subject_head().scores(feature_matrix(TOKENS))
    w = page_weights(scores, 3, causal=True)
    assert TOKENS[int(np.argmax(w[TOKENS.index("estaba")]))] == "gata"
    assert TOKENS[int(np.argmax(w[TOKENS.index("perseguía")]))] == "que"


def test_typed_sentence_gets_the_same_heads() -> None:
    text = "El perro que mordió a la gata estaba muy cansado"
    data = hand_compute(text)
    tokens = data["views"][0]["tokens"]
    w = head_weights(_head(data, "agreement"), causal=False, scale=True)
    assert tokens[int(np.argmax(w[tokens.index("cansado")]))] == "perro"
    assert words("  a  b ") == ["a", "b"]
    with pytest.raises(ValueError, match="empty"):
        hand_compute("   ")
    with pytest.raises(ValueError, match="limit is 40"):
        hand_compute("x " * 41)


def test_hand_page_shows_wq_wk_and_features() -> None:
    head = _head(hand_designed_page(), "agreement")
    assert head["w_q"]["cols"] == ["feminine", "masculine", "noun", "subject"]
    assert "adjective" in head["w_q"]["rows"] and head["d_k"] == 4
    x = np.array(head["features"]["values"])  # (n, f_used)
    np.testing.assert_allclose(x @ np.array(head["w_q"]["values"]), head["q"], atol=1e-12)
    np.testing.assert_allclose(x @ np.array(head["w_k"]["values"]), head["k"], atol=1e-12)
    assert head["dims"] == head["w_q"]["cols"]
    scores = agreement_head().scores(feature_matrix(TOKENS))
    expected = page_weights(scores, 4, causal=True, scale=False)
    np.testing.assert_allclose(head_weights(head, causal=True, scale=False), expected)


def test_head_notes_describe_the_sentence_shown() -> None:
    default = _head(hand_designed_page(), "agreement")["note"]
    assert "‘cansada’ → ‘gata’ (9 vs 3" in default
    typed = hand_compute("El perro que mordió a la gata estaba muy cansado")
    assert "‘cansado’ → ‘perro’" in _head(typed, "agreement")["note"]
    assert "cansada" not in _head(typed, "agreement")["note"]
    assert "‘estaba’ → ‘perro’" in _head(typed, "subject")["note"]
    plain = hand_compute("uno dos tres")
    assert "no adjective" in _head(plain, "agreement")["note"]
    assert "no verb" in _head(plain, "subject")["note"]


# --- weights, data and the page ---------------------------------------------------------


def test_page_weights_hand_values() -> None:
    # scores [[0, 2], [2, 0]] with d_k = 4: divided by 2 -> [0, 1]; softmax = [1, e] / (1 + e)
    w = page_weights([[0.0, 2.0], [2.0, 0.0]], 4, causal=False)
    np.testing.assert_allclose(w[0], [1 / (1 + math.e), math.e / (1 + math.e)])
    w = page_weights([[0.0, 2.0], [2.0, 0.0]], 4, causal=True)
    assert w[0].tolist() == [1.0, 0.0]
    np.testing.assert_allclose(effective_tokens([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]), [2.0, 1.0])


def _bad(mutate) -> dict:
    data = copy.deepcopy(hand_designed_page())
    mutate(data)
    return data


def _q(d: dict) -> list:
    return d["views"][0]["layers"][0]["heads"][0]["q"]


def _first(d: dict) -> dict:
    return d["views"][0]["layers"][0]["heads"][0]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("title"), "data.title"),
        (lambda d: d.update(views=[]), "data.views"),
        (lambda d: d["views"][0]["tokens"].append(3), "tokens"),
        (lambda d: _q(d).pop(), r"q: expected 9 rows"),
        (lambda d: _q(d)[2].append(0.0), r"q\[2\]"),
        (lambda d: _q(d)[0].__setitem__(0, float("nan")), "finite"),
        (lambda d: _first(d).pop("k"), "q and k go together"),
        (lambda d: _first(d).update(d_k=True), "d_k"),
        (lambda d: _first(d)["w_q"].update(values=[[1]]), "w_q"),
        (lambda d: _first(d).update(window=0), "window"),
        (lambda d: [_first(d).pop(k) for k in ("q", "k")], "q and k, scores, or weights"),
        (lambda d: [_first(d).pop(k) for k in ("q", "k")] and _first(d).update(
            weights=np.eye(9).tolist()), "fixed"),
        (lambda d: _first(d).update(dims=["a"]), "dims"),
        (lambda d: d.update(causal="yes"), "causal"),
        (lambda d: d.update(scale=1), "scale"),
    ],
)
def test_malformed_data_is_refused_with_its_place(mutate, message: str) -> None:
    with pytest.raises(DataError, match=message):
        validate_data(_bad(mutate))
    assert issubclass(DataError, ValueError)


EVIL = ["</script><script>alert(1)</script>", "a\u2028b", "<!--", "&amp;", "\"'"]


def _evil_data() -> dict:
    n = len(EVIL)
    head = {"name": "<b>h</b>", "d_k": 2, "scores": np.eye(n).tolist()}
    return {
        "title": "<i>title</i> </script>",
        "description": "tokens & <tags>",
        "views": [{"name": "v", "tokens": EVIL, "layers": [{"heads": [head]}]}],
    }


def test_page_embeds_user_text_as_escaped_json_only() -> None:
    page = render_page(_evil_data())
    assert "<script>alert" not in page and "\u2028" not in page
    assert len(re.findall(r"<script", page)) == 4  # data, config, interface text, own script
    assert "<title>&lt;i&gt;title&lt;/i&gt; &lt;/script&gt;</title>" in page
    raw = re.search(r'<script type="application/json" id="attnlab-data">(.*?)</script>', page, re.S)
    assert json.loads(raw.group(1)) == _evil_data()
    assert script_json("<>&\u2028") == '"\\u003c\\u003e\\u0026\\u2028"'


def test_page_is_self_contained_and_its_script_is_allowed_by_hash() -> None:
    page = render_page(hand_designed_page())
    rest = page
    for allowed in ("http-equiv", '"http://www.w3.org/2000/svg"', 'href="#"'):  # SVG's name,
        rest = rest.replace(allowed, "")  # and the link to the page itself
    assert not re.search(r"(src|href)\s*=|https?://|@import|url\(|fetch\(\s*[\"'`]h", rest)
    script = re.findall(r"<script>(.*?)</script>", page, re.S)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src &#x27;sha256-{digest}&#x27;" in page
    assert 'data-testid="form"' not in page  # the static page has no text box
    assert 'data-testid="form"' in render_page(hand_designed_page(), api_url="/api/attention")


def test_explorer_view_for_notebooks(tmp_path) -> None:
    view = ExplorerView(_evil_data())
    frame = view._repr_html_()
    assert frame.startswith("<iframe") and 'sandbox="allow-scripts allow-downloads"' in frame
    assert "<script" not in frame  # the whole page sits escaped inside srcdoc
    assert view.save(tmp_path / "v.html").read_text(encoding="utf-8") == view.html()
    out = write_page(hand_designed_page(), tmp_path / "sub" / "p.html")
    assert out.exists()


def test_view_from_scores_shapes() -> None:
    v = view_from_scores("m", ["a", "b"], np.zeros((2, 3, 2, 2)), 8)
    assert [h["name"] for h in v["layers"][1]["heads"]] == ["head 1", "head 2", "head 3"]
    with pytest.raises(ValueError, match=r"\(L, H, 2, 2\)"):
        view_from_scores("m", ["a", "b"], np.zeros((3, 2, 2)), 8)
    with pytest.raises(ValueError, match="finite"):
        view_from_scores("m", ["a"], np.full((1, 1, 1, 1), -np.inf), 8)


# --- the local server -------------------------------------------------------------------


def _get(url: str, headers: dict | None = None, data: bytes | None = None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _refusing(text: str) -> dict:
    if "boom" in text:
        raise ValueError("the input is 2000 tokens; the model's context is 128\nmore")
    if "bug" in text:
        raise RuntimeError("secret internals")
    return hand_compute(text)


def test_server_answers_page_and_json_and_refuses_bad_input() -> None:
    with start_server(_refusing, max_chars=50, max_tokens=12) as srv:
        assert srv.url.startswith("http://127.0.0.1:") and srv.port > 0
        status, page = _get(srv.url)
        assert status == 200 and 'data-testid="form"' in page
        status, body = _get(srv.url + "api/attention?text=la%20gata%20duerme")
        assert status == 200 and json.loads(body)["views"][0]["tokens"] == ["la", "gata", "duerme"]
        post = json.dumps({"text": "<script>x</script> hola"}).encode()
        status, body = _get(srv.url + "api/attention", {"Content-Type": "application/json"}, post)
        assert json.loads(body)["views"][0]["tokens"] == ["<script>x</script>", "hola"]
        status, body = _get(srv.url + "api/attention", data=b"text=uno+dos")
        assert json.loads(body)["views"][0]["tokens"] == ["uno", "dos"]
        cases = {
            "a" * 51: "the input is 51 characters; the limit is 50",
            "a " * 13: "the input is 13 tokens; the limit is 12",
            "boom": "the input is 2000 tokens; the model's context is 128",
            "  ": "type a sentence first",
        }
        for text, message in cases.items():
            status, body = _get(srv.url + "api/attention?" + urllib.parse.urlencode({"text": text}))
            assert (status, json.loads(body)) == (400, {"error": message})
        status, body = _get(srv.url + "api/attention?text=bug")
        assert status == 500 and "secret" not in body
        assert _get(srv.url + "api/attention")[0] == 400
        assert _get(srv.url + "nope")[0] == 404
        assert _get(srv.url, {"Host": "evil.example:80"})[0] == 400  # DNS rebinding guard
    with pytest.raises(ValueError, match="127.0.0.1 only"):
        make_server(hand_compute, host="0.0.0.0", port=0)


# --- adapters and the command line ------------------------------------------------------


def _cli(argv: list[str]) -> argparse.Namespace:
    from attnlab.cli import explore

    parser = argparse.ArgumentParser(prog="attnlab")
    explore.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["explore", *argv])


def test_cli_writes_the_hand_page(tmp_path, capsys) -> None:
    out = tmp_path / "e.html"
    args = _cli(["--out", str(out)])
    assert args.func(args) == 0 and "wrote" in capsys.readouterr().out
    assert "perseguía" in out.read_text(encoding="utf-8")
    args = _cli(["--text", "El gato duerme", "--out", str(out)])
    assert args.func(args) == 0 and "duerme" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--checkpoint", "runs/x"], "run directory not found"),
        (["--port", "9000"], "--port only goes with --serve"),
        (["--serve", "--out", "x.html"], "choose one"),
        (["--text", " "], "empty"),
        (["--hf-model", "/nonexistent/dir"], None),
    ],
)
def test_cli_refuses_unsupported_combinations(argv: list[str], message: str | None) -> None:
    args = _cli(argv)
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        args.func(args)


def test_cli_refuses_non_utf8_text_and_keeps_the_existing_page(tmp_path, capsys) -> None:
    from attnlab.cli import main as cli_main

    out = tmp_path / "e.html"
    assert cli_main.main(["explore", "--out", str(out)]) == 0
    before = out.read_bytes()
    text = b"la gata \xff\xfe".decode("utf-8", errors="surrogateescape")  # as Python reads argv
    assert cli_main.main(["explore", "--text", text, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--text is not valid UTF-8 (byte 0xff) at character 9: pass the sentence "
                        "as UTF-8 text") and "\n" not in err  # fmt: skip
    assert out.read_bytes() == before and len(before) > 1000
    assert [p.name for p in tmp_path.iterdir()] == ["e.html"]  # no temporary file left behind


def test_head_weights_follow_bias_window_and_own_weights() -> None:
    # q·k = [[1, 0], [2, 4]] with d_k = 4 -> ÷2 -> [[.5, 0], [1, 2]]; bias -1 on (1, 0)
    head = {"name": "h", "d_k": 4, "q": [[1.0, 0, 0, 0], [2.0, 1.0, 0, 0]],
            "k": [[1.0, 0, 0, 0], [0, 4.0, 0, 0]], "bias": [[0, 0], [-1.0, 0]]}  # fmt: skip
    w = head_weights(head, causal=True, scale=True)
    assert w[0].tolist() == [1.0, 0.0]
    np.testing.assert_allclose(w[1], [1 / (1 + math.e**2), math.e**2 / (1 + math.e**2)])
    w = head_weights({**head, "window": 1}, causal=True, scale=False)  # only the key itself
    assert w.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    own = {**head, "weights": [[0.5, 0.5], [0.5, 0.5]]}
    assert head_weights(own, causal=True, scale=True, own=True).tolist() == own["weights"]
    np.testing.assert_allclose(head_weights(own, causal=True, scale=True), w * 0 + head_weights(
        head, causal=True, scale=True))  # fmt: skip


def test_rounded_keeps_seven_significant_digits() -> None:
    from attnlab.explorer.page.data import rounded

    x = np.array([[1234.56789, -0.000123456789, 0.0, 1e-30]])
    np.testing.assert_allclose(rounded(x), x, rtol=5e-7)
    assert rounded(x)[0][:3] == [1234.568, -0.0001234568, 0.0]


def test_a_spanish_page_is_refused_in_spanish() -> None:
    """The server's refusals follow the page's language, a model's own refusal included
    (raised as a template); the English is the test above's."""
    import threading

    from attnlab.errors import UsageError
    from attnlab.explorer.server.app import App, Refused

    def refusing(text: str) -> dict:
        if "boom" in text:
            raise UsageError("the input is %s tokens; the model's context is %s", 2000, 128)
        return hand_compute(text)

    app = App(refusing, max_chars=50, max_tokens=12, default_text="la gata",
              lock=threading.Lock(), lang="es")
    cases = {"a" * 51: "la entrada tiene 51 caracteres; el límite es 50",
             "a " * 13: "la entrada tiene 13 tokens; el límite es 12",
             "boom": "la entrada tiene 2000 tokens; el contexto del modelo es de 128",
             "  ": "escribe primero una frase",
             "\ud800": "el texto contiene un sustituto suelto (U+D800), que no es un carácter: "
                       "envía texto UTF-8"}
    for text, message in cases.items():
        with pytest.raises(Refused) as refused:
            app.attention(text)
        assert str(refused.value) == message
