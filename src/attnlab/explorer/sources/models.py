"""Explorer data from attnlab's own models: trained runs and the probe languages.

Dimension legend: ``L`` blocks, ``H`` heads per block, ``b`` batch, ``n`` tokens,
``d`` query/key width of a head (``d_k``), ``v`` vocabulary.

Each block is read through the model core's one trace API
(``attnlab.explorer.traces.attnlab_traces`` over ``LanguageModel.trace``):
q and k after RoPE, ALiBi's bias, the model's own scale and weights. The page
shows the model's own weights at its own switches (causal, and √d_k as the
model was built) and recomputes softmax(q·kᵀ·scale + bias) when a switch
moves. Models run on the resolved device (``auto``: CUDA when present).

The probe pages (``--winograd``, ``--agreement``) train a small model on a
synthetic language (docs/data.md) through the experiments' cached training
(``Context.train``): sentences are concatenated into one token stream and
the trainer draws random windows from it, as it does from the corpus.

The Winograd page says, in each view's composed note and in its description,
what block 2's rollout at the scored position puts on “animal” and “street”
beside what block 2's own weights put there (figures computed from the page's
own data, ``referent_figures``).

Left out: value vectors and head outputs (only their norms, for the
value-weighted view), and mixers without weights (the no-context mixer is
refused; the uniform mean is shown as equal scores).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.data.synthetic import (
    SCORE_INDEX,
    forced_choice_accuracy,
    top1_accuracy,
    verb_agreement_dataset,
    winograd_dataset,
)
from attnlab.errors import DataError, UsageError
from attnlab.explorer.page.render import counted, say
from attnlab.explorer.sources.build import page_data, view_from_traces
from attnlab.explorer.sources.traces import attnlab_traces
from attnlab.i18n.labels import RunLabel
from attnlab.nn.model_config import ModelConfig
from attnlab.train.progress import Progress
from attnlab.train.run_config import TrainConfig
from attnlab.train.runtime import load_trained, resolve_device

log = logging.getLogger(__name__)

Compute = Callable[[str], dict[str, Any]]

WINOGRAD_TEXT = "the animal did not cross the street because it was too {adj} , so the"
AGREEMENT_TEXT = "I work , you work , he"


def context_limit(cfg: ModelConfig) -> int:
    """Longest input the model takes: its learned table's rows, else its trained context."""
    return cfg.pos_rows if cfg.position == "learned" else cfg.n_ctx


