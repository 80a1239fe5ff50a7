"""Head scores on tiny random Hugging Face models of each family the explorer reads, and
``attnlab heads`` on a Hugging Face folder and on an attnlab run folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hf_support import tiny_configs

from attnlab.cli import main as cli_main
from attnlab.data.repeated import SegmentStream
from attnlab.interp import SCORES, head_scores
from attnlab.nn.model_config import ModelConfig
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig
from attnlab.train.trainer import train

transformers = pytest.importorskip("transformers")
V = 64


def _configs() -> dict:
    configs = tiny_configs(transformers, V)
    del configs["mistral"]  # the four families this test has always scored
    return configs


@pytest.mark.parametrize("family", list(_configs()))
def test_every_family_gets_four_scores_per_head_in_range(family):
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(
        _configs()[family], attn_implementation="eager").eval()
    s = head_scores(model)
    assert s.probe.shape == (8, 32)  # half: the context (32) halved
    for name in SCORES:
        grid = s.scores[name]
        assert grid.shape == (2, 4)
        assert ((grid >= 0) & (grid <= 1 + 1e-6)).all()
    if family == "gpt_neo":  # its local layer (window 4) cannot reach the earlier occurrence
        assert s.scores["induction"][1].max() < 1e-6
    json.dumps(s.to_dict())


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers import models as tok_models

    bpe = Tokenizer(tok_models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["the cat sat on the mat"] * 3, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
    folder = tmp_path_factory.mktemp("opt")
    cfg = _configs()["opt"]
    cfg.vocab_size = len(tok)
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_heads_command_on_a_hugging_face_folder(hf_folder, capsys):
    assert cli_main.main(["heads", str(hf_folder), "--json", "--rows", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "Hugging Face opt" and np.array(out["induction"]).shape == (2, 4)
    assert cli_main.main(["heads", str(hf_folder), "--half", "6"]) == 0
    text = capsys.readouterr().out
    assert "previous" in text and len(text.strip().splitlines()) == 2 + 8


def test_heads_command_on_a_run_folder_and_bad_input(tmp_path, capsys):
    model = ModelConfig(vocab_size=16, n_ctx=16, d_model=16, n_layer=2, n_head=2, mlp=False)
    cfg = RunConfig(model=model, data=DataConfig(vocab_size=16),
                    train=TrainConfig(steps=2, batch_size=4, eval_every=0, ckpt_every=0,
                                      device="cpu"))
    run_dir = tmp_path / "run"
    train(cfg, run_dir, data=SegmentStream.of(16, 17, 20, 4, 2, 5, seed=0))
    assert cli_main.main(["heads", str(run_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "attnlab run" and out["probe"]["half"] == 8
    assert np.array(out["sink"]).shape == (2, 2)
    assert cli_main.main(["heads", str(tmp_path / "nothing")]) == 2
    assert cli_main.main(["heads", str(run_dir), "--half", "40"]) == 2  # past the context
    assert "exceed" in capsys.readouterr().err
