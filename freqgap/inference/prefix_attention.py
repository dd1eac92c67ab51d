"""Exact attention over [shared prefix; own suffix] without copying the prefix per row.

Softmax attention over the concatenation of two key sets is the log-sum-exp merge of the
attention over each set: with scores s_p (prefix) and s_s (suffix) and m their joint
maximum, softmax([s_p, s_s]) = [exp(s_p - m), exp(s_s - m)] / (sum exp(s_p - m) + sum
exp(s_s - m)), so out = w_p @ V_p + w_s @ V_s with those weights (Hydragen; FlashInfer's
cascade attention). The prefix keys and values are held once, (1, kv_heads, P, D): every
query of the batch meets them in one matrix product per kv head (the batch folded into
the query rows), instead of a (batch, heads, P, D) copy. The products take the model's
dtype (no float32 copy of queries or keys); on CUDA they write float32 scores (the
accumulator's precision), elsewhere scores in the model's dtype; the softmax runs in
float32 and its weights go back to the model's dtype for the products with V.

Positions: every row's prefix holds positions 0..P-1 and its suffix P..P+S-1 (no left
padding), so the causal and local-window masks depend on the query's index only, not on
the row. Right padding needs no mask: a real token never attends to later positions.
"""

from __future__ import annotations

import functools

import torch


def _allowed(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None) -> torch.Tensor:
    """(q, k) bool: key position <= query position and, with a window, within it."""
    diff = q_pos[:, None] - k_pos[None, :]
    ok = diff >= 0
    if window is not None:
        ok &= diff < window
    return ok


@functools.lru_cache(maxsize=None)
def _float32_products(device_type: str, dtype: torch.dtype) -> bool:
    """Whether 16-bit products can be written as float32 here (CUDA's bmm out_dtype):
    the scores then keep the float32 accumulation instead of a 16-bit rounding, as
    attention that upcasts its queries and keys gets, without copying the keys."""
    if device_type != "cuda" or dtype not in (torch.bfloat16, torch.float16):
        return False
    try:
        probe = torch.zeros((1, 2, 8), dtype=dtype, device=device_type)
        torch.bmm(probe, probe.transpose(1, 2), out_dtype=torch.float32)
    except (RuntimeError, TypeError, NotImplementedError):
        return False
    return True


_NO_FLOAT32_PRODUCTS: set[tuple[str, torch.dtype]] = set()   # refused on real operands


def _scores(a: torch.Tensor, b: torch.Tensor, scale: float) -> torch.Tensor:
    """scale * a @ b for 3-d a, b: float32 where the device writes it directly, else in
    the inputs' dtype (the softmax converts)."""
    kind = (a.device.type, a.dtype)
    if _float32_products(*kind) and kind not in _NO_FLOAT32_PRODUCTS:
        try:
            return torch.bmm(a, b, out_dtype=torch.float32).mul_(scale)
        except torch.cuda.OutOfMemoryError:
            raise                            # the caller halves the batch
        except (RuntimeError, NotImplementedError):
            _NO_FLOAT32_PRODUCTS.add(kind)   # e.g. strides the probe did not have
    return torch.bmm(a, b).mul_(scale)


def merged_attention(query: torch.Tensor, suffix_keys: torch.Tensor,
                     suffix_values: torch.Tensor, prefix_keys: torch.Tensor,
                     prefix_values: torch.Tensor, scale: float,
                     window: int | None = None) -> torch.Tensor:
    """Attention of `query` (B, H, q, D) over the shared prefix (1, Hkv, P, D) followed by
    each row's own suffix (B, Hkv, S, D), whose last q entries are the queries' own keys.
    `window`: a local layer's span (query i sees keys j with i - j < window). Returns
    (B, H, q, D) in the query's dtype."""
    batch, heads, q_len, dim = query.shape
    kv_heads, n_prefix = prefix_keys.shape[1], prefix_keys.shape[2]
    n_suffix = suffix_keys.shape[2]
    group = heads // kv_heads
    device = query.device
    q_pos = torch.arange(n_prefix + n_suffix - q_len, n_prefix + n_suffix, device=device)

    # Prefix: (Hkv, G*B*q, D) @ (Hkv, D, P); the batch is folded into the query rows.
    qf = query.reshape(batch, kv_heads, group, q_len, dim).permute(1, 2, 0, 3, 4)
    qf = qf.reshape(kv_heads, group * batch * q_len, dim)
    sp = _scores(qf, prefix_keys[0].transpose(-1, -2), scale)
    sp = sp.view(kv_heads, group, batch, q_len, n_prefix)
    if window is not None and n_prefix and n_prefix + n_suffix > window:
        ok = _allowed(q_pos, torch.arange(n_prefix, device=device), window)
        sp = sp.masked_fill(~ok, float("-inf"))

    # Suffix: (B, Hkv, G*q, D) @ (B, Hkv, D, S), causal (and windowed).
    qs = query.reshape(batch * kv_heads, group * q_len, dim)
    ss = _scores(qs, suffix_keys.transpose(-1, -2).flatten(0, 1), scale)
    ss = ss.view(batch, kv_heads, group, q_len, n_suffix)
    # A single query sees its whole suffix unless a window cuts it (decided without
    # reading the device).
    if q_len > 1 or (window is not None and n_suffix > window):
        ok = _allowed(q_pos, torch.arange(n_prefix, n_prefix + n_suffix, device=device), window)
        ss = ss.masked_fill(~ok, float("-inf"))

    # The merge, in float32: one maximum and one normaliser over both parts.
    sp32 = sp.to(torch.float32).permute(2, 0, 1, 3, 4)          # (B, Hkv, G, q, P), a view
    ss32 = ss.to(torch.float32)
    top = torch.maximum(sp32.amax(-1, keepdim=True) if n_prefix else
                        torch.full_like(ss32[..., :1], float("-inf")),
                        ss32.amax(-1, keepdim=True))
    ep = torch.exp(sp32 - top)
    es = torch.exp(ss32 - top)
    total = ep.sum(-1, keepdim=True) + es.sum(-1, keepdim=True)
    wp = (ep / total).to(query.dtype)                             # (B, Hkv, G, q, P)
    ws = (es / total).to(query.dtype)                             # (B, Hkv, G, q, S)

    wpf = wp.permute(1, 2, 0, 3, 4).reshape(kv_heads, group * batch * q_len, n_prefix)
    out_p = torch.matmul(wpf, prefix_values[0]).view(kv_heads, group, batch, q_len, dim)
    out_s = torch.matmul(ws.reshape(batch, kv_heads, group * q_len, n_suffix), suffix_values)
    out = out_s.view(batch, kv_heads, group, q_len, dim) + out_p.permute(2, 0, 1, 3, 4)
    return out.reshape(batch, heads, q_len, dim)
