"""Run files and the reduce step: exact sums whatever the number of tasks, runs and reducers."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap.contract import check_parquet
from freqgap.counting import partials
from freqgap.counting.exchange import final_tables, runs as exchange, task_results
from freqgap.counting.codec import TermCodec
from freqgap.counting.engines import ENGINE_ENV
from freqgap.counting.exchange.final_tables import reduce_range
from freqgap.counting.kinds import DATASETS
from freqgap.counting.rules import TermRules

ENGINES = ("numpy", "numba")
S = task_results.INDEX_STEP


def _batch(kind, keys, counts):
    return pa.RecordBatch.from_arrays([pa.array([kind] * len(keys), pa.string()),
                                       pa.array(keys, pa.int64()), pa.array(counts, pa.int64())],
                                      schema=partials.PARTIAL_SCHEMA)


def _task(tmp_path, name, parts) -> task_results.TaskResult:
    """A TaskResult of run files written from {kind: (keys, counts)} (any order, repeats)."""
    result = task_results.TaskResult()
    for kind, (keys, counts) in parts.items():
        uri = (tmp_path / f"{name}-{kind}.run").as_uri()
        keys, counts = np.asarray(keys, np.int64), np.asarray(counts, np.int64)
        result.index.append(exchange.write_run(uri, keys, counts))
        result.runs.append((uri, kind, int(np.unique(keys).size)))
    return result


def _in(keys, lo, hi):
    """Which keys are in [lo, hi) (None: unbounded)."""
    inside = np.ones(keys.size, dtype=bool)
    if lo is not None:
        inside &= keys >= lo
    if hi is not None:
        inside &= keys < hi
    return inside


def _check_ranges(ranges):
    assert ranges[0][0] is None and ranges[-1][1] is None
    assert all(a[1] == b[0] and a[1] is not None for a, b in zip(ranges, ranges[1:]))
    cuts = [hi for _, hi in ranges[:-1]]
    assert cuts == sorted(set(cuts))                     # strictly increasing: no empty range


def _sums_by_range(results, ranges, engine=None):
    """{kind: Counter} summed range by range, checking each range holds only its keys."""
    from freqgap.counting.exchange.final_tables import _sum_kinds

    runs = [r for res in results for r in res.runs]
    got: dict[str, Counter] = {}
    last = {}
    for lo, hi in ranges:
        for kind, (keys, counts) in _sum_kinds(runs, lo, hi, engine).items():
            assert _in(keys, lo, hi).all()
            assert (keys[1:] > keys[:-1]).all()
            assert kind not in last or last[kind] < keys[0]       # sorted across ranges too
            last[kind] = keys[-1]
            c = got.setdefault(kind, Counter())
            for k, n in zip(keys.tolist(), counts.tolist()):
                assert k not in c                                  # a key in one range only
                c[k] = n
    return got


@pytest.mark.parametrize("engine", ENGINES)
def test_run_file_round_trip_by_any_key_range(tmp_path, monkeypatch, engine):
    monkeypatch.setenv(ENGINE_ENV, engine)
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 1 << 40, 3 * S + 17)
    keys[:50] = keys[50:100]                              # repeats: write_run sums them
    counts = rng.integers(1, 100, keys.size)
    want = Counter()
    for k, n in zip(keys.tolist(), counts.tolist()):
        want[k] += n
    uri = (tmp_path / "a.run").as_uri()
    index = exchange.write_run(uri, keys, counts)
    distinct = np.array(sorted(want))
    assert index == distinct[::S].tolist()
    k, c = exchange.read_run(uri)
    assert dict(zip(k.tolist(), c.tolist())) == want and (k[1:] > k[:-1]).all()
    bounds = [None, -5, 0, int(distinct[0]), int(distinct[S]), int(distinct[S]) + 1,
              int(distinct[2 * S - 1]), int(distinct[-1]), int(distinct[-1]) + 1, 1 << 62,
              *rng.integers(0, 1 << 40, 6).tolist()]
    for lo in bounds:
        for hi in bounds:
            k, c = exchange.read_run(uri, lo, hi)
            sel = distinct[_in(distinct, lo, hi)]
            assert k.tolist() == sel.tolist()
            assert c.tolist() == [want[x] for x in sel.tolist()]


def test_an_empty_run_reads_empty(tmp_path):
    uri = (tmp_path / "e.run").as_uri()
    assert exchange.write_run(uri, np.empty(0, np.int64), np.empty(0, np.int64)) == []
    for lo, hi in ((None, None), (3, 9), (None, 4)):
        k, c = exchange.read_run(uri, lo, hi)
        assert k.size == c.size == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_truncated_damaged_or_foreign_run_file_is_refused(tmp_path, monkeypatch, engine):
    monkeypatch.setenv(ENGINE_ENV, engine)
    uri = (tmp_path / "a.run").as_uri()
    exchange.write_run(uri, np.arange(2 * S + 100, dtype=np.int64), np.ones(2 * S + 100, np.int64))
    data = (tmp_path / "a.run").read_bytes()
    header = 8 * (3 + 3 + 4)                              # MAGIC, rows, step, 3 index keys, 4 offsets
    for cut in (1, 80, (len(data) - header) // 2, len(data) - 30):
        (tmp_path / "a.run").write_bytes(data[:-cut])
        with pytest.raises(exchange.RunFileError, match="truncated"):
            exchange.read_run(uri, 0, 10)
    damaged = bytearray(data)
    damaged[header] ^= 0b11                               # block 0's first length code
    (tmp_path / "a.run").write_bytes(bytes(damaged))
    with pytest.raises(exchange.RunFileError, match="damaged run file"):
        exchange.read_run(uri, 0, 10)
    (tmp_path / "a.run").write_bytes(b"\0" * len(data))
    with pytest.raises(exchange.RunFileError, match="not a freqgap run file"):
        exchange.read_run(uri, 0, 1)
    for old in (np.array([0x31584746, 1, 2048, *([0] * 2049), 5, 1], "<i8").tobytes(),   # version 1
                np.array([0x32584746, 1, S, 5, 5, 1], "<i8").tobytes()):               # version 2
        (tmp_path / "a.run").write_bytes(old)
        with pytest.raises(exchange.RunFileError, match="not a freqgap run file"):
            exchange.read_run(uri)
    (tmp_path / "a.run").write_bytes(data[:10])
    with pytest.raises(exchange.RunFileError, match="not a freqgap run file"):
        exchange.read_run(uri)


@pytest.mark.parametrize("engine", ENGINES)
def test_sum_runs_is_the_exact_sum_in_both_engines(engine):
    rng = np.random.default_rng(2)
    for n_runs in (0, 1, 2, 3, 7):
        parts, want = [], Counter()
        for r in range(n_runs):
            size = 0 if r == 1 else int(rng.integers(1, 3000))
            keys = np.unique(rng.integers(0, 5000, size))
            counts = rng.integers(1, 1 << 40, keys.size)
            parts.append((keys, counts))
            for k, n in zip(keys.tolist(), counts.tolist()):
                want[k] += n
        keys, counts = exchange.sum_runs(parts, engine)
        assert keys.dtype == counts.dtype == np.int64
        assert (keys[1:] > keys[:-1]).all()
        assert dict(zip(keys.tolist(), counts.tolist())) == want
        other = exchange.sum_runs(parts, "numpy")
        assert np.array_equal(keys, other[0]) and np.array_equal(counts, other[1])


def test_key_ranges_balance_skewed_keys(tmp_path):
    """Packed small term ids (Zipf): an even split of the key space would put nearly every
    row in one range; quantiles of the samples give each about the same."""
    rng = np.random.default_rng(3)
    results = []
    for task in range(5):
        a, b = rng.zipf(1.3, 100_000) % 50_000, rng.integers(0, 50_000, 100_000)
        results.append(_task(tmp_path, f"z{task}", {"p": (TermCodec.pair_keys(a, b), np.ones(a.size))}))
    total = sum(rows for res in results for _, _, rows in res.runs)
    for reducers in (2, 4, 7):
        ranges = task_results.key_ranges(results, reducers)
        _check_ranges(ranges)
        assert len(ranges) == reducers
        per = [sum(exchange.read_run(uri, lo, hi)[0].size for res in results for uri, _, _ in res.runs)
               for lo, hi in ranges]
        assert sum(per) == total
        slack = 2 * len(results) * S                 # a sample stands for S rows, per run
        assert max(abs(p - total / reducers) for p in per) <= slack + 0.02 * total


def test_key_ranges_of_one_reducer_or_no_samples():
    assert task_results.key_ranges([], 4) == [(None, None)]
    res = task_results.TaskResult([("x", "u", 10)], [[1]], {})
    assert task_results.key_ranges([res], 1) == [(None, None)]
    assert task_results.key_ranges([res], 8) == [(None, None)]          # one sample: nothing to cut
    empty = task_results.TaskResult([("x", "u", 0)], [[]], {})
    assert task_results.key_ranges([empty], 3) == [(None, None)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cut_inside_equal_samples_of_many_runs_is_exact(tmp_path, engine):
    """Every run holds the same keys, so each sample key occurs in every run and the cuts
    fall on keys present everywhere: each key still lands in one range, summed over all."""
    results, want = [], Counter()
    keys = np.arange(0, 6 * S, dtype=np.int64) * 3
    for task in range(4):
        counts = np.full(keys.size, task + 1, np.int64)
        results.append(_task(tmp_path, f"e{task}", {"t": (keys, counts)}))
        for k in keys.tolist():
            want[k] += task + 1
    ranges = task_results.key_ranges(results, 3)
    _check_ranges(ranges)
    assert len(ranges) == 3
    assert all(hi in set(keys[::S].tolist()) for _, hi in ranges[:-1])
    assert _sums_by_range(results, ranges, engine) == {"t": want}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("reducers", [1, 2, 3, 9])
def test_random_runs_over_reducers_sum_like_a_counter(tmp_path, engine, reducers):
    rng = np.random.default_rng(reducers)
    results, want = [], {}
    for task in range(6):
        parts = {}
        for kind, high in (("u", 300), ("p", 1 << 30), ("t", 1 << 62), ("u@3", 50)):
            n = 0 if (task, kind) == (2, "p") else int(rng.integers(1, 3 * S))
            keys = rng.integers(0, high, n)
            counts = rng.integers(1, 1000, n)
            parts[kind] = (keys, counts)
            c = want.setdefault(kind, Counter())
            for k, x in zip(keys.tolist(), counts.tolist()):
                c[k] += x
        results.append(_task(tmp_path, f"r{task}", parts))
    ranges = task_results.key_ranges(results, reducers)
    _check_ranges(ranges)
    assert _sums_by_range(results, ranges, engine) == want


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
    assert len(result.index) == len(result.runs)
    for (uri, kind, rows), index in zip(result.runs, result.index):
        keys, counts = exchange.read_run(uri)
        assert keys.size == rows and index == keys[::S].tolist()
        for k, n in zip(keys.tolist(), counts.tolist()):
            kinds[(kind, k)] += n
    assert kinds == {("u", 1): 1, ("u", 2): 1, ("u", 5): 4, ("p", 9): 2, ("p", 8): 2, ("u@3", 1): 6}
    assert len([r for r in result.runs if r[1] == "u"]) == 2        # spilled in two runs
    assert task_results.TaskResult.from_json(result.to_json()) == result


def test_spill_merges_batches_of_a_kind_that_repeat_keys(tmp_path):
    """Two drains of a task's sums (each sorted) and an unsorted batch: one run, summed."""
    batches = [_batch("t", [1, 5, 9], [1, 1, 1]), _batch("t", [2, 5, 7], [1, 2, 3]),
               _batch("t", [9, 1, 1], [10, 20, 30])]
    result = exchange.spill(iter(batches), (tmp_path / "x").as_uri())
    (uri, kind, rows), = result.runs
    keys, counts = exchange.read_run(uri)
    assert dict(zip(keys.tolist(), counts.tolist())) == {1: 51, 2: 1, 5: 3, 7: 3, 9: 11}
    assert rows == 5 and kind == "t"


