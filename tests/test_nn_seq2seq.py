"""Two sequences: cross-attention and the encoder–decoder layers equal PyTorch's own on copied
weights (float64 here, float32 in ``verify``), key-padding masks hide padding exactly, the
encoder sees both ways and the decoder only back, and the three translation models run,
give their attention weights, match in parameters and learn a little."""

from __future__ import annotations

import pytest
import torch

from attnlab.nn.attention import causal_mask
from attnlab.nn.cross import CrossAttention, copy_from_torch_mha, padding_mask
from attnlab.nn.encdec import (
    DecoderLayer,
    EncoderLayer,
    copy_from_torch_decoder_layer,
    copy_from_torch_encoder_layer,
)
from attnlab.nn.model_config import Seq2SeqConfig
from attnlab.nn.seq2seq import (
    build_seq2seq,
    count_parameters,
    greedy_decode,
    matched_configs,
    matched_width,
    num_parameters,
    seq2seq_loss,
)
from attnlab.verify import check_cross_attention, check_decoder_layer, check_source_padding

ARCHS = ("rnn", "bahdanau", "transformer")
LENGTHS = torch.tensor([6, 3, 1])


@pytest.mark.parametrize("check", [check_cross_attention, check_decoder_layer,
                                   check_source_padding])
def test_the_verify_rows_pass(check) -> None:
    rows = check()
    assert all(r.ok for r in rows), rows


def test_cross_attention_equals_torch_in_float64_values_and_gradients() -> None:
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(16, 4, batch_first=True, dtype=torch.float64)
    ours = CrossAttention(16, 4, backend="naive").double()
    copy_from_torch_mha(ours, ref)
    keep = padding_mask(LENGTHS, 6)
    x = torch.randn(3, 5, 16, dtype=torch.float64, requires_grad=True)
    memory = torch.randn(3, 6, 16, dtype=torch.float64, requires_grad=True)
    y, w = ours(x, memory, keep, need_weights=True)
    y_ref, w_ref = ref(x, memory, memory, key_padding_mask=~keep, average_attn_weights=False)
    assert (y - y_ref).abs().max() < 1e-12 and (w - w_ref).abs().max() < 1e-12
    g = torch.autograd.grad(y.square().sum(), (x, memory))
    g_ref = torch.autograd.grad(y_ref.square().sum(), (x, memory))
    assert all((a - b).abs().max() < 1e-12 for a, b in zip(g, g_ref, strict=True))


def test_padded_keys_get_zero_weight_and_their_values_change_nothing() -> None:
    torch.manual_seed(1)
    attn = CrossAttention(16, 4).eval()
    keep = padding_mask(LENGTHS, 6)
    x, memory = torch.randn(3, 5, 16), torch.randn(3, 6, 16)
    y, w = attn(x, memory, keep, need_weights=True)
    assert torch.all(w[1, :, :, 3:] == 0) and torch.allclose(w.sum(-1), torch.ones(3, 4, 5))
    changed = memory.clone()
    changed[~keep] = 1e4
    assert torch.equal(attn(x, changed, keep, need_weights=True)[0], y)  # the same kernel


@pytest.mark.parametrize("backend", ["naive", "sdpa"])
def test_a_fully_padded_source_gives_no_nan(backend: str) -> None:
    torch.manual_seed(2)
    attn = CrossAttention(16, 4, backend=backend).eval()
    keep = padding_mask(torch.tensor([0, 4]), 4)  # the first source has no word at all
    y, _ = attn(torch.randn(2, 3, 16), torch.randn(2, 4, 16), keep)
    assert not torch.isnan(y).any()
    assert torch.allclose(y[0], attn.o.bias.expand(3, 16))  # zero heads, then W_o's bias


def test_padding_mask_refuses_impossible_lengths() -> None:
    with pytest.raises(ValueError, match="lengths must lie in"):
        padding_mask(torch.tensor([5]), 4)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_layers_equal_torch_in_float64(norm: str) -> None:
    torch.manual_seed(3)
    cfg = Seq2SeqConfig(d_model=16, n_head=4, norm=norm, backend="naive")
    kw = dict(dim_feedforward=64, dropout=0.0, activation="gelu", batch_first=True,
              norm_first=norm == "pre", dtype=torch.float64)
    keep = padding_mask(LENGTHS, 6)
    ref = torch.nn.TransformerDecoderLayer(16, 4, **kw)
    ours = DecoderLayer(cfg).double()
    copy_from_torch_decoder_layer(ours, ref)
    x, memory = torch.randn(3, 5, 16, dtype=torch.float64), torch.randn(3, 6, 16,
                                                                        dtype=torch.float64)
    y_ref = ref(x, memory, tgt_mask=~causal_mask(5, 5), memory_key_padding_mask=~keep)
    assert (ours(x, memory, keep)[0] - y_ref).abs().max() < 1e-12
    ref = torch.nn.TransformerEncoderLayer(16, 4, **kw)
    ours = EncoderLayer(cfg).double()
    copy_from_torch_encoder_layer(ours, ref)
    y_ref = ref(memory, src_key_padding_mask=~keep)
    real = keep[..., None].expand_as(memory)
    assert (ours(memory, keep)[0][real] - y_ref[real]).abs().max() < 1e-12


