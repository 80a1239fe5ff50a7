"""The explorer on Hugging Face encoders and encoder–decoders saved in local folders, built
offline: a tiny random BERT (saved as BertForMaskedLM, without a pooler), BART, Marian and T5,
with a byte-level BPE tokenizer trained here that closes each text with ``</s>``. Each loads
through ``explore --hf-model``'s own path; the page's views, their kinds and shapes; the
weights shown against the library's own output_attentions; the q, k (and T5's position bias)
behind the switches; the target, given or greedy; one line for each misuse; and the page in
headless Chromium."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from explorer_support import browser_fixture, browser_marks, numbers, page_fixture  # noqa: F401
from hf_support import byte_bpe

from attnlab.cli import main as cli_main
from attnlab.explorer.page.data import head_weights

transformers = pytest.importorskip("transformers")

SOURCE = "the cat sat on the mat"
TARGET = "a dog and a cat"
SEQ = ("bart", "marian", "t5")  # the encoder–decoders tried


@pytest.fixture(scope="module")
def tokenizer():
    """A byte-level BPE trained offline whose every text ends in ``</s>`` (as T5's, Marian's)."""
    from tokenizers import processors

    bpe = byte_bpe([SOURCE, TARGET, "the dog sat on a cat"], ["<pad>", "</s>", "<s>", "<unk>"])
    bpe.post_processor = processors.TemplateProcessing(single="$A </s>",
                                                       special_tokens=[("</s>", 1)])  # fmt: skip
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, pad_token="<pad>", eos_token="</s>", bos_token="<s>",
        unk_token="<unk>",
    )  # fmt: skip


def _configs(vocab: int) -> dict:
    t = transformers
    ids = {"vocab_size": vocab, "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2}
    layers = {"encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
              "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
              "d_model": 32, "max_position_embeddings": 64, "init_std": 0.3}  # fmt: skip
    return {
        "bert": t.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, max_position_embeddings=64,
                             initializer_range=0.3, **ids),
        "bart": t.BartConfig(decoder_start_token_id=1, forced_eos_token_id=None, **layers, **ids),
        "marian": t.MarianConfig(decoder_start_token_id=0, decoder_vocab_size=vocab, **layers,
                                 **ids),
        "t5": t.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                         num_heads=4, relative_attention_num_buckets=8, decoder_start_token_id=0,
                         initializer_factor=2.0, **ids),
    }  # fmt: skip


@pytest.fixture(scope="module")
def folders(tmp_path_factory, tokenizer) -> dict[str, Path]:
    """One saved folder per family: a random model and the tokenizer."""
    out = {}
    for name, cfg in _configs(len(tokenizer)).items():
        folder = tmp_path_factory.mktemp(name)
        torch.manual_seed(0)
        cls = transformers.BertForMaskedLM if name == "bert" else \
            transformers.AutoModelForSeq2SeqLM  # fmt: skip
        (cls(cfg) if name == "bert" else cls.from_config(cfg)).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        out[name] = folder
    return out


def _library(folder: Path, ids: list[int], decoder_ids: list[int] | None = None) -> dict:
    """The library's own weights, (h, t, s) per layer, by kind of attention."""
    auto = transformers.AutoModel if decoder_ids is None else transformers.AutoModelForSeq2SeqLM
    model = auto.from_pretrained(folder, local_files_only=True, attn_implementation="eager")
    inputs = {"input_ids": torch.tensor([ids])}
    if decoder_ids is not None:
        inputs["decoder_input_ids"] = torch.tensor([decoder_ids])
    with torch.no_grad():
        out = model.eval()(**inputs, output_attentions=True)
    kinds = {"encoder": out.attentions} if decoder_ids is None else {
        "encoder": out.encoder_attentions, "decoder": out.decoder_attentions,
        "cross": out.cross_attentions}  # fmt: skip
    return {kind: [a[0].double().numpy() for a in w] for kind, w in kinds.items()}


def _check_heads(view: dict, library: list[np.ndarray], scale: bool) -> None:
    """Each head's own weights are the library's, and so is softmax(q·kᵀ·scale + bias) under
    the view's own mask, whatever the causal switch says."""
    assert len(view["layers"]) == len(library) == 2
    for layer, lib in zip(view["layers"], library, strict=True):
        assert len(layer["heads"]) == 4
        for h, head in enumerate(layer["heads"]):
            np.testing.assert_allclose(np.asarray(head["weights"]), lib[h], atol=1e-6)
            for causal in (False, True):
                rebuilt = head_weights(head, causal=causal, scale=scale,
                                       attends=view["attends"])  # fmt: skip
                np.testing.assert_allclose(rebuilt, lib[h], atol=1e-5)