def token_strings(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """One display string per id: ``token_strings`` when the tokenizer has it, else decode."""
    if hasattr(tokenizer, "token_strings"):
        return list(tokenizer.token_strings(ids))
    return [tokenizer.decode([i]) for i in ids]


def checkpoint_view(
    model: torch.nn.Module, tokenizer: Any, text: str, name: str | None = None,
    lang: str = "en",
) -> dict[str, Any]:
    """One view of an attnlab ``LanguageModel`` on ``text``: q, k and weights per block and head.

    ``tokenizer`` needs ``encode(text) -> ids`` and ``token_strings(ids)`` or
    ``decode(ids)``. Text longer than the model's context is a UsageError. Head names and
    notes are in ``lang``.
    """
    ids = list(tokenizer.encode(text))
    if not ids:
        raise UsageError("the sentence is empty")
    limit = context_limit(model.cfg)
    if len(ids) > limit:
        raise UsageError("the input is %s tokens; the model's context is %s", len(ids), limit)
    return view_from_traces(name or text, token_strings(tokenizer, ids),
                            attnlab_traces(model, ids), lang=lang)


def describe(cfg: ModelConfig, lang: str = "en") -> str:
    """``2 blocks of 4 heads, rope positions`` (and ``, no √d_k division`` if so), in
    ``lang``."""
    heads = counted(cfg.n_head, "head", lang) if cfg.mixer == "mha" else \
        say("describe.mixer", lang, mixer=cfg.mixer)
    unscaled = say("describe.unscaled", lang) if cfg.mixer in ("head", "mha") and \
        not cfg.scale else ""
    return say("describe.model", lang, blocks=counted(cfg.n_layer, "block", lang), heads=heads,
               position=cfg.position, unscaled=unscaled)


def model_page(
    model: torch.nn.Module, views: Sequence[dict[str, Any]], title: str, description: str
) -> dict[str, Any]:
    """The data of views of one attnlab model: its switches start where the model is."""
    return page_data(title, description, views, causal=True, scale=bool(model.cfg.scale))


def checkpoint_compute(run: str | Path, lang: str = "en") -> Compute:
    """Load the model (on the resolved device) and tokenizer of a run made by
    ``attnlab train``; return ``compute(text) -> data`` (its title and description in
    ``lang``)."""
    run_dir = Path(run)
    cfg, model, tokenizer, record = load_trained(run_dir, "auto")
    if tokenizer is None:
        raise DataError("run %s has no tokenizer.json (it was trained on token ids given "
                        "directly), so typed text cannot be tokenised", run_dir)
    title = say("run.title", lang, name=run_dir.name, step=record.get("step", "?"))
    description = say("run.description", lang, model=describe(cfg.model, lang))

    def compute(text: str) -> dict[str, Any]:
        view = checkpoint_view(model, tokenizer, text, name=run_dir.name)
        return model_page(model, [view], title, description)

    return compute


# --- probe languages: a trained model, then its page -------------------------------------


@dataclass(frozen=True)
class Probe:
    """A small model and its training budget for one synthetic language.

    ``model.vocab_size`` is replaced by the language's vocabulary size.
    """

    model: ModelConfig  # the architecture (vocab_size filled in from the language)
    train: TrainConfig  # the budget; a few hundred steps on the CPU


WINOGRAD_PROBE = Probe(
    model=ModelConfig(n_ctx=36, d_model=64, n_layer=2, mixer="mha", n_head=4, position="rope"),
    train=TrainConfig(steps=600, lr=3e-3, batch_size=32, warmup_steps=50, decay="cosine",
                      eval_every=0, ckpt_every=0, log_every=50, device="auto"),
)  # fmt: skip
AGREEMENT_PROBE = Probe(
    model=ModelConfig(n_ctx=18, d_model=64, n_layer=2, mixer="mha", n_head=4, position="rope"),
    train=TrainConfig(steps=300, lr=3e-3, batch_size=32, warmup_steps=30, decay="cosine",
                      eval_every=0, ckpt_every=0, log_every=50, device="auto"),
)  # fmt: skip


@dataclass(frozen=True)
class _Stream:
    """Sentences concatenated into the flat token arrays the trainer draws windows from."""

    train: np.ndarray  # (N_train,) int64
    held: np.ndarray  # (N_held,) int64


def _train_probe(
    label: str, probe: Probe, vocab_size: int, train_rows: np.ndarray, held_rows: np.ndarray,
    work: Path, progress: Progress | None,
) -> tuple[torch.nn.Module, dict[str, Any]]:  # fmt: skip
    from attnlab.running.context import Context

    ctx = Context.local(Path(work), progress=progress)
    cfg = probe.model.replace(vocab_size=vocab_size)
    stream = _Stream(train=train_rows.ravel(), held=held_rows.ravel())
    record = ctx.train(label, cfg, probe.train, data=stream)  # one CPU thread, as every run
    log.info("%s: run %s, %d steps", RunLabel(label), record["run_dir"], record["steps"])
    return ctx.load_model(record).to(resolve_device(probe.train.device)), record


def planned_run(experiment: str, profile: str, label: str) -> tuple[Any, Any]:
    """The settings of ``experiment``'s ``profile`` and the ``RunSpec`` its plan labels
    ``label``, read through the experiment's record (``attnlab.kit.registry.load``): a page
    that trains it (``Context.train``) gets the experiment's own run, shared through the run
    cache, without importing how the experiment builds it."""
    from attnlab.kit import registry

    record = registry.load(experiment)
    settings = record.profiles[profile]
    for spec in record.plan(settings):
        if spec.label == label:
            return settings, spec
    raise LookupError(f"the {profile} plan of {experiment} has no run {label!r}")


def _last_position_logits(model: torch.nn.Module, rows: np.ndarray) -> np.ndarray:
    """Logits (b, v) at the last position of each row of ids (b, n)."""
    device = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.as_tensor(rows, dtype=torch.long, device=device))[:, -1]  # (b, v)
    return logits.to("cpu", torch.float64).numpy()


