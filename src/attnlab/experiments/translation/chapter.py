"""The chapter's part of "Where attention was born": the published shape of Bahdanau et al.
2015, Fig. 2, in words only (``attnlab.kit.chapter``); no figure of it is copied here."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter

CHAPTER = Chapter(budget="none of its own: it cites Bahdanau et al. 2015, Fig. 2 (English → "
                         "French, BLEU against sentence length): without attention the score "
                         "falls as the sentences grow; with attention (RNNsearch-50, trained "
                         "on sentences of up to 50 words) it holds to 50 words and past them. "
                         "Their models: 1,000 hidden units, 348M words, about five days of "
                         "training per model; here a synthetic language and three models "
                         "matched in parameters (the full profile: width 64, 2,000 updates "
                         "of 64 pairs)")
