"""The shots' key/value cache held once per group, and the model's attention routed
through the exact prefix/suffix merge (freqgap.inference.prefix_attention) while it is.

A `SharedPrefixLayer` keeps the prefix's keys and values as the prefix pass left them,
(1, kv_heads, P, D), never copied, and a preallocated (batch, kv_heads, capacity, D)
buffer for each row's own suffix and generated tokens. `update` stores the new tokens'
keys and values and hands back the suffix only; the attention function then adds the
prefix. The cache's memory is prefix + batch x suffix, not batch x (prefix + suffix).

Routing, per architecture (transformers' modules compute projections, rotary or learned
positions, MLPs and norms as always; only the attention core is replaced):
- GPT-NeoX/Pythia and Llama-style models call the attention function named by
  `config._attn_implementation`: a function is registered under `ATTN_NAME` and the
  config names it for the duration of `attached` (and no mask is built for it);
- GPT-J and GPT-Neo call their module's own `_attn`: it is replaced on each attention
  module for that duration (GPT-Neo's local layers pass their window).
Any other architecture, or these with another attention class (flash attention), keeps
the per-row copies of freqgap.inference.kvcache; `unsupported` says why.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Iterator

import torch
from transformers import DynamicCache

from freqgap.inference.kvcache import PreallocatedLayer
from freqgap.inference.prefix_attention import merged_attention

ATTN_NAME = "freqgap_shared_prefix"
INTERFACE_TYPES = ("gpt_neox", "llama")       # attention through AttentionInterface
OWN_ATTN_TYPES = ("gptj", "gpt_neo")          # attention through the module's `_attn`


class SharedPrefixLayer(PreallocatedLayer):
    """One layer: the prefix's keys/values (batch 1, shared) and each row's suffix in the
    preallocated buffer; `update` returns the suffix so far."""

    def __init__(self, prefix_keys: torch.Tensor, prefix_values: torch.Tensor,
                 batch: int, capacity: int) -> None:
        super().__init__(batch, capacity)
        self.prefix_keys, self.prefix_values = prefix_keys, prefix_values
        self.prefix_length = prefix_keys.shape[-2]

    def get_seq_length(self) -> int:
        return self.prefix_length + self.length

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.prefix_length + self.length + query_length, 0

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Keep only `rows` of the batch (rows that stopped generating leave it); only
        the rows' own suffixes are copied, the prefix stays shared."""
        self._k, self._v = self._k.index_select(0, rows), self._v.index_select(0, rows)
        self.batch = len(rows)
        self._publish()

    def stored_bytes(self) -> int:
        """Bytes this layer holds (prefix once + suffix buffers)."""
        own = 0 if self._k is None else self._k.nbytes + self._v.nbytes
        return self.prefix_keys.nbytes + self.prefix_values.nbytes + own


def shared_prefix_cache(prefix: DynamicCache, batch: int, capacity: int) -> DynamicCache:
    """A cache for `batch` rows continuing `prefix` (a batch-1 cache, not copied), with
    room for `capacity` suffix + generated tokens per row."""
    cache = DynamicCache()
    cache.layers = [SharedPrefixLayer(layer.keys, layer.values, batch, capacity)
                    for layer in prefix.layers]
    return cache


def _model_type(model) -> str:
    return getattr(model.config, "model_type", type(model).__name__)


def _own_attn_modules(model) -> list:
    """GPT-J's and GPT-Neo's attention modules (those with their own `_attn`)."""
    from transformers.models.gpt_neo.modeling_gpt_neo import GPTNeoSelfAttention
    from transformers.models.gptj.modeling_gptj import GPTJAttention

    return [m for m in model.modules() if type(m) in (GPTJAttention, GPTNeoSelfAttention)]


