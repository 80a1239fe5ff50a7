"""The explorer on Hugging Face causal LMs saved in local folders, built offline: tiny random
GPT-2, GPT-Neo, OPT, Llama (grouped keys) and Mistral (sliding window) models with a byte-level
BPE tokenizer trained here; the page's weights against the library's own output_attentions,
the q/k rebuild behind the switches, and one clear line for each folder that cannot be shown."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hf_support import byte_bpe, tiny_configs

from attnlab.cli import main as cli_main
from attnlab.explorer.page.data import head_weights

transformers = pytest.importorskip("transformers")

TEXT = "the cat sat on the mat, the dog sat on the cat"


@pytest.fixture(scope="module")
def tokenizer():
    """A byte-level BPE trained offline, as a PreTrainedTokenizerFast."""
    bpe = byte_bpe([TEXT, "a dog and a cat"], ["<|endoftext|>"])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")


def _configs(vocab: int) -> dict:
    return tiny_configs(transformers, vocab, initializer_range=0.3)


@pytest.fixture(scope="module")
def folders(tmp_path_factory, tokenizer) -> dict[str, Path]:
    """One saved folder per family: a random model and the tokenizer."""
    out = {}
    for name, cfg in _configs(len(tokenizer)).items():
        folder = tmp_path_factory.mktemp(name)
        torch.manual_seed(0)
        transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        out[name] = folder
    return out


def _library_weights(folder: Path, ids: list[int]) -> list[np.ndarray]:
    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, local_files_only=True, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        attn = model(torch.tensor([ids]), output_attentions=True).attentions
    return [a[0].double().numpy() for a in attn]  # (h, t, t) each


@pytest.mark.parametrize("family", ["gpt2", "gpt_neo", "opt", "llama", "mistral"])
def test_page_weights_are_the_librarys_and_the_switches_rebuild_them(family, folders) -> None:
    from attnlab.explorer.sources.hf import hf_compute

    data = hf_compute(folders[family])(TEXT)
    view = data["views"][0]
    assert "fixed" not in view  # q and k rebuilt and checked for every family here
    ids = transformers.AutoTokenizer.from_pretrained(folders[family])(TEXT)["input_ids"]
    expected = _library_weights(folders[family], ids)
    assert len(view["layers"]) == 2 and view["tokens"][:3] == ["the", " cat", " sat"]
    assert data["scale"] is (family != "gpt_neo")  # GPT-Neo does not divide by √d_k
    moved = 0.0
    for layer, lib in zip(view["layers"], expected, strict=True):
        assert len(layer["heads"]) == 4
        for h, head in enumerate(layer["heads"]):
            own = head_weights(head, causal=True, scale=data["scale"], own=True)
            np.testing.assert_allclose(own, lib[h], atol=1e-6)
            rebuilt = head_weights(head, causal=True, scale=data["scale"])
            np.testing.assert_allclose(rebuilt, lib[h], atol=1e-5)
            other = head_weights(head, causal=True, scale=not data["scale"])
            moved = max(moved, float(np.abs(other - lib[h]).max()))
    assert moved > 0.01  # the √d_k switch changes these models' weights
    windows = [head.get("window") for layer in view["layers"] for head in layer["heads"][:1]]
    assert windows == {"gpt_neo": [None, 4], "mistral": [5, 5]}.get(family, [None, None])


def test_families_without_a_q_k_reader_show_the_librarys_weights_with_the_reason(tmp_path,
                                                                                tokenizer) -> None:
    from attnlab.explorer.sources.hf import hf_compute

    cfg = transformers.BloomConfig(vocab_size=len(tokenizer), hidden_size=16, n_layer=2, n_head=2,
                                   bos_token_id=0, eos_token_id=0)  # fmt: skip
    transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    view = hf_compute(tmp_path)(TEXT)["views"][0]
    assert view["fixed"] == ("the explorer has no reader for the q and k of BLOOM models, so the "
                             "weights are the library's own")  # fmt: skip
    assert "Value-weighted attention is not shown" in view["composed"]["note"]
    ids = tokenizer(TEXT)["input_ids"]
    for layer, lib in zip(view["layers"], _library_weights(tmp_path, ids), strict=True):
        for h, head in enumerate(layer["heads"]):
            assert "q" not in head
            np.testing.assert_allclose(head_weights(head, causal=False, scale=False), lib[h],
                                       atol=1e-6)  # fmt: skip


def _save(folder: Path, cfg, tokenizer=None, model: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if model:
        transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
    else:
        cfg.save_pretrained(folder)
    if tokenizer is not None:
        tokenizer.save_pretrained(folder)
    return folder


def test_each_folder_that_cannot_be_shown_gets_one_line_saying_why(tmp_path, tokenizer,
                                                                  capsys) -> None:
    t = transformers
    small = {"vocab_size": len(tokenizer), "bos_token_id": 0, "eos_token_id": 0}
    gpt2 = t.GPT2Config(n_positions=16, n_embd=16, n_layer=1, n_head=2, **small)
    (tmp_path / "empty").mkdir()
    cases = {
        tmp_path / "nowhere": "no model folder at",
        tmp_path / "empty": "holds no config.json: not a Hugging Face model folder",
        _save(tmp_path / "vit", t.ViTConfig(hidden_size=16, num_hidden_layers=1,
              num_attention_heads=2, intermediate_size=32), tokenizer, model=False):  # fmt: skip
            "holds a vit model, which is none of the kinds the explorer shows",
        _save(tmp_path / "notok", gpt2): "has no tokenizer files (tokenizer.json, tokenizer.model",
        _save(tmp_path / "mamba", t.MambaConfig(hidden_size=16, num_hidden_layers=1, state_size=4,
              **small), tokenizer):  # fmt: skip
            "holds a mamba model, which returns no attention weights (output_attentions)",
    }
    out = str(tmp_path / "x")
    for folder, message in cases.items():
        capsys.readouterr()
        assert cli_main.main(["explore", "--hf-model", str(folder), "--out", out]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if "attnlab" in line]
        assert len(err) == 1 and message in err[0], err  # (progress bars of transformers aside)
    assert not (tmp_path / "x").exists()
    ok = str(_save(tmp_path / "ok", gpt2, tokenizer))
    argv = ["explore", "--hf-model", ok, "--text", "the cat " * 9, "--out", out]
    assert cli_main.main(argv) == 2
    assert "the input is 19 tokens; the model's context is 16" in capsys.readouterr().err


def test_token_strings_keep_their_spaces(tokenizer) -> None:
    from attnlab.explorer.sources.hf import hf_token_strings

    ids = tokenizer("the cat  é")["input_ids"]  # é is two byte tokens
    pieces = hf_token_strings(tokenizer, ids)
    assert pieces[:2] == ["the", " cat"] and pieces[-2:] == ["\ufffd", "é"]
    assert "".join(pieces[:-2]) == "the cat  "


def test_show_for_notebooks_takes_folders_runs_and_models(folders, tmp_path) -> None:
    from attnlab.data.synthetic import Vocab
    from attnlab.explorer import ExplorerView, show
    from attnlab.nn.model import LanguageModel
    from attnlab.nn.model_config import ModelConfig

    view = show(folders["opt"], "the cat sat")
    assert isinstance(view, ExplorerView)
    assert view.data["views"][0]["tokens"] == ["the", " cat", " sat"]
    assert view._repr_html_().startswith("<iframe")
    words = Vocab(("the", "cat", "sat"))
    model = LanguageModel(ModelConfig(vocab_size=3, n_ctx=8, d_model=8, n_layer=1, n_head=2))
    assert show(model, "the cat", tokenizer=words).data["views"][0]["tokens"] == ["the", "cat"]
    assert show().data["views"][0]["tokens"][0] == "La"
    for args, kwargs, message in [
        ((model, "the cat"), {}, "needs the tokenizer"),
        ((folders["opt"], " "), {}, "give the sentence"),
        ((tmp_path / "none", "x"), {}, "no folder"),
        ((3.5, "x"), {}, "not a float"),
    ]:
        with pytest.raises(ValueError, match=message):
            show(*args, **kwargs)


@pytest.mark.parametrize("family", ["gpt_neo", "opt", "llama", "mistral"])
def test_value_norms_rebuild_each_layers_attention_output(family, folders, tokenizer) -> None:
    """Σ_h Σ_j α_h[i, j]·f_h(x_j) + b_O is the attention module's output, where f_h(x_j) is
    head h's value of key j through the output map alone; its norms are the value norms."""
    from attnlab.explorer.sources.hf import _attention_modules, hf_traces

    model = transformers.AutoModelForCausalLM.from_pretrained(
        folders[family], local_files_only=True, attn_implementation="eager"
    ).eval()
    ids = tokenizer(TEXT)["input_ids"]
    modules = _attention_modules(model, family)
    seen: dict[int, tuple] = {}

    def keep(i):
        def hook(mod, args, kwargs, out):
            seen[i] = (args[0] if args else kwargs["hidden_states"], out[0])

        return hook

    hooks = [m.register_forward_hook(keep(i), with_kwargs=True) for i, m in enumerate(modules)]
    with torch.no_grad():
        model(torch.tensor([ids]))
    for hook in hooks:
        hook.remove()
    traces, fixed = hf_traces(model, ids)
    assert fixed is None and len(traces) == len(modules) == 2
    for i, (mod, trace) in enumerate(zip(modules, traces, strict=True)):
        x, y = seen[i]
        o = mod.o_proj if hasattr(mod, "o_proj") else mod.out_proj
        h, t = trace.weights.shape[:2]
        e = o.in_features // h
        with torch.no_grad():
            v = mod.v_proj(x)[0].double()  # (t, g·e)
        per_group = h // (v.shape[-1] // e)
        f = np.zeros((h, t, o.out_features))
        for head in range(h):
            group = head // per_group
            for j in range(t):
                alone = torch.zeros(h * e, dtype=torch.float64)
                alone[head * e : (head + 1) * e] = v[j, group * e : (group + 1) * e]
                f[head, j] = (alone @ o.weight.detach().double().T).numpy()
        out = np.einsum("hij,hjc->ic", trace.weights, f)
        if o.bias is not None:
            out += o.bias.detach().double().numpy()
        np.testing.assert_allclose(out, y[0].double().numpy(), atol=1e-5)
        np.testing.assert_allclose(trace.value_norms, np.linalg.norm(f, axis=-1), rtol=1e-9)


