"""A planned training run and its name on disk.

An experiment's ``plan(settings)`` lists ``RunSpec``\\ s: the full ``RunConfig`` of
every run, every seed included, plus a label. The runner resolves each once
(device, precision, corpus: ``attnlab.running.runner.Runner.resolve``); from then on
a spec's key, the name of its run directory, is the hash of that resolved
config (``run_key``), plus a hash of the token data for runs given their data
directly (synthetic languages). A spec computes its key once, when first asked
(``RunSpec.key``), so the one resolved spec a plan holds per run keeps its
identity through counting, training and reading back.

The form of a seeded label (``"<label> seed <s>"``) is written once, in
``attnlab.i18n.labels``, beside its inverse and the label said in the reader's language.
This module needs nothing but the config types and that, so the worker side
(``attnlab.running.train_run``) and any executor can import it without the runner.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from attnlab.errors import UsageError
from attnlab.i18n import labels
from attnlab.nn.model_config import Seq2SeqConfig
from attnlab.train.run_config import RunConfig, run_hash


@dataclass(frozen=True)
class RunSpec:
    """One planned training run."""

    label: str  # unique within a plan, e.g. "ladder row 5 seed 0"
    config: RunConfig  # everything that defines the run (device "auto": the runner decides)
    data: Any = None  # token data given directly (synthetic languages): .train, .held arrays
    may_diverge: bool = False  # a non-finite loss is a result (recorded), not an error

    @functools.cached_property
    def key(self) -> str:
        """The run directory name (``run_key``), computed on first use and kept: a spec is
        frozen, and ``dataclasses.replace`` makes a new one that computes its own."""
        key = run_hash(self.config)
        return key if self.data is None else f"{key}-{data_fingerprint(self.data)}"


def seeded(label: str, config: RunConfig, seeds: int, *, data: Any = None,
           may_diverge: bool = False) -> list[RunSpec]:
    """The run ``config`` with seeds 0..seeds-1, labelled ``"<label> seed <s>"``.

    >>> [s.label for s in seeded("row 1", RunConfig(), 2)]
    ['row 1 seed 0', 'row 1 seed 1']
    """
    if seeds < 1:
        raise UsageError(f"seeds must be at least 1, got {seeds}")
    return [RunSpec(labels.seeded(label, s),
                    config.replace(train=dataclasses.replace(config.train, seed=s)),
                    data, may_diverge) for s in range(seeds)]


def data_fingerprint(data: Any) -> str:
    """A short content hash of directly given token data (train + held arrays), or the
    data's own ``checksum`` where it has one (translation pairs: words, alignments and
    agreements, ``attnlab.data.translation.TranslationData``)."""
    import numpy as np

    own = getattr(data, "checksum", None)
    if isinstance(own, str):
        return own[:8]
    h = hashlib.sha256()
    for part in (data.train, data.held):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()[:8]


def run_key(spec: RunSpec) -> str:
    """The run directory name of a *resolved* ``spec``: its config hash (+ its data's),
    computed once per spec (``RunSpec.key``)."""
    return spec.key


def train_cost(cfg: RunConfig) -> float:
    """A rough FLOP count of a run (6 · parameters + attention, per token, times tokens):
    only used to hand the executor its longest runs first."""
    m, t = cfg.model, cfg.train
    if isinstance(m, Seq2SeqConfig):  # about 16 target words a pair, the source as long
        from attnlab.nn.seq2seq import count_parameters

        return float(t.steps * t.batch_size * 32 * 6 * count_parameters(m))
    per_block = 12 * m.d_model**2 if m.mlp else 4 * m.d_model**2
    flops_per_token = 6 * (m.n_layer * per_block + m.d_model * m.vocab_size) \
        + 12 * m.n_layer * m.n_ctx * m.d_model
    return float(t.steps * t.batch_size * m.n_ctx * flops_per_token)
