"""How `freqgap query` hands a result over: a table for the eye, or a file for the next tool.

`table` prints every column (DuckDB's own display drops the middle ones of a wide table,
which hid `delta` and its interval); `csv`, `json` (JSON Lines: one object per row) and
`parquet` stream the rows in batches, so a large result never has to fit in memory.
`--out FILE` is written under a temporary name and renamed when complete, and may not lie
in the results folder or an input folder: a query never changes what it reads.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import sys
from decimal import Decimal
from pathlib import Path

from freqgap.errors import UsageError

FORMATS = ("table", "csv", "json", "parquet")
BATCH_ROWS = 65_536


def _json_value(value):
    if isinstance(value, Decimal):
        value = float(value)            # a number in JSON, not the string default=str gives
    if isinstance(value, float) and not math.isfinite(value):
        return None                     # NaN/inf are not JSON
    return value


class QueryOutput:
    """Where and how query results go; `write(relation, labels)` once per statement."""

    def __init__(self, fmt: str = "table", out: str | Path | None = None,
                 columns: list[str] | None = None, max_rows: int = 50,
                 protected: list[Path] | tuple[Path, ...] = ()):
        if fmt not in FORMATS:
            raise UsageError(f"--format {fmt}: one of {', '.join(FORMATS)}")
        if fmt == "parquet" and out is None:
            raise UsageError("--format parquet writes a file: give --out FILE.parquet")
        self.fmt, self.columns, self.max_rows = fmt, columns, max_rows
        self.out = None if out is None else Path(out).expanduser()
        if self.out is not None:
            self._check_out(protected)

    def _check_out(self, protected) -> None:
        if self.out.is_dir():
            raise UsageError(f"--out {self.out}: a directory; give a file name")
        if not self.out.parent.is_dir():
            raise UsageError(f"--out {self.out}: no such directory {self.out.parent}")
        target = self.out.resolve()
        for folder in protected:
            if target.is_relative_to(Path(folder).resolve()):
                raise UsageError(f"--out {self.out}: inside {folder}, which the query reads "
                                 "(a query writes nothing there); choose a file elsewhere")

    def many_ok(self) -> bool:
        """Several statements can share the output only as tables on the terminal."""
        return self.out is None and self.fmt == "table"

    def _select(self, rel):
        if not self.columns:
            return rel
        unknown = [c for c in self.columns if c not in rel.columns]
        if unknown:
            raise UsageError(f"--columns: no column {', '.join(unknown)} in the result; it "
                             f"has {', '.join(rel.columns)}")
        return rel.project(", ".join('"' + c.replace('"', '""') + '"' for c in self.columns))

    def write(self, rel, labels: list[str] | tuple[str, ...] = ()) -> None:
        rel = self._select(rel)
        if self.out is None:
            self._emit(rel, labels, sys.stdout)
            return
        tmp = self.out.with_name(f".{self.out.name}.tmp")
        try:
            if self.fmt == "parquet":
                self._parquet(rel, tmp)
            else:
                with open(tmp, "w", encoding="utf-8", newline="") as handle:
                    self._emit(rel, labels, handle)
            os.replace(tmp, self.out)
        finally:
            tmp.unlink(missing_ok=True)
        print(f"wrote {self.out}", file=sys.stderr)

    def _emit(self, rel, labels, handle) -> None:
        if self.fmt == "table":
            for line in labels:
                print(f"-- {line}", file=handle)
            text = io.StringIO()
            with contextlib.redirect_stdout(text):
                rel.show(max_width=1_000_000, max_rows=self.max_rows)
            handle.write(text.getvalue())
        elif self.fmt == "csv":
            import pyarrow.csv as pacsv

            reader = rel.to_arrow_reader(BATCH_ROWS)
            buffer = io.BytesIO()
            with pacsv.CSVWriter(buffer, reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
                    handle.write(buffer.getvalue().decode("utf-8"))
                    buffer.seek(0)
                    buffer.truncate()
            handle.write(buffer.getvalue().decode("utf-8"))
        else:
            for batch in rel.to_arrow_reader(BATCH_ROWS):
                for row in batch.to_pylist():
                    handle.write(json.dumps({k: _json_value(v) for k, v in row.items()},
                                            ensure_ascii=False, default=str) + "\n")

    def _parquet(self, rel, path: Path) -> None:
        import pyarrow.parquet as pq

        reader = rel.to_arrow_reader(BATCH_ROWS)
        with pq.ParquetWriter(path, reader.schema, compression="zstd") as writer:
            for batch in reader:
                writer.write_batch(batch)
