"""The reference solution of exercise 12, as ``attnlab lab solution 12`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


def induction_weights(n_vocab, n_ctx):
    v, n = n_vocab, n_ctx
    tok, pos, prev, out = (slice(0, v), slice(v, v + n), slice(v + n, 2 * v + n),
                           slice(2 * v + n, 3 * v + n))  # the residual stream's four slots
    d = 3 * v + n
    w = {"E": np.zeros((v, d)), "P": np.zeros((n, d)), "U": np.zeros((d, v))}
    w["E"][:, tok], w["P"][:, pos] = np.eye(v), np.eye(n)
    w["Q1"], w["K1"] = np.zeros((d, n)), np.zeros((d, n))
    w["Q1"][pos] = 20.0 * np.sqrt(n) * np.eye(n)  # query: my position p
    w["K1"][pos] = np.eye(n, k=1)  # key: position j shows up as j + 1, so it matches p = j + 1
    w["V1"], w["O1"] = np.zeros((d, v)), np.zeros((v, d))
    w["V1"][tok], w["O1"][:, prev] = np.eye(v), np.eye(v)  # copy the previous token to "prev"
    w["Q2"], w["K2"] = np.zeros((d, v)), np.zeros((d, v))
    w["Q2"][tok] = 20.0 * np.sqrt(v) * np.eye(v)  # query: my token
    w["K2"][prev] = np.eye(v)  # key: the token before position j
    w["K2"][v] = -2.0  # position 0 saw only itself in block 1: never match it
    w["V2"], w["O2"] = np.zeros((d, v)), np.zeros((v, d))
    w["V2"][tok], w["O2"][:, out] = np.eye(v), np.eye(v)  # copy that token to "out"
    w["U"][out] = 10.0 * np.eye(v)  # read "out" as the next token's logits
    return w
