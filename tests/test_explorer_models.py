"""The explorer on attnlab's own models: q, k and weights of every head through the trace,
trained runs, and the Winograd and verb-agreement probe pages (training budgets shrunk)."""

from __future__ import annotations

import json
import random
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab.cli import main as cli_main
from attnlab.data.synthetic import Vocab
from attnlab.explorer.page.data import head_weights
from attnlab.explorer.server.httpd import start_server
from attnlab.explorer.sources import models
from attnlab.explorer.sources.models import checkpoint_compute, checkpoint_view
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.train.run_config import TrainConfig

WORDS = Vocab(tuple("the cat sat on a mat and dog ran to it".split()))
TEXT = "the cat sat on the mat and the dog ran"  # 10 words, "the" three times


def _model(**changes) -> LanguageModel:
    torch.manual_seed(0)
    base = {"vocab_size": WORDS.size, "n_ctx": 12, "d_model": 16, "n_layer": 2, "n_head": 2}
    cfg = ModelConfig(**{**base, **changes})
    return LanguageModel(cfg).eval()


def reference_weights(model: LanguageModel, ids: list[int]) -> list:
    """The weights the model's readable kernel computes, per block (b, h, t, s) (tested
    against the forward in test_nn_trace)."""
    with torch.no_grad():
        return model.trace(torch.tensor([ids])).weights


def _page_data(path: Path) -> dict:
    raw = re.search(
        r'<script type="application/json" id="attnlab-data">(.*?)</script>',
        path.read_text(encoding="utf-8"), re.S,
    )  # fmt: skip
    return json.loads(raw.group(1))


# --- q, k and weights of a LanguageModel -----------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"position": "learned"},
        {"position": "sinusoidal", "norm": "post"},
        {"position": "rope"},
        {"position": "alibi"},
        {"position": "rope", "mixer": "head", "head_dim": 6, "n_layer": 1},
        {"position": "learned", "qkv_bias": True, "norm": "none"},
        {"position": "rope", "scale": False},
    ],
    ids=["learned", "sinusoidal-post", "rope", "alibi", "single-head", "bias-no-norm", "unscaled"],
)
def test_page_weights_are_the_models_and_the_switches_rebuild_them(changes) -> None:
    model = _model(**changes)
    ids = WORDS.encode(TEXT)
    view = checkpoint_view(model, WORDS, TEXT)
    cfg = model.cfg
    assert view["tokens"] == TEXT.split() and view["name"] == TEXT
    assert len(view["layers"]) == cfg.n_layer
    own = reference_weights(model, ids)
    for li, layer in enumerate(view["layers"]):
        assert len(layer["heads"]) == cfg.heads
        for h, head in enumerate(layer["heads"]):
            assert head["d_k"] == cfg.qk_dim and len(head["q"][0]) == cfg.qk_dim
            expected = own[li][0, h].double().numpy()
            shown = head_weights(head, causal=True, scale=cfg.scale, own=True)  # as the page starts
            np.testing.assert_allclose(shown, expected, atol=1e-6)
            rebuilt = head_weights(head, causal=True, scale=cfg.scale)  # from q, k and bias
            np.testing.assert_allclose(rebuilt, expected, atol=1e-5)
    data = models.model_page(model, [view], "t", "d")
    assert data["causal"] is True and data["scale"] is cfg.scale
    if not cfg.scale:
        assert "no √d_k division" in models.describe(cfg)


def test_alibi_bias_is_shown_apart_from_q_dot_k() -> None:
    view = checkpoint_view(_model(position="alibi"), WORDS, TEXT)
    n = len(TEXT.split())
    back = np.clip(np.arange(n)[:, None] - np.arange(n)[None, :], 0, None)  # (n, n) i - j
    for h, slope in enumerate([2**-4, 2**-8]):  # two heads: slopes 2^-4, 2^-8 by hand
        np.testing.assert_allclose(view["layers"][0]["heads"][h]["bias"], -slope * back)
    switched = head_weights(view["layers"][0]["heads"][0], causal=False, scale=False)
    assert np.abs(np.triu(switched, 1)).sum() > 0  # the causal switch off reaches the future


