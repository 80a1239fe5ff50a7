"""attnlab.train: the trainer, its configs, checkpoints and run directories.

    from attnlab import presets
    from attnlab.train import load_run_config, train
    result = train(load_run_config(presets.path("tiny")), "runs/tiny")
"""

from attnlab.train.progress import ProgressPrinter
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig, load_run_config, run_hash
from attnlab.train.runtime import evaluate, load_trained
from attnlab.train.trainer import TrainingDiverged, train

__all__ = [
    "DataConfig",
    "ProgressPrinter",
    "RunConfig",
    "TrainConfig",
    "TrainingDiverged",
    "evaluate",
    "load_run_config",
    "load_trained",
    "run_hash",
    "train",
]