def _model(arch: str, seed: int = 0, **kw) -> torch.nn.Module:
    torch.manual_seed(seed)
    cfg = Seq2SeqConfig(arch=arch, src_vocab=19, tgt_vocab=23, d_model=16, n_layer=2,
                        backend="naive", **kw)
    return build_seq2seq(cfg).eval()


def _batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, 19, (3, 6), generator=g)
    src[padding_mask(LENGTHS, 6).logical_not()] = 0
    return src, torch.randint(3, 23, (3, 5), generator=g)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_source_alone_equals_it_padded_in_a_batch(arch: str) -> None:
    model = _model(arch, bidirectional=True)
    src, tgt = _batch()
    with torch.no_grad():
        batch = model(src, LENGTHS, tgt)
        for k, n in enumerate(LENGTHS.tolist()):
            alone = model(src[k : k + 1, :n], LENGTHS[k : k + 1], tgt[k : k + 1])
            assert (alone[0] - batch[k]).abs().max() < 1e-5


@pytest.mark.parametrize("arch", ARCHS)
def test_the_decoder_sees_only_earlier_target_words(arch: str) -> None:
    model = _model(arch)
    src, tgt = _batch(1)
    changed = tgt.clone()
    changed[:, 3] = (changed[:, 3] + 1) % 23
    with torch.no_grad():
        a, b = model(src, LENGTHS, tgt), model(src, LENGTHS, changed)
    assert torch.allclose(a[:, :3], b[:, :3], atol=1e-6)
    assert not torch.allclose(a[:, 3:], b[:, 3:])


def test_the_transformer_encoder_sees_both_ways() -> None:
    model = _model("transformer")
    src, _ = _batch(2)
    changed = src.clone()
    changed[0, 5] = (changed[0, 5] % 18) + 1  # the last word of the full-length source
    with torch.no_grad():
        a, _ = model.encode(src, LENGTHS)
        b, _ = model.encode(changed, LENGTHS)
    assert not torch.allclose(a[0, 0], b[0, 0])  # the first word's state changed with it


def test_without_attention_the_decoder_reads_only_the_last_state() -> None:
    model = _model("rnn")
    src, tgt = _batch(3)
    with torch.no_grad():
        states, last, keep = model.encode(src, LENGTHS)
        logits, weights = model.decode(tgt, states, last, keep)
        blind, _ = model.decode(tgt, torch.zeros_like(states), last, keep)
    assert weights is None and torch.equal(logits, blind)
    assert model.attention_weights(src, LENGTHS, tgt) is None


@pytest.mark.parametrize("arch,shape", [("bahdanau", (3, 5, 6)), ("transformer", (2, 3, 4, 5, 6))])
def test_attention_weights_are_target_by_source_rows_of_one(arch: str, shape: tuple) -> None:
    model = _model(arch)
    src, tgt = _batch(4)
    with torch.no_grad():
        w = model.attention_weights(src, LENGTHS, tgt)
    assert tuple(w.shape) == shape
    assert torch.allclose(w.sum(-1), torch.ones(shape[:-1]))
    pad = ~padding_mask(LENGTHS, 6)  # (b, s)
    pad = pad[:, None, :] if arch == "bahdanau" else pad[None, :, None, None, :]
    assert torch.all(w.masked_select(pad.expand_as(w)) == 0)


def test_the_transformer_trace_is_its_forward_pass_with_every_attention_recorded() -> None:
    model = _model("transformer")
    src, tgt = _batch(5)
    with torch.no_grad():
        trace = model.trace(src, LENGTHS, tgt)
        logits = model(src, LENGTHS, tgt)
        cross = model.attention_weights(src, LENGTHS, tgt)  # (L, b, h, t, s)
    assert (trace.logits - logits).abs().max() < 1e-5
    assert torch.allclose(torch.stack([c.weights for c in trace.cross]), cross, atol=1e-6)
    pad = ~padding_mask(LENGTHS, 6)[:, None, None, :]  # (b, 1, 1, s)
    for kind, records, (n, m) in (("encoder", trace.encoder, (6, 6)),
                                  ("decoder", trace.decoder, (5, 5)),
                                  ("cross", trace.cross, (5, 6))):
        assert len(records) == 2, kind
        for r in records:
            assert tuple(r.weights.shape) == (3, 4, n, m) and tuple(r.q.shape) == (3, 4, n, 4)
            assert tuple(r.k.shape) == (3, 4, m, 4), kind
            assert torch.allclose(r.scores, r.q @ r.k.transpose(-2, -1) * r.scale), kind
            if kind == "decoder":  # causal: the scores' softmax with later keys masked
                mask = causal_mask(n, n)
                want = torch.softmax(r.scores.masked_fill(~mask, float("-inf")), -1)
            else:  # no causal mask, only the source's padding (every source has a word)
                want = torch.softmax(r.scores.masked_fill(pad, float("-inf")), -1)
            assert torch.allclose(r.weights, want, atol=1e-6), kind


