"""The kernel chosen per device and precision, recorded in the run's config; ``--precision``
on train, run and reproduce, refused in one line on a CPU without bf16 units; the kernel
benchmark's table; the script that compares an fp32 report with a bf16 one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from benchmark_modules import run_benchmark

from attnlab.cli.main import main
from attnlab.nn.attention import KERNEL_TABLE, resolve_backend
from attnlab.nn.model_config import ModelConfig
from attnlab.report.glance import machine_text
from attnlab.running.runner import Runner
from attnlab.running.spec import RunSpec
from attnlab.train import runtime
from attnlab.train.run_config import RunConfig, TrainConfig, run_hash
from attnlab.train.runtime import resolve_on, resolve_run

ROOT = Path(__file__).resolve().parents[1]


def cpu(precision: str, backend: str = "auto") -> RunConfig:
    return RunConfig(model=ModelConfig(backend=backend),
                     train=TrainConfig(device="cpu", precision=precision))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_resolved_config_names_the_tables_kernel(precision):
    cfg = resolve_run(cpu(precision))
    assert cfg.model.backend == KERNEL_TABLE[("cpu", precision)] != "auto"
    assert cfg.train.precision == precision
    assert resolve_run(cpu(precision, "memeff")).model.backend == "memeff"  # asked for: kept


def test_the_kernel_is_in_the_hash_and_the_table_covers_every_device_and_precision():
    assert {(d, p) for d in ("cpu", "cuda") for p in ("fp32", "bf16")} == set(KERNEL_TABLE)
    assert set(KERNEL_TABLE.values()) <= {"naive", "sdpa", "memeff"}
    hashes = {run_hash(resolve_run(cpu("fp32", b))) for b in ("naive", "sdpa", "memeff")}
    assert len(hashes) == 3
    assert resolve_backend("auto") == "sdpa"  # no device known: PyTorch's fused kernel
    cuda = resolve_on(cpu("bf16").replace(train=TrainConfig(device="auto")), "cuda")
    assert (cuda.train.device, cuda.model.backend) == ("cuda", KERNEL_TABLE[("cuda", "bf16")])


def test_the_runner_gives_its_precision_to_runs_that_leave_it_open(tmp_path):
    runner = Runner(tmp_path, "cpu", precision="bf16")
    open_spec = RunSpec("a", RunConfig(), data=())
    fixed = RunSpec("b", RunConfig(train=TrainConfig(precision="fp32")), data=())
    a, b = runner.resolve(open_spec).config, runner.resolve(fixed).config
    assert (a.train.precision, a.model.backend) == ("bf16", KERNEL_TABLE[("cpu", "bf16")])
    assert (b.train.precision, b.model.backend) == ("fp32", KERNEL_TABLE[("cpu", "fp32")])
    assert runner.precision_used() == "bf16" and Runner(tmp_path).precision_used() == "fp32"


@pytest.fixture
def no_bf16_units(monkeypatch):
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda *a: False)


@pytest.mark.parametrize("argv", [
    ["train", "tiny", "--precision", "bf16", "--quiet"],
    ["train", "tiny", "--set", "train.precision=bf16", "--quiet"],
    ["run", "params", "--precision", "bf16", "--device", "cpu"],
    ["reproduce", "--precision", "bf16", "--device", "cpu", "--only", "params"],
])
def test_bf16_on_a_cpu_without_bf16_units_is_one_line_and_exit_2(argv, no_bf16_units,
                                                                  tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    extra = [] if argv[0] == "train" else ["--work", str(tmp_path / "w"), "--out",
                                           str(tmp_path / "out")]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no bf16 units" in err[0] and "0.06x" in err[0], err
    assert "--precision fp32" in err[0]
    assert not (tmp_path / "runs").exists() and not (tmp_path / "w").exists()  # nothing made


def test_bf16_with_bf16_units_is_not_refused(monkeypatch):
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda *a: True)
    runtime.check_precision("bf16", "cpu")  # no error
    runtime.check_precision("fp32", "cpu")
    monkeypatch.setattr(runtime, "cpu_has_bf16", lambda *a: False)
    runtime.check_precision("fp32", "cpu")  # fp32 is never refused
    runtime.check_precision("bf16", "cuda")  # the CPU's units do not matter on a GPU


def test_the_report_says_bf16_and_not_fp32():
    machine = {"processor": "Xeon", "CPU count": 2, "device": "cpu"}
    assert machine_text({**machine, "precision": "bf16"}).endswith("CPU, bf16")
    assert machine_text({**machine, "precision": "fp32"}).endswith("CPU")


def test_the_kernel_benchmark_times_every_kernel_in_both_precisions():
    out = run_benchmark("kernel_table", "--random-data", "--vocab", "64", "--shape",
                        "16,2,1,8,4", "--rounds", "1", "--round-steps", "1",
                        "--threads", "1").stdout
    assert out.startswith("processor: ") and "bf16 instructions: " in out
    rows = re.findall(r"^\| (naive|sdpa|memeff) \| (fp32|bf16) \| ([\d,]+) tok/s", out, re.M)
    assert {(k, p) for k, p, _ in rows} == {(k, p) for k in ("naive", "sdpa", "memeff")
                                            for p in ("fp32", "bf16")}
    assert all(int(t.replace(",", "")) > 0 for _, _, t in rows)
    for precision in ("fp32", "bf16"):
        said = re.search(rf"^fastest {precision} kernel: (\w+) .*the stated table says (\w+)$",
                         out, re.M)
        assert said and said.group(2) == KERNEL_TABLE[("cpu", precision)]
    assert re.search(r"^\| shape 16,2,1,8,4 \| (naive|sdpa|memeff) \| (naive|sdpa|memeff) \|$",
                     out, re.M)


# -- scripts/compare_precision.py --------------------------------------------------------


def report(folder: Path, precision: str, claims: list[dict], wall: float = 60.0) -> Path:
    folder.mkdir(parents=True)
    meta = {"profile": "quick", "wall_s": wall, "code_revision": {"commit": "abc1234"},
            "machine": {"processor": "Xeon", "CPU count": 2, "precision": precision}}
    (folder / "results.json").write_text(json.dumps({"meta": meta, "claims": claims}))
    return folder


def claim(cid: str, status: str, margins: list[float], se: float | None) -> dict:
    mean = sum(margins) / len(margins)
    return {"id": cid, "status": status, "trained": True,
            "parts": [{"name": "", "margins": margins, "mean": mean, "se": se}]}


def compare(*folders: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_precision.py"),
                           *map(str, folders)], capture_output=True, text=True, timeout=60)


def test_compare_precision_holds_fails_and_refuses(tmp_path):
    base = [claim("a.x", "held", [1.0, 1.2, 1.1], 0.06), claim("a.y", "held", [2.0], None)]
    fp32 = report(tmp_path / "fp32", "fp32", base)
    near = report(tmp_path / "near", "bf16", [claim("a.x", "held", [1.1, 1.2, 1.2], 0.03),
                                              claim("a.y", "held", [2.0], None)])
    out = compare(fp32, near)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "verdicts equal: 2 of 2 claims" in out.stdout and "2 of 2" in out.stdout
    assert "fp32: wall 1m00s on Xeon (2 CPUs), code abc1234" in out.stdout
    far = report(tmp_path / "far", "bf16", [claim("a.x", "held", [1.6, 1.7, 1.65], 0.03),
                                            claim("a.y", "held", [2.0], None)])
    out = compare(fp32, far)
    assert out.returncode == 1 and "**NO**" in out.stdout and "1 of 2" in out.stdout
    flipped = report(tmp_path / "flip", "bf16", [claim("a.x", "inconclusive", [1.0, 1.2, 1.1],
                                                       0.06), claim("a.y", "held", [2.0], None)])
    out = compare(fp32, flipped)
    assert out.returncode == 1 and "verdicts equal: 1 of 2 claims" in out.stdout
    one_off = report(tmp_path / "one", "bf16", [claim("a.x", "held", [1.0, 1.2, 1.1], 0.06),
                                                claim("a.y", "held", [2.1], None)])
    assert compare(fp32, one_off).returncode == 1  # no spread: must be equal
    assert compare(near, fp32).returncode == 2  # the order is fp32, then bf16
    (tmp_path / "empty").mkdir()
    bad = compare(fp32, tmp_path / "empty")
    assert bad.returncode == 2 and "results.json" in bad.stderr
