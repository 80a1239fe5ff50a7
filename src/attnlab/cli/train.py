"""``attnlab train``: train a model from a run config, resuming where it stopped.

    attnlab train tiny --set train.steps=200 --set model.position=rope

CONFIG is a file, or the name of an example config shipped in the package
(``attnlab.presets``: tiny, default, two_blocks_cosine); ``--list-configs`` prints where
they are.

Before any work the run folder is checked (a file, or a folder that cannot be
written, is one line), a finished run's checkpoint is checked to load, and a
new run's step is checked to fit in memory (``attnlab.train.memory``).

The run lives in ``runs/<config hash>`` unless ``--run-dir`` says otherwise;
the hash is of the resolved config, so it names the device and precision the
run uses (``auto`` resolved on this machine). Running the same command again
resumes an interrupted run or reports that it has finished; a run that
diverged says so at once (exit 1). Under ``torchrun`` every process runs this command and only
rank 0 prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from attnlab.bounds import whole
from attnlab.cli.words import Words, add_lang, lang_of, new_parser, words


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    say = words(lang)
    p = new_parser(sub, "train", say, help=say("train.help"),
                   description=say("train.description"))
    p.add_argument("config", nargs="?", metavar="CONFIG", help=say("train.config"))
    p.add_argument("--list-configs", action="store_true", help=say("train.list_configs"))
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help=say("train.set"))
    p.add_argument("--run-dir", metavar="DIR", help=say("train.run_dir"))
    p.add_argument("--corpus", metavar="PATH", help=say("train.corpus"))
    p.add_argument("--threads", type=whole("--threads"), default=None, metavar="N",
                   help=say("train.threads"))
    p.add_argument("--precision", choices=["auto", "fp32", "bf16"], default=None,
                   help=say("train.precision"))
    p.add_argument("--quiet", action="store_true", help=say("train.quiet"))
    p.add_argument("--json", action="store_true", help=say("train.json"))
    add_lang(p, say)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab import presets
    from attnlab.cli.outputs import check_folder
    from attnlab.errors import UsageError
    from attnlab.i18n.logs import said
    from attnlab.train.memory import check_step_memory
    from attnlab.train.progress import ProgressPrinter
    from attnlab.train.run_config import load_run_config, run_hash
    from attnlab.train.rundir import RESULT, check_same_config
    from attnlab.train.runtime import (
        CPU_THREADS,
        check_precision,
        resolve_run,
        training_threads,
    )
    from attnlab.train.trainer import TrainingDiverged, train

    say = lang_of(args)
    if args.list_configs:
        for name in presets.names():
            print(f"{name:20} {presets.path(name)}")
        return 0
    threads = CPU_THREADS if args.threads is None else args.threads
    if threads < 1:
        raise UsageError(say("train.threads_low", value=threads))
    overrides = list(args.overrides)
    if args.corpus is not None:
        overrides.append(f"data.corpus={args.corpus}")
    if args.precision is not None:
        overrides.append(f"train.precision={args.precision}")
    config = presets.resolve(args.config)  # a file, or an example config's name (tiny)
    cfg = resolve_run(load_run_config(config, overrides))  # the hash names device, precision
    run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / run_hash(cfg)
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(say("train.run_dir_file", path=run_dir))
    check_same_config(run_dir, cfg)  # before anything is printed: one line on error
    check_precision(cfg.train.precision, cfg.train.device)  # bf16 without bf16 units: one line
    check_folder("--run-dir", run_dir, say)  # a read-only disk: one line, before any work
    main_rank = int(os.environ.get("RANK", "0")) == 0
    # a refused start removes the folder it made (rank 0 made it), instead of leaving a .lock
    made = main_rank and not run_dir.exists()
    if (run_dir / RESULT).is_file():
        check_finished(run_dir, say)  # not "already finished" over one that cannot load
    else:
        check_step_memory(cfg)
    tell = print if main_rank else _silent
    finished = (run_dir / RESULT).is_file()
    head = say("train.head", path=run_dir, hash=run_hash(cfg), device=cfg.train.device,
               precision=cfg.train.precision)

    def started(step: int) -> None:  # once the run's files are checked: errors stay one line
        tell(head + (say("train.resuming", step=step) if step else ""), file=sys.stderr)

    progress = None if args.quiet or not main_rank else ProgressPrinter(sys.stderr,
                                                                          lang=say.lang)
    try:
        with training_threads(cfg.train.device, threads):
            result = train(cfg, run_dir, progress=progress, on_start=started)
    except TrainingDiverged as err:
        tell(say("train.stopped", error=said(err, say.lang)), file=sys.stderr)
        return 1
    except (RuntimeError, MemoryError) as err:
        if made:
            _remove_if_empty(run_dir)
        short = out_of_memory(err, say)
        if short is None:
            raise
        raise short from err
    except BaseException:
        if made:
            _remove_if_empty(run_dir)
        raise
    if finished:
        tell(head, file=sys.stderr)
        tell(say("train.finished", path=run_dir), file=sys.stderr)
    tell(json.dumps(result, sort_keys=True) if args.json else summary(result, say))
    return 0


def summary(result: dict, say: Words | None = None) -> str:
    """One human line: steps, loss, perplexities, speed."""
    say = say or Words("en")
    return say("train.summary", steps=result["steps"], loss=f"{result['final_loss']:.4f}",
               train=f"{result['train_ppl']:.2f}", held=f"{result['held_ppl']:.2f}",
               speed=say.count(round(result["tokens_per_s"])), wall=f"{result['wall_s']:.0f}",
               params=say.count(result["params"]))


def check_finished(run_dir: Path, say: Words | None = None) -> None:
    """A finished run's checkpoint must still load: else one line, not "already finished"."""
    from attnlab.errors import DataError
    from attnlab.i18n.logs import said
    from attnlab.train.runtime import load_trained

    say = say or Words("en")
    try:
        load_trained(run_dir, "cpu")
    except DataError as err:
        bare = err.__cause__ if isinstance(err.__cause__, DataError) else err  # before advice
        # the inner error in the command's language too, when it was raised as a template
        raise DataError(say("train.unreadable", path=run_dir, error=said(bare, say.lang))
                        ) from err


def out_of_memory(err: BaseException, say: Words | None = None) -> Exception | None:
    """An allocation failure as one UsageError line with its size; None for anything else."""
    import re

    from attnlab.errors import UsageError
    from attnlab.train.memory import format_bytes

    text = str(err)
    if not (isinstance(err, MemoryError) or "out of memory" in text.lower()
            or "can't allocate memory" in text):  # fmt: skip
        return None
    size = re.search(r"allocate ([0-9.]+) ?(bytes|[KMGTP]iB)", text)
    what = ""
    if size and size.group(2) == "bytes":
        what = (say or Words("en"))("train.piece", size=format_bytes(int(size.group(1))))
    elif size:
        what = (say or Words("en"))("train.piece", size=f"{size.group(1)} {size.group(2)}")
    return UsageError((say or Words("en"))("train.out_of_memory", what=what))


def _remove_if_empty(run_dir: Path) -> None:
    """Remove a run folder this command made if it holds nothing but its lock file."""
    try:
        if [p.name for p in run_dir.iterdir()] == [".lock"]:
            (run_dir / ".lock").unlink()
            run_dir.rmdir()
    except OSError:
        pass


def _silent(*_args: object, **_kwargs: object) -> None:
    return None
