"""The table and the figure of "Why attention replaced recurrence" (its record is made by
``attnlab.experiments.recurrence``): the language models beside the ladder, the gradient
reach and its fit, accuracy against distance (each agreement model, the trained range and
what lies beyond it), and counted steps and time against T."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from attnlab.experiments.recurrence.margins import HOLDS, trained_range
from attnlab.experiments.recurrence.settings import AGREEMENT_MODELS, MODELS
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LABELS = {"rnn": "Elman RNN (tanh)", "lstm": "LSTM", "attention": "attention (ladder row 9)"}
SHORT = {"rnn": "RNN", "lstm": "LSTM", "attention": "attention"}
# the agreement models, attention's with its position scheme named (the two differ in it only)
AGREEMENT = {"rnn": "RNN", "lstm": "LSTM", "attention": "attention (RoPE)",
             "alibi": "attention (ALiBi)"}


def agreement_models(ag: dict[str, Any]) -> list[str]:
    """The agreement models of record part ``ag``, in order (a record from before the ALiBi
    model was planned has three)."""
    return [m for m in AGREEMENT_MODELS if m in ag]


def _lm_table(record: dict[str, Any]) -> str:
    rows = []
    for m in MODELS:
        r = record["lm"][m]
        rows.append([LABELS[m], f"{r['params']:,}", fmt_ms(r["train_ppl"]),
                     fmt_ms(r["held_ppl"]), fmt_ms([1e3 * s for s in r["step_s"]], 1),
                     fmt_ms(r["tokens_per_s"], 0)])
    return markdown_table(["model (one block, width as the ladder)", "params", "train ppl",
                           "held-out ppl", "ms / step (wall, incl. eval)", "tokens / s"], rows)


def _reach_table(record: dict[str, Any]) -> str:
    reach, rows = record["reach"], []
    w = reach["window"]
    for m in MODELS:
        r = reach[m]
        at = [k for k in (1, max(1, w // 4), w - 1)]
        rows.append([SHORT[m], fmt_ms([f["rate"] for f in r["fit_init"]], 4),
                     fmt_ms([f["rate"] for f in r["fit"]], 4),
                     fmt_ms([f["decades"] for f in r["fit"]], 2),
                     fmt_ms([f["r2_geometric"] for f in r["fit"]], 3),
                     fmt_ms([f["r2_power"] for f in r["fit"]], 3)]
                    + [f"{np.mean([n[k - 1] for n in r['trained']]):.3g}" for k in at])
    head = ["model", "rate r (init)", "rate r (trained)", "decades over window (fit)",
            "R² geometric", "R² power law"] + [f"‖g‖ at k={k}" for k in (1, max(1, w // 4),
                                                                        w - 1)]
    return markdown_table(head, rows)


def _agreement_table(record: dict[str, Any]) -> str:
    ag = record["agreement"]
    top = trained_range(ag)[1]
    rows = []
    for m in agreement_models(ag):
        r = ag[m]
        rows.append([AGREEMENT[m], r["d_model"], f"{r['params']:,}"]
                    + [fmt_ms([a[i] for a in r["acc"]], 3) for i in range(len(ag["distances"]))])
    b = ag["baselines"]
    rows.append(["always one form", "–", "–"] + [f"{b['constant']:.3f}"] * len(ag["distances"]))
    rows.append(["the nearest noun", "–", "–"]
                + [f"{b['nearest_noun']:.3f}"] * len(ag["distances"]))
    return markdown_table(["model", "width", "params"]
                          + [f"d = {d}" + (" (beyond)" if d > top else "")
                             for d in ag["distances"]], rows)


def accuracy_parts(acc: list[list[float]], distances: list[int], top: int
                   ) -> tuple[str, str, str]:
    """What the analysis says of one agreement model, in three parts for its log line: the
    trained distances, those beyond ``top`` ("" when none is) and the accuracy per seed (three
    digits, the distances beyond apart).

    >>> accuracy_parts([[0.6354, 0.5], [0.5, 0.5]], [8, 40], 32)
    ('8', '40', '0.635 | 0.5; 0.5 | 0.5')
    """
    n = sum(d <= top for d in distances)

    def seed(a: list[float]) -> str:
        inside, beyond = (" ".join(f"{x:.3g}" for x in part) for part in (a[:n], a[n:]))
        return f"{inside} | {beyond}" if beyond else inside

    return (", ".join(map(str, distances[:n])), ", ".join(map(str, distances[n:])),
            "; ".join(seed(a) for a in acc))


def first_below(acc: list[float], distances: list[int], bar: float) -> int | None:
    """The least distance whose accuracy is below ``bar`` (None: none is).

    >>> first_below([0.95, 0.8, 0.6], [8, 16, 32], 0.7), first_below([0.9], [8], 0.7)
    (32, None)
    """
    return next((d for a, d in zip(acc, distances, strict=True) if a < bar), None)


def _drop_table(record: dict[str, Any], bar: float) -> str:
    """Per agreement model and seed: the least distance whose accuracy is below ``bar``, and
    whether it lies inside the trained range or beyond it."""
    ag = record["agreement"]
    top = trained_range(ag)[1]
    rows = []
    for m in agreement_models(ag):
        for seed, acc in enumerate(ag[m]["acc"]):
            d = first_below(acc, ag["distances"], bar)
            where = ("holds at every distance" if d is None else
                     "below already at the smallest distance" if d == ag["distances"][0] else
                     "inside the trained range" if d <= top else "beyond the trained range")
            rows.append([AGREEMENT[m], seed, "–" if d is None else d, where])
    return markdown_table(["model", "seed", f"first d below {bar:g}", "where"], rows)


def spread(values: list[float]) -> float:
    """(max − min) / min of repeated timings: the spread kept beside the minimum."""
    return (max(values) - min(values)) / min(values)


def _timing_rows(timing: dict[str, Any], steps: dict[str, Any] | None) -> list[list[Any]]:
    rows = []
    for i, t in enumerate(timing["T"]):
        row: list[Any] = [t]
        if steps is not None:
            row += [steps[m][i] for m in MODELS]
        for m in MODELS:
            times = [r[i] for r in timing[m]["rounds"]]
            row.append(f"{1e6 * min(times):.2f} (+{100 * spread(times):.0f}%)")
        lstm = min(r[i] for r in timing["lstm"]["rounds"])
        row.append(f"{lstm / min(r[i] for r in timing['attention']['rounds']):.2f}")
        rows.append(row)
    return rows


def _sequential_table(record: dict[str, Any]) -> str:
    timing, steps = record["timing"], record["steps"]
    head = (["T"] + [f"steps {SHORT[m]}" for m in MODELS]
            + [f"µs / token {SHORT[m]} (min, +spread)" for m in MODELS] + ["LSTM / attention"])
    text = (f"CPU ({timing['processor']}, one thread), {timing['tokens_per_step']:,} tokens "
            f"per training step, {len(timing['attention']['rounds'])} interleaved rounds; "
            "steps: the longest chain of operations in the autograd graph of one forward "
            "pass, counted.\n\n" + markdown_table(head, _timing_rows(timing, steps)))
    gpu = timing.get("gpu")
    if gpu:
        text += (f"\nGPU ({gpu['processor']}):\n\n" + markdown_table(
            ["T"] + [f"µs / token {SHORT[m]}" for m in MODELS] + ["LSTM / attention"],
            _timing_rows(gpu, None)))
    else:
        text += "\nGPU: not measured (this run's device is not CUDA).\n"
    return text


def table(record: dict[str, Any]) -> str:
    s, ag = record["settings"], record["agreement"]
    lo, hi = trained_range(ag)
    return (
        f"**On the ladder** (the ladder's {s['ladder_profile']} settings; {record['seeds']} "
        f"seed(s), mean ± std):\n\n{_lm_table(record)}\n"
        f"**Gradient reach** ‖∂ℓ_T/∂x_(T−k)‖ of those models over "
        f"{record['reach']['windows']} held-out windows of {record['reach']['window']} tokens; "
        "geometric fit ln‖g_k‖ = a + k·ln r over k = 1 … W − 1:\n\n"
        f"{_reach_table(record)}\n"
        f"**Long-range agreement** («la gata que perseguía al ratón estaba muy cansada», the "
        f"clause grown to distance d): forced-choice accuracy on {ag['n_per_d']} held-out "
        f"sentences per d whose nearest noun has the other gender and whose (subject, "
        f"adjective) pair never occurs in training; {s['agree_layers']} blocks per model, "
        f"{s['agree_steps']} steps; in training the nearest noun disagrees in "
        f"{ag['train_conflict']:.0%} of sentences:\n\n{_agreement_table(record)}\n"
        f"Trained on d = {lo} … {hi}; a column marked (beyond) is a distance no training "
        f"sentence has. Every model's distance claims read the trained range; what each does "
        f"beyond it is a claim of its own: holding the agreement (accuracy ≥ {HOLDS:g}) at "
        f"every distance beyond, or at none. The two attention models differ only in their "
        f"position scheme. Where each model first falls below {HOLDS:g}, per seed:\n\n"
        f"{_drop_table(record, HOLDS)}\n"
        f"**Sequential work**: {_sequential_table(record)}"
    )


def figure(record: dict[str, Any]) -> Figure:
    """Reach against k (semi-log: a geometric decay is a straight line; the axis clipped to
    the trained curves), accuracy against d (models side by side), time per token against T
    (log-log)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4.2))
    reach_ax, acc_ax, time_ax = fig.subplots(1, 3)
    reach = record["reach"]
    k = np.arange(1, reach["window"])
    trained = {m: np.mean(reach[m]["trained"], axis=0) for m in MODELS}
    init = {m: np.mean(reach[m]["init"], axis=0) for m in MODELS}
    for i, m in enumerate(MODELS):
        reach_ax.plot(k, trained[m], color=f"C{i}", label=f"{SHORT[m]} trained")
        reach_ax.plot(k, init[m], color=f"C{i}", ls=":", label=f"{SHORT[m]} init")
    reach_ax.set_yscale("log")
    shown = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in trained.values()])
    title = "gradient reach (held-out mean; semi-log)"
    if shown.size:  # clip to the trained curves: an untrained RNN's 1e-40 would squeeze them
        low = shown.min() / 3
        reach_ax.set_ylim(low, shown.max() * 3)
        cut = [m for m in MODELS if np.nanmin(init[m]) < low]
        if cut:  # say which curve leaves the axis, and how far it goes
            title += "\n" + "below the axis: " + ", ".join(
                f"{SHORT[m]} init (to {np.nanmin(init[m]):.0e})" for m in cut)
    reach_ax.set_xlabel("k (positions back)")
    reach_ax.set_ylabel("‖∂ℓ_T / ∂x_(T−k)‖ (log scale)")
    reach_ax.set_title(title, fontsize=10)
    reach_ax.legend(fontsize=8)
    ag = record["agreement"]
    d = np.asarray(ag["distances"], dtype=float)
    step = 0.05 * (np.min(np.diff(d)) if d.size > 1 else 1.0)  # side by side, each visible
    shown = agreement_models(ag)
    for i, m in enumerate(shown):
        stats = [mean_std([a[j] for a in ag[m]["acc"]]) for j in range(len(ag["distances"]))]
        at = d + (i - (len(shown) - 1) / 2) * step
        acc_ax.errorbar(at, [s[0] for s in stats], yerr=[s[1] for s in stats], color=f"C{i}",
                        marker="o", capsize=3, label=AGREEMENT[m], alpha=0.85)
        for acc in ag[m]["acc"]:  # each seed, so that one seed that never learned shows as one
            acc_ax.plot(at, acc, ls="none", marker=".", ms=4, color=f"C{i}", alpha=0.35)
    acc_ax.plot([], [], ls="none", marker=".", color="0.5", label="one seed (line: mean ± std)")
    lo, hi = trained_range(ag)
    if d.size and d.max() > hi:  # the distances no training sentence has
        acc_ax.axvspan((hi + d[d > hi].min()) / 2, d.max() + 4 * step, color="0.9", zorder=0,
                       label=f"beyond training (d > {hi})")
    acc_ax.axhline(HOLDS, color="0.6", lw=0.8, ls="-.",
                   label=f"holds the agreement ({HOLDS:g}: the claims' bar)")
    acc_ax.axhline(0.5, color="k", lw=0.8, ls=":", label="chance (one form always)")
    if "baselines" in ag:
        acc_ax.axhline(ag["baselines"]["nearest_noun"], color="0.4", lw=0.8, ls="--",
                       label="the nearest noun's form")
    acc_ax.set_ylim(-0.02, 1.02)
    acc_ax.set_xlabel("d (words from the subject to the adjective)")
    acc_ax.set_ylabel("forced-choice accuracy")
    acc_ax.set_title("agreement against distance")
    acc_ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    timing = record["timing"]
    for i, m in enumerate(MODELS):
        rounds = np.asarray(timing[m]["rounds"]) * 1e6  # (rounds, sizes) µs per token
        time_ax.plot(timing["T"], rounds.min(0), color=f"C{i}", marker="o",
                     label=f"{SHORT[m]} CPU")
        time_ax.fill_between(timing["T"], rounds.min(0), rounds.max(0), color=f"C{i}",
                             alpha=0.2)
        if timing.get("gpu"):
            gpu = np.asarray(timing["gpu"][m]["rounds"]) * 1e6
            time_ax.plot(timing["T"], gpu.min(0), color=f"C{i}", ls="--", marker="s",
                         label=f"{SHORT[m]} GPU")
    time_ax.set_xscale("log", base=2)
    time_ax.set_yscale("log")
    time_ax.set_xlabel("T (tokens per sequence)")
    time_ax.set_ylabel("training step, µs per token (min; band: spread)")
    time_ax.set_title("time per token against T")
    time_ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
