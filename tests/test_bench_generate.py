"""benchmarks/generate.py: a smoke run at tiny sizes. The ratio line parses, and both checks
say yes: attnlab's cached greedy output equals its uncached one, and Hugging Face's cached
``generate`` equals attnlab's uncached path on the same weights. No timing assertions."""

from __future__ import annotations

import re

from benchmark_modules import run_benchmark


def test_script_prints_ratio_and_identical_greedy_outputs():
    out = run_benchmark("generate", "--new", "24", "--rounds", "1", "--lengths", "8", "24",
                        "--d-model", "16", "--n-head", "2", "--vocab", "64",
                        "--threads", "1").stdout
    assert out.startswith("processor: ")
    ratio = re.search(r"^ratio generate: attnlab / HF tokens/s = ([\d.]+)x best rounds "
                      r"\(([\d.]+)x medians; ([\d.]+)x with HF's own weights.*"
                      r"\(target >= 2.5x: (met|NOT met)\)$", out, re.M)
    assert ratio is not None
    assert ratio.group(4) == ("met" if float(ratio.group(1)) >= 2.5 else "NOT met")
    checks = dict(re.findall(r"^check (.+): (yes|NO)$", out, re.M))
    assert checks == {"attnlab cached == attnlab uncached": "yes",
                      "HF generate == attnlab uncached, same weights": "yes"}
    rows = re.findall(r"^\| (\d+) \| [\d,.]+ \| [\d,.]+ \| [\d.]+x \| (yes|NO) \|$", out, re.M)
    assert rows == [("8", "yes"), ("24", "yes")]


def test_a_gpu_run_without_a_gpu_is_refused_in_one_line():
    if __import__("torch").cuda.is_available():
        import pytest

        pytest.skip("this machine has a GPU")
    for script in ("generate", "train_throughput"):
        proc = run_benchmark(script, "--device", "cuda", check=False)
        assert proc.returncode == 2, script
        assert proc.stderr.strip().endswith("--device cuda: torch sees no CUDA device here")
