"""Run configuration: what to build, how to train it, on which data.

A run is one ``RunConfig`` = ``ModelConfig`` (attnlab.nn.config) + ``TrainConfig``
+ ``DataConfig``. It is read from a TOML or JSON file with one table per part::

    [model]
    d_model = 64
    [train]
    steps = 200

and command-line overrides ``section.key=value`` (``train.steps=200``,
``model.position=rope``, ``train.grad_clip=none``). Every value is checked
against the field's type; unknown sections or keys and wrong types are a
one-line ``ValueError`` naming the key and the allowed ones.

``run_hash`` names a run by the sha256 of its canonical JSON: the same config
always maps to the same run directory, which is how runs are cached and resumed.
Every field enters the hash, even those that do not change the weights
(``log_every``): a run is exactly the config that made it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.nn.config import ModelConfig

DECAYS = ("none", "cosine")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(frozen=True)
class TrainConfig:
    """AdamW training (Loshchilov & Hutter 2019) with an optional warmup and cosine decay."""

    steps: int = 3000  # optimizer updates: the spec's default budget
    lr: float = 1e-3  # peak learning rate (spec default)
    batch_size: int = 64  # sequences per update (per process under DDP)
    warmup_steps: int = 0  # linear warmup from 0 to lr over these steps (§3.3 uses 200)
    decay: str = "none"  # after warmup: constant ("none") or cosine down to min_lr_ratio·lr
    min_lr_ratio: float = 0.1  # floor of the cosine decay as a fraction of lr
    weight_decay: float = 0.01  # PyTorch's AdamW default, applied to every parameter
    betas: tuple[float, float] = (0.9, 0.999)  # AdamW moment decay rates (PyTorch default)
    eps: float = 1e-8  # AdamW denominator guard (PyTorch default)
    grad_clip: float | None = None  # clip the global gradient norm to this (None: off)
    eval_every: int = 500  # train/held perplexity every N steps (0: only at the end)
    eval_batch_size: int = 64  # windows per forward pass when measuring perplexity
    ckpt_every: int = 500  # checkpoint every N steps (0: only at the end)
    log_every: int = 10  # one metrics line (mean loss since the last) every N steps
    seed: int = 0  # seeds the initial weights, dropout and batch sampling
    device: str = "auto"  # auto (CUDA when present) | cpu | cuda
    precision: str = "auto"  # auto (bf16 autocast on CUDA, fp32 on CPU) | fp32 | bf16

    def __post_init__(self) -> None:
        _choice("train.decay", self.decay, DECAYS)
        _choice("train.device", self.device, DEVICES)
        _choice("train.precision", self.precision, PRECISIONS)
        for name in ("steps", "batch_size", "eval_batch_size", "log_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"train.{name} must be at least 1, got {getattr(self, name)}")
        for name in ("warmup_steps", "eval_every", "ckpt_every", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"train.{name} must be >= 0, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"train.lr must be > 0, got {self.lr}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"train.min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")
        if self.weight_decay < 0:
            raise ValueError(f"train.weight_decay must be >= 0, got {self.weight_decay}")
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise ValueError(f"train.betas must be two numbers in [0, 1), got {self.betas}")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(f"train.grad_clip must be > 0 or none, got {self.grad_clip}")


@dataclass(frozen=True)
class DataConfig:
    """Which text to train on and how to cut it into tokens (spec §2)."""

    corpus: str | None = None  # a UTF-8 text file (None: Tiny Shakespeare, found or fetched)
    vocab_size: int = 1024  # byte-level BPE vocabulary; must equal model.vocab_size
    train_tokens: int | None = None  # use only the first N training tokens (small-data runs)

    def __post_init__(self) -> None:
        if self.vocab_size < 1:
            raise ValueError(f"data.vocab_size must be at least 1, got {self.vocab_size}")
        if self.train_tokens is not None and self.train_tokens < 2:
            raise ValueError(f"data.train_tokens must be >= 2 or none, got {self.train_tokens}")


@dataclass(frozen=True)
class RunConfig:
    """One training run: the model, its training and its data."""

    model: ModelConfig = field(default_factory=ModelConfig)  # what to build
    train: TrainConfig = field(default_factory=TrainConfig)  # how to train it
    data: DataConfig = field(default_factory=DataConfig)  # what to train it on

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: one table per section, tuples as lists."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Build and type-check a config from nested dicts (as read from TOML/JSON)."""
        return _build(data, [])

    def replace(self, **sections: Any) -> RunConfig:
        """A copy with whole sections replaced, e.g. ``cfg.replace(train=...)``."""
        return dataclasses.replace(self, **sections)


SECTIONS: dict[str, type] = {"model": ModelConfig, "train": TrainConfig, "data": DataConfig}