class _Payload:
    """Unpickling this creates a file: proof that a pickle was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_folders_whose_weights_are_not_the_models_get_one_line_and_exit_2(tmp_path, tokenizer,
                                                                         capsys) -> None:
    """No weights, only a pickle (never unpickled), weights of another shape and weights of
    another model (the missing tensors would be random): exactly one line on stderr each,
    exit 2, nothing written. (A BERT encoder is shown: tests/test_explorer_hf_seq.py.)"""
    import pickle

    t = transformers
    small = {"vocab_size": len(tokenizer), "bos_token_id": 0, "eos_token_id": 0}
    gpt2 = t.GPT2Config(n_positions=16, n_embd=16, n_layer=1, n_head=2, **small)
    wide = t.GPT2Config(n_positions=16, n_embd=32, n_layer=1, n_head=2, **small)
    opt = t.OPTConfig(max_position_embeddings=16, hidden_size=16, num_hidden_layers=1,
                      num_attention_heads=2, ffn_dim=32, word_embed_proj_dim=16, **small)
    pickled = _save(tmp_path / "pickled", gpt2, tokenizer, model=False)
    marker = tmp_path / "unpickled"
    (pickled / "pytorch_model.bin").write_bytes(pickle.dumps(_Payload(marker)))
    shapes = _save(tmp_path / "shapes", wide, tokenizer)
    gpt2.save_pretrained(shapes)  # the config of a narrower model over the wider weights
    other = _save(tmp_path / "other", opt, tokenizer)
    gpt2.save_pretrained(other)  # OPT's tensors under a GPT-2 config
    cases = {
        _save(tmp_path / "none", gpt2, tokenizer, model=False): "holds no weights",
        pickled: "holds its weights only as pytorch_model.bin, a pickle, which attnlab never "
                 "loads",
        shapes: "do not fit its config.json: 16 tensors have another shape, e.g. ",
        other: "tensors are missing (e.g. lm_head.weight) and would be random",
    }
    out = tmp_path / "page.html"
    for path, message in cases.items():
        capsys.readouterr()
        assert cli_main.main(["explore", "--hf-model", str(path), "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("attnlab: error: ") and message in err[0], err
    assert not out.exists() and not marker.exists()


def test_a_good_folder_prints_no_progress_bar_and_its_config_warnings_in_one_line(
        tmp_path, tokenizer) -> None:
    """GPT-2's default bos/eos ids (50256) outside a small vocabulary make transformers warn
    twice, with a progress bar besides: one line of warning remains."""
    cfg = transformers.GPT2Config(n_positions=32, n_embd=16, n_layer=1, n_head=2,
                                  vocab_size=len(tokenizer))  # fmt: skip
    import subprocess
    import sys

    folder = _save(tmp_path / "gpt2", cfg, tokenizer)
    out = tmp_path / "page.html"
    code = "import sys; from attnlab.cli.main import main; sys.exit(main(sys.argv[1:]))"
    # a fresh process: transformers warns about a config once per process
    proc = subprocess.run([sys.executable, "-c", code, "explore", "--hf-model", str(folder),
                           "--text", "the cat", "--out", str(out)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 0 and len(err) == 1, proc.stderr
    assert err[0].startswith(f"transformers on {folder}: Model config: bos_token_id") and \
        err[0].endswith("(and 1 more)"), err  # fmt: skip
    assert "it/s" not in proc.stderr and out.is_file()