def next_word_probs(
    model: torch.nn.Module, vocab: Any, text: str, words: Sequence[str]
) -> dict[str, float]:
    """P(word | text) of the model for each of ``words``, at the position after ``text``."""
    logits = _last_position_logits(model, np.array([vocab.encode(text)]))[0]  # (v,)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return {w: float(p[vocab.id(w)]) for w in words}


def last_row_weights(model: torch.nn.Module, vocab: Any, text: str) -> np.ndarray:
    """The model's own attention weights of the last word, (L, H, n), as the model scales."""
    return np.stack([t.weights[:, -1] for t in attnlab_traces(model, vocab.encode(text))])


def _strongest(weight: np.ndarray, lang: str = "en") -> str:
    """``block 2 head 3 puts 0.97`` for the largest entry of weights (L, H), in ``lang``."""
    layer, head = np.unravel_index(int(np.argmax(weight)), weight.shape)
    return say("strongest", lang, layer=layer + 1, head=head + 1,
               weight=f"{weight[layer, head]:.2f}")


def referent_figures(view: dict[str, Any], position: int, referent: str) -> dict[str, Any]:
    """How the last block's rollout at ``position`` of a Winograd view reaches each candidate,
    from the page's own data (its layers' weights and ``composed`` rollout).

    With Â = 0.5·(mean over heads of the last block's weights) + 0.5·I and R the rollout
    of the blocks before it, rollout[i, j] = Σ_k Â[i, k]·R[k, j]: the term k = j is what
    reaches token j through its own position, the others what reaches it through
    positions that the earlier blocks mixed it into (``via``: the largest of them).
    """
    tokens = view["tokens"]
    own = np.mean([np.asarray(h["weights"]) for h in view["layers"][-1]["heads"]], axis=0)
    rolled = np.asarray(view["composed"]["rollout"])  # (L, n, n)
    before = rolled[-2] if len(rolled) > 1 else np.eye(len(tokens))  # R (n, n)
    hat = 0.5 * own[position] + 0.5 * np.eye(len(tokens))[position]  # row i of Â, (n,)
    j = tokens.index(referent)
    paths = hat * before[:, j]  # (n,) Â[i, k]·R[k, j] for every k
    others = np.delete(np.arange(len(tokens)), j)
    via = int(others[np.argmax(paths[others])])
    out: dict[str, Any] = {f"rollout {w}": float(rolled[-1, position, tokens.index(w)])
                           for w in ("animal", "street")}  # fmt: skip
    out.update({f"own {w}": float(own[position, tokens.index(w)]) for w in ("animal", "street")})
    out.update(through=float(paths[others].sum()), direct=float(paths[j]),
               via=_place(tokens, via, position), via_share=float(paths[via]))  # fmt: skip
    return out


def _place(tokens: list[str], k: int, position: int) -> str:
    """``“it”``, ``“the” at position 6`` (a word said more than once), or the position itself."""
    if k == position:
        return "the scored position itself"
    return f"“{tokens[k]}”" + (f" at position {k + 1}" if tokens.count(tokens[k]) > 1 else "")


def referent_note(view: dict[str, Any], position: int, referent: str) -> str:
    """The sentence the Winograd page adds to a view's composed note, from its own figures."""
    f = referent_figures(view, position, referent)
    block = len(view["layers"])
    return (
        f"On this sentence, block {block}'s rollout at the scored position (the last “the”) "
        f"puts {f['rollout animal']:.2f} on “animal” and {f['rollout street']:.2f} on “street”; "
        f"of the {f['rollout ' + referent]:.2f} on the referent “{referent}”, "
        f"{f['through']:.2f} arrives through positions the blocks before mixed it into (most "
        f"through {f['via']}, {f['via_share']:.2f}) and {f['direct']:.2f} through its own. "
        f"Block {block}'s own weights (mean over heads) put {f['own animal']:.2f} on “animal” "
        f"and {f['own street']:.2f} on “street”."
    )


