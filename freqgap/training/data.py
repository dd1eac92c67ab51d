"""The corpus as one token stream, and seeded random training windows over it.

Documents are joined with the end-of-text token, as in Pythia's pretraining; a window may
span a document boundary. Windows are drawn uniformly, so over a run every part of the
corpus is seen about equally often and the model's exposure to a fact follows its count.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import torch


def encode_corpus(texts: Iterable[str], tokenizer, batch: int = 1024) -> np.ndarray:
    """All documents' token ids, each followed by EOS, as one int32 array."""
    eos = tokenizer.eos_token_id
    backend = tokenizer.backend_tokenizer
    chunks: list[np.ndarray] = []
    pending: list[str] = []

    def flush() -> None:
        for enc in backend.encode_batch(pending, add_special_tokens=False):
            chunks.append(np.asarray(enc.ids + [eos], dtype=np.int32))
        pending.clear()

    for text in texts:
        pending.append(text)
        if len(pending) >= batch:
            flush()
    if pending:
        flush()
    if not chunks:
        raise ValueError("the corpus holds no documents")
    return np.concatenate(chunks)


class WindowSampler:
    """Batches of random windows (inputs = labels, shifted inside the model)."""

    def __init__(self, tokens: np.ndarray, seq_len: int, batch_size: int, seed: int) -> None:
        if len(tokens) <= seq_len:
            raise ValueError(f"corpus has {len(tokens)} tokens, fewer than seq_len={seq_len}")
        self.tokens = torch.from_numpy(tokens.astype(np.int64))
        self.seq_len, self.batch_size = seq_len, batch_size
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self) -> torch.Tensor:
        starts = torch.randint(0, len(self.tokens) - self.seq_len, (self.batch_size,), generator=self.gen)
        offsets = torch.arange(self.seq_len)
        return self.tokens[starts[:, None] + offsets[None, :]]
