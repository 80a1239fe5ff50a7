"""The explorer's data beyond one layer: compact float16/8-bit matrices (Python encoder, and
the page's decode.js run under node), and attention composed across layers (rollout and
value-weighted) against hand-computed two-layer cases and an attnlab model's own modules."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from importlib import resources

import numpy as np
import pytest
import torch

from attnlab.data.synthetic import Vocab
from attnlab.explorer.page.composed import composed, rollout, value_weighted
from attnlab.explorer.page.data import DataError, validate_data
from attnlab.explorer.page.encoding import (
    decode,
    decode_data,
    encode_f16,
    encode_page,
    encode_u8,
    matrix_count,
)
from attnlab.explorer.page.render import page_script, render_page
from attnlab.explorer.sources.models import checkpoint_view
from attnlab.explorer.sources.traces import attnlab_traces
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig

HALF_ULP = 2.0**-11  # float16's largest relative rounding error (10 fraction bits)


def _matrices(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.random((5, 5)) * np.tri(5)
    return [
        rng.normal(size=(4, 3)) * 10.0,  # q-like
        w / w.sum(-1, keepdims=True),  # causal weights: upper triangle exactly 0
        np.array([[1e-6, -3e-7], [65504.0, 0.0]]),  # subnormal and the largest float16
        np.zeros((1, 1)),
    ]


# --- the encoder and its precision --------------------------------------------------------


@pytest.mark.parametrize("a", _matrices(), ids=["q", "weights", "extremes", "zero"])
def test_float16_round_trip_is_within_half_an_ulp(a) -> None:
    enc = encode_f16(a)
    back = decode(enc)
    assert back.shape == a.shape
    normal = np.abs(a) >= 2.0**-14
    assert (np.abs(back - a)[normal] <= HALF_ULP * np.abs(a)[normal]).all()
    assert (np.abs(back - a)[~normal] <= 2.0**-25).all()  # subnormals: half their spacing
    assert ("tri" in enc) == (a.shape[0] > 1 and not np.triu(a, 1).any())


def test_lower_triangle_holds_only_its_numbers() -> None:
    w = _matrices()[1]
    enc = encode_f16(w)
    assert enc["tri"] == "lower" and len(enc["b64"]) == 4 * -(-2 * 15 // 3)  # 15 halves
    assert (decode(enc) == np.tril(decode(encode_f16(w + np.triu(np.ones((5, 5)), 1))))).all()


def test_u8_round_trip_is_within_half_a_step() -> None:
    a = _matrices()[0]
    enc = encode_u8(a)
    assert np.abs(decode(enc) - a).max() <= enc["scale"] / 2 + 1e-12
    assert enc["offset"] == a.min() and enc["scale"] == pytest.approx(np.ptp(a) / 255)
    assert (decode(encode_u8(np.full((2, 2), 3.0))) == 3.0).all()  # no spread, no division


def test_float16_refuses_what_it_cannot_hold() -> None:
    for bad in (np.array([[70000.0]]), np.array([[np.nan]]), np.zeros(3)):
        with pytest.raises(ValueError):
            encode_f16(bad)


def _model_page() -> dict:
    torch.manual_seed(0)
    vocab = Vocab(tuple("the cat sat on a mat".split()))
    model = LanguageModel(ModelConfig(vocab_size=vocab.size, n_ctx=8, d_model=16, n_layer=2,
                                      n_head=2)).eval()  # fmt: skip
    view = checkpoint_view(model, vocab, "the cat sat on a mat")
    return {"title": "t", "description": "d", "causal": True, "views": [view]}


def test_encoded_page_states_its_measured_precision_and_decodes_to_the_data() -> None:
    data = _model_page()
    enc = encode_page(data)
    validate_data(enc)
    assert matrix_count(enc) == matrix_count(data) > 0
    worst_abs, worst_rel = 0.0, 0.0
    plain = decode_data(enc)
    for a, b in zip(_numbers(data), _numbers(plain), strict=True):
        worst_abs = max(worst_abs, abs(a - b))
        if abs(a) >= 2.0**-14:
            worst_rel = max(worst_rel, abs(a - b) / abs(a))
    assert worst_abs == enc["encoding"]["max_abs_error"] and 0 < worst_rel <= HALF_ULP
    assert f"{worst_abs:.1e} absolute, {worst_rel:.1e} relative" in enc["encoding"]["precision"]
    assert "float16" in enc["encoding"]["precision"] and "encoding" not in data


def _numbers(x) -> list[float]:
    if isinstance(x, dict):
        return [v for key in sorted(x) if key != "encoding" for v in _numbers(x[key])]
    if isinstance(x, list):
        return [v for item in x for v in _numbers(item)]
    return [float(x)] if isinstance(x, (int, float)) and not isinstance(x, bool) else []


def test_page_is_encoded_above_the_threshold_only(monkeypatch) -> None:
    from attnlab.explorer.page import render as page

    data = _model_page()
    small = _embedded(render_page(data))
    assert "encoding" not in small and small == json.loads(json.dumps(data))
    monkeypatch.setattr(page, "ENCODE_ABOVE", matrix_count(data) - 1)
    big = _embedded(render_page(data))
    assert big["encoding"]["precision"].startswith("float16")
    assert big["views"][0]["layers"][0]["heads"][0]["q"]["enc"] == "f16"


def test_a_damaged_encoded_matrix_is_refused_with_its_place() -> None:
    enc = encode_page(_model_page())
    head = enc["views"][0]["layers"][1]["heads"][0]
    head["k"] = dict(head["k"], b64=head["k"]["b64"][:-8])
    with pytest.raises(DataError, match=r"layers\[1\].heads\[0\].k: the encoded matrix"):
        validate_data(enc)
    head["k"] = dict(head["k"], shape=[3, 8])
    with pytest.raises(DataError, match=r"heads\[0\].k.shape: expected \[6, 8\]"):
        validate_data(enc)


def _embedded(page: str) -> dict:
    raw = re.search(r'<script type="application/json" id="attnlab-data">(.*?)</script>', page,
                    re.S)  # fmt: skip
    return json.loads(raw.group(1))


# --- decode.js, run by node ---------------------------------------------------------------

NODE = shutil.which("node")


def _decode_js() -> str:
    return resources.files("attnlab.explorer").joinpath("web", "decode.js").read_text("utf-8")


def _node(program: str) -> object:
    decode_js = _decode_js()
    script = f'"use strict";\n{decode_js}\n{program}'
    out = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_decode_js_gives_the_numbers_the_python_decoder_gives() -> None:
    mats = _matrices()
    encoded = [encode_f16(a) for a in mats] + [encode_u8(a) for a in mats]
    got = _node(f"console.log(JSON.stringify(decodeData({json.dumps(encoded)})));")
    for obj, js in zip(encoded, got, strict=True):
        assert np.array_equal(np.array(js, dtype=np.float64), decode(obj))  # bit for bit


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_decode_js_decodes_the_embedded_data_before_the_other_parts_read_it() -> None:
    data = _model_page()
    enc = encode_page(data)
    node = {"textContent": json.dumps(enc)}
    got = _node(
        f"const node = {json.dumps(node)};\n"
        "globalThis.document = {getElementById: (id) => (id === 'attnlab-data' ? node : null)};\n"
        # the part as the page runs it: a second evaluation, now with a document
        f"eval({json.dumps(_decode_js())});\n"
        "console.log(node.textContent);"
    )
    assert got == decode_data(enc)
    assert page_script().index("function decodeData") < page_script().index("readJSON(")


# --- attention composed across layers, by hand --------------------------------------------

# Two layers over three tokens. Layer 1: one head; layer 2: two heads (hand-chosen, causal).
A1 = np.array([[[1, 0, 0], [0.5, 0.5, 0], [0.25, 0.25, 0.5]]])
A2 = np.array([[[1, 0, 0], [1, 0, 0], [0, 1, 0]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]])
NORMS1 = np.array([[1.0, 3.0, 1.0]])  # ‖v_j W_O^h‖ per head and key
NORMS2 = np.array([[2.0, 1.0, 1.0], [1.0, 1.0, 4.0]])


def test_rollout_of_a_hand_computed_two_layer_case() -> None:
    # Â1 = 0.5·A1 + 0.5·I = [[1,0,0],[.25,.75,0],[.125,.125,.75]]
    # Â2 = 0.5·mean(A2) + 0.5·I = [[1,0,0],[.25,.75,0],[0,.25,.75]]
    # rollout2 = Â2·Â1: row 2 = .25·[.25,.75,0] + .75·[.125,.125,.75]
    expected = [
        [[1, 0, 0], [0.25, 0.75, 0], [0.125, 0.125, 0.75]],
        [[1, 0, 0], [0.4375, 0.5625, 0], [0.15625, 0.28125, 0.5625]],
    ]
    assert np.array_equal(rollout([A1, A2]), np.array(expected))


def test_value_weighted_of_a_hand_computed_two_layer_case() -> None:
    # layer 1: row 2 = [.25·1, .25·3, .5·1] / 1.5
    assert np.allclose(value_weighted(A1, NORMS1),
                       [[1, 0, 0], [0.25, 0.75, 0], [1 / 6, 0.5, 1 / 3]], rtol=0, atol=1e-15)
    # layer 2: head 1 gives [2,0,0], [2,0,0], [0,1,0]; head 2 gives [1,0,0], [0,1,0], [0,0,4]
    assert np.allclose(value_weighted(A2, NORMS2),
                       [[1, 0, 0], [2 / 3, 1 / 3, 0], [0, 0.2, 0.8]], rtol=0, atol=1e-15)
    entry = composed([A1, A2], [NORMS1, NORMS2])
    assert entry["value_weighted"][1][2] == [0.0, 0.2, 0.8]
    assert "Kobayashi" in entry["note"] and "Abnar" in entry["note"]
    said = composed([A1, A2], None, without_values="no values given to show()")["note"]
    assert said.endswith("not shown: no values given to show().")


def test_value_norms_are_what_each_heads_values_write_through_the_output_projection() -> None:
    torch.manual_seed(1)
    model = LanguageModel(ModelConfig(vocab_size=7, n_ctx=8, d_model=12, n_layer=2, n_head=3,
                                      qkv_bias=True)).eval()  # fmt: skip
    ids = [1, 4, 2, 6, 0]
    traces = attnlab_traces(model, ids)
    with torch.no_grad():
        blocks = model.trace(torch.tensor([ids])).blocks
    for block, b, t in zip(model.blocks, blocks, traces, strict=True):
        h, s, e = b.v.shape[1:]
        o = block.mixer.o
        expected = np.zeros((h, s))
        for head in range(h):
            for j in range(s):
                alone = torch.zeros(h * e, dtype=torch.float64)  # only this head's value
                alone[head * e:(head + 1) * e] = b.v[0, head, j].double()
                written = alone @ o.weight.detach().double().T  # o(alone) without its bias
                expected[head, j] = float(written.norm())
        assert np.allclose(t.value_norms, expected, rtol=1e-12, atol=0)


def test_every_traced_view_carries_its_composed_attention() -> None:
    view = _model_page()["views"][0]
    weights = [np.array([h["weights"] for h in layer["heads"]]) for layer in view["layers"]]
    r = np.eye(len(view["tokens"]))
    for li, w in enumerate(weights):  # rollout by its definition, layer by layer
        r = (0.5 * w.mean(0) + 0.5 * np.eye(len(r))) @ r
        assert np.allclose(view["composed"]["rollout"][li], r, atol=2e-7)
    assert len(view["composed"]["value_weighted"]) == 2
    assert np.allclose(np.sum(view["composed"]["value_weighted"], axis=-1), 1.0, atol=1e-6)


def test_malformed_composed_views_are_refused_with_their_place() -> None:
    data = _model_page()
    view = data["views"][0]
    view["composed"]["rollout"] = view["composed"]["rollout"][:1]
    with pytest.raises(DataError, match=r"views\[0\].composed.rollout: expected one n×n"):
        validate_data(data)
    data = _model_page()
    data["views"][0]["composed"]["value_weighted"][1][2] = [0.5]
    with pytest.raises(DataError, match=r"composed.value_weighted\[1\]\[2\]: expected 6"):
        validate_data(data)
    data = _model_page()
    del data["views"][0]["composed"]["note"]
    with pytest.raises(DataError, match="composed: expected"):
        validate_data(data)
