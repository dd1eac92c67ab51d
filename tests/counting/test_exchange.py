"""Run files and the reduce step: exact sums whatever the number of tasks, runs and reducers."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap.contract import check_parquet
from freqgap.counting import exchange, partials
from freqgap.counting.codec import TermCodec
from freqgap.counting.final_tables import DATASETS, reduce_buckets
from freqgap.counting.rules import TermRules


def _batch(kind, keys, counts):
    return pa.RecordBatch.from_arrays([pa.array([kind] * len(keys), pa.string()),
                                       pa.array(keys, pa.int64()), pa.array(counts, pa.int64())],
                                      schema=partials.PARTIAL_SCHEMA)


def test_bucket_ranges_cover_every_bucket_once():
    for reducers in (1, 2, 3, 7, 64, exchange.FINE_BUCKETS):
        ranges = exchange.bucket_ranges(reducers)
        assert len(ranges) == reducers and ranges[0][0] == 0
        assert ranges[-1][1] == exchange.FINE_BUCKETS
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))


def test_buckets_spread_packed_small_ids():
    codec_keys = TermCodec.pair_keys(np.arange(2000, dtype=np.int64) % 40, np.arange(2000) // 40)
    used = np.bincount(exchange.buckets_of(codec_keys), minlength=exchange.FINE_BUCKETS)
    assert used.max() <= 8          # 2,000 keys over 2,048 buckets: no pile-up


def test_run_file_round_trip_by_ranges(tmp_path):
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 1 << 62, 5000)
    counts = rng.integers(1, 100, 5000)
    uri = (tmp_path / "a.run").as_uri()
    exchange.write_run(uri, keys, counts)
    got = [exchange.read_run(uri, lo, hi) for lo, hi in exchange.bucket_ranges(5)]
    all_keys = np.concatenate([k for k, _ in got])
    all_counts = np.concatenate([c for _, c in got])
    assert sorted(zip(all_keys.tolist(), all_counts.tolist())) == sorted(zip(keys.tolist(), counts.tolist()))
    for (lo, hi), (k, _) in zip(exchange.bucket_ranges(5), got):
        b = exchange.buckets_of(k)
        assert ((b >= lo) & (b < hi)).all()


def test_a_truncated_or_foreign_run_file_is_refused(tmp_path):
    uri = (tmp_path / "a.run").as_uri()
    exchange.write_run(uri, np.arange(100, dtype=np.int64), np.ones(100, np.int64))
    data = (tmp_path / "a.run").read_bytes()
    (tmp_path / "a.run").write_bytes(data[:-80])
    with pytest.raises(exchange.RunFileError, match="truncated"):
        exchange.read_run(uri, 0, exchange.FINE_BUCKETS)
    (tmp_path / "a.run").write_bytes(b"\0" * len(data))
    with pytest.raises(exchange.RunFileError, match="not a freqgap run file"):
        exchange.read_run(uri, 0, 1)


def test_spill_splits_counts_from_statistics_and_spills_in_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(exchange, "SPILL_ROWS", 3)
    stats = pa.RecordBatch.from_arrays(
        [pa.array(["docs\t0", "skipline\t0\tblank line", "u", "docs\t0"]),
         pa.array([None, 7, 5, None], pa.int64()), pa.array([2, 1, 4, 3], pa.int64())],
        schema=partials.PARTIAL_SCHEMA)
    batches = [_batch("u", [1, 2], [1, 1]), _batch("p", [9, 8], [2, 2]), stats,
               _batch("u@3", [1], [6]), _batch("t", [], [])]
    result = exchange.spill(iter(batches), (tmp_path / "x").as_uri())
    assert result.stats == {("docs\t0", None): 5, ("skipline\t0\tblank line", 7): 1}
    kinds = Counter()
    for uri, kind, rows in result.runs:
        keys, counts = exchange.read_run(uri, 0, exchange.FINE_BUCKETS)
        assert keys.size == rows
        for k, n in zip(keys.tolist(), counts.tolist()):
            kinds[(kind, k)] += n
    assert kinds == {("u", 1): 1, ("u", 2): 1, ("u", 5): 4, ("p", 9): 2, ("p", 8): 2, ("u@3", 1): 6}
    assert len({kind for _, kind, _ in result.runs if kind == "u"}) == 1
    assert len([r for r in result.runs if r[1] == "u"]) == 2        # spilled in two runs
    assert exchange.TaskResult.from_json(result.to_json()) == result


@pytest.mark.parametrize("reducers", [1, 2, 5])
def test_reduce_is_the_exact_sum_whatever_the_reducers(tmp_path, reducers):
    rules = TermRules()
    codec = TermCodec(rules)
    rng = np.random.default_rng(1)
    want: dict[str, Counter] = {name: Counter() for name in DATASETS}
    runs = []
    for task in range(4):
        ids = rng.integers(0, 3000, (400, 3))
        for kind, name, keys in (("u", "unigrams", ids[:, 0]),
                                 ("p", "pairs", TermCodec.pair_keys(ids[:, 0], ids[:, 1])),
                                 ("t", "triples", TermCodec.triple_keys(*ids.T))):
            counts = rng.integers(1, 1000, keys.size)
            for k, n in zip(keys.tolist(), counts.tolist()):
                want[name][k] += n
            uri = (tmp_path / f"{task}{kind}.run").as_uri()
            exchange.write_run(uri, keys.astype(np.int64), counts)
            runs.append((uri, kind, int(keys.size)))
    final = (tmp_path / "final").as_uri()
    parts = [reduce_buckets(runs, lo, hi, part, rules, final, False, rows_per_file=500)
             for part, (lo, hi) in enumerate(exchange.bucket_ranges(reducers))]
    for name, order in (("unigrams", 1), ("pairs", 2), ("triples", 3)):
        files = check_parquet(name, tmp_path / "final" / name)
        table = pa.concat_tables(pq.read_table(f) for f in files)
        assert sum(p["rows"][name] for p in parts) == table.num_rows == len(want[name])
        expect = {}
        for key, n in want[name].items():
            ids = [int(i[0]) for i in TermCodec.split(np.array([key]), order)]
            expect[tuple(codec.decode(np.array(ids)).to_pylist())] = n
        cols = table.column_names[:order]
        got = {tuple(r[c] for c in cols): r["count"] for r in table.to_pylist()}
        assert got == expect
        assert all(pq.read_metadata(f).num_rows <= 500 for f in files)


def test_an_empty_result_still_writes_every_table(tmp_path):
    final = tmp_path / "final"
    out = reduce_buckets([], 0, exchange.FINE_BUCKETS, 0, TermRules(), final.as_uri(), True)
    assert out["rows"] == {"unigrams": 0, "pairs": 0, "triples": 0}
    for name in DATASETS:
        files = check_parquet(name, final / name)
        assert [pq.read_metadata(f).num_rows for f in files] == [0]
        assert "step_bucket" in pq.read_schema(files[0]).names
