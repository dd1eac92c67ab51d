"""What a training run leaves for counting by training position (issue 13).

`stepN/` — the weights after N optimizer steps (a loadable model directory, tokenizer
included), as Pythia's `stepN` revisions: checkpoint N has seen steps 0..N-1.

`data_order/` — the exact data order of a packed run:
    document.idx/.bin  every sequence trained on, in order, one entry per sequence, in the
                       Megatron/GPT-NeoX indexed format of Pythia's pre-shuffled data
                       (freqgap/counting/indexed.py); sequence i was trained on at step
                       i // seqs_per_step
    pieces.parquet     where each sequence's tokens came from: sequence, step, corpus file,
                       line, the document's token range [token_start, token_end) (token
                       len(document) is its end-of-text token) and the same as a range of
                       the text's characters [char_start, char_end) (EOS excluded) and
                       the sha256 of the document's text (text_sha256): an order file
                       that `freqgap count --order-file` counts from the corpus, refusing
                       a line whose text changed
    order.json         seqs_per_step, seq_len, steps, the EOD token, the checkpoints
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from freqgap.counting.indexed import write_indexed
from freqgap.errors import FreqgapError

class OrderFileError(FreqgapError):
    """A model directory without the data order asked for; the message says how to make it."""


ORDER_DIR = "data_order"
ORDER_FILE = "order.json"
PREFIX = "document"


def checkpoint_name(step: int) -> str:
    return f"step{int(step)}"


def save_checkpoint(model, tokenizer, directory: Path, step: int) -> Path:
    """The weights after `step` steps as directory/stepN (loads like any model directory)."""
    target = Path(directory) / checkpoint_name(step)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def write_data_order(directory: Path, batches: list[np.ndarray], sampler, documents, tokenizer,
                     settings) -> dict[str, Any]:
    """Write data_order/ from the batches as trained on and the sampler's piece records."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(directory) / ORDER_DIR
    out.mkdir(parents=True, exist_ok=True)
    rows = np.concatenate(batches) if batches else np.zeros((0, settings.seq_len), np.int64)
    dtype = np.uint16 if len(tokenizer) <= np.iinfo(np.uint16).max + 1 else np.int32
    write_indexed(out / PREFIX, list(rows), dtype=dtype)
    pieces = np.asarray(sampler.pieces, dtype=np.int64).reshape(-1, 4)
    pieces = pieces[pieces[:, 0] < rows.shape[0]]       # drop pieces of unused sequences
    doc = pieces[:, 1]
    char_start, char_end = _char_ranges(pieces, documents, tokenizer)
    digests = {d: hashlib.sha256(documents[d][2].encode("utf-8")).hexdigest()
               for d in set(doc.tolist())}
    table = pa.table({
        "sequence": pieces[:, 0], "step": pieces[:, 0] // settings.batch_size,
        "file": pa.array([documents[d][0] for d in doc.tolist()], pa.string()),
        "line": pa.array([documents[d][1] for d in doc.tolist()], pa.int64()),
        "token_start": pieces[:, 2], "token_end": pieces[:, 3],
        "char_start": char_start, "char_end": char_end,
        # the counter refuses a corpus line whose text is not the one trained on
        "text_sha256": pa.array([digests[d] for d in doc.tolist()], pa.string())})
    pq.write_table(table, out / "pieces.parquet")
    info = {"format": "megatron-mmap", "prefix": PREFIX, "seqs_per_step": settings.batch_size,
            "seq_len": settings.seq_len, "steps": settings.steps, "sequences": int(rows.shape[0]),
            "dtype": np.dtype(dtype).name, "eod_token": tokenizer.eos_token,
            "eod_id": int(tokenizer.eos_token_id), "tokenizer": "..",
            "checkpoints": [int(c) for c in settings.checkpoints]}
    (out / ORDER_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def _char_ranges(pieces: np.ndarray, documents, tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Each piece's token range as a character range of its document's text (the EOS token
    adds no characters), from the tokenizer's offsets."""
    backend = tokenizer.backend_tokenizer
    starts = np.zeros(len(pieces), np.int64)
    ends = np.zeros(len(pieces), np.int64)
    offsets: dict[int, list[tuple[int, int]]] = {}
    for i, (_, d, a, b) in enumerate(pieces.tolist()):
        if d not in offsets:
            offsets[d] = backend.encode(documents[d][2], add_special_tokens=False).offsets
        off, n = offsets[d], len(documents[d][2])
        b = min(b, len(off))
        starts[i] = off[a][0] if a < len(off) else n
        ends[i] = off[b - 1][1] if b > a else starts[i]
    return starts, ends


# order.json's fields a count reads, with their types.
ORDER_FIELDS = {"prefix": str, "tokenizer": str, "seqs_per_step": int, "eod_token": str,
                "checkpoints": list}


def parse_order(path: Path) -> dict[str, Any]:
    """order.json parsed and its fields checked, or one line naming what is wrong."""
    from freqgap.counting.order_source import check_edges

    redo = "retrain the model (or restore data_order/ from its run)"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise OrderFileError(f"{path}: not valid JSON ({exc}; truncated?); {redo}") from None
    if not isinstance(info, dict):
        raise OrderFileError(f"{path}: a JSON object expected; {redo}")
    for name, kind in ORDER_FIELDS.items():
        value = info.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise OrderFileError(f"{path}: field {name!r} is {value!r}, a {kind.__name__} "
                                 f"expected; {redo}")
    if info["seqs_per_step"] < 1:
        raise OrderFileError(f"{path}: seqs_per_step {info['seqs_per_step']} is not >= 1; {redo}")
    check_edges(info["checkpoints"], f"{path}: checkpoints")
    return info


def read_order(model_dir: str | Path, seqs_per_step: int | None = None,
               eod_token: str | None = None) -> dict[str, Any]:
    """order.json of a model trained with the packed order, with absolute paths added. A
    `seqs_per_step` or `eod_token` given (flags) that contradicts the recorded one is
    refused: the model trained as recorded, so another value puts keys in wrong buckets."""
    path = Path(model_dir) / ORDER_DIR / ORDER_FILE
    if not path.is_file():
        raise OrderFileError(f"{path}: not found; train with data_order: packed (e.g. "
                                 "the dynamics profile of conf/training.yaml) to record the order")
    info = parse_order(path)
    for flag, given, name in (("--seqs-per-step", seqs_per_step, "seqs_per_step"),
                              ("--eod-token", eod_token, "eod_token")):
        if given is not None and given != info[name]:
            raise OrderFileError(f"{flag} {given} contradicts {name} {info[name]!r} recorded in "
                                 f"{path} (the model trained so); leave {flag} out")
    info["prefix_path"] = str(path.parent / info["prefix"])
    info["tokenizer_path"] = str((path.parent / info["tokenizer"]).resolve())
    return info