@pytest.mark.parametrize("reducers", [1, 2, 5])
def test_reduce_writes_the_exact_sum_whatever_the_reducers(tmp_path, reducers):
    rules = TermRules()
    codec = TermCodec(rules)
    rng = np.random.default_rng(1)
    want: dict[str, Counter] = {name: Counter() for name in DATASETS}
    results = []
    for task in range(4):
        ids = rng.integers(0, 3000, (400, 3))
        parts = {}
        for kind, name, keys in (("u", "unigrams", ids[:, 0]),
                                 ("p", "pairs", TermCodec.pair_keys(ids[:, 0], ids[:, 1])),
                                 ("t", "triples", TermCodec.triple_keys(*ids.T))):
            counts = rng.integers(1, 1000, keys.size)
            for k, n in zip(keys.tolist(), counts.tolist()):
                want[name][k] += n
            parts[kind] = (keys, counts)
        results.append(_task(tmp_path, f"t{task}", parts))
    runs = [r for res in results for r in res.runs]
    final = (tmp_path / "final").as_uri()
    ranges = task_results.key_ranges(results, reducers)
    parts = [reduce_range(runs, lo, hi, part, rules, final, False, rows_per_file=500)
             for part, (lo, hi) in enumerate(ranges)]
    for name, order in (("unigrams", 1), ("pairs", 2), ("triples", 3)):
        files = sorted(check_parquet(name, tmp_path / "final" / name))
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
        # files in part order are in key order: the table is sorted by key across files
        ids = np.column_stack([codec.encode(table.column(c).to_pylist()) for c in cols])
        keys = ids[:, 0] if order == 1 else (TermCodec.pair_keys(*ids.T) if order == 2
                                             else TermCodec.triple_keys(*ids.T))
        assert (keys[1:] > keys[:-1]).all()


