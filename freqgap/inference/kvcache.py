"""Shared-prefix key/value caches: which prefix tokens to cache, computing the cache once,
and (for architectures freqgap.inference.shared_prefix does not cover, and for the
no-reuse path) copying it into a batch, preallocated for prompt + new tokens and filled
in place.

Used by greedy generation (freqgap.inference.generate) and next-token scoring
(freqgap.inference.logprobs). transformers' DynamicCache grows by concatenation: every
generated token copies the whole cache. With a long shared prefix and short generations
that copying dominates on the CPU. These layers allocate (batch, heads, capacity,
head_dim) once, copy the shared prefix in (broadcast over the batch) and write each new
token in place; the attention still sees exactly the filled keys and values, so results
are unchanged.
"""

from __future__ import annotations

import copy
from typing import Sequence

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer


class PreallocatedLayer(DynamicLayer):
    """A DynamicLayer whose storage is a fixed buffer; `keys`/`values` are views of it."""

    def __init__(self, batch: int, capacity: int, prefix_keys: torch.Tensor | None = None,
                 prefix_values: torch.Tensor | None = None) -> None:
        super().__init__()
        self.batch = batch
        self.capacity = capacity
        self._k = self._v = None
        self.length = 0
        if prefix_keys is not None:
            self._allocate(prefix_keys, prefix_values)
            n = prefix_keys.shape[-2]
            self._k[:, :, :n] = prefix_keys      # broadcast (1, H, n, D) over the batch
            self._v[:, :, :n] = prefix_values
            self.length = n
            self._publish()

    def _allocate(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        self.dtype, self.device = keys.dtype, keys.device
        heads = keys.shape[1]
        self._k = torch.empty((self.batch, heads, self.capacity, keys.shape[-1]),
                              dtype=keys.dtype, device=keys.device)
        self._v = torch.empty((self.batch, heads, self.capacity, values.shape[-1]),
                              dtype=values.dtype, device=values.device)
        self.is_initialized = True

    def _publish(self) -> None:
        self.keys = self._k[:, :, :self.length]
        self.values = self._v[:, :, :self.length]

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self._allocate(key_states, value_states)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        n = key_states.shape[-2]
        if self.length + n > self.capacity:
            raise RuntimeError(f"preallocated cache of {self.capacity} tokens overflowed")
        self._k[:, :, self.length:self.length + n] = key_states
        self._v[:, :, self.length:self.length + n] = value_states
        self.length += n
        self._publish()
        return self.keys, self.values


def preallocated_cache(batch: int, capacity: int, prefix: DynamicCache | None = None,
                       n_layers: int | None = None) -> DynamicCache:
    """A DynamicCache of PreallocatedLayers, optionally holding a (batch-1) prefix cache."""
    cache = DynamicCache()
    if prefix is not None:
        cache.layers = [PreallocatedLayer(batch, capacity, layer.keys, layer.values)
                        for layer in prefix.layers]
    else:
        cache.layers = [PreallocatedLayer(batch, capacity) for _ in range(n_layers)]
    return cache


def supports_preallocation(prefix: DynamicCache) -> bool:
    """Only plain DynamicLayers (no sliding-window or quantized layers) are replaced."""
    return isinstance(prefix, DynamicCache) and all(type(l) is DynamicLayer for l in prefix.layers)


MAX_PREFIX_BACKOFF = 4   # tokens dropped from the cached prefix to match the full prompts


def shared_prefix_ids(prefix_ids: Sequence[int], seqs: Sequence[Sequence[int]],
                      max_backoff: int = MAX_PREFIX_BACKOFF) -> list[int]:
    """Prefix tokens to cache: the prefix text's tokens, less up to `max_backoff` at its
    end (BPE may merge its last whitespace with what follows), such that they start as
    many full prompts as possible (and each is longer). [] when nothing can be shared."""
    ids = list(prefix_ids)
    best: list[int] = []
    best_hits = 0
    for drop in range(0, min(max_backoff, len(ids)) + 1):
        cand = ids[:len(ids) - drop]
        if not cand or not seqs:
            break
        hits = sum(1 for s in seqs if len(s) > len(cand) and list(s[:len(cand)]) == cand)
        if hits > best_hits:
            best, best_hits = cand, hits
        if hits == len(seqs):
            break
    return best


def starts_with(seq: Sequence[int], prefix: Sequence[int]) -> bool:
    """`seq` begins with the non-empty `prefix` and has at least one token after it."""
    n = len(prefix)
    return bool(n) and len(seq) > n and list(seq[:n]) == list(prefix)


@torch.inference_mode()
def prefix_cache(model, prefix_ids: Sequence[int]) -> DynamicCache:
    """The key/value cache of the shared prefix (batch 1), computed once."""
    device = next(model.parameters()).device
    ids = torch.tensor([list(prefix_ids)], dtype=torch.long, device=device)
    return model(input_ids=ids, use_cache=True, logits_to_keep=1).past_key_values


def batch_cache(prefix: DynamicCache, batch: int, capacity: int,
                preallocate: bool = True) -> DynamicCache:
    """A fresh cache holding `prefix` for each of `batch` rows, room for `capacity` tokens
    when preallocated (else transformers' own growing cache); `prefix` is left unchanged."""
    if preallocate and supports_preallocation(prefix):
        return preallocated_cache(batch, capacity, prefix=prefix)
    past = copy.deepcopy(prefix)
    past.batch_repeat_interleave(batch)
    return past
