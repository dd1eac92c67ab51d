"""Few-shot inference: model registry/loading, batched greedy generation with prefix
KV-cache reuse, answer parsing, resumable sharded prediction writing (SPEC §4)."""

from freqgap.inference.batching import encode_left_padded, left_pad
from freqgap.inference.models import ModelError, ModelInfo, load_model, resolve_model

__all__ = ["encode_left_padded", "left_pad", "load_model", "resolve_model", "ModelInfo",
           "ModelError"]