@pytest.mark.parametrize("rows, most, size", [(0, 4, 1), (1, 4, 1), (4, 4, 4), (5, 4, 3),
                                              (9, 4, 3), (1_421_067, 2_000_000, 1_421_067),
                                              (5_000_000, 2_000_000, 1_666_667)])
def test_row_groups_are_as_few_as_the_cap_allows_and_even(rows, most, size):
    assert final_tables.row_groups(rows, most) == size
    groups = -(-rows // size) if rows else 1
    assert groups == max(1, -(-rows // most)) and size <= most


def test_each_final_file_is_cut_into_even_row_groups(tmp_path, monkeypatch):
    """No short tail group (each group repeats every term column's dictionary): 23 rows,
    at most 10 a group -> 8 + 8 + 7, not 10 + 10 + 3; the rows read back in key order."""
    monkeypatch.setattr(final_tables, "ROWS_PER_ROW_GROUP", 10)
    rules = TermRules()
    keys = np.arange(23, dtype=np.int64) + TermCodec(rules).word_base - 23
    uri = (tmp_path / "u.run").as_uri()
    exchange.write_run(uri, keys, np.arange(1, 24))
    final = tmp_path / "final"
    reduce_range([(uri, "u", 23)], None, None, 0, rules, final.as_uri(), False)
    (path,) = check_parquet("unigrams", final / "unigrams")
    meta = pq.read_metadata(path)
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [8, 8, 7]
    assert pq.read_table(path).column("count").to_pylist() == list(range(1, 24))


def test_an_empty_result_still_writes_every_table(tmp_path):
    final = tmp_path / "final"
    out = reduce_range([], None, None, 0, TermRules(), final.as_uri(), True)
    assert out["rows"] == {"unigrams": 0, "pairs": 0, "triples": 0}
    for name in DATASETS:
        files = check_parquet(name, final / name)
        assert [pq.read_metadata(f).num_rows for f in files] == [0]
        assert "step_bucket" in pq.read_schema(files[0]).names


def test_all_equal_kinds():
    same = pa.array(["u@3"] * 5)
    assert exchange._all_equal(same, "u@3") and not exchange._all_equal(same, "u@4")
    assert not exchange._all_equal(same, "u")
    assert exchange._all_equal(pa.array(["t", "p", "t", "t"]).slice(2), "t")
    assert not exchange._all_equal(pa.array(["t", "p", "t", "t"]).slice(1), "t")
    assert not exchange._all_equal(pa.array(["pp", "p", "ppp"]), "pp")
    assert not exchange._all_equal(pa.array(["u", None, "u"]), "u")
    assert exchange._all_equal(pa.array(["", ""]), "")


def test_parts_in_key_order_are_written_as_one_run(tmp_path):
    keys = np.arange(3 * S + 5, dtype=np.int64) * 2
    counts = np.arange(keys.size, dtype=np.int64)
    cuts = [0, 7, S + 3, S + 4, 2 * S, keys.size]
    parts = [(keys[a:b], counts[a:b]) for a, b in zip(cuts, cuts[1:])]
    uri = (tmp_path / "p.run").as_uri()
    assert exchange.write_parts(uri, parts) == (keys.size, keys[::S].tolist())
    k, c = exchange.read_run(uri)
    assert np.array_equal(k, keys) and np.array_equal(c, counts)
    overlapping = [(keys[:10], counts[:10]), (keys[5:20], counts[5:20])]
    assert exchange.write_parts(uri, overlapping) == (20, [0])
    k, c = exchange.read_run(uri)
    assert np.array_equal(k, keys[:20])
    assert np.array_equal(c, counts[:20] + np.where((np.arange(20) >= 5) & (np.arange(20) < 10), counts[:20], 0))


def test_all_equal_kinds_of_a_count_batch():
    """partials._count_batch's dictionary-encoded kind column is one kind without a compare."""
    batch = partials._count_batch("t", np.arange(5, dtype=np.int64), np.ones(5, np.int64))
    assert exchange._all_equal(batch.column(0), "t") and not exchange._all_equal(batch.column(0), "p")
    assert batch.to_pydict()["kind"] == ["t"] * 5


def test_final_tables_store_terms_as_dictionary_pages_and_read_back_as_plain_strings(tmp_path):
    """decode_table's dictionary columns are written as Parquet dictionary pages (no string
    per row), but every reader gets the contract's plain types back: pyarrow (no Arrow
    schema in the file, so no dictionary type), DuckDB and polars."""
    import duckdb
    import polars as pl

    from freqgap.contract import DATASETS as CONTRACT

    rules = TermRules()
    codec = TermCodec(rules)
    ids = codec.encode(["12", "3", "hour", "day", "7"])
    keys = np.unique(TermCodec.triple_keys(ids[[0, 1, 2, 0]], ids[[1, 2, 3, 4]], ids[[4, 4, 4, 1]]))
    uri = (tmp_path / "r.run").as_uri()
    exchange.write_run(uri, keys, np.arange(1, keys.size + 1))
    final = tmp_path / "final"
    reduce_range([(uri, "t", int(keys.size))], None, None, 0, rules, final.as_uri(), False)
    (path,) = check_parquet("triples", final / "triples")
    assert pq.read_schema(path) == CONTRACT["triples"].schema()
    column = pq.read_metadata(path).row_group(0).column(0)
    assert column.has_dictionary_page and "RLE_DICTIONARY" in column.encodings
    table = pq.read_table(path)
    want = [tuple(codec.decode(np.array([int(i[0]) for i in TermCodec.split(np.array([k]), 3)])).to_pylist())
            for k in keys.tolist()]
    assert [(r["t1"], r["t2"], r["t3"]) for r in table.to_pylist()] == want
    assert table.column("count").to_pylist() == list(range(1, keys.size + 1))
    types = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
    assert [(name, kind) for name, kind, *_ in types] == [("t1", "VARCHAR"), ("t2", "VARCHAR"),
                                                         ("t3", "VARCHAR"), ("count", "BIGINT")]
    assert pl.read_parquet(path).schema == {"t1": pl.String, "t2": pl.String, "t3": pl.String,
                                            "count": pl.Int64}