def test_mean_mixer_is_equal_scores_with_a_note_and_no_mixer_is_refused() -> None:
    view = checkpoint_view(_model(mixer="mean"), WORDS, "the cat sat")
    head = view["layers"][0]["heads"][0]
    assert len(view["layers"][0]["heads"]) == 1 and head["scores"] == [[0.0] * 3] * 3
    assert "uniform" in head["note"]
    np.testing.assert_allclose(head_weights(head, causal=True, scale=True)[2], [1 / 3] * 3)
    np.testing.assert_allclose(head_weights(head, causal=False, scale=True)[0], [1 / 3] * 3)
    with pytest.raises(ValueError, match="no context mixer"):
        checkpoint_view(_model(mixer="none"), WORDS, "the cat")
    with pytest.raises(ValueError, match=r"mixer is a recurrence \(lstm\): .* no weights over"):
        checkpoint_view(_model(mixer="lstm", position="none"), WORDS, "the cat")


@pytest.mark.parametrize(("position", "limit"), [("learned", 12), ("rope", 12)])
def test_text_longer_than_the_context_is_refused(position: str, limit: int) -> None:
    model = _model(position=position)
    checkpoint_view(model, WORDS, " ".join(["cat"] * limit))
    with pytest.raises(ValueError, match=f"13 tokens; the model's context is {limit}"):
        checkpoint_view(model, WORDS, " ".join(["cat"] * (limit + 1)))
    with pytest.raises(ValueError, match="empty"):
        checkpoint_view(model, WORDS, "  ")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        checkpoint_view(model, WORDS, "the zebra")


# --- a run of `attnlab train`, through the command line -------------------------------------


@pytest.fixture
def bpe_run(tmp_path, monkeypatch) -> Path:
    from attnlab.train.run_config import DataConfig, RunConfig
    from attnlab.train.trainer import train

    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("\n".join(" ".join(rng.choices(words, k=10)) for _ in range(300)))
    cfg = RunConfig(
        model=ModelConfig(vocab_size=300, n_ctx=16, d_model=16, n_head=2, position="alibi"),
        train=TrainConfig(steps=2, batch_size=4, eval_every=0, device="cpu"),
        data=DataConfig(corpus=str(corpus), vocab_size=300),
    )
    train(cfg, tmp_path / "run")
    return tmp_path / "run"


def test_cli_checkpoint_writes_a_page_of_the_runs_heads(bpe_run, tmp_path, capsys) -> None:
    out = tmp_path / "run.html"
    text = "the king speaks to my lord"
    assert cli_main.main(["explore", "--checkpoint", str(bpe_run), "--text", text,
                          "--out", str(out)]) == 0  # fmt: skip
    assert "wrote" in capsys.readouterr().out
    data = _page_data(out)
    view = data["views"][0]
    assert "".join(view["tokens"]) == text and data["causal"] is True
    assert len(view["layers"]) == 1 and len(view["layers"][0]["heads"]) == 2
    assert view["layers"][0]["heads"][0]["d_k"] == 8
    with start_server(checkpoint_compute(bpe_run), default_text="my lord") as srv:
        for words, status, answer in (
            ("the crown", 200, "the crown"),
            ("the king " * 20, 400, "context is 16"),
        ):
            url = srv.url + "api/attention?" + urllib.parse.urlencode({"text": words})
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    got = (r.status, "".join(json.loads(r.read())["views"][0]["tokens"]))
            except urllib.error.HTTPError as err:
                got = (err.code, json.loads(err.read())["error"])
            assert got[0] == status and answer in got[1]


def test_models_load_and_train_on_the_resolved_device(bpe_run, monkeypatch) -> None:
    asked = []
    load = models.load_trained
    monkeypatch.setattr(models, "load_trained", lambda run, device: asked.append(device)
                        or load(run, device))  # fmt: skip
    checkpoint_compute(bpe_run)
    assert asked == ["auto"]  # CUDA when present (issue 15), the CPU here
    assert models.WINOGRAD_PROBE.train.device == models.AGREEMENT_PROBE.train.device == "auto"


def test_cli_checkpoint_errors(tmp_path, capsys) -> None:
    assert cli_main.main(["explore", "--checkpoint", str(tmp_path / "nope")]) == 2
    assert "run directory not found" in capsys.readouterr().err
    assert cli_main.main(["explore", "--winograd", "--text", "the cat"]) == 2
    assert "do not go with it" in capsys.readouterr().err
    assert cli_main.main(["explore", "--work", str(tmp_path)]) == 2
    assert "--work only goes with" in capsys.readouterr().err


# --- the probe pages, with the training budget shrunk ----------------------------------------


