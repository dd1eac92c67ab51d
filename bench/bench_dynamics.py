"""Counting by training position, per core: token ids -> EOD pieces -> decoded text -> counts.

Builds a Pythia-shaped indexed dataset (2,049-token entries, documents packed with EOD) from
the bundled sample corpus with the demo model's tokenizer, then runs the worker code of the
training-order job (freqgap/counting/order_source.py) in this one process and reports
tokens and text MB per CPU-second (process time, so it holds on a shared machine), with
decoding alone beside it. Projects Pythia's 300 B training tokens from the rate.

    python bench/bench_dynamics.py [--sequences 600]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from freqgap.counting.documents import iter_documents  # noqa: E402
from freqgap.counting.indexed import IndexedDataset, write_indexed  # noqa: E402
from freqgap.counting.order_source import Split, count_splits, decoded_pieces  # noqa: E402
from freqgap.counting.rules import TermRules  # noqa: E402
from freqgap.paths import REPO_ROOT, SAMPLE_CORPUS_DIR  # noqa: E402
from results_md import machine, now_utc, source_commit, write_section  # noqa: E402

PYTHIA_TOKENS = 143_000 * 1024 * 2049


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sequences", type=int, default=600, help="2,049-token entries to count")
    args = ap.parse_args()
    from tokenizers import Tokenizer

    started = now_utc()

    tok_file = str(REPO_ROOT / "models" / "demo" / "tokenizer.json")
    tok = Tokenizer.from_file(tok_file)
    eod = tok.token_to_id("<|endoftext|>")
    need = args.sequences * 2049
    stream: list[int] = []
    for _, _, text in iter_documents([SAMPLE_CORPUS_DIR]):
        stream += tok.encode(text, add_special_tokens=False).ids + [eod]
        if len(stream) >= need:
            break
    entries = [np.asarray(stream[i:i + 2049]) for i in range(0, need, 2049)]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = write_indexed(Path(tmp) / "document", entries)
        data = IndexedDataset(prefix)
        edges = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]
        t = time.process_time()
        n_text = 0
        for texts, _, _ in decoded_pieces(data, 0, len(data), tok, eod, 4, edges):
            n_text += sum(len(x.encode()) for x in texts)
        decode_s = time.process_time() - t
        # warm-up: the first chunk pays one-off imports (pyarrow compute, pandas)
        list(count_splits([Split(0, prefix, 0, 8, 0)], TermRules.from_conf(), tok_file, eod, 4, edges))
        t = time.process_time()
        batches = list(count_splits([Split(0, prefix, 0, len(data), 0)], TermRules.from_conf(),
                                    tok_file, eod, 4, edges))
        total_s = time.process_time() - t
    tokens = len(data) * 2049
    rate = tokens / total_s
    lines = [
        f"{len(data)} entries, {tokens:,} tokens, {n_text / 1e6:.1f} MB of decoded text, "
        f"{sum(b.num_rows for b in batches):,} partial rows.",
        "",
        "| step | M tokens per CPU-second |",
        "|---|---:|",
        f"| decode only | {tokens / decode_s / 1e6:.2f} |",
        f"| decode + count | {rate / 1e6:.2f} ({n_text / 1e6 / total_s:.1f} MB of text per CPU-second) |",
        "",
        f"Pythia's {PYTHIA_TOKENS / 1e9:.0f} B training tokens at this rate: "
        f"{PYTHIA_TOKENS / rate / 3600:,.0f} CPU-hours ({PYTHIA_TOKENS / rate / 3600 / 64:,.1f} h on 64 cores).",
    ]
    print("\n".join(lines))
    print(write_section("dynamics", "Counting by training position (`bench/bench_dynamics.py`)", lines,
                        command=" ".join(["python bench/bench_dynamics.py", *sys.argv[1:]]),
                        machine=machine(), commit=source_commit(), started=started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