def test_the_three_models_match_in_parameters() -> None:
    configs = matched_configs(Seq2SeqConfig(src_vocab=40, tgt_vocab=50, n_layer=1), 60_000)
    counts = {arch: count_parameters(cfg) for arch, cfg in configs.items()}
    transformer = configs["transformer"]
    coarser = count_parameters(transformer.replace(d_model=transformer.d_model - 4))
    assert abs(counts["transformer"] - 60_000) <= abs(coarser - 60_000)  # the nearest width
    for arch in ("rnn", "bahdanau"):  # matched to the transformer's count, within 1%
        assert abs(counts[arch] - counts["transformer"]) < 0.01 * counts["transformer"], counts
    assert configs["transformer"].d_model % configs["transformer"].n_head == 0
    rnn = Seq2SeqConfig(arch="rnn", src_vocab=40, tgt_vocab=50, d_model=32)
    extra = count_parameters(rnn.replace(arch="bahdanau")) - count_parameters(rnn)
    assert extra == 32 * 32 + 32 * 32 + 32  # W, U and v: attention is all that differs


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fields", [{}, {"bidirectional": True, "d_embed": 5, "d_attn": 7},
                                    {"position": "learned", "norm": "post", "n_layer": 1}])
def test_the_parameter_formula_counts_the_built_model(arch: str, fields: dict) -> None:
    cfg = Seq2SeqConfig(arch=arch, src_vocab=11, tgt_vocab=13, d_model=12, n_pos=20, **fields)
    assert count_parameters(cfg) == num_parameters(build_seq2seq(cfg))


def test_matched_width_takes_the_nearest_count() -> None:
    cfg = matched_width(Seq2SeqConfig(arch="rnn", src_vocab=20, tgt_vocab=20), 10_000)
    near = [abs(count_parameters(cfg.replace(d_model=cfg.d_model + k)) - 10_000)
            for k in (-1, 0, 1)]
    assert near[1] == min(near)


@pytest.mark.parametrize("arch", ARCHS)
def test_each_model_learns_a_fixed_batch_a_little(arch: str) -> None:
    model = _model(arch).train()
    src, tgt = _batch(5)
    tgt_in = torch.cat([torch.ones(3, 1, dtype=torch.long), tgt[:, :-1]], dim=1)  # bos = 1
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(15):
        loss = seq2seq_loss(model(src, LENGTHS, tgt_in), tgt, pad_id=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]


@pytest.mark.parametrize("arch", ARCHS)
def test_greedy_decode_writes_eos_after_eos(arch: str) -> None:
    model = _model(arch)
    src, _ = _batch(6)
    out = greedy_decode(model, src, LENGTHS, bos=1, eos=2, max_len=7)
    assert out.shape[0] == 3 and out.shape[1] <= 7
    for row in out.tolist():
        if 2 in row:
            assert set(row[row.index(2):]) == {2}


def test_config_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="unknown arch"):
        Seq2SeqConfig(arch="lstm")
    with pytest.raises(ValueError, match="does not divide"):
        Seq2SeqConfig(d_model=30, n_head=4)
    with pytest.raises(ValueError, match="at least one token"):
        _model("rnn")(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 0]),
                      torch.ones(2, 2, dtype=torch.long))


@pytest.mark.parametrize("arch", ARCHS)
def test_each_model_reads_a_batch_of_the_translation_language(arch: str) -> None:
    from attnlab.data.translation import PAD, encode_batch, sample_pairs, source_vocab, target_vocab

    src_v, tgt_v = source_vocab(), target_vocab()
    batch = encode_batch(sample_pairs(4, (5, 14), seed=0), src_v, tgt_v)
    torch.manual_seed(0)
    model = build_seq2seq(Seq2SeqConfig(arch=arch, src_vocab=src_v.size, tgt_vocab=tgt_v.size,
                                        d_model=16, n_layer=1))
    src, lengths, tgt_in, tgt_out = (torch.from_numpy(a) for a in (
        batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_out))
    logits = model(src, lengths, tgt_in)
    assert logits.shape == (*tgt_in.shape, tgt_v.size)
    assert torch.isfinite(seq2seq_loss(logits, tgt_out, PAD))
