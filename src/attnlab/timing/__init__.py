"""Measuring tools shared by experiments and benchmarks: the attention-cost sweep
(``cost``, ``cost_layer``), a benchmark in interleaved rounds (``rounds``) and the
least-squares fits of exponents (``exponents``)."""
