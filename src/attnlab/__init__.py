"""attnlab: a laboratory for attention and the transformer block.

The package is laid out by the parts of the idea:

- ``attnlab.reference``  NumPy float64 reference of attention, masks, positions.
- ``attnlab.nn``         PyTorch modules: mixers, positions, blocks, the model.
- ``attnlab.data``       corpus, tokenizer, split, perplexity, synthetic languages.
- ``attnlab.train``      the trainer, checkpoints, run directories.
- ``attnlab.lab``        the machinery: runner, executors, registry, claims, seed rounds.
- ``attnlab.experiments`` one module per experiment, and its own measuring helpers.
- ``attnlab.timing``    measuring tools shared with the benchmarks (attention cost).
- ``attnlab.suite``      the one pipeline: plan, train, analyse, claims, extra round.
- ``attnlab.report``     the one-command report.
- ``attnlab.explorer``   the attention explorer page.
- ``attnlab.cli``        the ``attnlab`` command.
"""

__version__ = "0.1.0"
