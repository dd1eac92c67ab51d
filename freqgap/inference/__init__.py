"""Few-shot inference: the model interface (lm.py: LM, get_lm, requests, stop rules) with
its transformers backend (hf.py) and a fake for tests (fake.py), batched greedy generation
with prefix KV-cache reuse, answer parsing, resumable sharded prediction writing (SPEC §4).

The names below are imported lazily, so that light modules (parse, writer) can be used
without importing torch and transformers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "LM": "freqgap.inference.lm",
    "get_lm": "freqgap.inference.lm",
    "GenerateRequest": "freqgap.inference.lm",
    "LoglikelihoodRequest": "freqgap.inference.lm",
    "StopRule": "freqgap.inference.lm",
    "encode_left_padded": "freqgap.inference.batching",
    "left_pad": "freqgap.inference.batching",
    "resolve_model": "freqgap.inference.models",
    "ModelError": "freqgap.inference.models",
    "Generator": "freqgap.inference.generate",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'freqgap.inference' has no attribute {name!r}")
