"""Run configs: files, overrides, types, errors, the run hash; and the LR schedule."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from attnlab.errors import AttnlabError, DataError, UsageError
from attnlab.nn.model_config import ModelConfig
from attnlab.train.run_config import (
    DataConfig,
    RunConfig,
    TrainConfig,
    load_run_config,
    model_with_overrides,
    run_hash,
)
from attnlab.train.schedule import lr_at


def test_defaults_are_the_spec_defaults():
    cfg = load_run_config()
    assert cfg == RunConfig(ModelConfig(), TrainConfig(), DataConfig())
    assert (cfg.model.d_model, cfg.model.n_ctx) == (128, 128)
    assert (cfg.train.steps, cfg.train.lr, cfg.train.batch_size) == (3000, 1e-3, 64)
    assert cfg.train.weight_decay == 0.01  # PyTorch's AdamW default


def test_overrides_are_typed():
    cfg = load_run_config(None, [
        "train.steps=200", "train.lr=3e-3", "model.position=rope", "model.scale=false",
        "train.grad_clip=1", "train.betas=0.9,0.95", "model.head_dim=none",
        "data.train_tokens=1000", "train.grad_clip=none",
    ])
    assert cfg.train.steps == 200 and isinstance(cfg.train.steps, int)
    assert cfg.train.lr == 3e-3
    assert cfg.model.position == "rope" and cfg.model.scale is False
    assert cfg.train.betas == (0.9, 0.95)
    assert cfg.train.grad_clip is None  # the later override wins
    assert cfg.model.head_dim is None and cfg.data.train_tokens == 1000


@pytest.mark.parametrize("override, match", [
    ("train.stepz=1", r"unknown key train\.stepz; allowed: steps, lr"),
    ("optim.lr=1", r"unknown config section 'optim'.*allowed: model, train, data"),
    ("train.steps=1.5", r"train\.steps expects int, got '1\.5'"),
    ("train.lr=fast", r"train\.lr expects float"),
    ("model.scale=maybe", r"model\.scale expects a bool"),
    ("train.steps", r"must look like section\.key=value"),
    ("steps=3", r"must look like section\.key=value"),
    ("train.decay=linear", r"train\.decay 'linear'; choose one of: none, cosine"),
    ("train.betas=0.9", r"train\.betas expects 2"),
    ("train.steps=0", r"train\.steps must be in \[1, 10,000,000\], got 0"),
    ("train.steps=none", r"train\.steps expects int"),
    ("model.position=absolute", r"unknown position 'absolute'"),
    ("train.grad_clip=-1", r"grad_clip must be a finite number > 0"),
    ("train.lr=inf", r"train\.lr must be a finite number > 0, got inf"),
    ("train.lr=nan", r"train\.lr must be a finite number > 0, got nan"),
    ("model.n_head=3", r"model: n_head=3 does not divide d_model=128"),
    ("model.dropout=1.5", r"model: dropout must be in \[0, 1\)"),
])
def test_bad_overrides_are_one_line_usage_errors(override, match):
    # UsageError (an AttnlabError, and a ValueError): the CLI reports it in one line;
    # ModelConfig's own ValueErrors are converted at this boundary.
    with pytest.raises(UsageError, match=match) as info:
        load_run_config(None, [override])
    assert "\n" not in str(info.value)


def test_model_overrides_raise_usage_errors():
    with pytest.raises(UsageError, match="model: n_head=5 does not divide"):
        model_with_overrides(ModelConfig(), ["n_head=5"])
    with pytest.raises(UsageError, match="unknown key model.widht"):
        model_with_overrides(ModelConfig(), ["widht=3"])


@pytest.mark.parametrize("data, match", [
    ([1, 2], r"must be a table of sections, got list"),
    ({"model": [1]}, r"section 'model' must be a table, got list"),
    ({"train": {"steps": {"a": 1}}}, r"train\.steps expects int"),
])
def test_from_dict_of_the_wrong_shape(data, match):
    with pytest.raises(UsageError, match=match):
        RunConfig.from_dict(data)


def test_toml_and_json_files(tmp_path):
    toml = tmp_path / "run.toml"
    toml.write_text('[model]\nd_model = 64\nposition = "alibi"\n[train]\nsteps = 10\nlr = 1\n'
                    'betas = [0.8, 0.9]\n[data]\nvocab_size = 512\n')
    cfg = load_run_config(toml, ["train.steps=20"])
    assert cfg.model.d_model == 64 and cfg.model.position == "alibi"
    assert cfg.train.steps == 20 and cfg.train.lr == 1.0 and isinstance(cfg.train.lr, float)
    assert cfg.train.betas == (0.8, 0.9) and cfg.data.vocab_size == 512
    js = tmp_path / "run.json"
    js.write_text(json.dumps(cfg.to_dict()))
    assert load_run_config(js) == cfg


@pytest.mark.parametrize("text, match", [
    ("[model]\nd_model = 64.0\n", r"model\.d_model expects int"),
    ("[train]\nsteps = true\n", r"train\.steps expects int"),
    ("[train]\nsteps = \"10\"\n", r"train\.steps expects int"),
    ("[model]\nscale = 1\n", r"model\.scale expects bool"),
    ("[model]\nwidth = 64\n", r"unknown key model\.width"),
    ("[optim]\nlr = 1\n", r"unknown config section 'optim'"),
    ("model = 3\n", r"section 'model' must be a table"),
    ("[model\n", r"cannot read config"),
])
def test_bad_files(tmp_path, text, match):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(AttnlabError, match=match):
        load_run_config(path)


@pytest.mark.parametrize("name, content, match", [
    ("bin.toml", bytes(range(256)) * 4, r"bin\.toml is not UTF-8 text"),
    ("list.json", b"[1, 2]", r"list\.json must hold a table at the top, got list"),
    ("bad.json", b"{", r"cannot read config .*bad\.json"),
])
def test_damaged_config_files_are_data_errors(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataError, match=match) as info:
        load_run_config(path)
    assert "\n" not in str(info.value)


def test_a_directory_is_not_a_config(tmp_path):
    (tmp_path / "run.toml").mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        load_run_config(tmp_path / "run.toml")


def test_missing_or_unknown_file_type(tmp_path):
    with pytest.raises(ValueError, match="config file not found"):
        load_run_config(tmp_path / "nope.toml")
    (tmp_path / "run.yaml").write_text("model: {}\n")
    with pytest.raises(ValueError, match=r"\.toml or \.json"):
        load_run_config(tmp_path / "run.yaml")


def test_round_trip_through_dict():
    cfg = load_run_config(None, ["model.n_layer=2", "train.grad_clip=0.5", "data.corpus=x.txt"])
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    assert json.loads(json.dumps(cfg.to_dict())) == cfg.to_dict()


def test_run_hash_is_stable_and_sensitive(tmp_path):
    a = load_run_config(None, ["train.lr=0.001"])
    b = load_run_config(None, ["train.lr=1e-3"])
    assert run_hash(a) == run_hash(b) == run_hash(RunConfig())
    assert len(run_hash(a)) == 12 and int(run_hash(a), 16) >= 0
    assert run_hash(load_run_config(None, ["train.seed=1"])) != run_hash(a)
    assert run_hash(load_run_config(None, ["model.scale=false"])) != run_hash(a)
    # Key order in the file does not matter.
    (tmp_path / "x.toml").write_text("[train]\nseed = 3\nsteps = 9\n[model]\nn_layer = 2\n")
    (tmp_path / "y.toml").write_text("[model]\nn_layer = 2\n[train]\nsteps = 9\nseed = 3\n")
    assert run_hash(load_run_config(tmp_path / "x.toml")) == run_hash(
        load_run_config(tmp_path / "y.toml"))
    # Another interpreter with another string-hash seed agrees.
    code = "from attnlab.train.run_config import RunConfig, run_hash; print(run_hash(RunConfig()))"
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    assert out == run_hash(a)


def test_constant_schedule_and_warmup():
    cfg = TrainConfig(steps=10, lr=0.5, warmup_steps=4)
    assert [lr_at(s, cfg) for s in range(6)] == [0.125, 0.25, 0.375, 0.5, 0.5, 0.5]
    assert lr_at(0, TrainConfig(lr=0.5)) == 0.5


def test_cosine_schedule_by_hand():
    cfg = TrainConfig(steps=12, lr=2.0, warmup_steps=2, decay="cosine", min_lr_ratio=0.1)
    # After warmup, progress p = (s - 2) / 10; lr = 2 * (0.1 + 0.9 * (1 + cos(pi p)) / 2).
    assert lr_at(1, cfg) == pytest.approx(2.0)
    assert lr_at(2, cfg) == pytest.approx(2.0)
    assert lr_at(7, cfg) == pytest.approx(2.0 * (0.1 + 0.9 * 0.5))
    assert lr_at(12, cfg) == pytest.approx(0.2)
    lrs = [lr_at(s, cfg) for s in range(2, 12)]
    assert all(a > b for a, b in zip(lrs[:-1], lrs[1:], strict=True))
    assert math.isclose(lr_at(4, cfg), 2.0 * (0.1 + 0.45 * (1 + math.cos(math.pi * 0.2))))


def test_resolve_run_names_the_device_and_precision_it_will_use():
    from attnlab.train.run_config import RunConfig, TrainConfig, run_hash
    from attnlab.train.runtime import resolve_run

    auto = RunConfig()
    resolved = resolve_run(auto)
    assert resolved.train.device in ("cpu", "cuda")
    assert resolved.train.precision in ("fp32", "bf16")
    assert resolve_run(resolved) == resolved  # idempotent
    assert run_hash(resolved) != run_hash(auto)
    cpu_bf16 = resolve_run(RunConfig(train=TrainConfig(device="cpu", precision="bf16")))
    assert (cpu_bf16.train.device, cpu_bf16.train.precision) == ("cpu", "bf16")
    cpu_auto = resolve_run(RunConfig(train=TrainConfig(device="cpu")))
    assert cpu_auto.train.precision == "fp32"
