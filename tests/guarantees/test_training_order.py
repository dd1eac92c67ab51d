"""Issue 38, item 5 (and 8): training-order inputs are validated before they are counted.

A `.bin` of a length that is not a multiple of its dtype, an `.idx` entry outside the
`.bin` or of negative size, a token id outside the tokenizer's vocabulary and a file that
is not a tokenizer are refused naming the file; before, entries were dropped or garbled
(exit 0) or the run ended in a traceback."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from freqgap.counting.indexed import _HEADER, IndexedDataset, IndexedFormatError, write_indexed
from freqgap.counting.inputs import BadInputError
from freqgap.counting.order_source import OrderInputError, decoded_pieces, load_tokenizer
from freqgap.paths import REPO_ROOT

TOKENIZER = REPO_ROOT / "models" / "demo" / "tokenizer.json"


def dataset(tmp_path, entries=((5, 6, 7), (8, 9), (10, 11, 12, 13))):
    return write_indexed(tmp_path / "doc", [np.array(e) for e in entries], dtype=np.uint16)


def test_a_bin_of_odd_length_is_refused(tmp_path):
    prefix = dataset(tmp_path)
    with open(prefix + ".bin", "ab") as f:
        f.write(b"\x00")
    with pytest.raises(IndexedFormatError, match=r"doc\.bin: 19 bytes, not a multiple of its "
                                                 r"uint16 token size 2"):
        IndexedDataset(prefix)


@pytest.mark.parametrize("entry,field,value,said", [
    (1, "pointer", 10_000, "doc.bin: 18 bytes, but entry 1 of .*doc.idx (size 2, pointer 10000) "
                           "lies outside it"),
    (0, "size", -3, "entry 0 of .*doc.idx (size -3, pointer 0) lies outside it"),
    (2, "pointer", 3, "entry 2 of .*doc.idx (size 4, pointer 3) lies outside it or is "
                      "misaligned"),
])
def test_an_index_entry_outside_the_bin_is_refused(tmp_path, entry, field, value, said):
    prefix = dataset(tmp_path)
    raw = bytearray(open(prefix + ".idx", "rb").read())
    count = 3
    at = _HEADER + (4 * entry if field == "size" else 4 * count + 8 * entry)
    raw[at:at + (4 if field == "size" else 8)] = struct.pack("<i" if field == "size" else "<q", value)
    open(prefix + ".idx", "wb").write(bytes(raw))
    with pytest.raises(IndexedFormatError, match=said.replace("(", r"\(").replace(")", r"\)")):
        IndexedDataset(prefix)


def test_a_token_id_outside_the_vocabulary_is_refused(tmp_path):
    tokenizer, _ = load_tokenizer(str(TOKENIZER))
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    prefix = write_indexed(tmp_path / "doc", [np.array([5, 6]), np.array([7, size + 7])],
                           dtype=np.int32)
    data = IndexedDataset(prefix)
    with pytest.raises(BadInputError, match=f"entry 1 holds token id {size + 7}, outside the "
                                            f"tokenizer's vocabulary of {size}"):
        list(decoded_pieces(data, 0, 2, tokenizer, eod=0, seqs_per_step=1, edges=[10]))


def test_a_file_that_is_not_a_tokenizer_is_one_line(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"not": "a tokenizer"}')
    with pytest.raises(OrderInputError, match="not a tokenizer.json of the tokenizers library"):
        load_tokenizer(str(tmp_path))