@pytest.fixture
def tiny_probes(monkeypatch) -> None:
    for name in ("WINOGRAD_PROBE", "AGREEMENT_PROBE"):
        probe = getattr(models, name)
        small = models.Probe(
            model=probe.model.replace(d_model=16, n_ctx=18),
            train=TrainConfig(steps=3, batch_size=4, eval_every=0, ckpt_every=0, device="cpu"),
        )  # fmt: skip
        monkeypatch.setattr(models, name, small)


def test_cli_winograd_page_reports_the_measured_accuracy(tiny_probes, tmp_path, capsys) -> None:
    from attnlab.data.synthetic import (
        SCORE_INDEX,
        forced_choice_accuracy,
        winograd_dataset,
    )
    from attnlab.running.context import Context

    out, work = tmp_path / "w.html", tmp_path / "work"
    assert cli_main.main(["explore", "--winograd", "--work", str(work), "--out", str(out)]) == 0
    data = _page_data(out)
    assert [v["name"] for v in data["views"]] == ["… too tired …", "… too wet …"]
    for view, adj in zip(data["views"], ("tired", "wet"), strict=True):
        assert view["tokens"] == models.WINOGRAD_TEXT.format(adj=adj).split()
        assert len(view["layers"]) == 2 and all(len(la["heads"]) == 4 for la in view["layers"])
    (run_dir,) = work.iterdir()  # the one cached training run
    model = Context.load_model({"run_dir": str(run_dir)})
    lang = winograd_dataset("B", seed=0)
    with torch.no_grad():
        logits = model(torch.tensor(lang.held[:, : SCORE_INDEX + 1]))[:, -1].numpy()
    acc = forced_choice_accuracy(logits, lang.candidates, lang.answer)
    assert "trained 3 steps" in data["description"]
    assert f"forced choice {acc:.1%} (chance 50%)" in data["description"]
    # the composed figures the page states: block 2's rollout at the scored position, and the
    # part of it that reaches the referent through other positions, recomputed here from the
    # page's own layer weights
    for view, adj, referent in zip(data["views"], ("tired", "wet"), ("animal", "street"),
                                   strict=True):  # fmt: skip
        n = len(view["tokens"])
        hats = [0.5 * np.mean([head_weights(h, causal=True, scale=True, own=True)
                               for h in layer["heads"]], axis=0) + 0.5 * np.eye(n)
                for layer in view["layers"]]  # fmt: skip
        r1, r2 = hats[0], hats[1] @ hats[0]
        assert np.allclose(view["composed"]["rollout"], [r1, r2], atol=1e-6)
        i, j = SCORE_INDEX, view["tokens"].index(referent)
        through = sum(hats[1][i, k] * r1[k, j] for k in range(n) if k != j)
        note = view["composed"]["note"]
        animal, street = (view["tokens"].index(w) for w in ("animal", "street"))
        assert f"puts {r2[i, animal]:.2f} on “animal” and {r2[i, street]:.2f} on “street”" in note
        assert f"of the {r2[i, j]:.2f} on the referent “{referent}”, {through:.2f} arrives" in note
        assert f"and {hats[1][i, j] * r1[j, j]:.2f} through its own" in note
        assert (f"{r2[i, j]:.2f} on “{referent}” after “{adj}” ({through:.2f} of it through"
                in data["description"])  # fmt: skip


def test_cli_agreement_page_reports_the_measured_probabilities(tiny_probes, tmp_path) -> None:
    from attnlab.data.synthetic import verb_agreement_dataset
    from attnlab.running.context import Context

    out, work = tmp_path / "a.html", tmp_path / "work"
    assert cli_main.main(["explore", "--agreement", "--work", str(work), "--out", str(out)]) == 0
    data = _page_data(out)
    assert data["views"][0]["tokens"] == "I work , you work , he".split()
    (run_dir,) = work.iterdir()
    model = Context.load_model({"run_dir": str(run_dir)})
    vocab = verb_agreement_dataset(seed=0).vocab
    p = models.next_word_probs(model, vocab, models.AGREEMENT_TEXT, ("works", "work"))
    assert 0 < p["works"] + p["work"] <= 1
    assert f"P(works) = {p['works']:.3f}, P(work) = {p['work']:.3f}" in data["description"]
    # cached: a second page trains nothing and says the same
    assert models.agreement_page(work)["description"] == data["description"]
