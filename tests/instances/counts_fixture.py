"""Small counts/ directories (SPEC §2 layout, DATA.md schemas) for instance tests."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.manifest import build_manifest, now_iso, write_manifest

UNITS = ["second", "minute", "hour", "day", "week", "month", "year", "decade"]


def write_counts(directory: Path, unigrams: dict[str, int], pairs: dict[tuple[str, str], int],
                 vocab: list[str] | None = None, files: int = 2) -> Path:
    """unigrams {term: count} and pairs {(a, b): count} → counts/ with a manifest."""
    directory = Path(directory)
    uni = [{"term": t, "kind": "number" if t.isdigit() else "word", "count": c}
           for t, c in unigrams.items()]
    pr = [{"t1": min(a, b), "t2": max(a, b), "count": c} for (a, b), c in pairs.items()]
    for name, rows, schema in (
            ("unigrams", uni, pa.schema([("term", pa.string()), ("kind", pa.string()),
                                         ("count", pa.int64())])),
            ("pairs", pr, pa.schema([("t1", pa.string()), ("t2", pa.string()),
                                     ("count", pa.int64())]))):
        (directory / name).mkdir(parents=True, exist_ok=True)
        for i in range(files):
            part = rows[i::files]
            pq.write_table(pa.Table.from_pylist(part, schema=schema),
                           directory / name / f"part-{i:05d}.parquet")
    config = {"window": 5, "max_order": 2, "number_rule": "strict", "max_digits": 6,
              "vocab": UNITS if vocab is None else vocab, "text_field": "text"}
    write_manifest(directory, build_manifest("count_terms", config, [],
                                             {"unigrams": len(uni), "pairs": len(pr)}, now_iso(),
                                             plan_fingerprint=None,
                                             outputs={"unigrams": {"rows": len(uni)},
                                                      "pairs": {"rows": len(pr)}}))
    return directory


def default_counts(directory: Path) -> Path:
    """Numbers 0..299 with distinct frequencies plus unit pairs with a few numbers each."""
    unigrams = {str(n): 10_000 - 7 * n for n in range(300)}
    unigrams.update({"05": 9_999, "7": 50_000})            # leading zero term, a tie breaker
    unigrams.update({u: 1000 for u in UNITS})
    pairs: dict[tuple[str, str], int] = {}
    for j, unit in enumerate(UNITS):
        for n in range(1, 40):
            pairs[(str(n), unit)] = 500 - n - j
        pairs[("100", unit)] = 900                          # 3 digits: selected, then dropped
    pairs[("3", "5")] = 77                                  # number pairs are not unit pairs
    return write_counts(directory, unigrams, pairs)
