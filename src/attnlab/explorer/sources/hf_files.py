"""Reading a Hugging Face folder safely and quietly, or saying in one line why not: its
config (and what kind of model it describes), its tokenizer, its weights.

``attnlab.explorer.sources.hf`` and ``hf_seq`` show a folder's attention; this module
decides what the folder holds (``model_kind``: a causal language model, an encoder, or an
encoder–decoder) and whether its weights are the model's: safetensors only (a pickled
``pytorch_model.bin`` is never loaded: unpickling runs whatever code the file holds), every
tensor the config calls for present and of its shape (``transformers`` would otherwise fill
missing or mis-shaped ones with random numbers and carry on), and no encoder passed off as
a causal model.

While it loads, transformers' progress bars are off and its log records are
gathered (``quiet_transformers``): a warning caused by the folder's own
config becomes one line of attnlab's log instead of a screenful. Left out:
sharded pickles, GGUF and other formats; tensors of the right names and
shapes that are random all the same (no file says so).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attnlab.errors import DataError, Said, first_line, require

__all__ = [
    "KINDS",
    "TOKENIZER_FILES",
    "check_tokenizer_files",
    "check_weight_files",
    "hf_token_strings",
    "is_encoder",
    "load_tokenizer",
    "load_weights",
    "model_kind",
    "quiet_transformers",
    "read_config",
]

log = logging.getLogger(__name__)

NOT_LOADED = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".h5", ".msgpack", ".gguf")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "vocab.json", "vocab.txt",
                   "sentencepiece.bpe.model", "tokenizer.tiktoken")  # fmt: skip
# how each kind of model is loaded (transformers' Auto class)
KINDS = {"causal": "AutoModelForCausalLM", "encoder": "AutoModel",
         "encoder-decoder": "AutoModelForSeq2SeqLM"}  # fmt: skip


class _Gather(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().strip()
        if text:
            self.lines.append(text.splitlines()[0])


@contextlib.contextmanager
def quiet_transformers(what: str) -> Iterator[None]:
    """transformers' progress bars off and its warnings (log records and ``warnings``)
    gathered while the block runs; then one ``log.warning`` line if there were any.
    Everything is restored afterwards (no process-wide switch is left behind)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    root = logging.getLogger("transformers")
    handlers, propagate = root.handlers[:], root.propagate
    gather = _Gather()
    hf_logging.disable_progress_bar()
    root.handlers, root.propagate = [gather], False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        root.handlers, root.propagate = handlers, propagate
        if bars:
            hf_logging.enable_progress_bar()
    lines = gather.lines + [str(w.message).strip().splitlines()[0] for w in caught
                            if str(w.message).strip()]  # fmt: skip
    if len(lines) > 1:  # a template each, so that a language says "and N more" its way
        log.warning("transformers on %s: %s (and %d more)", what, lines[0], len(lines) - 1)
    elif lines:
        log.warning("transformers on %s: %s", what, lines[0])


def is_encoder(config: Any) -> bool:
    """Whether ``config`` is of a family that is an encoder unless told it is a decoder
    (BERT, RoBERTa, ELECTRA…: their causal-LM class needs ``is_decoder=True``)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    both = config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and \
        config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES  # fmt: skip
    return both and not (getattr(config, "is_decoder", False) or getattr(config, "causal", False))


def model_kind(config: Any) -> str | None:
    """How the explorer reads a model of ``config``: ``causal`` (GPT-2, OPT, Llama…),
    ``encoder`` (BERT, RoBERTa, DistilBERT…: a text encoder that is no decoder) or
    ``encoder-decoder`` (T5, BART, Marian…: text to text); None for any other (no text
    model transformers' ``KINDS`` load: vision, speech, …)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    name = config.model_type
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder" if name in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES else None
    if is_encoder(config) or (name in MODEL_FOR_MASKED_LM_MAPPING_NAMES
                              and name not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES):
        return "encoder"
    return "causal" if name in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES else None


def read_config(folder: Path) -> Any:
    """The folder's config as transformers reads it; a DataError if there is none to read."""
    if not folder.is_dir():
        raise DataError("no model folder at %s", folder)
    if not (folder / "config.json").is_file():
        raise DataError("%s holds no config.json: not a Hugging Face model folder (write one "
                        "with save_pretrained)", folder)  # fmt: skip
    transformers = require("transformers", "hf", "reading a Hugging Face folder")
    try:
        return transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError) as err:
        raise DataError("%s/config.json cannot be read by transformers: %s", folder,
                        first_line(err)) from err


