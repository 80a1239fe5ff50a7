"""``attnlab.explorer.show`` on every kind of thing the docs list, each executed: a run folder
written by ``attnlab train``, a Hugging Face folder written by ``save_pretrained``, an attnlab
model in memory, nothing (the hand-made heads), and weights given as a tensor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from explorer_support import train_tiny_run

from attnlab.data.synthetic import Vocab
from attnlab.explorer import ExplorerView, show
from attnlab.explorer.page.composed import rollout
from attnlab.explorer.page.data import head_weights
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.train.run_config import TrainConfig


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A run of the trainer, two steps on a tiny corpus with its own BPE tokenizer."""
    return train_tiny_run(
        tmp_path_factory.mktemp("run"),
        ModelConfig(vocab_size=300, n_ctx=16, d_model=16, n_layer=2, n_head=2),
        TrainConfig(steps=2, batch_size=4, eval_every=0, device="cpu"))


def test_show_a_run_folder_of_attnlab_train(run_dir) -> None:
    view = show(run_dir, "the king speaks to my lord")
    assert isinstance(view, ExplorerView) and view._repr_html_().startswith("<iframe")
    data = view.data
    v = data["views"][0]
    assert "".join(v["tokens"]) == "the king speaks to my lord"
    assert len(v["layers"]) == 2 and data["title"].startswith(f"Attention of run {run_dir.name}")
    assert len(v["composed"]["rollout"]) == len(v["composed"]["value_weighted"]) == 2


def test_show_a_hugging_face_folder(tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers import models as tok_models

    bpe = Tokenizer(tok_models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["the cat sat on the mat"] * 3, trainers.BpeTrainer(
        vocab_size=280, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))  # fmt: skip
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe)
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(tokenizer), n_positions=16, n_embd=16,
                                  n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0)  # fmt: skip
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    data = show(tmp_path, "the cat sat").data
    v = data["views"][0]
    assert v["tokens"] == ["the", " cat", " sat"] and len(v["layers"]) == 2
    assert "a GPT-2 model" in data["description"]
    assert "value_weighted" in v["composed"]  # GPT-2 is traced through attnlab's model


def test_show_a_model_in_memory_and_nothing() -> None:
    torch.manual_seed(0)
    words = Vocab(("the", "cat", "sat"))
    model = LanguageModel(ModelConfig(vocab_size=3, n_ctx=8, d_model=8, n_layer=1, n_head=2))
    v = show(model, "the cat sat", tokenizer=words).data["views"][0]
    assert v["tokens"] == ["the", "cat", "sat"] and len(v["layers"][0]["heads"]) == 2
    hand = show().data
    assert hand["views"][0]["tokens"][0] == "La" and "composed" not in hand["views"][0]


def _weights(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Causal softmax weights of random scores, shaped (..., n, n)."""
    s = np.random.default_rng(seed).normal(size=shape)
    n = shape[-1]
    s = np.where(np.tri(n, dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (3, 4, 4), (4, 4)])
@pytest.mark.parametrize("kind", ["numpy", "torch", "layers"])
def test_show_weights_from_any_library(shape, kind) -> None:
    w = _weights(shape)
    given = {"numpy": w, "torch": torch.tensor(w, dtype=torch.bfloat16),
             "layers": [torch.tensor(x)[None] for x in w.reshape((-1,) + shape[-3:])]
             if len(shape) == 4 else w}[kind]  # fmt: skip
    data = show(weights=given, tokens=["a", "b", "c", "d"]).data
    full = w.reshape((1,) * (4 - w.ndim) + w.shape)  # (L, H, n, n)
    tol = 4e-3 if kind == "torch" else 1e-6  # bfloat16 keeps 8 bits
    v = data["views"][0]
    assert data["causal"] is True and "without the queries and keys" in v["fixed"]
    assert [len(layer["heads"]) for layer in v["layers"]] == [full.shape[1]] * full.shape[0]
    for li, layer in enumerate(v["layers"]):
        for hi, h in enumerate(layer["heads"]):
            assert np.allclose(head_weights(h, causal=False, scale=True), full[li, hi], atol=tol)
    assert np.allclose(v["composed"]["rollout"], rollout(list(full)), atol=tol)
    assert "value_weighted" not in v["composed"]
    assert "only the weights were given" in v["composed"]["note"]


def test_show_weights_that_are_not_causal_start_with_the_switch_off() -> None:
    w = np.full((3, 3), 1 / 3)
    data = show(weights=w, tokens=["x", "y", "z"]).data
    assert data["causal"] is False and "not causal" in data["description"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": np.zeros((2, 2, 2, 2, 2))}, "index the batch first"),
        ({"weights": np.ones((2, 3))}, r"square \(n, n\)"),
        ({"weights": np.ones((3, 4))}, r"got \(3, 4\)$"),  # the shape as given, not (1, 1, 3, 4)
        ({"weights": np.eye(3), "tokens": [1, 2, 3]}, "token 1 is 1 \\(int\\)"),
        ({"weights": np.eye(3), "tokens": [None, "b", "c"]}, "token 1 is None"),
        ({"weights": np.eye(2) + 0j}, "real numbers, not complex128"),
        ({"weights": np.eye(2), "tokens": ["a"]}, "1 tokens given for weights over 2"),
        ({"weights": np.eye(2), "tokens": "ab"}, "list of strings"),
        ({"weights": np.array([[0.5, 0.2], [0.0, 1.0]])}, "layer 1 head 1 row 1 sum to 0.7"),
        ({"weights": np.array([[2.0, -1.0], [0.0, 1.0]])}, "not scores"),
        ({"weights": np.array([[np.nan, 1], [0, 1]])}, "finite"),
        ({"weights": "abc"}, "array of numbers"),
        ({"weights": np.eye(2), "tokens": ["a", "b"], "text": "a b"}, "no source or text"),
        ({"tokens": ["a", "b"]}, "takes both"),
    ],
)
def test_show_weights_errors_are_one_line(kwargs, message) -> None:
    import warnings

    kwargs = {"tokens": ["a", "b"], **kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complex weights passed with a NumPy warning
        with pytest.raises(ValueError, match=message) as err:
            show(**kwargs)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("model_type", "said"),
    [("gpt2", "a GPT-2 model"), ("opt", "an OPT model"), ("gpt_neox", "a GPT-NeoX model"),
     ("mpt", "an MPT model"), ("llama", "a Llama model"), ("olmo", "an OLMo model"),
     ("bloom", "a BLOOM model"), ("qwen3", "a Qwen3 model"), ("newfamily", "a newfamily model")],
)  # fmt: skip
def test_page_text_names_families_as_they_are_spelt(model_type, said) -> None:
    from attnlab.explorer.sources.build import a_model

    assert a_model(model_type) == said
