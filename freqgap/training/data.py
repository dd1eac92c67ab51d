"""The two data orders of the trainer (conf/training.yaml `data_order`).

windows (the committed demo model): documents are joined with the end-of-text token, as in
Pythia's pretraining, and training windows are drawn uniformly at random from the stream
(a window may span a document boundary), so over a run every part of the corpus is seen
about equally often and the model's exposure to a fact follows its count.

packed (make dynamics): Pythia's order — shuffled documents packed into consecutive
sequences, B sequences per step — which is recorded exactly, so the data seen up to each
checkpoint can be counted (freqgap/training/order.py).
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


class PackedOrder:
    """Pythia's data order, made exact and recordable: each epoch the documents in a seeded
    permutation, each followed by EOS, joined into one stream cut into consecutive seq_len
    sequences; step t trains on sequences t*B .. t*B+B-1. A document may be split over two
    sequences (the stream does not restart at a sequence boundary), as in GPT-NeoX.

    `pieces` records where every sequence's tokens came from: (sequence, document, first
    token, end token) in document token offsets (the document's EOS is token len(doc)).
    """

    def __init__(self, docs: list[np.ndarray], eos: int, seq_len: int, batch_size: int, seed: int) -> None:
        if not docs:
            raise ValueError("the corpus holds no documents")
        self.docs = [np.append(d.astype(np.int64), eos) for d in docs]
        self.seq_len, self.batch_size = seq_len, batch_size
        self.rng = np.random.default_rng(seed)
        self.queue: list[int] = []
        self.current, self.offset = -1, 0
        self.sequences = 0
        self.pieces: list[tuple[int, int, int, int]] = []

    def _next_doc(self) -> None:
        if not self.queue:
            self.queue = self.rng.permutation(len(self.docs)).tolist()[::-1]
        self.current, self.offset = self.queue.pop(), 0

    def sequence(self) -> np.ndarray:
        out = np.empty(self.seq_len, dtype=np.int64)
        filled = 0
        while filled < self.seq_len:
            if self.current < 0 or self.offset >= len(self.docs[self.current]):
                self._next_doc()
            doc = self.docs[self.current]
            take = min(self.seq_len - filled, len(doc) - self.offset)
            out[filled:filled + take] = doc[self.offset:self.offset + take]
            self.pieces.append((self.sequences, self.current, self.offset, self.offset + take))
            filled += take
            self.offset += take
        self.sequences += 1
        return out

    def __call__(self) -> torch.Tensor:
        return torch.from_numpy(np.stack([self.sequence() for _ in range(self.batch_size)]))


def encode_documents(texts: list[str], tokenizer, batch: int = 1024) -> list[np.ndarray]:
    """Each document's token ids (no EOS), in order."""
    backend = tokenizer.backend_tokenizer
    out: list[np.ndarray] = []
    for i in range(0, len(texts), batch):
        for enc in backend.encode_batch(texts[i:i + batch], add_special_tokens=False):
            out.append(np.asarray(enc.ids, dtype=np.int32))
    return out
