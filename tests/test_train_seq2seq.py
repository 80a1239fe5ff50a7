"""Translation runs through the runner: a ``Seq2SeqConfig`` run's config is stored, read back
and hashed apart from a language model's; it trains, is cached, and a run cut off by SIGTERM
resumes to bitwise the weights of one never cut off; the same seed gives the same weights."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from attnlab.data.translation import translation_dataset
from attnlab.nn.model_config import ModelConfig, Seq2SeqConfig
from attnlab.nn.rnn_seq2seq import RecurrentEncoderDecoder
from attnlab.running.runner import Runner, RunSpec
from attnlab.running.train_run import train_spec
from attnlab.train.run_config import RunConfig, TrainConfig, load_run_config, run_hash
from attnlab.train.rundir import read_run_config
from attnlab.train.runtime import load_trained
from attnlab.train.trainer import TrainingInterrupted

STEPS, AT = 8, 3


@pytest.fixture(scope="module")
def data():
    return translation_dataset(n_train=60, train_band=(5, 9), held_bands=((5, 9), (10, 12)),
                               n_held=6, seed=0)


def config(data, arch: str = "bahdanau", seed: int = 0) -> RunConfig:
    model = Seq2SeqConfig(arch=arch, src_vocab=data.source_vocab.size,
                          tgt_vocab=data.target_vocab.size, d_model=8, n_layer=1, n_head=2,
                          bidirectional=True)
    return RunConfig(model=model, train=TrainConfig(steps=STEPS, batch_size=4, eval_every=0,
                                                    ckpt_every=0, log_every=1, seed=seed,
                                                    device="cpu"))


def test_a_seq2seq_config_round_trips_and_hashes_apart() -> None:
    cfg = RunConfig(model=Seq2SeqConfig(arch="rnn", src_vocab=10, tgt_vocab=12))
    back = RunConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert back == cfg and isinstance(back.model, Seq2SeqConfig)
    assert run_hash(back) == run_hash(cfg) != run_hash(RunConfig())
    assert isinstance(RunConfig.from_dict(RunConfig().to_dict()).model, ModelConfig)
    # on the command line too: naming an arch makes the model an encoder–decoder
    over = load_run_config(None, ["model.arch=transformer", "model.d_model=16"])
    assert over.model == Seq2SeqConfig(arch="transformer", d_model=16)
    with pytest.raises(Exception, match="mixer"):  # a language model's key is refused
        load_run_config(None, ["model.arch=rnn", "model.mixer=mha"])


def test_trains_is_cached_and_loads(tmp_path, data) -> None:
    runner = Runner(tmp_path / "w", "cpu")
    spec = RunSpec("t seed 0", config(data), data)
    first = runner.train([spec])[spec.label]
    assert first["steps"] == STEPS and first["held_ppl"] > 1
    run_dir = Path(first["run_dir"])
    assert isinstance(read_run_config(run_dir).model, Seq2SeqConfig)
    again = runner.train([spec])[spec.label]  # read, not trained again
    assert again["weights_sha256"] == first["weights_sha256"]
    assert len(json.loads((run_dir / "meta.json").read_text())["sessions"]) == 1
    assert isinstance(load_trained(run_dir, "cpu")[1], RecurrentEncoderDecoder)
    # the same seed in another folder: the same bits; another seed, other weights
    twin = Runner(tmp_path / "v", "cpu").train([spec])[spec.label]
    other = RunSpec("t seed 1", config(data, seed=1), data)
    assert twin["weights_sha256"] == first["weights_sha256"]
    assert runner.train([other])[other.label]["weights_sha256"] != first["weights_sha256"]


@pytest.mark.parametrize("arch", ["rnn", "transformer"])
def test_interrupted_run_resumes_to_the_same_weights(tmp_path, data, arch) -> None:
    runner = Runner(tmp_path / "ref", "cpu")
    spec = runner.resolve(RunSpec("r seed 0", config(data, arch), data))
    expected = runner.train([spec], resolved=True)[spec.label]["weights_sha256"]

    def stop_at(record: dict) -> None:  # SIGTERM mid-run: the loop ends the step, then stops
        if record.get("kind") == "train" and record["step"] == AT:
            os.kill(os.getpid(), signal.SIGTERM)

    work = tmp_path / "cut"
    with pytest.raises(TrainingInterrupted, match=f"interrupted at step {AT}"):
        train_spec(spec, work, progress=stop_at)
    state = json.loads((work / runner.key(spec) / "checkpoint" / "state.json").read_text())
    assert state["step"] == AT and not (work / runner.key(spec) / "result.json").exists()
    resumed = train_spec(spec, work)
    assert resumed["weights_sha256"] == expected
