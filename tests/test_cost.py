"""attnlab.timing.cost: the cost-of-attention measurements in a micro setting
(docs/experiments.md, "Cost of attention").

The layer's three kernels agree; a real subprocess sweep at n in {16, 32}
gives records and a table; a tiny memory limit gives an OUT OF MEMORY row;
the exponent fit is exact on synthetic powers; ratios, skipping and the
table are checked on hand-made records (no subprocess).
"""

from __future__ import annotations

import math

import pytest
import torch

from attnlab.timing import cost as cost
from attnlab.timing import cost_layer  # where the timing lives
from attnlab.timing.cost_view import sweep_figure, sweep_table


def test_three_kernels_compute_the_same_layer():
    x = torch.randn(1, 40, 64)  # (b, n, m)
    outs = []
    for kind in cost.KINDS:
        torch.manual_seed(0)
        layer = cost.AttentionLayer(kind, d_model=64, n_head=4)
        with torch.no_grad():
            outs.append(layer(x))
    for out in outs[1:]:
        torch.testing.assert_close(out, outs[0], rtol=0, atol=1e-5)


def test_score_matrix_bytes_is_four_h_n_squared():
    assert cost.score_matrix_bytes(128, 8) == 4 * 8 * 128 * 128
    assert cost.score_matrix_bytes(16384, 8) == 8 * 2**30


def test_measure_time_in_process():
    record = cost.measure_time("memeff", 16, d_model=32, n_head=2, repeats=1)
    assert record["timed"] == "forward"
    assert record["total_ms"] > 0 and record["proj_ms"] > 0
    assert record["nn_bytes"] == 4 * 2 * 16 * 16


def test_micro_sweep_in_subprocesses_gives_records_and_a_table():
    records = cost.sweep(["memeff"], [16, 32], cost.GIB, repeats=1)
    assert [(r["kind"], r["n"], r["status"]) for r in records] == [
        ("memeff", 16, "ok"), ("memeff", 32, "ok")]
    for r in records:
        assert r["total_ms"] > 0 and r["proj_ms"] > 0
        assert r["peak_bytes"] is not None and r["baseline_bytes"] > 0
        assert r["limit_bytes"] > cost.GIB  # address-space limit = child's VSZ + budget
    assert records[0]["time_ratio"] is None
    assert records[1]["time_ratio"] == pytest.approx(
        records[1]["total_ms"] / records[0]["total_ms"])
    text = sweep_table(records)
    assert "### memeff" in text and "| 16 |" in text and "| 32 |" in text


def test_a_tiny_memory_limit_gives_an_out_of_memory_row():
    record = cost.measure_memory("sdpa", 2048, mem_limit_bytes=2**20)  # not refused: no n×n
    assert record["status"] == "oom", record
    assert "allocate" in record["error"]
    assert "OUT OF MEMORY" in sweep_table([record])


def test_fit_exponent_on_synthetic_powers():
    ns = [128, 256, 512, 1024, 2048]
    assert cost.fit_exponent(ns, [3 * n**2 for n in ns]) == pytest.approx(2.0, abs=1e-12)
    assert cost.fit_exponent(ns, [0.5 * n for n in ns]) == pytest.approx(1.0, abs=1e-12)


def test_fit_exponent_uses_the_last_completed_rows_only():
    ns = [1, 2, 4, 8, 16, 32, 64]
    values = [5.0, 5.0, 5.0, 8.0, 16.0, 32.0, None]  # flat start, linear end, then a failure
    assert cost.fit_exponent(ns, values, last=3) == pytest.approx(1.0, abs=1e-12)
    assert cost.fit_exponent(ns, values, last=4) < 1.0


@pytest.mark.parametrize(
    ("ns", "values", "match"),
    [([1, 2], [1.0], "differ in length"),
     ([1, 2], [1.0, None], "at least two"),
     ([1, 2], [1.0, 0.0], "non-positive"),
     ([4, 4], [1.0, 2.0], "all n are equal")],
)
def test_fit_exponent_rejects_what_it_cannot_fit(ns, values, match):
    with pytest.raises(ValueError, match=match):
        cost.fit_exponent(ns, values)


def fake_measure(kind, n, mem_limit_bytes, repeats, d_model, n_head, device, threads):
    """Quadratic naive that runs out of memory from n = 64; linear memeff."""
    record = cost._blank_record({"kind": kind, "n": n, "d_model": d_model, "n_head": n_head,
                                 "device": device, "repeats": repeats, "threads": threads,
                                 "mem_limit_bytes": mem_limit_bytes})
    if kind == "naive" and n >= 64:
        record.update(status="oom", error="can't allocate")
    else:
        power = 2 if kind == "naive" else 1
        record.update(status="ok", total_ms=0.01 * n**2, proj_ms=0.001 * n,
                      peak_bytes=1000 * n**power)
    return record


