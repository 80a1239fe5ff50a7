"""Measure the explorer page of a GPT-2-small-shaped model on 128 tokens, as decimal text and
encoded (float16 in base64), offline: random weights from ``transformers.GPT2Config()``
(12 layers × 12 heads, width 768), converted into attnlab's model as a GPT-2 folder is.

    .venv/bin/python scripts/explorer_page_size.py [--tokens 128] [--out page.html]

Prints both sizes, the encoding's measured precision, and (with node on PATH) how long
the page's decode.js takes on the encoded data.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path

import numpy as np
import torch

# parse + decode as a reader would, then decoding in place as the page does (decode.js
# evaluated again with a stand-in for the page's data element)
NODE_TIMING = """"use strict";
{decode}
const text = require("fs").readFileSync({path}, "utf8");
const t0 = performance.now();
decodeData(JSON.parse(text));
const t1 = performance.now();
const node = {{textContent: text}};
globalThis.document = {{getElementById: () => node}};
eval({again});
console.log(`${{(t1 - t0).toFixed(0)}} ${{(performance.now() - t1).toFixed(0)}}`);
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, default=None, help="also write the encoded page")
    args = parser.parse_args()

    import transformers

    from attnlab.explorer.page.encoding import encode_page
    from attnlab.explorer.page.render import render_page, script_json
    from attnlab.explorer.sources.build import page_data, view_from_traces
    from attnlab.explorer.sources.traces import attnlab_traces
    from attnlab.nn.gpt2 import from_hf

    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    model = from_hf(hf).eval()
    del hf
    ids = np.random.default_rng(0).integers(0, model.cfg.vocab_size, args.tokens).tolist()
    tokens = [f" tok{i}" for i in ids]
    view = view_from_traces("gpt2-small (random)", tokens, attnlab_traces(model, ids))
    data = page_data("GPT-2 small, random weights", "page size measurement", [view])

    plain = render_page(data, encode=False).encode("utf-8")
    encoded = render_page(data, encode=True).encode("utf-8")
    enc = encode_page(data)
    mb = 1e6
    print(f"model: {model.cfg.n_layer} layers x {model.cfg.n_head} heads, d_model "
          f"{model.cfg.d_model}, {args.tokens} tokens")  # fmt: skip
    print(f"page as decimal text: {len(plain) / mb:.1f} MB")
    print(f"page encoded:         {len(encoded) / mb:.1f} MB")
    print(f"precision: {enc['encoding']['precision']}")
    if args.out:
        args.out.write_bytes(encoded)
        print(f"wrote {args.out}")
    node = shutil.which("node")
    if node:
        decode_js = resources.files("attnlab.explorer").joinpath("decode.js").read_text("utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            saved = Path(tmp) / "data.json"
            saved.write_text(script_json(enc), encoding="utf-8")
            program = NODE_TIMING.format(decode=decode_js, path=json.dumps(str(saved)),
                                         again=json.dumps(decode_js))  # fmt: skip
            start = time.perf_counter()
            out = subprocess.run([node, "-e", program], capture_output=True, text=True, check=True)
            parse_decode, in_place = out.stdout.split()
            print(f"node: parse + decode {parse_decode} ms; decoding the embedded data in place "
                  f"(parse, decode, re-serialise) {in_place} ms "
                  f"(wall {time.perf_counter() - start:.1f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
