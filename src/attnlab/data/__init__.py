"""attnlab.data: the corpus, its tokenizer and split, perplexity, and synthetic languages.

- ``cache``      where rebuildable files live (``$ATTNLAB_CACHE``).
- ``corpus``     Tiny Shakespeare: found, checksummed, or downloaded once.
- ``tokenizer``  byte-level BPE (vocabulary 1,024) trained by ``tokenizers``, cached.
- ``dataset``    token arrays, the 90/10 split, random training windows.
- ``perplexity`` exp(mean NLL) over a whole split in non-overlapping windows.
- ``synthetic``  the Winograd referent and verb-agreement languages.
- ``translation`` English → Spanish with gold alignments, for the encoder–decoders.
"""

from attnlab.data.cache import cache_dir
from attnlab.data.corpus import CorpusError, read_corpus, resolve_corpus
from attnlab.data.dataset import TokenData, load_token_data, sample_batch, split_tokens
from attnlab.data.perplexity import nll_sum_and_count, perplexity, train_eval_slice
from attnlab.data.synthetic import (
    VerbAgreementData,
    Vocab,
    WinogradData,
    forced_choice_accuracy,
    top1_accuracy,
    verb_agreement_dataset,
    winograd_dataset,
)
from attnlab.data.tokenizer import BPETokenizer, get_tokenizer

__all__ = [
    "BPETokenizer",
    "CorpusError",
    "TokenData",
    "VerbAgreementData",
    "Vocab",
    "WinogradData",
    "cache_dir",
    "forced_choice_accuracy",
    "get_tokenizer",
    "load_token_data",
    "nll_sum_and_count",
    "perplexity",
    "read_corpus",
    "resolve_corpus",
    "sample_batch",
    "split_tokens",
    "top1_accuracy",
    "train_eval_slice",
    "verb_agreement_dataset",
    "winograd_dataset",
]
