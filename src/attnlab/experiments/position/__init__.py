"""Position: five schemes trained on 64 tokens, evaluated on 64, 128 and 256
(docs/experiments.md, "Position").

Dimension legend: ``b`` batch, ``t`` positions, ``c`` model width, ``h`` heads.

Each scheme is the default block (width 128, four heads, pre-norm, MLP) with
only ``position`` changed: learned absolute (GPT-2), sinusoidal (Vaswani et al.
2017), RoPE (Su et al. 2021), ALiBi (Press et al. 2022), and none (the
control: a causal model can still tell positions apart by how many tokens it
sees). All train with a 64-token context; held-out perplexity is then measured
over the *whole* held-out split in non-overlapping windows of 64, 128 and 256
tokens (docs/data.md). The learned table has 256 rows (``n_pos``), so positions
64..255 exist but keep their untrained N(0, 1) initial vectors (they get no
gradient; only AdamW's decoupled weight decay shrinks them, by (1 − lr·wd)^steps
≈ 0.97 over the full run — a test checks exactly that).

Longer windows give each token more context on average, so a scheme that
extrapolates perfectly *improves* with the window; one that does not gets
worse. That is what the table and figure show.

Permutation equivariance. Self-attention without positions and without the
causal mask is equivariant: f(Px) = P f(x) for any permutation P of the
tokens. We check it on the projections and ``W_o`` of a ``MultiHeadAttention``
run through ``attention(causal=False)``, and show it breaks with the causal
mask (a causal LM is *not* equivariant) and with each position scheme
(the positions stay at slots 0..t-1 while the tokens move). For ALiBi run
non-causally, keys after the query get no penalty (``alibi_bias`` clamps the
distance at 0); the bias still depends on the slot, which is enough to break it.

Left out: sliding-window evaluation, RoPE/ALiBi interpolation tricks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from attnlab.data.perplexity import perplexity
from attnlab.experiments.position.chapter import CHAPTER
from attnlab.kit.claims import Claim, Margins, Part, Records, Skip, per_seed, with_figures
from attnlab.kit.per_seed import Ratio, claim_for, ratio_part
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import OneBudget
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std, settings_dict
from attnlab.nn.attention import attention
from attnlab.nn.mixers import MultiHeadAttention
from attnlab.nn.model_config import POSITIONS, ModelConfig
from attnlab.nn.positions import AdditivePositions, alibi_bias
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig
from attnlab.train.runtime import autocast

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "position"
NEEDS_CORPUS = True
SCHEMES = ("learned", "sinusoidal", "rope", "alibi", "none")


@dataclass(frozen=True)
class Settings(OneBudget):
    """The block, its training budget (``OneBudget``: per scheme, a constant rate, and the
    batch of every evaluation, the trainer's too) and the evaluation lengths."""

    n_ctx: int = 64  # training context
    schemes: tuple[str, ...] = SCHEMES  # position schemes, one model each
    eval_lengths: tuple[int, ...] = (64, 128, 256)  # held-out window lengths
    n_head: int = 4  # heads of the block
    perm_tokens: int = 12  # tokens in the permutation check
    perm_d_model: int = 32  # width of the attention layer in the permutation check


PROFILES = {
    "full": Settings(),
    "quick": Settings(steps=2000, batch_size=2),
    "micro": Settings(n_ctx=16, eval_lengths=(16, 32), d_model=16, steps=2, batch_size=4,
                      train_tokens=2_000, eval_batch_size=256, perm_tokens=6, perm_d_model=8,
                      seeds=1),
}


def model_config(s: Settings, scheme: str) -> ModelConfig:
    """The default block with ``scheme``; a learned table sized for the longest evaluation."""
    if scheme not in POSITIONS:
        raise ValueError(f"unknown position scheme {scheme!r}; choose from {', '.join(POSITIONS)}")
    longest = max(s.eval_lengths)
    if longest < s.n_ctx:
        raise ValueError(f"eval lengths must reach the training context {s.n_ctx}")
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       n_head=s.n_head, position=scheme,
                       n_pos=longest if scheme == "learned" else None)


