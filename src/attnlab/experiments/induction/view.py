"""The induction experiment's report section: its table and its figure, from the record
``attnlab.experiments.induction.analyse`` writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnlab.kit.tables import fmt_ms, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _best(grid: list[list[float]], layer: int) -> float:
    return max(grid[layer])


def table(record: dict[str, Any]) -> str:
    s = record["settings"]
    two, one = record["two"], record["one"]
    rows = []
    for i, seed in enumerate(two):
        p, a = seed["phase"], seed["ablation"]
        final = seed["snapshots"][-1]
        rows.append([i, p["step"], f"{p['start']}–{p['stop']}", f"{p['loss_share']:.2f}",
                     f"{p['score_before']:.2f} → {p['score_after']:.2f}",
                     f"{final['first']:.3f} / {final['repeat']:.3f}",
                     f"{a['per_head'][a['prev_head']]['score']:.2f} / "
                     f"{a['per_head'][a['prev_head']]['benefit']:.2f} (of {a['score']:.2f} / "
                     f"{a['benefit']:.2f})"])
    phase = markdown_table(
        ["seed", "steepest fall ends at step", "window", "share of the fall",
         "induction score across it", "final first / repeat loss",
         "prev-token head ablated: score / benefit"], rows)
    models = markdown_table(
        ["model", "first-occurrence loss", "repeat loss", "best block-1 previous-token score",
         "best last-block induction score"],
        [["two blocks", fmt_ms([t["snapshots"][-1]["first"] for t in two], 3),
          fmt_ms([t["snapshots"][-1]["repeat"] for t in two], 3),
          fmt_ms([_best(t["snapshots"][-1]["previous"], 0) for t in two], 3),
          fmt_ms([_best(t["snapshots"][-1]["induction"], 1) for t in two], 3)],
         ["one block", fmt_ms([o["first"] for o in one], 3),
          fmt_ms([o["repeat"] for o in one], 3),
          fmt_ms([_best(o["previous"], 0) for o in one], 3),
          fmt_ms([_best(o["induction"], 0) for o in one], 3)]])
    text = (f"Attention-only, {s['n_head']} heads per block, width {s['d_model']}, vocabulary "
            f"{s['vocab_size']}, rows of {s['n_ctx'] + 1} with a segment of {s['min_len']}–"
            f"{s['max_len']} tokens repeated; {s['steps']} steps, {s['snapshots']} snapshots; "
            f"{record['seeds']} seed(s), mean ± std, on {s['n_held']} held-out rows.\n\n"
            f"{models}\nThe phase change of each two-block seed (window: {record['window']} "
            f"snapshot intervals; benefit = first − repeat loss):\n\n{phase}")
    if "shakespeare" in record:
        sh = record["shakespeare"]["probe"]
        grid = lambda k: "; ".join(  # noqa: E731 - one line per score
            f"block {i + 1}: " + " ".join(f"{v:.2f}" for v in layer)
            for i, layer in enumerate(sh[k]))
        profile = record["shakespeare"]["profile"]
        text += (f"\nThe ladder's two-block Tiny Shakespeare model ({profile} profile, seed 0)"
                 f" on the standard probe ({sh['probe']['rows']} rows of "
                 f"{sh['probe']['half']} random tokens repeated): induction {grid('induction')}; "
                 f"previous-token {grid('previous')}.\n")
    return text


def figure(record: dict[str, Any]) -> Figure:
    """Per seed: the first and repeat loss and the induction head's score against the step."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    right = ax.twinx()
    steps = record["steps"]
    for i, seed in enumerate(record["two"]):
        snaps, head = seed["snapshots"], seed["ablation"]["ind_head"]
        colour = f"C{i}"
        if seed.get("phase"):  # the window where the repeated-segment loss falls most
            ax.axvspan(seed["phase"]["start"], seed["phase"]["stop"], color=colour, alpha=0.12,
                       label=f"seed {i}: phase window")
        ax.plot(steps, [x["repeat"] for x in snaps], "-o", color=colour, ms=3,
                label=f"seed {i}: repeat loss")
        ax.plot(steps, [x["first"] for x in snaps], ":", color=colour)
        right.plot(steps, [x["induction"][1][head] for x in snaps], "--", color=colour)
    ax.set_xlabel("training step (dotted: first-occurrence loss; dashed: induction score)")
    ax.set_ylabel("loss (nats)")
    right.set_ylabel("induction score of the block-2 head")
    right.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig
