"""Small training-order inputs for the dynamics tests: a tiny tokenizer, documents packed
into sequences as a trainer does, written with the project's indexed-dataset writer."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np

from freqgap.counting.indexed import write_indexed
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules

WORDS = ["the", "of", "5", "12", "7", "hours", "Day", "years,", "1,000", "2019", "05", "minute",
         "(3)", "weeks", "x", "decade", "3", "24", "is", "times"]


def random_texts(seed: int, n: int, max_len: int = 40) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, max_len))) for _ in range(n)]


def tiny_tokenizer(directory: Path, texts: list[str]):
    """A byte-level BPE (the project's trainer's) saved with tokenizer.json."""
    from freqgap.training.tokenizer import train_tokenizer

    tok = train_tokenizer(texts, vocab_size=300, min_frequency=2)
    tok.save_pretrained(directory)
    return tok


def packed_sequences(texts: list[str], tok, seq_len: int) -> list[np.ndarray]:
    """Documents + EOD as one stream cut into seq_len-token sequences (last one may be short)."""
    stream: list[int] = []
    for t in texts:
        stream += tok(t, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    return [np.asarray(stream[i:i + seq_len]) for i in range(0, len(stream), seq_len)]


def write_order(prefix: Path, sequences: list[np.ndarray]) -> str:
    return write_indexed(prefix, sequences, dtype=np.uint16)


def expected_by_bucket(sequences, tok, per_step: int, edges: list[int], rules: TermRules):
    """{bucket: {dataset: Counter}} counted by the plain reference counter from text decoded
    with the transformers tokenizer, one EOD-delimited piece at a time."""
    out: dict[int, dict[str, Counter]] = {}
    for i, seq in enumerate(sequences):
        step = i // per_step
        later = [e for e in edges if e > step]
        if not later:
            continue
        pieces, current = [], []
        for t in seq.tolist():
            if t == tok.eos_token_id:
                pieces.append(current)
                current = []
            else:
                current.append(t)
        pieces.append(current)
        texts = [tok.decode(p, skip_special_tokens=True) for p in pieces if p]
        ref = count_texts(texts, rules)
        slot = out.setdefault(later[0], {"unigrams": Counter(), "pairs": Counter(), "triples": Counter()})
        slot["unigrams"].update(ref.unigrams)
        slot["pairs"].update(ref.pairs)
        slot["triples"].update(ref.triples)
    return out


def read_bucketed(directory: Path) -> dict[int, dict[str, Counter]]:
    import pyarrow.parquet as pq

    out: dict[int, dict[str, Counter]] = {}
    keys = {"unigrams": ("term",), "pairs": ("t1", "t2"), "triples": ("t1", "t2", "t3")}
    for name, cols in keys.items():
        for r in pq.read_table(directory / name).to_pylist():
            key = r[cols[0]] if len(cols) == 1 else tuple(r[c] for c in cols)
            slot = out.setdefault(r["step_bucket"], {"unigrams": Counter(), "pairs": Counter(),
                                                     "triples": Counter()})
            assert key not in slot[name], (name, key, r["step_bucket"])
            slot[name][key] = r["count"]
    return out
