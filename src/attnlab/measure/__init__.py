"""Measuring tools shared by experiments and benchmarks (the attention-cost sweep)."""
