"""Batch size from the accelerator's free memory.

With the shots' keys and values held once (freqgap.inference.shared_prefix), a row costs
its own suffix's keys and values plus one layer's activations while its tokens pass;
the prefix is paid once. The estimate errs high (every activation of a layer counted
at once, the attention scores in both dtypes); an out-of-memory error still halves the
batch (generate.Generator._adaptive). On the CPU the configured batch size is used.
"""

from __future__ import annotations

import torch

SHARE = 0.85      # of the free memory a batch may plan to use


def free_bytes(device: torch.device) -> int | None:
    """Memory a batch can use on `device`: free plus cached-but-unused; None off CUDA."""
    if device.type != "cuda":
        return None
    free, _ = torch.cuda.mem_get_info(device)
    return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)


def _shape(config) -> dict[str, int]:
    cfg = config.get_text_config()
    hidden = cfg.hidden_size
    heads = cfg.num_attention_heads
    inner = (getattr(cfg, "intermediate_size", None) or getattr(cfg, "n_inner", None)
             or 4 * hidden)
    return {"layers": cfg.num_hidden_layers, "hidden": hidden, "heads": heads,
            "kv_heads": getattr(cfg, "num_key_value_heads", None) or heads,
            "head_dim": getattr(cfg, "head_dim", None) or hidden // heads,
            "inner": inner, "vocab": cfg.vocab_size}


def kv_bytes_per_token(config, dtype: torch.dtype) -> int:
    """Keys and values of one token over all layers."""
    s = _shape(config)
    return 2 * s["layers"] * s["kv_heads"] * s["head_dim"] * dtype.itemsize


def row_bytes(config, dtype: torch.dtype, tokens: int, new_tokens: int, attended: int) -> int:
    """Peak bytes one row adds: its K/V for `tokens` + `new_tokens` positions, and one
    layer's activations for `tokens` queries over `attended` keys (scores in the model's
    dtype and in float32 twice), plus one row of logits."""
    s = _shape(config)
    size = dtype.itemsize
    kv = kv_bytes_per_token(config, dtype) * (tokens + new_tokens)
    acts = tokens * (8 * s["hidden"] + 2 * s["inner"]) * size
    scores = s["heads"] * tokens * attended * (2 * size + 8)
    return kv + acts + scores + s["vocab"] * 4


def rows_that_fit(free: int, fixed: int, per_row: int, cap: int) -> int:
    """Rows whose `per_row` bytes fit in SHARE of `free` after `fixed`, in [1, cap]."""
    room = int(free * SHARE) - fixed
    return max(1, min(cap, room // max(1, per_row)))
