"""The worker side: train one resolved run into its directory, the same way on every path.

``train_spec`` is the one function that trains a planned run (a translation run, whose
model is a ``Seq2SeqConfig``, through ``attnlab.train.seq2seq_trainer``). The runner calls
it in order in its own process (``--jobs 1``, and the driver's retry of a run
whose worker failed), each local worker process calls it
(``attnlab.running.executors.LocalPool``), and so does each Ray task
(``attnlab.running.ray_executor``). It is top level and needs nothing but the spec,
the work folder and the token data, so any process can run it.

Same bits on every path. A CPU matmul sums in an order that depends on how many
threads split it, so two thread counts give weights that differ in the last
bits (measured: the four norm runs of the micro profile, trained in the main
process on two threads, ended with other weights than on the pool's one-thread
workers). So a CPU run always trains on ``attnlab.train.runtime.CPU_THREADS``
(one) thread (``training_threads``), and the caller's thread count is restored
afterwards (an analysis in the same process keeps its own). ``attnlab train``
uses the same count by default (``--threads`` changes it, and with it the last
bits). On CUDA the count is left alone: the CPU threads do not take part in the
arithmetic.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from attnlab.errors import first_line
from attnlab.i18n.labels import RunLabel
from attnlab.running.spec import RunSpec, run_key
from attnlab.train.progress import Progress
from attnlab.train.rundir import DIVERGED, LOCK, RESULT

log = logging.getLogger(__name__)


def finished(spec: RunSpec, work: Path) -> dict | None:
    """The stored record of a resolved ``spec`` under ``work`` if it finished, or if it
    diverged and its spec allows that (``{"diverged": True, ...}``); else None."""
    from attnlab.train.rundir import read_json_object, read_result

    run_dir = Path(work) / run_key(spec)
    names = (RESULT, DIVERGED) if spec.may_diverge else (RESULT,)
    for name in names:
        path = run_dir / name
        if path.is_file():  # damaged (or without the fields of a result): one DataError
            if name == DIVERGED:
                return {**read_json_object(path), "diverged": True, "run_dir": str(run_dir)}
            return {**read_result(run_dir), "run_dir": str(run_dir)}
    return None


def wait_for_other_trainer(run_dir: Path, label: str) -> bool:
    """Block while another process trains ``run_dir`` (holds its exclusive lock): another
    command training the same run into the same ``--work``. True when it had to wait.

    Two ``reproduce`` into one ``--work`` plan the same runs; the second, instead of
    being refused by the lock (a "failed" run that in fact ends right in the first),
    waits for the first and then reads its result, or resumes it if the first was
    stopped. Taking the shared lock is how it waits: it is granted once the trainer's
    exclusive lock is let go (an ``eval``'s shared lock does not block it).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the trainer's own lock decides
        return False
    try:
        fd = os.open(Path(run_dir) / LOCK, os.O_RDONLY)
    except OSError:  # no lock file: nobody has trained here yet
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            log.info("%s is being trained by another process (%s); waiting for it",
                     RunLabel(label), run_dir)
            fcntl.flock(fd, fcntl.LOCK_SH)  # Ctrl-C interrupts the wait
            return True
    finally:
        os.close(fd)


def train_spec(spec: RunSpec, work: Path, *, data: Any = None,
               progress: Progress | None = None) -> dict:
    """Train one resolved ``spec`` into ``work/<key>`` (or read it if it finished); its record.

    ``data`` is the token data of a corpus run (None: the spec's own data, else the
    trainer loads the corpus of ``spec.config.data``). ``progress`` gets the trainer's
    dicts with ``"run": spec.label``. A run another process is training is waited for
    (``wait_for_other_trainer``), then read or resumed. A divergence is a record when the
    spec allows it (the trainer wrote ``diverged.json``) and raises ``TrainingDiverged``
    otherwise; an interruption raises ``TrainingInterrupted`` after the checkpoint is
    written.
    """
    from attnlab.nn.model_config import Seq2SeqConfig
    from attnlab.train import seq2seq_trainer, trainer
    from attnlab.train.runtime import training_threads

    run_dir = Path(work) / run_key(spec)
    if wait_for_other_trainer(run_dir, spec.label):
        log.info("%s: the other process stopped; reading or resuming its run",
                 RunLabel(spec.label))
    done = finished(spec, work)
    if done is not None:
        return done

    def tagged(info: dict) -> None:
        if progress is not None:
            progress({**info, "run": spec.label})

    log.info("training %s (%s)", RunLabel(spec.label), run_dir)
    given = spec.data if spec.data is not None else data
    try:
        with training_threads(spec.config.train.device):
            # an encoder–decoder trains on its pairs; everything else is a language model
            train = seq2seq_trainer.train if isinstance(spec.config.model, Seq2SeqConfig) \
                else trainer.train
            record = train(spec.config, run_dir, data=given, progress=tagged)
    except trainer.TrainingDiverged as err:
        if not spec.may_diverge:
            raise
        log.warning("%s diverged: %s", RunLabel(spec.label), err)
        return finished(spec, work) or {"diverged": True, "message": first_line(err),
                                        "run_dir": str(run_dir)}
    return {**record, "run_dir": str(run_dir)}