def unsupported(model) -> str | None:
    """Why `model` cannot take the shared-prefix attention, or None when it can."""
    kind = _model_type(model)
    impl = getattr(model.config, "_attn_implementation", None)
    if kind in INTERFACE_TYPES:
        if impl not in ("eager", "sdpa"):
            return f"{kind} with attention implementation {impl!r}"
        return None
    if kind in OWN_ATTN_TYPES:
        n_layers = model.config.get_text_config().num_hidden_layers
        if len(_own_attn_modules(model)) != n_layers:
            return f"{kind} with attention implementation {impl!r}"
        return None
    return f"architecture {kind!r} (shared-prefix attention covers " \
           f"{', '.join(INTERFACE_TYPES + OWN_ATTN_TYPES)})"


_TOLD: set[str] = set()


def tell_once(reason: str | None) -> None:
    """Say on stderr, once per process and reason, that a model keeps the per-row copies."""
    if reason and reason not in _TOLD:
        _TOLD.add(reason)
        print(f"note: shared-prefix attention does not cover {reason}; the shots' keys and "
              "values are copied into every row instead (same results, more memory)",
              file=sys.stderr)


def shared_attention(model) -> bool:
    """Whether `model` takes the shared-prefix attention (else say why, once)."""
    reason = unsupported(model)
    tell_once(reason)
    return reason is None


_ACTIVE: list[DynamicCache] = []     # the cache `attached` serves (innermost last)


def _layer(index: int) -> SharedPrefixLayer:
    return _ACTIVE[-1].layers[index]


def _interface_attention(module, query, key, value, attention_mask, scaling=None,
                         dropout=0.0, **kwargs):
    """AttentionInterface signature: returns (B, q, H, D) and no weights."""
    layer = _layer(module.layer_idx)
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    out = merged_attention(query, key, value, layer.prefix_keys, layer.prefix_values, scale,
                           kwargs.get("sliding_window") or getattr(module, "sliding_window", None))
    return out.transpose(1, 2), None


def _gptj_attn(self, query, key, value, attention_mask=None):
    layer = _layer(self.layer_idx)
    return merged_attention(query, key, value, layer.prefix_keys, layer.prefix_values,
                            1.0 / self.scale_attn), None


def _gpt_neo_attn(self, query, key, value, attention_mask=None):
    layer = _layer(self.layer_id)
    window = self.config.window_size if self.attention_type == "local" else None
    return merged_attention(query, key, value, layer.prefix_keys, layer.prefix_values, 1.0,
                            window), None


def _register() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(ATTN_NAME, _interface_attention)


_register()


@contextlib.contextmanager
def attached(model, cache: DynamicCache) -> Iterator[None]:
    """Within: `model`'s attention reads the prefix of `cache` (shared_prefix_cache) and
    merges it with the rows' suffixes. The model is restored on exit."""
    reason = unsupported(model)
    if reason is not None:
        raise ValueError(f"shared-prefix attention: unsupported {reason}")
    config = model.config
    previous = config._attn_implementation
    patched = []
    if _model_type(model) in OWN_ATTN_TYPES:
        for module in _own_attn_modules(model):
            fn = _gptj_attn if hasattr(module, "scale_attn") else _gpt_neo_attn
            module._attn = types.MethodType(fn, module)
            patched.append(module)
    config._attn_implementation = ATTN_NAME      # no mask is built for an unknown name
    _ACTIVE.append(cache)
    try:
        yield
    finally:
        _ACTIVE.pop()
        config._attn_implementation = previous
        for module in patched:
            del module._attn


def kv_bytes(cache: DynamicCache) -> int:
    """Bytes of keys and values a cache holds (shared-prefix or transformers' own)."""
    total = 0
    for layer in cache.layers:
        if isinstance(layer, SharedPrefixLayer):
            total += layer.stored_bytes()
        elif layer.keys is not None:
            base_k = getattr(layer, "_k", None)
            k = base_k if base_k is not None else layer.keys
            v = getattr(layer, "_v", None) if base_k is not None else layer.values
            total += k.nbytes + v.nbytes
    return total


__all__ = ["ATTN_NAME", "SharedPrefixLayer", "attached", "kv_bytes", "shared_attention",
           "shared_prefix_cache", "tell_once", "unsupported"]