def test_an_encoder_is_one_bidirectional_view_of_the_librarys_weights(folders, tokenizer) -> None:
    from attnlab.explorer.sources.hf import hf_compute

    data = hf_compute(folders["bert"])(SOURCE)
    (view,) = data["views"]
    ids = tokenizer(SOURCE)["input_ids"]
    assert view["name"] == "encoder self-attention" and view["attends"] == "bidirectional"
    assert view["tokens"] == ["the", " cat", " sat", " on", " the", " mat", "</s>"]
    assert "fixed" not in view and "sources" not in view and data["scale"] is True
    _check_heads(view, _library(folders["bert"], ids)["encoder"], scale=True)
    upper = [np.triu(np.asarray(h["weights"]), 1).max() for h in view["layers"][0]["heads"]]
    assert min(upper) > 0.01  # every token looks at later tokens too
    assert len(view["composed"]["value_weighted"]) == 2  # BERT's values read
    assert "BERT encoder" in data["description"] and "whole input at once" in data["description"]


@pytest.mark.parametrize("family", SEQ)
def test_an_encoder_decoder_is_three_views_of_the_librarys_weights(family, folders,
                                                                   tokenizer) -> None:
    from attnlab.explorer.sources.hf import hf_compute

    data = hf_compute(folders[family], target=TARGET)(SOURCE)
    ids = tokenizer(SOURCE)["input_ids"]
    start = 1 if family == "bart" else 0
    decoder_ids = [start, *tokenizer(TARGET)["input_ids"][:-1]]  # the closing </s> not read
    encoder, decoder, cross = data["views"]
    assert [v["name"] for v in data["views"]] == ["encoder self-attention",
                                                  "decoder self-attention", "cross-attention"]
    assert [v["attends"] for v in data["views"]] == ["bidirectional", "causal", "cross"]
    n, t = len(ids), len(decoder_ids)
    assert encoder["tokens"] == cross["sources"] and len(encoder["tokens"]) == n
    assert decoder["tokens"] == cross["tokens"] and len(decoder["tokens"]) == t
    assert decoder["tokens"][1:] == ["a", " dog", " and", " a", " cat"]
    assert "sources" not in encoder and "sources" not in decoder
    assert "composed" in encoder and "composed" not in decoder and "composed" not in cross
    head = cross["layers"][1]["heads"][2]
    assert np.shape(head["q"]) == (t, 8) and np.shape(head["k"]) == (n, 8)
    assert np.shape(head["weights"]) == (t, n)
    assert all("fixed" not in v for v in data["views"])
    assert data["scale"] is (family != "t5")  # T5 does not divide by √d_k
    library = _library(folders[family], ids, decoder_ids)
    for view, kind in zip(data["views"], ("encoder", "decoder", "cross"), strict=True):
        _check_heads(view, library[kind], scale=data["scale"])
        has_bias = ["bias" in h for layer in view["layers"] for h in layer["heads"]]
        assert all(has_bias) is (family == "t5" and kind != "cross") and any(has_bias) is all(
            has_bias)  # T5's relative positions; none across
    assert "read teacher-forced" in data["description"]


def test_without_a_target_the_decoder_reads_the_models_greedy_output(folders, tokenizer) -> None:
    from attnlab.explorer.sources.hf import hf_compute
    from attnlab.explorer.sources.hf_seq import GREEDY_TOKENS

    data = hf_compute(folders["t5"])(SOURCE)
    ids = tokenizer(SOURCE)["input_ids"]
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(folders["t5"]).eval()
    with torch.no_grad():
        greedy = model.generate(torch.tensor([ids]), do_sample=False, num_beams=1,
                                max_new_tokens=GREEDY_TOKENS)[0].tolist()  # fmt: skip
    rows = greedy[:-1] if greedy[-1] == 1 else greedy
    encoder, decoder, cross = data["views"]
    assert len(decoder["tokens"]) == len(rows) == len(cross["tokens"]) and 1 < len(rows)
    assert len(rows) <= GREEDY_TOKENS + 1
    assert "greedy output (at most 40 new tokens)" in data["description"]
    library = _library(folders["t5"], ids, rows)
    _check_heads(cross, library["cross"], scale=False)


