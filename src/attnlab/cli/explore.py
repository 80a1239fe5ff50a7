"""``attnlab explore``: write the attention explorer page, or serve it for typed sentences.

attnlab explore                         # hand-designed heads -> explorer.html
attnlab explore --text "El perro que mordió al gato estaba muy cansado" --out perro.html
attnlab explore --serve --port 8000     # type any sentence at http://127.0.0.1:8000/
attnlab explore --checkpoint runs/RUN --text "To be, or not"  # a run of `attnlab train`
attnlab explore --hf-model DIR --serve  # a local Hugging Face causal LM (GPT-2, OPT, Llama…)
attnlab explore --hf-model DIR --text "Hello" --target "Hallo"  # an encoder–decoder (T5, BART…)
attnlab explore --winograd              # the Winograd pair under a trained probe (cached in runs/)
attnlab explore --agreement             # `I work , you work , he` under a trained probe
attnlab explore --induction             # the induction experiment's two-block model, with roles
attnlab explore --lang es               # the page's interface (and the hand heads' text) in Spanish
attnlab explore --agreement-distance    # «la gata que perseguía al ratón … estaba muy ___»
attnlab explore --translation --text "the tired girl that chased a horse was happy ."
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
from attnlab.cli.words import Words, add_lang, new_parser, words
from attnlab.errors import UsageError, os_reason
from attnlab.explorer.page.render import write_page
from attnlab.explorer.server.httpd import serve
from attnlab.explorer.sources.hand import hand_compute
from attnlab.explorer.sources.heads import SENTENCE
from attnlab.i18n import resolve_lang

DEFAULT_OUT = Path("explorer.html")
DEFAULT_PORT = 8000
DEFAULT_WORK = "runs"


def register(subparsers: argparse._SubParsersAction, lang: str | None = None) -> None:
    """Add the ``explore`` subcommand, its help in ``lang``."""
    say = words(lang)
    p = new_parser(subparsers, "explore", say, help=say("explore.help"),
                   description=say("explore.description"))
    source = p.add_mutually_exclusive_group()
    for flag, key, metavar in (("--hand", "hand", None), ("--checkpoint", "checkpoint", "RUN"),
                               ("--hf-model", "hf_model", "DIR"),
                               ("--winograd", "winograd", None),
                               ("--agreement", "agreement", None),
                               ("--induction", "induction", None),
                               ("--agreement-distance", "agreement_distance", None),
                               ("--translation", "translation", None)):
        if metavar is None:
            source.add_argument(flag, action="store_true", help=say(f"explore.{key}"))
        else:
            source.add_argument(flag, metavar=metavar, help=say(f"explore.{key}"))
    p.add_argument("--text", help=say("explore.text", sentence=repr(SENTENCE)))
    p.add_argument("--target", metavar="TEXT", help=say("explore.target"))
    p.add_argument("--out", type=Path, help=say("explore.out", default=DEFAULT_OUT))
    p.add_argument("--serve", action="store_true", help=say("explore.serve"))
    p.add_argument("--port", type=whole("--port"), metavar="N",
                   help=say("explore.port", default=DEFAULT_PORT))
    p.add_argument("--work", type=Path, help=say("explore.work", default=DEFAULT_WORK))
    add_lang(p, say, "lang.explore")
    p.set_defaults(func=run)


def _compute(args: argparse.Namespace) -> Callable[[str], dict[str, Any]]:
    if args.checkpoint:
        from attnlab.explorer.sources.models import checkpoint_compute

        return checkpoint_compute(args.checkpoint, args.lang)
    if args.hf_model:
        from attnlab.explorer.sources.hf import hf_compute

        return hf_compute(args.hf_model, target=args.target, lang=args.lang)
    return functools.partial(hand_compute, lang=args.lang)


def _probe_page(args: argparse.Namespace, say: Words) -> dict[str, Any]:
    from attnlab.explorer.sources.models import agreement_page, winograd_page
    from attnlab.train.progress import ProgressPrinter

    flag = "--winograd" if args.winograd else "--induction" if args.induction else \
        "--agreement-distance" if args.agreement_distance else "--agreement"
    work = args.work if args.work is not None else Path(DEFAULT_WORK)
    if args.translation:  # the one preset that takes a sentence: an English one of its language
        if args.serve:
            raise UsageError("--translation writes a page for one sentence (--text): --serve "
                             "does not go with it")
        from attnlab.explorer.sources.translation import translation_page

        return translation_page(work, progress=ProgressPrinter(sys.stderr, lang=say.lang),
                                lang=args.lang, text=args.text)
    if args.text is not None or args.serve:
        raise UsageError("%s shows its own sentences: --text and --serve do not go with it",
                         flag)
    page = winograd_page if args.winograd else agreement_page
    if args.induction:
        from attnlab.explorer.sources.roles import induction_page as page
    if args.agreement_distance:
        from attnlab.explorer.sources.agreement_distance import agreement_distance_page as page
    if args.induction or args.agreement_distance:  # the presets written in both languages
        return page(work, progress=ProgressPrinter(sys.stderr, lang=say.lang), lang=args.lang)
    return page(work, progress=ProgressPrinter(sys.stderr, lang=say.lang))


def run(args: argparse.Namespace) -> int:
    """Write the page (default) or serve it; return the exit code."""
    args.lang = resolve_lang(getattr(args, "lang", None))
    say = Words(args.lang)
    if args.text is not None:
        check_text(args.text)
    if args.target is not None:
        check_text(args.target, "--target", "target")
    if args.target is not None and not args.hf_model:
        raise UsageError("--target only goes with --hf-model (an encoder–decoder's target "
                         "text)")
    if args.serve and args.out is not None:
        raise UsageError("--out writes a page and --serve serves one: choose one")
    if args.port is not None and not args.serve:
        raise UsageError("--port only goes with --serve")
    if not args.serve:  # before any model is loaded or trained
        check_file("--out", args.out or DEFAULT_OUT, say)
    probe = (args.winograd or args.agreement or args.induction or args.agreement_distance
             or args.translation)
    if probe:
        check_folder("--work", args.work if args.work is not None else DEFAULT_WORK, say)
        path = write_page(_probe_page(args, say), args.out or DEFAULT_OUT, lang=args.lang)
        print(say("explore.wrote", path=path))
        return 0
    if args.work is not None:
        raise UsageError("--work only goes with --winograd, --agreement, --induction, "
                         "--agreement-distance or --translation")
    compute = _compute(args)
    text = args.text if args.text is not None else SENTENCE
    if args.serve:
        port = args.port if args.port is not None else DEFAULT_PORT

        def ready(url: str) -> None:
            print(say("explore.serving", url=url), flush=True)

        try:
            serve(compute, port=port, default_text=text, ready=ready, lang=args.lang)
        except KeyboardInterrupt:  # Ctrl-C: stopped as asked, exit 130 as every command
            print(say("explore.stopped"))
            return 130
        except OSError as err:  # port taken (or below 1024 without the right)
            raise UsageError("cannot serve on port %s of 127.0.0.1: %s (another program may "
                             "be listening there); choose another with --port N, or --port 0 "
                             "for any free one", port, os_reason(err)) from err
        return 0
    path = write_page(compute(text), args.out or DEFAULT_OUT, lang=args.lang)
    print(say("explore.wrote", path=path))
    return 0
