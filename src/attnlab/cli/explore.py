"""``attnlab explore``: write the attention explorer page, or serve it for typed sentences.

attnlab explore                         # hand-designed heads -> explorer.html
attnlab explore --text "El perro que mordió al gato estaba muy cansado" --out perro.html
attnlab explore --serve --port 8000     # type any sentence at http://127.0.0.1:8000/
attnlab explore --hf-model DIR --serve  # a local Hugging Face GPT-2 folder
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlab.explorer.build import checkpoint_compute, hand_compute, hf_gpt2_compute
from attnlab.explorer.heads import SENTENCE
from attnlab.explorer.page import write_page
from attnlab.explorer.server import serve

DEFAULT_OUT = Path("explorer.html")
DEFAULT_PORT = 8000


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
    source.add_argument("--checkpoint", metavar="RUN", help="heads of a trained attnlab run")
    source.add_argument("--hf-model", metavar="DIR", help="a Hugging Face GPT-2 saved in DIR")
    p.add_argument("--text", help=f"sentence to show (default: {SENTENCE!r})")
    p.add_argument("--out", type=Path, help=f"page to write (default: {DEFAULT_OUT})")
    p.add_argument("--serve", action="store_true", help="serve on 127.0.0.1 instead of writing")
    p.add_argument("--port", type=int, help=f"port for --serve (default: {DEFAULT_PORT})")
    p.set_defaults(func=run)


def _compute(args: argparse.Namespace) -> Callable[[str], dict[str, Any]]:
    try:
        if args.checkpoint:
            return checkpoint_compute(args.checkpoint)
        if args.hf_model:
            return hf_gpt2_compute(args.hf_model)
    except NotImplementedError as err:
        raise ValueError(str(err)) from err
    return hand_compute


def run(args: argparse.Namespace) -> int:
    """Write the page (default) or serve it; return the exit code."""
    if args.serve and args.out is not None:
        raise ValueError("--out writes a page and --serve serves one: choose one")
    if args.port is not None and not args.serve:
        raise ValueError("--port only goes with --serve")
    compute = _compute(args)
    text = args.text if args.text is not None else SENTENCE
    if args.serve:
        port = args.port if args.port is not None else DEFAULT_PORT

        def ready(url: str) -> None:
            print(f"explorer at {url} (Ctrl-C to stop)", flush=True)

        try:
            serve(compute, port=port, default_text=text, ready=ready)
        except KeyboardInterrupt:
            print("explorer stopped")
        except OSError as err:  # port taken, say
            raise ValueError(f"cannot serve on port {port}: {err.strerror or err}") from err
        return 0
    path = write_page(compute(text), args.out or DEFAULT_OUT)
    print(f"wrote {path}")
    return 0
