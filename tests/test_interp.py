"""Head-role scores on hand-built heads whose role is known, and ablation through trace."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.data.repeated import repeated_probe, segment_rows
from attnlab.interp import ablate, head_means, head_scores, scores_of_weights
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig

T, V = 32, 16  # context, vocabulary
POS, TOK, PREV = slice(0, T), slice(T, T + V), slice(T + V, T + 2 * V)  # residual subspaces
OUT = slice(T + 2 * V, T + 3 * V)  # what block 1 copies, read by the unembedding
C = 12.0  # q and k gain: a score of C²/√d against 0 makes the softmax nearly one-hot


def _circuit() -> LanguageModel:
    """Two blocks of one head, no norms, no MLP. Block 0: a previous-token head (query at
    position t matches the key at t - 1) that writes the previous token into PREV. Block 1:
    an induction head (query: this token; key: the token before the key) that copies the
    key's token into OUT, which the unembedding reads: Olsson et al.'s K-composition by hand."""
    cfg = ModelConfig(vocab_size=V, n_ctx=T, d_model=T + 3 * V, n_layer=2, n_head=1,
                      mlp=False, norm="none", position="learned")
    model = LanguageModel(cfg)
    d = cfg.d_model
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.pos.table.weight[:, POS] = torch.eye(T)
        model.tok.weight[:, TOK] = torch.eye(V)
        for block in model.blocks:
            block.mixer.o.weight.copy_(torch.eye(d))
        w0 = model.blocks[0].mixer.qkv.weight  # (3d, d): q | k | v rows
        w0[:T, POS] = C * torch.eye(T)  # q(t) = C e_t
        w0[d + 1:d + T, POS][:, :T - 1] = C * torch.eye(T - 1)  # k(s) = C e_{s+1}
        w0[2 * d + T + V:2 * d + T + 2 * V, TOK] = torch.eye(V)  # v: token -> PREV
        w1 = model.blocks[1].mixer.qkv.weight
        w1[:V, TOK] = C * torch.eye(V)  # q: this token
        w1[d:d + V, PREV] = C * torch.eye(V)  # k: the token before the key
        w1[2 * d + T + 2 * V:2 * d + T + 3 * V, TOK] = torch.eye(V)  # v: key's token -> OUT
        model.head.weight[:, OUT] = C * torch.eye(V)
    return model.eval()


def test_constructed_previous_token_and_induction_heads_score_near_one():
    s = head_scores(_circuit())
    assert s.scores["previous"].shape == (2, 1)
    assert s.scores["previous"][0, 0] > 0.95  # block 0 looks one back
    assert s.scores["induction"][1, 0] > 0.9  # block 1 looks at what followed before
    assert s.scores["induction"][0, 0] < 0.2 and s.scores["previous"][1, 0] < 0.2
    assert s.best("induction")[:2] == (1, 0)


def test_scores_by_hand_on_uniform_rows():
    m = 3
    t = np.arange(2 * m)
    uniform = np.tril(np.ones((2 * m, 2 * m))) / (t + 1)[:, None]  # (t, s) causal mean
    s = scores_of_weights([uniform[None, None]], m)
    assert s["previous"][0, 0] == pytest.approx(np.mean(1 / (t[1:] + 1)))
    assert s["sink"][0, 0] == pytest.approx(np.mean(1 / (t[1:] + 1)))
    assert s["induction"][0, 0] == pytest.approx(np.mean(1 / (t[m:] + 1)))
    eye = np.eye(2 * m)[None, None]  # every query on itself
    assert scores_of_weights([eye], m)["previous"][0, 0] == 0.0


def test_ablating_the_previous_token_head_removes_induction():
    model = _circuit()
    with ablate(model, {(0, 0): "zero"}):
        zeroed = head_scores(model).scores["induction"][1, 0]
    means = head_means(model, torch.from_numpy(repeated_probe(V, T // 2, seed=5)))
    with ablate(model, {(0, 0): "mean"}, means):
        meaned = head_scores(model).scores["induction"][1, 0]
    assert zeroed < 0.3 and meaned < 0.3
    assert head_scores(model).scores["induction"][1, 0] > 0.9  # the hooks are gone again


def test_ablation_changes_only_the_named_head_and_refuses_bad_names():
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=V, n_ctx=T, d_model=32, n_layer=2, n_head=4,
                                      mlp=False)).eval()
    ids = torch.from_numpy(segment_rows(V, T, 4, 3, 8, seed=0).rows)
    plain = model.trace(ids)
    with ablate(model, {(1, 2): "zero"}):
        cut = model.trace(ids)
        assert torch.allclose(cut.logits, model(ids), atol=1e-5)  # forward and trace agree
    assert torch.equal(cut.weights[0], plain.weights[0])  # block 0 untouched
    assert torch.equal(cut.weights[1], plain.weights[1])  # a head's output, not its pattern
    assert not torch.allclose(cut.logits, plain.logits)
    assert torch.equal(cut["blocks.1.attn.hook_pattern"], cut.weights[1])
    assert "blocks.0.attn.hook_q" in plain.names()
    with pytest.raises(KeyError, match="blocks.L.attn"):
        plain["blocks.9.attn.hook_pattern"]
    with pytest.raises(ValueError, match="4 heads"):
        with ablate(model, {(0, 7): "zero"}):
            pass
    with pytest.raises(ValueError, match="needs its mean"):
        with ablate(model, {(0, 1): "mean"}):
            pass