def winograd_page(work: str | Path = "runs", progress: Progress | None = None) -> dict[str, Any]:
    """The Winograd pair (``… too tired …`` / ``… too wet …``; docs/experiments.md,
    "Winograd referents") under a trained two-block, four-head model of Variant B; accuracy
    measured on the held-out pairs, and the referent's share in block 2's rollout."""
    lang = winograd_dataset("B", seed=0)
    probe = WINOGRAD_PROBE
    model, record = _train_probe("explorer winograd probe", probe, lang.vocab.size, lang.train,
                                 lang.held, Path(work), progress)  # fmt: skip
    logits = _last_position_logits(model, lang.held[:, : SCORE_INDEX + 1])  # (b, v)
    choice = forced_choice_accuracy(logits, lang.candidates, lang.answer)
    top1 = top1_accuracy(logits, lang.answer)
    views, said, rows, rolled = [], [], [], []
    for adj, answer in (("tired", "animal"), ("wet", "street")):
        text = WINOGRAD_TEXT.format(adj=adj)
        view = checkpoint_view(model, lang.vocab, text, name=f"… too {adj} …")
        view["composed"]["note"] += " " + referent_note(view, SCORE_INDEX, answer)
        views.append(view)
        p = next_word_probs(model, lang.vocab, text, ("animal", "street"))[answer]
        said.append(f"after “{adj}” P({answer}) = {p:.2f}")
        rows.append(last_row_weights(model, lang.vocab, text).mean(axis=1))  # (L, n)
        f = referent_figures(view, SCORE_INDEX, answer)
        rolled.append(f"{f['rollout ' + answer]:.2f} on “{answer}” after “{adj}” "
                      f"({f['through']:.2f} of it through other positions)")  # fmt: skip
    apart = 0.5 * np.abs(rows[0] - rows[1]).sum(-1)  # (L,) total variation per block
    blocks = ", ".join(f"block {i + 1} {d:.2f}" for i, d in enumerate(apart))
    description = (
        f"Where each word looks in a model of {probe.model.n_layer} blocks of "
        f"{probe.model.n_head} heads trained {record['steps']} steps on the Winograd referent "
        f"language (Variant B), held-out forced choice {choice:.1%} (chance 50%), top-1 "
        f"{top1:.1%}; choose the last “the”, the scored position: {'; '.join(said)}; its "
        f"weights (mean over heads) differ between the two sentences by {blocks} "
        f"(total variation); composed through the blocks (rollout), block "
        f"{probe.model.n_layer} puts {' and '.join(rolled)}."
    )
    return model_page(model, views, "Winograd referents: where “so the” looks", description)


def agreement_page(work: str | Path = "runs", progress: Progress | None = None) -> dict[str, Any]:
    """``I work , you work , he`` under a small model trained on the verb-agreement language:
    the measured P(works) and P(work), and where the last word looks."""
    lang = verb_agreement_dataset(seed=0)
    probe = AGREEMENT_PROBE
    model, record = _train_probe("explorer agreement probe", probe, lang.vocab.size, lang.train,
                                 lang.held, Path(work), progress)  # fmt: skip
    p = next_word_probs(model, lang.vocab, AGREEMENT_TEXT, ("works", "work"))
    tokens = AGREEMENT_TEXT.split()
    w = last_row_weights(model, lang.vocab, AGREEMENT_TEXT)  # (L, H, n)
    on_he = _strongest(w[..., tokens.index("he")])  # "he" is the last word
    on_work = _strongest(w[..., [i for i, t in enumerate(tokens) if t == "work"]].sum(-1))
    view = checkpoint_view(model, lang.vocab, AGREEMENT_TEXT, name="he ___")
    description = (
        f"A model of {probe.model.n_layer} blocks of {probe.model.n_head} heads trained "
        f"{record['steps']} steps on the verb-agreement language predicts after “he”: "
        f"P(works) = {p['works']:.3f}, P(work) = {p['work']:.3f}; choose “he” to see its row "
        f"({on_he} on “he”, {on_work} on the two “work”s)."
    )
    return model_page(model, [view], "Verb agreement: what “he” looks at", description)
