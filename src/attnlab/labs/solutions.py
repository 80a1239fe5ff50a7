"""The reference solutions, one self-contained function per exercise (NumPy only).

``attnlab lab solution N`` prints one of these as it stands, so each needs nothing but
``import numpy as np``: no attnlab helper, no other solution. They agree with the package's
float64 reference (``attnlab.reference``), which the checkers compare against; the tests
prove it by running every checker on every solution.
"""

from __future__ import annotations

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # a row of all -inf: exp(-inf) = 0 everywhere
    e = np.exp(x - top)  # every exponent <= 0: nothing overflows
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0.0, total, 1.0)  # a row of all -inf: zeros, not 0/0


def averaging_matrix(n):
    lower = np.tril(np.ones((n, n)))  # row i keeps columns 0..i
    return lower / lower.sum(axis=1, keepdims=True)  # row i: 1/(i+1) on each kept column


def attention(q, k, v, mask=None):
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (..., i, j)
    if mask is not None:
        mask = np.asarray(mask)
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0.0, total, 1.0)  # (..., i, j); a hidden row: zeros
    return weights @ v, weights  # (..., i, d_v), (..., i, j)


def causal_mask(n_query, n_key, dtype=np.float64):
    i = np.arange(n_query)[:, None] + (n_key - n_query)  # queries are the last positions
    j = np.arange(n_key)[None, :]
    return np.where(j <= i, 0.0, -np.inf).astype(dtype)  # (i, j): 0 may attend, -inf not


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_head):
    x = np.asarray(x, dtype=np.float64)
    b, n, d = x.shape
    d_k = d // n_head

    def heads(w):
        return (x @ w.T).reshape(b, n, n_head, d_k).transpose(0, 2, 1, 3)  # (b, h, n, d_k)

    q, k, v = heads(w_q), heads(w_k), heads(w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k)  # (b, h, n, n)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    merged = (weights @ v).transpose(0, 2, 1, 3).reshape(b, n, d)  # (b, n, h * d_k)
    return merged @ w_o.T  # (b, n, d)


def score_statistics(d, scaled, rng, rows=1000, keys=64):
    q = rng.standard_normal((rows, 1, d))  # one query per row
    k = rng.standard_normal((rows, keys, d))  # its keys
    scores = (q * k).sum(axis=-1)  # (rows, keys): q·k
    if scaled:
        scores = scores / np.sqrt(d)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    frozen = (weights.max(axis=-1) > 0.99).mean()  # rows with more than 0.99 on one key
    return float(scores.var()), float(frozen)


def sinusoidal(n, d):
    p = np.arange(n)[:, None]  # (n, 1) positions 0..n-1
    freq = 10000.0 ** (-np.arange(0, d, 2) / d)  # (d/2,) one frequency per pair
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(p * freq)
    pe[:, 1::2] = np.cos(p * freq)
    return pe


def rope(x, positions):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    angle = np.asarray(positions)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)  # (n, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]  # the pairs (2i, 2i+1)
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def attention_backward(q, k, v, dout):
    s = 1.0 / np.sqrt(q.shape[-1])
    scores = q @ k.T * s  # (i, j)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)  # (i, j)
    dv = p.T @ dout  # (j, d_v)
    dp = dout @ v.T  # (i, j)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))  # softmax Jacobian: diag(p) - p pᵀ
    dq = ds @ k * s  # (i, d_k)
    dk = ds.T @ q * s  # (j, d_k)
    return dq, dk, dv


def decode_step(q_new, k_new, v_new, cache_k, cache_v):
    cache_k = np.concatenate([cache_k, k_new], axis=0)  # (t + 1, d): the new token sees itself
    cache_v = np.concatenate([cache_v, v_new], axis=0)
    scores = q_new @ cache_k.T / np.sqrt(q_new.shape[-1])  # (1, t + 1)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ cache_v, cache_k, cache_v  # (1, d_v), (t + 1, d), (t + 1, d_v)


def rnn_backward(w_h, w_x, x, dout):
    t_len = x.shape[0]
    h, prev = np.zeros((t_len, w_h.shape[0])), np.zeros(w_h.shape[0])
    for t in range(t_len):  # the forward: each state waits for the one before
        prev = h[t] = np.tanh(prev @ w_h.T + x[t] @ w_x.T)
    dh = np.zeros_like(h)  # (T, d): dh[t] = ∂loss/∂h_t
    dh[-1] = dout
    for t in range(t_len - 1, 0, -1):  # back through h_t = tanh(h_{t-1} W_hᵀ + x_t W_xᵀ)
        dh[t - 1] = (dh[t] * (1.0 - h[t] ** 2)) @ w_h
    k = np.arange(t_len)  # steps back from the last state
    slope = np.polyfit(k, np.log(np.linalg.norm(dh[::-1], axis=1)), 1)[0]
    return dh, float(np.exp(slope)), (t_len, 1)  # an RNN's T steps against attention's one


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
