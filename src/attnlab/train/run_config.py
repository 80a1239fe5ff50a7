"""Run configuration: what to build, how to train it, on which data.

A run is one ``RunConfig`` = ``ModelConfig`` (attnlab.nn.model_config) + ``TrainConfig``
+ ``DataConfig``; a translation run's model is a ``Seq2SeqConfig`` instead (its ``arch``
field, which no ``ModelConfig`` has, tells the two apart in a stored config and in the
hash; ``attnlab.train.seq2seq_trainer`` trains it on pairs given to it).
It is read from a TOML or JSON file with one table per part::

    [model]
    d_model = 64
    [train]
    steps = 200

and command-line overrides ``section.key=value`` (``train.steps=200``,
``model.position=rope``, ``train.grad_clip=none``). Every value is checked
against the field's type; unknown sections or keys, wrong types and values
out of range are a one-line ``UsageError`` naming the key and the allowed
ones (``ModelConfig``'s own checks raise theirs, which this module, the boundary
between user input and the model, names with their section). A config file that
cannot be read is a ``DataError`` naming the file.

``run_hash`` names a run by the sha256 of its canonical JSON: the same config
always maps to the same run directory, which is how runs are cached and resumed.
Every field enters the hash, even those that do not change the weights
(``log_every``): a run is exactly the config that made it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.errors import DataError, Said, UsageError, first_line, os_reason
from attnlab.i18n.logs import Grouped
from attnlab.nn.model_config import ModelConfig, Seq2SeqConfig

DECAYS = ("none", "cosine")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")
DENORMALS = ("keep", "flush")
STEPS_MAX = 10_000_000  # 3,333 times the spec's budget; steps past it are a typo, not a plan
# Stated ranges of the whole-number fields, both ends included.
TRAIN_RANGES = {
    "steps": (1, STEPS_MAX),
    "batch_size": (1, 1 << 16),
    "eval_batch_size": (1, 1 << 16),
    "log_every": (1, STEPS_MAX),
    "warmup_steps": (0, STEPS_MAX),
    "eval_every": (0, STEPS_MAX),
    "ckpt_every": (0, STEPS_MAX),
    "seed": (0, 2**32 - 1),  # NumPy's legacy seeding and every C int take it
}


@dataclass(frozen=True)
class TrainConfig:
    """AdamW training (Loshchilov & Hutter 2019) with an optional warmup and cosine decay."""

    steps: int = 3000  # optimizer updates: the spec's default budget
    lr: float = 1e-3  # peak learning rate (spec default)
    batch_size: int = 64  # sequences per update (per process under DDP)
    warmup_steps: int = 0  # linear warmup from 0 to lr over these steps (the norm experiment: 200)
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
    compile: bool = False  # torch.compile the training forward (CUDA only: slower on this CPU)
    keep_steps: tuple[int, ...] = ()  # also keep the weights after these steps (kept_steps.py)
    # CPU floats below 1.2e-38: kept (IEEE arithmetic, slow on x86) | flushed to zero (where a
    # softmax saturates, as without the √d_k division, a step is up to 5x faster; runtime.py)
    denormals: str = "keep"

    def __post_init__(self) -> None:
        _choice("train.decay", self.decay, DECAYS)
        _choice("train.device", self.device, DEVICES)
        _choice("train.precision", self.precision, PRECISIONS)
        _choice("train.denormals", self.denormals, DENORMALS)
        for name, (lo, hi) in TRAIN_RANGES.items():  # before any work: steps=10**29 is refused
            _check_range(f"train.{name}", getattr(self, name), lo, hi)
        for name in ("lr", "eps"):  # inf or nan would only surface as a diverged run
            if not 0 < getattr(self, name) < math.inf:
                raise UsageError("train.%s must be a finite number > 0, got %s", name,
                                 getattr(self, name))
        if not 0 <= self.min_lr_ratio <= 1:
            raise UsageError("train.min_lr_ratio must be in [0, 1], got %s", self.min_lr_ratio)
        if not 0 <= self.weight_decay < math.inf:
            raise UsageError("train.weight_decay must be a finite number >= 0, got %s",
                             self.weight_decay)
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise UsageError("train.betas must be two numbers in [0, 1), got %s", self.betas)
        if any(not 1 <= k <= self.steps for k in self.keep_steps):
            raise UsageError("train.keep_steps must be steps in [1, train.steps=%s], got %s",
                             _grouped(self.steps), list(self.keep_steps))
        if self.grad_clip is not None and not 0 < self.grad_clip < math.inf:
            raise UsageError("train.grad_clip must be a finite number > 0 or none, got %s",
                             self.grad_clip)


@dataclass(frozen=True)
class DataConfig:
    """Which text to train on and how to cut it into tokens (docs/data.md)."""

    corpus: str | None = None  # a UTF-8 text file (None: Tiny Shakespeare, found or fetched)
    vocab_size: int = 1024  # byte-level BPE vocabulary; must equal model.vocab_size
    train_tokens: int | None = None  # use only the first N training tokens (small-data runs)

    def __post_init__(self) -> None:
        _check_range("data.vocab_size", self.vocab_size, 1, 1 << 20)
        if self.train_tokens is not None:
            _check_range("data.train_tokens", self.train_tokens, 2, 1 << 40)


@dataclass(frozen=True)
class RunConfig:
    """One training run: the model, its training and its data."""

    # what to build: a language model, or an encoder–decoder (translation)
    model: ModelConfig | Seq2SeqConfig = field(default_factory=ModelConfig)
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
SEQ2SEQ_KEY = "arch"  # the model table of an encoder–decoder has it; a ModelConfig's has not


def section_class(name: str, table: Any, overrides: list[str] = ()) -> type:
    """The dataclass of section ``name`` whose table is ``table`` (with ``overrides``): the
    model section is a ``Seq2SeqConfig`` when it names an ``arch``.

    >>> section_class("model", {"arch": "rnn"}).__name__, section_class("model", {}).__name__
    ('Seq2SeqConfig', 'ModelConfig')
    """
    if name == "model":
        named = (isinstance(table, dict) and SEQ2SEQ_KEY in table) or any(
            o.partition("=")[0].strip() == f"model.{SEQ2SEQ_KEY}" for o in overrides)
        if named:
            return Seq2SeqConfig
    return SECTIONS[name]


# Fields added after runs had been cached: hashed only when set, so that every earlier run
# keeps its hash (and its cached result).
LATER_FIELDS = {"train": {"keep_steps": [], "denormals": "keep"}}


def run_hash(cfg: RunConfig) -> str:
    """First 12 hex digits of sha256 over the canonical JSON of the config (a field of
    ``LATER_FIELDS`` at its default left out)."""
    data = cfg.to_dict()
    for section, defaults in LATER_FIELDS.items():
        for key, default in defaults.items():
            if data[section].get(key) == default:
                del data[section][key]
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
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
    """The nested dict of a ``.toml`` or ``.json`` config file.

    A missing file or a wrong extension is a ``UsageError`` (the user named the
    wrong thing); a file that is not UTF-8 text, not valid TOML/JSON or not a
    table at the top is a ``DataError`` naming it.
    """
    if path.is_dir():
        raise UsageError("config %s is a directory, not a .toml or .json file", path)
    if not path.is_file():
        raise UsageError("config file not found: %s", path)
    if path.suffix not in (".toml", ".json"):
        raise UsageError("config must be a .toml or .json file, got %s", path.name)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError("config %s is not UTF-8 text (byte %d): is it a binary file?", path,
                        err.start) from err
    except OSError as err:
        raise DataError("cannot read config %s: %s", path, os_reason(err)) from err
    try:
        if path.suffix == ".toml":
            import tomllib  # Python 3.11+

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as err:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise DataError("cannot read config %s: %s", path, first_line(err)) from err
    if not isinstance(data, dict):
        raise DataError("config %s must hold a table at the top, got %s", path,
                        type(data).__name__)
    return data


def _build(data: Any, overrides: list[str]) -> RunConfig:
    if not isinstance(data, dict):
        raise UsageError("a run config must be a table of sections, got %s", type(data).__name__)
    unknown = sorted(map(str, set(data) - set(SECTIONS)))
    if unknown:
        raise UsageError("unknown config section %r; allowed: %s", unknown[0], ", ".join(SECTIONS))
    values: dict[str, dict[str, Any]] = {}
    classes = {name: section_class(name, data.get(name), overrides) for name in SECTIONS}
    for name, cls in classes.items():
        table = data.get(name, {})
        if not isinstance(table, dict):
            raise UsageError("config section %r must be a table, got %s %s", name,
                             type(table).__name__, _short(table))
        hints = _hints(cls)
        values[name] = {}
        for key, raw in table.items():
            _check_key(name, key, hints)
            values[name][key] = _coerce(f"{name}.{key}", raw, hints[key], text=False)
    for item in overrides:
        name, key, text = _split_override(item)
        hints = _hints(classes[name])
        _check_key(name, key, hints)
        values[name][key] = _coerce(f"{name}.{key}", text, hints[key], text=True)
    parts = {}
    for name, cls in classes.items():
        try:
            parts[name] = cls(**values[name])
        except ValueError as err:  # ModelConfig's own checks, named with their section
            if isinstance(err, UsageError) and cls not in (ModelConfig, Seq2SeqConfig):
                raise  # train's and data's checks name their key themselves (train.steps)
            template = getattr(err, "template", None)  # a UsageError's, said in the language
            raise UsageError("%s: %s", name, first_line(err) if template is None else
                             Said(template, *err.values)) from err
    return RunConfig(**parts)


def _short(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for one-line messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _split_override(item: str) -> tuple[str, str, str]:
    dotted, sep, text = item.partition("=")
    name, dot, key = dotted.strip().partition(".")
    if not sep or not dot or not key:
        raise UsageError("override %r must look like section.key=value (e.g. train.steps=200)",
                         item)
    if name not in SECTIONS:
        raise UsageError("unknown config section %r in %r; allowed: %s", name, item,
                         ", ".join(SECTIONS))
    return name, key.strip(), text.strip()


def _hints(cls: type) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in typing.get_type_hints(cls).items() if k in names}


def unknown_fields(data: Any) -> list[str]:
    """The sections and ``section.key`` names of a stored config that this attnlab does not
    know (a newer one may write them).

    >>> unknown_fields({"model": {"d_model": 64, "rotary_base": 1e4}, "eval": {}})
    ['eval', 'model.rotary_base']
    """
    if not isinstance(data, dict):
        return []
    names = [str(key) for key in data if key not in SECTIONS]
    for name in SECTIONS:
        table = data.get(name)
        if isinstance(table, dict):
            hints = _hints(section_class(name, table))
            names += [f"{name}.{key}" for key in table if key not in hints]
    return names


def _check_key(section: str, key: Any, hints: dict[str, Any]) -> None:
    if key not in hints:
        raise UsageError("unknown key %s.%s; allowed: %s", section, key, ", ".join(hints))


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
        if len(args) == 2 and args[1] is Ellipsis:  # tuple[int, ...]: any length
            if not isinstance(raw, list | tuple):
                raise UsageError("%s expects comma-separated values, got %s", key, _short(raw))
            return tuple(_coerce(key, r, args[0], text=text) for r in raw)
        if not isinstance(raw, list | tuple) or len(raw) != len(args):
            raise UsageError("%s expects %d comma-separated values, got %s", key, len(args),
                             _short(raw))
        return tuple(_coerce(key, r, a, text=text) for r, a in zip(raw, args, strict=True))
    name = getattr(tp, "__name__", str(tp))
    if text:
        return _parse_text(key, raw, tp, name)
    if tp is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    if not isinstance(raw, tp) or (tp is int and isinstance(raw, bool)):
        raise UsageError("%s expects %s, got %s", key, name, _short(raw))
    return raw


def _parse_text(key: str, raw: str, tp: Any, name: str) -> Any:
    if tp is str:
        return raw
    if tp is bool:
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise UsageError("%s expects a bool (true/false), got %r", key, raw)
    try:
        return tp(raw)
    except ValueError:
        raise UsageError("%s expects %s, got %r", key, name, raw) from None


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    if not lo <= value <= hi:
        raise UsageError("%s must be in [%s, %s], got %s", name, _grouped(lo), _grouped(hi),
                         _grouped(value))


def _grouped(value: Any) -> Any:
    """A whole number as a ``Grouped`` (``10,000,000`` in English, ``10000000`` in Spanish);
    anything else as it is."""
    return Grouped(value) if isinstance(value, int) else value


def _choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise UsageError("unknown %s %r; choose one of: %s", name, value, ", ".join(choices))
