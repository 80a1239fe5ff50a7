"""Training an encoder–decoder on translation pairs: the language-model trainer's loop with
another batch, loss and evaluation.

Dimension legend: ``b`` batch (pairs), ``s`` source positions, ``t`` target positions,
``v`` target vocabulary.

A run whose ``RunConfig.model`` is a ``Seq2SeqConfig`` trains here, on the pairs given
to it (``attnlab.data.translation.TranslationData``, the ``RunSpec``'s data). Everything
else is ``attnlab.train.trainer``'s, unchanged: the run directory and its lock, AdamW at
the rate of the step, the divergence guard (3·ln of the *target* vocabulary), the atomic
safetensors + JSON checkpoints and the resumption from them, so a run interrupted and
resumed on the CPU ends with bitwise the weights of one never interrupted.

One update draws ``b`` training pairs uniformly with replacement (``torch.randint`` on
the run's sampler generator, whose state every checkpoint keeps), pads them
(``encode_batch``) and takes the mean cross-entropy of every real target word given the
source and the words before it: teacher forcing (``tgt_in`` is bos and the target
shifted right; ``attnlab.nn.seq2seq.seq2seq_loss``).

Evaluation: target-word perplexity, teacher-forced, on the held-out pairs whose source
lies in the training band (held-out bands past it are what an experiment measures, not
what the run is checked against) and on as many training pairs, the first ones: the
result's ``held_ppl`` and ``train_ppl``.

Left out: DDP (one process trains a pair run), length bucketing, label smoothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.data.translation import PAD, Pair, TranslationData, encode_batch
from attnlab.errors import UsageError
from attnlab.nn.seq2seq import seq2seq_loss
from attnlab.train import trainer
from attnlab.train.progress import Progress
from attnlab.train.run_config import RunConfig
from attnlab.train.runtime import autocast


@dataclass(frozen=True)
class PairSplits:
    """The pairs a run trains and evaluates on (in place of a language model's tokens)."""

    data: TranslationData
    held: tuple[Pair, ...]  # held-out pairs whose source length lies in the training band
    tokenizer: Any = None  # none: the vocabularies are the language's own
    corpus_sha256: str | None = None  # the pairs' checksum

    @classmethod
    def of(cls, data: Any) -> PairSplits:
        if not isinstance(data, TranslationData):
            raise UsageError("a translation run (model.arch set) trains on translation pairs "
                             "given to it (RunSpec data: a TranslationData), not on a corpus")
        lo, hi = data.train_band
        held = tuple(p for pairs in data.held.values() for p in pairs
                     if lo <= len(p.source) <= hi)
        return cls(data, held or tuple(p for pairs in data.held.values() for p in pairs),
                   None, data.checksum)

    @property
    def train(self) -> tuple[Pair, ...]:
        return self.data.train

    def batch(self, pairs: Any, device: torch.device) -> tuple[torch.Tensor, ...]:
        """``(src, src_lengths, tgt_in, tgt_out)`` of ``pairs`` as tensors on ``device``."""
        b = encode_batch(list(pairs), self.data.source_vocab, self.data.target_vocab)
        return tuple(torch.from_numpy(np.asarray(a)).to(device)
                     for a in (b.src, b.src_lengths, b.tgt_in, b.tgt_out))


class Seq2SeqRun(trainer._Run):
    """A training session of an encoder–decoder: ``trainer._Run`` with pairs."""

    def _prepare(self, data: Any | None) -> PairSplits:
        return PairSplits.of(data)

    @property
    def vocab_size(self) -> int:
        return self.cfg.model.tgt_vocab

    def _batch_loss(self, net: torch.nn.Module, amp: Any) -> tuple[torch.Tensor, int]:
        train = self.splits.train
        rows = torch.randint(len(train), (self.tc.batch_size,), generator=self.sampler)
        src, lengths, tgt_in, tgt_out = self.splits.batch((train[i] for i in rows.tolist()),
                                                          self.device)
        with amp:
            logits = net(src, lengths, tgt_in)  # (b, t, v)
        return seq2seq_loss(logits, tgt_out, PAD), int((tgt_out != PAD).sum())

    @torch.no_grad()
    def _perplexity(self, pairs: tuple[Pair, ...]) -> float:
        was_training = self.model.training
        self.model.eval()
        total, words = 0.0, 0
        try:
            size = self.tc.eval_batch_size
            for start in range(0, len(pairs), size):
                src, lengths, tgt_in, tgt_out = self.splits.batch(pairs[start:start + size],
                                                                  self.device)
                with autocast(self.device, self.precision):
                    logits = self.model(src, lengths, tgt_in)  # (b, t, v)
                n = int((tgt_out != PAD).sum())
                total += float(seq2seq_loss(logits, tgt_out, PAD)) * n
                words += n
        finally:
            self.model.train(was_training)
        return math.exp(total / words)

    def _evaluate(self) -> dict[str, float]:
        held = self.splits.held
        return {"train_ppl": self._perplexity(self.splits.train[: len(held)]),
                "held_ppl": self._perplexity(held)}

    def _sizes(self) -> dict[str, int]:
        return {"eval_tokens": sum(len(p.target) + 1 for p in self.splits.held),
                "pairs_seen": self.step * self.tc.batch_size}


def train(cfg: RunConfig, run_dir: Path, *, data: Any = None,
          progress: Progress | None = None) -> dict[str, Any]:
    """Train the encoder–decoder of ``cfg`` on the pairs ``data`` in ``run_dir`` (resuming
    from its checkpoint); the result record, as ``attnlab.train.trainer.train`` gives it."""
    return trainer.train(cfg, run_dir, data=data, progress=progress, session=Seq2SeqRun)
