"""``attnlab explore``: write the attention explorer page, or serve it for typed sentences.

attnlab explore                         # hand-designed heads -> explorer.html
attnlab explore --text "El perro que mordió al gato estaba muy cansado" --out perro.html
attnlab explore --serve --port 8000     # type any sentence at http://127.0.0.1:8000/
attnlab explore --checkpoint runs/RUN --text "To be, or not"  # a run of `attnlab train`
attnlab explore --hf-model DIR --serve  # a local Hugging Face causal LM (GPT-2, OPT, Llama…)
attnlab explore --winograd              # the Winograd pair under a trained probe (cached in runs/)
attnlab explore --agreement             # `I work , you work , he` under a trained probe
attnlab explore --induction             # the induction experiment's two-block model, with roles
attnlab explore --lang es               # the page's interface (and the hand heads' text) in Spanish
attnlab explore --agreement-distance    # «la gata que perseguía al ratón … estaba muy ___»
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlab.bounds import check_text, whole
from attnlab.cli.outputs import check_file, check_folder
from attnlab.errors import UsageError
from attnlab.explorer.page.render import write_page
from attnlab.explorer.server.httpd import serve
from attnlab.explorer.sources.hand import hand_compute
from attnlab.explorer.sources.heads import SENTENCE
from attnlab.i18n import LANGS, resolve_lang

DEFAULT_OUT = Path("explorer.html")
DEFAULT_PORT = 8000
DEFAULT_WORK = "runs"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``explore`` subcommand."""
    p = subparsers.add_parser(
        "explore",
        help="write or serve the attention explorer page",
        description="Write a self-contained page showing where each word attends, "
        "or serve it on 127.0.0.1 so any typed sentence can be shown.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--hand", action="store_true", help="hand-designed heads over word features (default)"
    )
    source.add_argument("--checkpoint", metavar="RUN", help="heads of a run of `attnlab train`")
    source.add_argument(
        "--hf-model", metavar="DIR",
        help="a causal language model saved by Hugging Face transformers in DIR (no download)",
    )
    source.add_argument(
        "--winograd", action="store_true",
        help="the Winograd sentence pair under a small trained probe model (trains once, cached)",
    )  # fmt: skip
    source.add_argument(
        "--agreement", action="store_true",
        help="`I work , you work , he` under a small trained model (trains once, cached)",
    )  # fmt: skip
    source.add_argument(
        "--induction", action="store_true",
        help="a repeated random sequence under the induction experiment's two-block model, "
        "with the head-roles view (trains once, cached)",
    )  # fmt: skip
    source.add_argument(
        "--agreement-distance", action="store_true",
        help="«la gata que perseguía al ratón … estaba muy» at a long distance under the "
        "recurrence experiment's attention model (trains once, cached)",
    )  # fmt: skip
    p.add_argument("--text", help=f"sentence to show (default: {SENTENCE!r})")
    p.add_argument("--out", type=Path, help=f"page to write (default: {DEFAULT_OUT})")
    p.add_argument("--serve", action="store_true", help="serve on 127.0.0.1 instead of writing")
    p.add_argument(
        "--port", type=whole("--port"), metavar="N",
        help=f"port for --serve (default: {DEFAULT_PORT}; 0: any free port; up to 65,535)"
    )
    p.add_argument(
        "--work", type=Path, help=f"--winograd/--agreement: where training runs are cached "
        f"(default: {DEFAULT_WORK})",
    )  # fmt: skip
    p.add_argument(
        "--lang", choices=LANGS, help="language of the page's buttons, switches, captions and "
        "notes (default: the locale's, else English); the hand-designed heads' text too",
    )  # fmt: skip
    p.set_defaults(func=run)


def _compute(args: argparse.Namespace) -> Callable[[str], dict[str, Any]]:
    if args.checkpoint:
        from attnlab.explorer.sources.models import checkpoint_compute

        return checkpoint_compute(args.checkpoint)
    if args.hf_model:
        from attnlab.explorer.sources.hf import hf_compute

        return hf_compute(args.hf_model)
    return functools.partial(hand_compute, lang=args.lang)


def _probe_page(args: argparse.Namespace) -> dict[str, Any]:
    from attnlab.explorer.sources.models import agreement_page, winograd_page
    from attnlab.train.progress import ProgressPrinter

    flag = "--winograd" if args.winograd else "--induction" if args.induction else \
        "--agreement-distance" if args.agreement_distance else "--agreement"
    if args.text is not None or args.serve:
        raise UsageError(f"{flag} shows its own sentences: --text and --serve do not go with it")
    work = args.work if args.work is not None else Path(DEFAULT_WORK)
    page = winograd_page if args.winograd else agreement_page
    if args.induction:
        from attnlab.explorer.sources.roles import induction_page as page
    if args.agreement_distance:
        from attnlab.explorer.sources.agreement_distance import agreement_distance_page as page
    if args.induction or args.agreement_distance:  # the presets written in both languages
        return page(work, progress=ProgressPrinter(sys.stderr), lang=args.lang)
    return page(work, progress=ProgressPrinter(sys.stderr))


def run(args: argparse.Namespace) -> int:
    """Write the page (default) or serve it; return the exit code."""
    args.lang = resolve_lang(args.lang)
    if args.text is not None:
        check_text(args.text)
    if args.serve and args.out is not None:
        raise UsageError("--out writes a page and --serve serves one: choose one")
    if args.port is not None and not args.serve:
        raise UsageError("--port only goes with --serve")
    if not args.serve:  # before any model is loaded or trained
        check_file("--out", args.out or DEFAULT_OUT)
    probe = args.winograd or args.agreement or args.induction or args.agreement_distance
    if probe:
        check_folder("--work", args.work if args.work is not None else DEFAULT_WORK)
        path = write_page(_probe_page(args), args.out or DEFAULT_OUT, lang=args.lang)
        print(f"wrote {path}")
        return 0
    if args.work is not None:
        raise UsageError("--work only goes with --winograd, --agreement, --induction or "
                         "--agreement-distance")
    compute = _compute(args)
    text = args.text if args.text is not None else SENTENCE
    if args.serve:
        port = args.port if args.port is not None else DEFAULT_PORT

        def ready(url: str) -> None:
            print(f"explorer at {url} (Ctrl-C to stop)", flush=True)

        try:
            serve(compute, port=port, default_text=text, ready=ready, lang=args.lang)
        except KeyboardInterrupt:  # Ctrl-C: stopped as asked, exit 130 as every command
            print("explorer stopped")
            return 130
        except OSError as err:  # port taken (or below 1024 without the right)
            raise UsageError(f"cannot serve on port {port} of 127.0.0.1: "
                             f"{err.strerror or err} (another program may be listening there); "
                             "choose another with --port N, or --port 0 for any free one"
                             ) from err
        return 0
    path = write_page(compute(text), args.out or DEFAULT_OUT, lang=args.lang)
    print(f"wrote {path}")
    return 0