def run_hash(cfg: RunConfig) -> str:
    """First 12 hex digits of sha256 over the canonical JSON of the config."""
    text = json.dumps(cfg.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_run_config(
    path: str | Path | None = None, overrides: list[str] | None = None
) -> RunConfig:
    """Read a TOML/JSON run config (or start from the defaults) and apply overrides.

    >>> load_run_config(None, ["train.steps=200", "model.position=rope"]).train.steps
    200
    """
    data: dict[str, Any] = {} if path is None else read_config_file(Path(path))
    return _build(data, list(overrides or []))


def model_with_overrides(base: ModelConfig, overrides: list[str]) -> ModelConfig:
    """``base`` with ``key=value`` (or ``model.key=value``) overrides, typed and checked.

    >>> model_with_overrides(ModelConfig(), ["n_layer=3"]).n_layer
    3
    """
    dotted = [o if o.startswith("model.") else f"model.{o}" for o in overrides]
    return _build({"model": dataclasses.asdict(base)}, dotted).model


def read_config_file(path: Path) -> dict[str, Any]:
    """The nested dict of a ``.toml`` or ``.json`` config file."""
    if not path.is_file():
        raise ValueError(f"config file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            import tomllib  # Python 3.11+

            return tomllib.loads(text)
        if path.suffix == ".json":
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("top level must be an object")
            return data
    except (ValueError, ModuleNotFoundError) as err:  # TOMLDecodeError is a ValueError
        raise ValueError(f"cannot read config {path}: {err}".splitlines()[0]) from err
    raise ValueError(f"config must be a .toml or .json file, got {path.name}")


def _build(data: dict[str, Any], overrides: list[str]) -> RunConfig:
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown config section {unknown[0]!r}; allowed: {', '.join(SECTIONS)}")
    values: dict[str, dict[str, Any]] = {}
    for name, cls in SECTIONS.items():
        table = data.get(name, {})
        if not isinstance(table, dict):
            raise ValueError(f"config section {name!r} must be a table, got {table!r}")
        hints = _hints(cls)
        values[name] = {}
        for key, raw in table.items():
            _check_key(name, key, hints)
            values[name][key] = _coerce(f"{name}.{key}", raw, hints[key], text=False)
    for item in overrides:
        name, key, text = _split_override(item)
        hints = _hints(SECTIONS[name])
        _check_key(name, key, hints)
        values[name][key] = _coerce(f"{name}.{key}", text, hints[key], text=True)
    try:
        parts = {name: cls(**values[name]) for name, cls in SECTIONS.items()}
    except ValueError as err:
        raise ValueError(str(err).splitlines()[0]) from err
    return RunConfig(**parts)


def _split_override(item: str) -> tuple[str, str, str]:
    dotted, sep, text = item.partition("=")
    name, dot, key = dotted.strip().partition(".")
    if not sep or not dot or not key:
        raise ValueError(
            f"override {item!r} must look like section.key=value (e.g. train.steps=200)"
        )
    if name not in SECTIONS:
        allowed = ", ".join(SECTIONS)
        raise ValueError(f"unknown config section {name!r} in {item!r}; allowed: {allowed}")
    return name, key.strip(), text.strip()


def _hints(cls: type) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in typing.get_type_hints(cls).items() if k in names}


def _check_key(section: str, key: str, hints: dict[str, Any]) -> None:
    if key not in hints:
        raise ValueError(f"unknown key {section}.{key}; allowed: {', '.join(hints)}")


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _coerce(key: str, raw: Any, tp: Any, *, text: bool) -> Any:
    """``raw`` as a value of type ``tp``; ``text`` values come from the command line."""
    args = typing.get_args(tp)
    optional = (typing.get_origin(tp) in (typing.Union, types.UnionType)) and type(None) in args
    if optional:
        inner = next(a for a in args if a is not type(None))
        if raw is None or (isinstance(raw, str) and raw.lower() in ("none", "null")
                           and (text or inner is not str)):
            return None
        return _coerce(key, raw, inner, text=text)
    if typing.get_origin(tp) is tuple:
        if text:
            raw = [p for p in raw.strip("[]() ").split(",") if p.strip()]
        if not isinstance(raw, list | tuple) or len(raw) != len(args):
            raise ValueError(f"{key} expects {len(args)} comma-separated values, got {raw!r}")
        return tuple(_coerce(key, r, a, text=text) for r, a in zip(raw, args, strict=True))
    name = getattr(tp, "__name__", str(tp))
    if text:
        return _parse_text(key, raw, tp, name)
    if tp is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    if not isinstance(raw, tp) or (tp is int and isinstance(raw, bool)):
        raise ValueError(f"{key} expects {name}, got {raw!r}")
    return raw


def _parse_text(key: str, raw: str, tp: Any, name: str) -> Any:
    if tp is str:
        return raw
    if tp is bool:
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ValueError(f"{key} expects a bool (true/false), got {raw!r}")
    try:
        return tp(raw)
    except ValueError:
        raise ValueError(f"{key} expects {name}, got {raw!r}") from None


def _choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of: {', '.join(choices)}")
