"""Reading a Hugging Face folder's weights safely and quietly, or saying in one line why not.

``attnlab.explorer.sources.hf`` shows a folder's attention; this module decides whether
its weights are the model's: safetensors only (a pickled ``pytorch_model.bin``
is never loaded: unpickling runs whatever code the file holds), every tensor
the config calls for present and of its shape (``transformers`` would
otherwise fill missing or mis-shaped ones with random numbers and carry on),
and no encoder passed off as a causal model.

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

from attnlab.errors import DataError, first_line

__all__ = ["check_weight_files", "is_encoder", "load_weights", "quiet_transformers"]

log = logging.getLogger(__name__)

NOT_LOADED = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".h5", ".msgpack", ".gguf")


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
    if lines:
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        log.warning("transformers on %s: %s%s", what, lines[0], more)


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


def check_weight_files(folder: Path) -> None:
    """A DataError unless ``folder`` holds safetensors weights."""
    if any(folder.glob("*.safetensors")):
        return
    others = sorted(p.name for p in folder.iterdir() if p.suffix in NOT_LOADED)
    if any(name.endswith((".bin", ".pt", ".pth", ".ckpt", ".pkl")) for name in others):
        raise DataError(
            f"{folder} holds its weights only as {others[0]}, a pickle, which attnlab never "
            "loads (unpickling can run any code): where you trust the file, convert it with "
            "AutoModelForCausalLM.from_pretrained(DIR).save_pretrained(DIR), which writes "
            "model.safetensors"
        )
    if others:
        raise DataError(f"{folder} holds its weights only as {others[0]}, which attnlab does "
                        "not read: save the model with save_pretrained (model.safetensors)")
    raise DataError(f"{folder} holds no weights (no model.safetensors): save the model there "
                    "with model.save_pretrained")  # fmt: skip




def load_weights(folder: Path, config: Any) -> Any:
    """The folder's causal LM (eager attention, CPU), from safetensors only; a DataError
    if the weights do not fill the model the config describes."""
    from safetensors import SafetensorError
    from transformers import AutoModelForCausalLM

    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            folder, config=config, local_files_only=True, attn_implementation="eager",
            use_safetensors=True, output_loading_info=True,
            ignore_mismatched_sizes=True,  # mis-shaped tensors reported below, not raised
        )  # fmt: skip
    except (OSError, ValueError, RuntimeError, SafetensorError) as err:
        raise DataError(f"the weights in {folder} cannot be loaded: {first_line(err)}") from err
    mismatched = sorted(info.get("mismatched_keys", []), key=str)
    if mismatched:
        name, *shapes = (mismatched[0] if isinstance(mismatched[0], tuple | list) else
                         (mismatched[0],))  # fmt: skip
        detail = f" ({' in the file, '.join(str(tuple(s)) for s in shapes)} in the model)" \
            if len(shapes) == 2 else ""  # fmt: skip
        raise DataError(
            f"the weights in {folder} do not fit its config.json: {len(mismatched)} tensors "
            f"have another shape, e.g. {name}{detail}; save the model and its config together "
            "with save_pretrained"
        )
    missing = sorted(info.get("missing_keys", []))
    if missing:
        raise DataError(
            f"the weights in {folder} do not fit its config.json: {len(missing)} of the model's "
            f"tensors are missing (e.g. {missing[0]}) and would be random; save the model and "
            "its config together with save_pretrained"
        )
    return model