def fake_time_once(calls):
    """Seconds 1e-5·n² (projections 1e-6·n), 50% more on each size's third call (its second
    timed reading, after the warm-up); the (kind, n) of each call is appended to ``calls``."""
    def time_once(layer, x):
        calls.append((layer.kind, x.shape[1]))
        slow = 1.5 if calls.count(calls[-1]) == 3 else 1.0
        return 1e-5 * x.shape[1] ** 2 * slow, 1e-6 * x.shape[1] * slow
    return time_once


def test_sizes_are_timed_in_interleaved_rounds_minimum_and_spread(monkeypatch):
    calls = []
    monkeypatch.setattr(cost_layer, "_time_once", fake_time_once(calls))
    records = [{"kind": k, "n": n, "status": "ok"} for k in ("naive", "memeff")
               for n in (16, 32, 64)]
    records.append({"kind": "naive", "n": 128, "status": "oom"})
    cost.time_interleaved(records, 3, d_model=16, n_head=2)
    cases = [("memeff", 16), ("naive", 16), ("memeff", 32), ("naive", 32), ("memeff", 64),
             ("naive", 64)]
    # a warm-up of each, then rounds: ascending, descending, ascending; the oom size untimed
    assert calls == cases + cases + cases[::-1] + cases
    for r in records[:6]:
        assert r["total_ms"] == pytest.approx(1e-2 * r["n"] ** 2)  # the minimum
        assert r["total_spread"] == pytest.approx(0.5) and len(r["times_ms"]) == 3
        assert r["proj_ms"] == pytest.approx(1e-3 * r["n"]) and r["repeats"] == 3
    assert "total_ms" not in records[6]
    fitted = cost.exponents(records)
    assert fitted["naive"]["time"] == pytest.approx(2.0)
    low, high = fitted["naive"]["time_range"]  # 16 → 64: ln 1.5 / ln 4 either way
    assert low == pytest.approx(2 - 0.2925, abs=1e-3) and high == pytest.approx(2 + 0.2925,
                                                                                 abs=1e-3)


def test_a_size_timed_fewer_than_three_times_has_no_exponent_range():
    rows = [{"kind": "naive", "n": n, "status": "ok", "total_ms": n**2, "total_spread": 0.0,
             "repeats": 1, "peak_bytes": n} for n in (16, 32, 64)]
    assert cost.exponents(rows)["naive"]["time_range"] is None
    for r in rows:
        r["repeats"] = 3
    assert cost.exponents(rows)["naive"]["time_range"] == pytest.approx([2.0, 2.0])