def permutation_check(position: str, causal: bool, n_tokens: int = 12, d_model: int = 32,
                      n_head: int = 4, seed: int = 0) -> float:
    """max |f(Px) − P f(x)| for one multi-head self-attention layer f (projections,
    core, W_o) with ``position`` applied at slots 0..t-1, on random x (1, t, c)."""
    if n_tokens < 2:
        raise ValueError(f"a permutation needs at least 2 tokens, got {n_tokens}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    cfg = ModelConfig(d_model=d_model, n_head=n_head, n_ctx=n_tokens, position=position)
    mixer = MultiHeadAttention(cfg).eval()
    additive = (AdditivePositions(position, n_tokens, d_model)
                if position in ("learned", "sinusoidal") else None)
    slots = torch.arange(n_tokens)  # (t,)
    x = torch.randn(1, n_tokens, d_model, generator=gen)  # (b, t, c)
    perm = torch.randperm(n_tokens, generator=gen)  # (t,)

    @torch.no_grad()
    def f(inp: torch.Tensor) -> torch.Tensor:
        h = inp + additive(0, n_tokens) if additive is not None else inp  # (b, t, c)
        q, k, v = mixer.project(h, slots)  # (b, h, t, d) each, RoPE applied
        bias = alibi_bias(n_head, n_tokens, n_tokens) if position == "alibi" else None
        out, _ = attention(q, k, v, causal=causal, bias=bias)  # (b, h, t, d)
        return mixer.o(out.transpose(1, 2).reshape(1, n_tokens, d_model))  # (b, t, c)

    return float((f(x[:, perm]) - f(x)[:, perm]).abs().max())


PERMUTATION_CASES = (("none", False), ("none", True), ("learned", False),
                     ("sinusoidal", False), ("rope", False), ("alibi", False))


def plan(settings: Settings) -> list[RunSpec]:
    """Every scheme for every seed."""
    s = settings
    data = s.data_config()
    return [spec for scheme in s.schemes
            for spec in seeded(f"position {scheme}",
                               RunConfig(model=model_config(s, scheme), train=s.train_config(),
                                         data=data), s.seeds)]


def analyse(settings: Settings, results: Results, ctx: Context) -> dict:
    """Each scheme at every length; then the permutation checks.

    The trained length is the trainer's own held-out perplexity (the same windows, batch and
    precision), not measured twice; the longer ones are measured here under the run's
    precision, so every ratio compares like with like.
    """
    s = settings
    held = ctx.token_data(s.vocab_size).held
    rows = []
    for scheme in s.schemes:
        runs = results.seeds(f"position {scheme}")
        ppl: dict[str, list[float]] = {str(n): [] for n in s.eval_lengths}
        for r in runs:
            longer = [n for n in s.eval_lengths if n != s.n_ctx]
            model = ctx.trained(r) if longer else None
            for n in s.eval_lengths:
                if n == s.n_ctx:
                    ppl[str(n)].append(r["held_ppl"])
                    continue
                with autocast(ctx.device, r.get("precision", "fp32")):  # as the trainer
                    ppl[str(n)].append(perplexity(model, held, n, s.eval_batch_size,
                                                  ctx.device))
        rows.append({"scheme": scheme, "params": runs[0]["params"], "ppl": ppl,
                     "train_ppl": [r["train_ppl"] for r in runs],
                     "wall_s": [r["wall_s"] for r in runs],
                     "run_dirs": [r["run_dir"] for r in runs]})
        log.info("position %s: %s", scheme,
                 ", ".join(f"{n}: {fmt_ms(v)}" for n, v in ppl.items()))
    perm = [{"position": p, "causal": c,
             "max_diff": permutation_check(p, c, s.perm_tokens, s.perm_d_model)}
            for p, c in PERMUTATION_CASES]
    return {"settings": settings_dict(s), "seeds": s.seeds, "rows": rows, "permutation": perm}


# -- report ----------------------------------------------------------------------


def _ppl(record: dict, scheme: str, n: int) -> float:
    row = next(r for r in record["rows"] if r["scheme"] == scheme)
    return mean_std(row["ppl"][str(n)])[0]


def table(record: dict) -> str:
    """Held-out perplexity per scheme and length, ratios to the trained length; permutations."""
    s = record["settings"]
    lengths, trained = s["eval_lengths"], s["n_ctx"]
    header = ["scheme", "params"] + [f"ppl @ {n}" for n in lengths] \
        + [f"× @ {n} / @ {trained}" for n in lengths if n != trained]
    rows = []
    for r in record["rows"]:
        base = mean_std(r["ppl"][str(trained)])[0] if str(trained) in r["ppl"] else None
        ratios = [f"{mean_std(r['ppl'][str(n)])[0] / base:.3f}" if base else "—"
                  for n in lengths if n != trained]
        rows.append([r["scheme"], r["params"]] + [fmt_ms(r["ppl"][str(n)]) for n in lengths]
                    + ratios)
    data = "all" if s["train_tokens"] is None else f"the first {s['train_tokens']:,}"
    note = (f"\nTrained on {trained}-token windows ({s['steps']:,} steps of batch "
            f"{s['batch_size']}, {data} training tokens); held-out perplexity over the whole "
            f"held-out split in non-overlapping windows of each length; {record['seeds']} "
            "seed(s). The learned table has rows for every evaluated position; those past "
            f"{trained} are untrained.\n")
    perm = markdown_table(
        ["position", "causal mask", "max |f(Px) − P f(x)|"],
        [[p["position"], "yes" if p["causal"] else "no", f"{p['max_diff']:.2e}"]
         for p in record["permutation"]])
    return (markdown_table(header, rows) + note
            + "\n**Permutation equivariance of one self-attention layer**\n\n" + perm)


def figure(record: dict) -> Figure:
    """Held-out perplexity against evaluation length, one line per scheme."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import ScalarFormatter

    s = record["settings"]
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    rows = record["rows"]
    for i, r in enumerate(rows):
        stats = [mean_std(r["ppl"][str(n)]) for n in s["eval_lengths"]]
        dodge = 2 ** (0.025 * (i - (len(rows) - 1) / 2))  # side by side: overlaps stay visible
        ax.errorbar([n * dodge for n in s["eval_lengths"]], [m for m, _ in stats],
                    yerr=[sd for _, sd in stats], marker="o", capsize=3, label=r["scheme"],
                    alpha=0.85)
    ax.axvline(s["n_ctx"], color="k", ls=":", lw=1, label="trained length")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(s["eval_lengths"], [str(n) for n in s["eval_lengths"]])
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set(xlabel="evaluation window (tokens)", ylabel="held-out perplexity (log scale)",
           title=f"Trained on {s['n_ctx']} tokens: who extrapolates?")
    ax.legend()
    fig.tight_layout()
    return fig


# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# One scale for the words, on r(n) = ppl at n / ppl at the trained length, per seed:
# "gets better": r < 1; "degrades gently": 1 < r(4×) ≤ GENTLE; "fails to extrapolate": r(4×) >
# GENTLE (the complement of gentle, so no ratio is both); "falls off a cliff": already at 2×,
# r(2×) > GENTLE (worse at twice the length than a gentle scheme is at four times).

GENTLE = 1.5  # the most a gentle degradation may cost at 4× the trained length


def _lengths(records: Records) -> tuple[dict, int, int, int]:
    rec = records[NAME]
    s = rec["settings"]
    longer = sorted(n for n in s["eval_lengths"] if n > s["n_ctx"])
    if not longer:
        raise ValueError("the position record has no evaluation length beyond the trained one")
    return rec, s["n_ctx"], longer[0], longer[-1]


def _seeds(rec: dict, scheme: str, n: int) -> list[float]:
    for r in rec["rows"]:
        if r["scheme"] == scheme:
            return r["ppl"][str(n)]
    raise Skip(f"this profile trains no {scheme} model")


def _ratio_part(scheme: str, which: str, margin: Any, rule: str, name: str = "") -> Part:
    """A part on scheme's per-seed ratio ``which``: "mid" = r(2×), "far" = r(4×),
    "step" = ppl(4×) / ppl(2×)."""
    def read(records: Records) -> Ratio:
        rec, t, mid, far = _lengths(records)
        num, den = {"mid": (mid, t), "far": (far, t), "step": (far, mid)}[which]
        a, b = _seeds(rec, scheme, num), _seeds(rec, scheme, den)
        numbers = {f"{scheme}_ppl_{n}": mean_std(_seeds(rec, scheme, n))[0] for n in (t, mid, far)}
        return Ratio(a, b, numbers, f"ratio_{num}_over_{den}")
    return ratio_part(rule, read, margin, name)


def _learned_best(records: Records) -> Margins:
    rec, t, _, _ = _lengths(records)
    others = [r["scheme"] for r in rec["rows"] if r["scheme"] not in ("learned", "none")]
    if not others:
        raise ValueError("no other position scheme to compare learned with")
    learned = _seeds(rec, "learned", t)
    best_other = [min(v) for v in zip(*(_seeds(rec, x, t) for x in others), strict=True)]
    return Margins(per_seed(lambda b, lr: b / lr - 1, best_other, learned),
                   {f"learned_ppl_{t}": mean_std(learned)[0],
                    f"best_other_ppl_{t}": mean_std(best_other)[0]})


EQUIVARIANT = 1e-5  # float32 rounding: below this counts as equal
BROKEN = 1e-3  # above this counts as broken


def _perm_plain(records: Records) -> Margins:
    cases = records[NAME]["permutation"]
    plain = [c["max_diff"] for c in cases if c["position"] == "none" and not c["causal"]]
    if not plain:
        raise ValueError("the record has no permutation case without positions and mask")
    return Margins([EQUIVARIANT - max(plain)], {"none": max(plain)})


def _perm_broken(records: Records) -> Margins:
    cases = records[NAME]["permutation"]
    ev = {f"{c['position']}{'_causal' if c['causal'] else ''}": c["max_diff"] for c in cases
          if c["position"] != "none" or c["causal"]}
    if not ev:
        raise ValueError("the record has no permutation case with a mask or positions")
    return Margins([min(ev.values()) - BROKEN], ev)


_claim = claim_for(NAME)


CLAIMS: list[Claim] = [
    _claim("learned_cliff",
           "Learned absolute positions are best at the trained length and fall off a cliff "
           "beyond it.",
           Part("learned ppl at the trained length < the lowest of the other position schemes "
                "(not none) with the same seed", _learned_best, "× ppl", "best"),
           _ratio_part("learned", "mid", lambda r: r - GENTLE,
                       f"learned ppl at 2× the length / ppl at it > {GENTLE:g}", "cliff")),
    _claim("sinusoidal_fails",
           "Sinusoids also fail to extrapolate.",
           _ratio_part("sinusoidal", "far", lambda r: r - GENTLE,
                       f"sinusoidal ppl at 4× the trained length / ppl at it > {GENTLE:g}")),
    _claim("rope_gentle",
           "RoPE degrades gently.",
           _ratio_part("rope", "far", lambda r: r - 1,
                       "RoPE ppl at 4× the trained length / ppl at it > 1", "degrades"),
           _ratio_part("rope", "far", lambda r: GENTLE - r,
                       f"RoPE ppl at 4× the trained length / ppl at it ≤ {GENTLE:g}", "gently")),
    _claim("alibi_improves",
           "ALiBi gets better as the window grows.",
           _ratio_part("alibi", "mid", lambda r: 1 - r, "ALiBi ppl at 2× / at the trained "
                       "length < 1", "at 2×"),
           _ratio_part("alibi", "step", lambda r: 1 - r, "ALiBi ppl at 4× / at 2× < 1",
                       "at 4×")),
    _claim("permutation_equivariance",
           "Without positions, permuting the input permutes the output of self-attention.",
           Part(f"max |f(Px) − P f(x)| < {EQUIVARIANT:g} without positions or mask",
                _perm_plain, "max difference", "equivariant"),
           Part(f"max |f(Px) − P f(x)| > {BROKEN:g} with the causal mask and with each position "
                "scheme", _perm_broken, "max difference", "broken otherwise"),
           trained=False),
]

FIGURES = {
    "ratio_{a}_over_{b}": Quantity("perplexity at {a} tokens ÷ at {b}",
                                   "perplejidad a {a} tokens ÷ a {b}", kind="ratio"),
    "best_other_ppl_{n}": Quantity("best held-out perplexity of the other schemes at {n} tokens",
                                   "mejor perplejidad de validación de los otros esquemas a {n} "
                                   "tokens"),
    "{scheme}_ppl_{n}": Quantity("held-out perplexity with {scheme} at {n} tokens",
                                 "perplejidad de validación con {scheme} a {n} tokens"),
    "none": Quantity("largest |f(Px) − P f(x)|, no positions and no mask",
                     "mayor |f(Px) − P f(x)|, sin posiciones ni máscara"),
    "{scheme}_causal": Quantity("largest |f(Px) − P f(x)|, {scheme} with the causal mask",
                                "mayor |f(Px) − P f(x)|, {scheme} con la máscara causal"),
    "{scheme}": Quantity("largest |f(Px) − P f(x)|, {scheme}", "mayor |f(Px) − P f(x)|, {scheme}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PERMUTATION_CASES", "PROFILES", "SCHEMES",
    "Settings", "analyse", "figure", "model_config", "permutation_check", "plan", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