@pytest.mark.parametrize("family", ["bert", "bart", "t5"])
def test_encoder_value_norms_rebuild_the_attention_output(family, folders, tokenizer) -> None:
    """Σ_h Σ_j α_h[i, j]·f_h(x_j) (+ the output map's bias) is the attention's output, where
    f_h(x_j) is head h's value of key j through the output map alone; its norms are the
    value norms the value-weighted view reads."""
    from attnlab.explorer.sources.hf_seq import seq_traces

    auto = transformers.AutoModel if family == "bert" else transformers.AutoModelForSeq2SeqLM
    model = auto.from_pretrained(folders[family], attn_implementation="eager").eval()
    ids = tokenizer(SOURCE)["input_ids"]
    encoder = model if family == "bert" else model.get_encoder()
    first = encoder.encoder.layer[0].attention if family == "bert" else \
        encoder.block[0].layer[0].SelfAttention if family == "t5" else \
        encoder.layers[0].self_attn  # fmt: skip
    mod = first.self if family == "bert" else first
    v, o = (mod.value, first.output.dense) if family == "bert" else \
        (mod.v_proj, mod.out_proj) if family == "bart" else (mod.v, mod.o)  # fmt: skip
    seen = {}
    mod.register_forward_hook(lambda m, a, k, out: seen.update(x=a[0] if a else
                                                                k["hidden_states"], y=out[0]),
                              with_kwargs=True)  # fmt: skip
    traces, fixed = seq_traces(model, ids, None if family == "bert" else ids[:3])["encoder"]
    assert fixed is None
    trace = traces[0]
    with torch.no_grad():
        values = v(seen["x"])[0].double()  # (s, h·e)
        y = seen["y"][0].double()  # (t, h·e) for BERT (before its output map), (t, c) else
        if family == "bert":
            y = o(seen["y"])[0].double()
    h, s = trace.value_norms.shape
    e = values.shape[-1] // h
    w_o = o.weight.detach().double()  # (c, h·e)
    f = torch.stack([values[:, i * e:(i + 1) * e] @ w_o[:, i * e:(i + 1) * e].T
                     for i in range(h)]).numpy()  # (h, s, c)
    out = np.einsum("hij,hjc->ic", trace.weights, f)
    if o.bias is not None:
        out += o.bias.detach().double().numpy()
    np.testing.assert_allclose(out, y.numpy(), atol=1e-5)
    np.testing.assert_allclose(trace.value_norms, np.linalg.norm(f, axis=-1), rtol=1e-9)


def test_spanish_names_the_views_and_the_target(folders) -> None:
    from attnlab.explorer.sources.hf import hf_compute

    data = hf_compute(folders["marian"], target=TARGET, lang="es")(SOURCE)
    assert [v["name"] for v in data["views"]] == ["autoatención del codificador",
                                                  "autoatención del decodificador",
                                                  "atención cruzada"]  # fmt: skip
    assert "origen" in data["description"] and "destino" in data["description"]
    assert data["views"][0]["layers"][0]["heads"][0]["name"] == "cabeza 1"


def test_the_cli_writes_the_page_of_an_encoder_and_of_an_encoder_decoder(folders, tmp_path,
                                                                          capsys) -> None:
    from explorer_support import page_data

    for family, extra in (("bert", []), ("bart", ["--target", TARGET]), ("t5", ["--lang", "es"])):
        out = tmp_path / f"{family}.html"
        argv = ["explore", "--hf-model", str(folders[family]), "--text", SOURCE, "--out",
                str(out), *extra]  # fmt: skip
        assert cli_main.main(argv) == 0, capsys.readouterr().err
        data = page_data(out.read_text(encoding="utf-8"))
        assert len(data["views"]) == (1 if family == "bert" else 3)
        assert data["views"][-1]["attends"] == ("bidirectional" if family == "bert" else "cross")
    assert "atención cruzada" in data["views"][2]["name"] and "voraz" in data["description"]