def test_sweep_ratios_skipping_and_table_on_fake_measurements(monkeypatch, tmp_path):
    calls = []

    def spy(*args):
        calls.append(args[:2])
        return fake_measure(*args)

    monkeypatch.setattr(cost, "measure_memory", spy)
    monkeypatch.setattr(cost_layer, "_time_once", fake_time_once([]))
    records = cost.sweep(["naive", "memeff"], [128, 16, 32, 64], 10**9, repeats=3)
    assert [r["n"] for r in records] == [16, 32, 64, 128] * 2
    assert ("naive", 128) not in calls  # larger than an OOM size: not run
    naive, memeff = records[:4], records[4:]
    assert [r["status"] for r in naive] == ["ok", "ok", "oom", "oom"]
    assert naive[1]["time_ratio"] == pytest.approx(4.0)
    assert naive[1]["mem_ratio"] == pytest.approx(4.0)
    assert memeff[3]["mem_ratio"] == pytest.approx(2.0)
    assert naive[2]["time_ratio"] is None
    fitted = cost.exponents(records)
    assert fitted["naive"]["memory"] == pytest.approx(2.0)
    assert fitted["memeff"]["memory"] == pytest.approx(1.0)
    assert fitted["memeff"]["time"] == pytest.approx(2.0)

    text = sweep_table(records)
    assert text.count("OUT OF MEMORY") == 4  # time and memory cells of two naive rows
    assert "(naive): time 2.00, memory 2.00" in text
    assert "(memeff): time 2.00, memory 1.00" in text
    header = "| n | total ms | ratio | proj ms | n×n bytes | peak memory | ratio |"
    assert text.count(header) == 2
    assert "| 128 | OUT OF MEMORY |  |  | 512.0 KiB | OUT OF MEMORY |  |" in text

    sweep_figure(records).savefig(tmp_path / "cost.png")
    assert (tmp_path / "cost.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_exponents_report_none_when_too_few_rows_complete():
    records = [fake_measure("naive", n, 1, 1, 32, 2, "cpu", 1) for n in (32, 64)]
    for r in records:
        r.update(time_ratio=None, mem_ratio=None)
    assert cost.exponents(records) == {"naive": {"time": None, "memory": None, "time_range": None}}
    assert "time –, memory –" in sweep_table(records)


@pytest.mark.parametrize(
    ("call", "match"),
    [(lambda: cost.sweep(["fast"], [16]), "unknown attention kinds"),
     (lambda: cost.sweep(["naive"], [0]), "positive integers"),
     (lambda: cost.sweep(["naive"], [16], repeats=-1), "repeats"),
     (lambda: cost.measure_memory("naive", 16, mem_limit_bytes=0), "mem_limit_bytes"),
     (lambda: cost.measure_time("flash", 16), "unknown attention kind"),
     (lambda: cost.AttentionLayer("naive", d_model=30, n_head=4), "divisible")],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bytes_are_printed_readably():
    assert cost.size_text(8 * 2**30) == "8.0 GiB"
    assert cost.size_text(1536) == "1.5 KiB"
    assert cost.size_text(None) == "–"
    assert not math.isnan(cost.fit_exponent([1, 2], [1, 2]))


def test_a_large_parent_does_not_inflate_the_childs_peak():
    """``ru_maxrss`` of an exec'ed child includes its parent's RSS; the measurement must not."""
    ballast = torch.ones(160 * 2**20 // 4 * 4)  # 640 MiB resident in this (the parent) process
    record = cost.measure_memory("naive", 64, mem_limit_bytes=512 * 2**20, d_model=64, n_head=4,
                                 threads=1)
    assert record["status"] == "ok", record["error"]
    assert 0 <= record["peak_bytes"] < 64 * 2**20  # a 64-position layer needs a few MiB
    del ballast


def test_figure_of_a_sweep_where_nothing_fit(tmp_path):
    records = [{"kind": "naive", "n": 128, "status": "oom", "total_ms": None, "peak_bytes": None}]
    sweep_figure(records).savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000


# -- the cap before allocating, and the allocator path (tested with a fake allocator) --------


def test_sizes_whose_scores_cannot_fit_are_refused_before_allocating(monkeypatch):
    assert cost.refusal("naive", 8192, 8, 2 * cost.GIB).startswith("refused")  # exactly 2 GiB
    assert cost.refusal("naive", 4096, 8, 2 * cost.GIB) is None
    assert cost.refusal("memeff", 65536, 8, cost.GIB) is None  # never holds n×n
    monkeypatch.setattr(cost, "_run_child", lambda *a: pytest.fail("must not run"))
    monkeypatch.setattr(cost, "measure_on_allocator", lambda *a: pytest.fail("must not run"))
    for device in ("cpu", "cuda"):
        record = cost.measure_memory("naive", 4096, mem_limit_bytes=2**29, device=device)
        assert record["status"] == "oom" and "refused" in record["error"]


class FakeAllocator:
    """Counts what the measurement asks of the CUDA allocator; reports a chosen peak."""

    def __init__(self, peak: int) -> None:
        self.calls: list[str] = []
        self._peak = peak

    def make(self) -> cost.CudaAllocator:
        def note(name, value=None):
            return lambda: self.calls.append(name) or value
        return cost.CudaAllocator(note("sync"), note("reset"), note("allocated", 1000),
                                  note("peak", 1000 + self._peak), note("empty_cache"))


CASE = {"kind": "sdpa", "n": 32, "d_model": 32, "n_head": 2, "device": "cpu", "repeats": 1,
        "mem_limit_bytes": 10**6, "threads": 1, "seed": 0}


def test_allocator_measurement_frees_memory_after_each_size():
    fake = FakeAllocator(peak=5000)
    record = cost.measure_on_allocator(CASE, fake.make())
    assert record["status"] == "ok" and record["peak_bytes"] == 5000
    assert record["total_ms"] > 0
    assert fake.calls[-1] == "empty_cache" and fake.calls.index("reset") < fake.calls.index("peak")
    over = cost.measure_on_allocator(CASE, FakeAllocator(peak=2 * 10**6).make())
    assert over["status"] == "oom" and "over the budget" in over["error"]


def test_a_real_out_of_memory_error_is_recorded_and_the_cache_emptied(monkeypatch):
    def boom(self, x):
        if x.shape[1] == CASE["n"]:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return x

    monkeypatch.setattr(cost.AttentionLayer, "forward", boom)
    fake = FakeAllocator(peak=0)
    record = cost.measure_on_allocator(CASE, fake.make())
    assert record["status"] == "oom" and "out of memory" in record["error"]
    assert fake.calls[-1] == "empty_cache"


def test_the_experiment_measures_on_the_contexts_device(monkeypatch, tmp_path):
    from attnlab.experiments import cost as experiment
    from attnlab.running.context import Context

    seen = []
    monkeypatch.setattr(cost, "sweep", lambda *a, **k: seen.append(k["device"]) or [])
    record = experiment.analyse(experiment.PROFILES["micro"], None,
                                Context.local(tmp_path, device="cpu"))
    assert seen == ["cpu"] and record["device"] == "cpu"
