"""The documents of a corpus, read exactly as the counting job reads them.

Training and the corpus tests read shards through the counting job's own readers
(`sources` lists and streams files, `records` parses a record), so a model is trained on
exactly the text that is counted; a bad record raises an error naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from freqgap.counting.records import RecordError, parse_record
from freqgap.counting.inputs import BadInputError, list_inputs
from freqgap.counting.sources import iter_lines


def iter_texts(inputs: Iterable[str | Path], text_field: str = "text") -> Iterator[str]:
    """The text of every document in the given files, directories or globs, in path order.

    A bad record raises an error naming the file and line.
    """
    for _, _, text in iter_documents(inputs, text_field):
        yield text


def iter_documents(inputs: Iterable[str | Path], text_field: str = "text") -> Iterator[tuple[str, int, str]]:
    """(file path, line number, text) of every document, as `iter_texts` reads them (the
    trainer's data order names documents this way)."""
    for item in list_inputs([str(i) for i in inputs]):
        for line_no, raw in iter_lines(item.path):
            if not raw.strip():
                continue
            try:
                text, _ = parse_record(raw, text_field, None)
            except RecordError as exc:
                raise BadInputError(item.path, str(exc), line=line_no) from None
            yield item.path, line_no, text
