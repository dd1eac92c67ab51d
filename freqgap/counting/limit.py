"""`freqgap count --limit N`: a dry run over the first N records of the inputs.

Why here, on the task's line rows: one task reads the files in the order they are listed
and stops after the N-th record, so the result is exact and the same on every run (the
first N, not any N), and a dry run reads no more than it counts. A record is a non-blank
line of JSON Lines (a bad one too: it is skipped or refused as in a full run) or a Parquet
row; blank lines and whole-file errors are not records.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from freqgap.counting.partials import LineRow, _is_blank as is_blank


def first_records(rows: Iterable[LineRow], limit: int) -> Iterator[LineRow]:
    """The line rows (partials.line_rows) up to and including the `limit`-th record; a
    block of lines holding it is cut after it. Nothing after it is read."""
    left = limit
    for row in rows:
        fidx, number, payload, is_text, error = row
        if is_text or error is not None:
            yield row
            if is_text:       # a Parquet row, a bad one too; a whole-file error is no record
                left -= 1
        else:
            lines = bytes(payload).split(b"\n")
            records = [k for k, line in enumerate(lines) if not is_blank(line)]
            if len(records) >= left:
                yield (fidx, number, b"\n".join(lines[:records[left - 1] + 1]), False, None)
                return
            yield row
            left -= len(records)
        if left <= 0:
            return

