"""The in-context regression experiment's report section: its table and its figure, from
the record ``attnlab.experiments.icl_gd.analyse`` writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnlab.kit.tables import fmt_ms, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def table(record: dict[str, Any]) -> str:
    s, runs = record["settings"], record["per_seed"]
    col = lambda f: fmt_ms([f(r) for r in runs], 4)  # noqa: E731
    rows = [["trained LSA layer", col(lambda r: r["loss"]["lsa"]),
             col(lambda r: r["lsa_vs_gd"]["cosine"]), col(lambda r: r["lsa_vs_gd"]["rel_l2"])],
            ["one GD step, best η", col(lambda r: r["loss"]["gd"]), "1", "0"],
            ["control (context of another task)", col(lambda r: r["loss"]["control"]),
             col(lambda r: r["control_vs_gd"]["cosine"]),
             col(lambda r: r["control_vs_gd"]["rel_l2"])],
            ["predict 0", col(lambda r: r["loss"]["zero"]), "–", "–"]]
    return (f"d = {s['d']}, {s['n']} context pairs, {s['steps']} Adam steps of {s['batch_size']}"
            f" tasks; best step size η = {fmt_ms([r['eta'] for r in runs], 3)}; "
            f"{s['n_held']} held-out tasks; {record['seeds']} seed(s), mean ± std.\n\n"
            + markdown_table(["model", "held-out MSE", "cosine with GD's predictions",
                              "relative L2 to GD's"], rows))


def figure(record: dict[str, Any]) -> Figure:
    """Held-out loss of each model per seed."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.2))
    ax = fig.add_subplot(1, 1, 1)
    names = ("lsa", "gd", "control", "zero")
    for i, r in enumerate(record["per_seed"]):
        ax.bar([j + 0.2 * i for j in range(len(names))], [r["loss"][k] for k in names],
               width=0.2, label=f"seed {i}")
    ax.set_xticks([j + 0.2 for j in range(len(names))],
                  ["LSA", "GD step", "control", "predict 0"])
    ax.set_ylabel("held-out MSE")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