def _save_config(folder: Path, cfg, tokenizer=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cfg.save_pretrained(folder)
    if tokenizer is not None:
        tokenizer.save_pretrained(folder)
    return folder


def test_each_misuse_gets_one_line_saying_what_to_do(folders, tmp_path, tokenizer,
                                                     capsys) -> None:
    """An encoder–decoder without its tokenizer, --target for a model without a decoder or
    without --hf-model, and a folder of no kind the explorer shows: one line each, exit 2."""
    t = transformers
    gpt2 = tmp_path / "gpt2"
    t.AutoModelForCausalLM.from_config(t.GPT2Config(
        n_positions=16, n_embd=16, n_layer=1, n_head=2, vocab_size=len(tokenizer), bos_token_id=0,
        eos_token_id=0)).save_pretrained(gpt2)  # fmt: skip
    tokenizer.save_pretrained(gpt2)
    bare = _save_config(tmp_path / "bare", _configs(len(tokenizer))["t5"])
    vit = _save_config(tmp_path / "vit", t.ViTConfig(hidden_size=16, num_hidden_layers=1,
                                                     num_attention_heads=2, intermediate_size=32))
    out = tmp_path / "page.html"
    cases = [
        (["--hf-model", str(bare)], "has no tokenizer files (tokenizer.json, tokenizer.model, "
         "spiece.model, vocab.json, …): an encoder–decoder reads its source and writes its "
         "target with it: save the tokenizer beside the model"),
        (["--hf-model", str(gpt2), "--target", TARGET], "holds a causal language model (GPT-2), "
         "which has no decoder to read a target: --target is for encoder–decoders"),
        (["--hf-model", str(folders["bert"]), "--target", TARGET], "holds an encoder (BERT)"),
        (["--target", TARGET], "--target only goes with --hf-model"),
        (["--hf-model", str(vit)], "holds a vit model, which is none of the kinds the explorer "
         "shows: a causal language model"),
    ]  # fmt: skip
    for argv, message in cases:
        capsys.readouterr()
        assert cli_main.main(["explore", *argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("attnlab: error: ") and message in err[0], err
    assert not out.exists()
    capsys.readouterr()
    argv = ["explore", "--target", TARGET, "--out", str(out), "--lang", "es"]
    assert cli_main.main(argv) == 2
    assert "--target solo va con --hf-model" in capsys.readouterr().err


@browser_marks[0]
@browser_marks[1]
def test_the_encoder_decoder_page_renders_its_three_views_in_chromium(folders, tmp_path,
                                                                      page) -> None:
    """A T5 page written by the CLI's path: each view opens with its tokens as rows and its
    keys as columns (the source, in cross-attention), its kind beside its name, the causal
    switch greyed out, and the grid the weights head_weights computes from the page's data."""
    from attnlab.explorer import write_page
    from attnlab.explorer.page.data import view_attends
    from attnlab.explorer.sources.hf import hf_compute

    data = hf_compute(folders["t5"], target=TARGET)(SOURCE)
    url = write_page(data, tmp_path / "t5.html").as_uri()
    names = ["encoder self-attention (bidirectional)", "decoder self-attention (causal)",
             "cross-attention (cross)"]  # fmt: skip
    for v, (view, kind) in enumerate(zip(data["views"], ("bidirectional", "causal", "cross"),
                                         strict=True)):  # fmt: skip
        page.goto(f"{url}#view=head&sentence={v + 1}&layer=2&head=3")
        rows = [t.replace(" ", "·") for t in view["tokens"]]  # spaces shown as the page does
        keys = [t.replace(" ", "·") for t in view.get("sources", view["tokens"])]
        options = page.get_by_test_id("view-select").locator("option").all_text_contents()
        assert options == names
        assert page.get_by_test_id("view-kind").text_content() == f"attention: {kind}"
        assert page.locator('[data-testid="query-head"]').all_text_contents() == rows
        assert page.locator('[data-testid="key-head"]').all_text_contents() == keys
        assert page.get_by_test_id("causal").is_disabled()
        w = np.array(numbers(page, "cell")).reshape(len(rows), len(keys))
        head = view["layers"][1]["heads"][2]
        expected = head_weights(head, causal=False, scale=data["scale"], own=True,
                                attends=view_attends(view))  # fmt: skip
        np.testing.assert_allclose(w, expected, atol=1e-12)
    assert all(u.startswith("file://") for u in page.requests)  # nothing from the network