def check_tokenizer_files(folder: Path, needs: Said | None = None) -> None:
    """A DataError unless ``folder`` holds a tokenizer; ``needs`` says what for (``an
    encoder–decoder reads its source and writes its target with it``), a ``Said`` with its
    own ``error`` entry, so that the error is said in the user's language."""
    if any((folder / name).is_file() for name in TOKENIZER_FILES):
        return
    files = ", ".join(TOKENIZER_FILES[:4])
    if needs:
        raise DataError("%s has no tokenizer files (%s, …): %s: save the tokenizer beside the "
                        "model with tokenizer.save_pretrained", folder, files, needs)
    raise DataError("%s has no tokenizer files (%s, …): save the tokenizer beside the model "
                    "with tokenizer.save_pretrained", folder, files)


def load_tokenizer(folder: Path) -> Any:
    """The folder's tokenizer (``AutoTokenizer``); a DataError if it turns text into nothing."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    if not tokenizer("a b")["input_ids"]:
        raise DataError("the tokenizer in %s turns text into no tokens: its files are "
                        "incomplete (save it again with tokenizer.save_pretrained)",
                        folder)  # fmt: skip
    return tokenizer


def hf_token_strings(tokenizer: Any, ids: list[int]) -> list[str]:
    """One display string per id, spaces included (`` cat``): what decoding the ids up to it
    adds to the text. A character split over several tokens shows as ``�`` on all but the
    token that completes it."""
    out, before = [], ""
    for i in range(len(ids)):
        text = tokenizer.decode(ids[: i + 1])
        same = 0  # characters the text shares with the text before (a completed � changes)
        while same < min(len(text), len(before)) and text[same] == before[same]:
            same += 1
        out.append(text[same:] if same == len(before) else text[same:] or "\ufffd")
        before = text
    return out


def check_weight_files(folder: Path, kind: str = "causal") -> None:
    """A DataError unless ``folder`` holds safetensors weights (of a model of ``kind``)."""
    if any(folder.glob("*.safetensors")):
        return
    others = sorted(p.name for p in folder.iterdir() if p.suffix in NOT_LOADED)
    if any(name.endswith((".bin", ".pt", ".pth", ".ckpt", ".pkl")) for name in others):
        raise DataError(
            "%s holds its weights only as %s, a pickle, which attnlab never loads (unpickling "
            "can run any code): where you trust the file, convert it with "
            "%s.from_pretrained(DIR).save_pretrained(DIR), which writes model.safetensors",
            folder, others[0], KINDS[kind],
        )
    if others:
        raise DataError("%s holds its weights only as %s, which attnlab does not read: save "
                        "the model with save_pretrained (model.safetensors)", folder, others[0])
    raise DataError("%s holds no weights (no model.safetensors): save the model there with "
                    "model.save_pretrained", folder)  # fmt: skip


def load_weights(folder: Path, config: Any, kind: str = "causal") -> Any:
    """The folder's model of ``kind`` (``KINDS``; eager attention, CPU), from safetensors
    only; a DataError if the weights do not fill the model the config describes.

    An encoder is loaded without a head; its pooler, if its file has none (a
    ``BertForMaskedLM``), is the one part allowed to stay random: it comes after every
    attention layer and the explorer never reads it."""
    import transformers
    from safetensors import SafetensorError

    try:
        model, info = getattr(transformers, KINDS[kind]).from_pretrained(
            folder, config=config, local_files_only=True, attn_implementation="eager",
            use_safetensors=True, output_loading_info=True,
            ignore_mismatched_sizes=True,  # mis-shaped tensors reported below, not raised
        )  # fmt: skip
    except (OSError, ValueError, RuntimeError, SafetensorError) as err:
        raise DataError("the weights in %s cannot be loaded: %s", folder, first_line(err)) from err
    mismatched = sorted(info.get("mismatched_keys", []), key=str)
    if mismatched:
        name, *shapes = (mismatched[0] if isinstance(mismatched[0], tuple | list) else
                         (mismatched[0],))  # fmt: skip
        if len(shapes) == 2:
            raise DataError(
                "the weights in %s do not fit its config.json: %s tensors have another shape, "
                "e.g. %s (%s in the file, %s in the model); save the model and its config "
                "together with save_pretrained", folder, len(mismatched), name,
                str(tuple(shapes[0])), str(tuple(shapes[1])),
            )
        raise DataError(
            "the weights in %s do not fit its config.json: %s tensors have another shape, e.g. "
            "%s; save the model and its config together with save_pretrained", folder,
            len(mismatched), name,
        )
    missing = sorted(k for k in info.get("missing_keys", [])
                     if not (kind == "encoder" and k.startswith("pooler.")))  # fmt: skip
    if missing:
        raise DataError(
            "the weights in %s do not fit its config.json: %s of the model's tensors are "
            "missing (e.g. %s) and would be random; save the model and its config together "
            "with save_pretrained", folder, len(missing), missing[0],
        )
    return model
