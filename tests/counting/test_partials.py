"""The task code end to end (line_rows -> count_lines): both engines equal the reference
counter and each other, statistics and skip reports included, whatever the block and
chunk boundaries (rows are blocks of whole lines; the compiled engine splits and parses a
chunk of them at once)."""

from __future__ import annotations

import gzip
import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.counting import kinds, partials, sources
from freqgap.counting.codec import TermCodec
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules
from freqgap.counting.inputs import BadInputError, InputFile

ENGINES = ("numpy", "numba")


def run(paths: list[Path], rules: TermRules, on_bad: str, engine: str, monkeypatch):
    """(counts per kind as reference-style dicts, statistics, skip reports) of the files."""
    monkeypatch.setenv("FREQGAP_ENGINE", engine)
    inputs = [InputFile(i, str(p), p.stat().st_size, 0) for i, p in enumerate(paths)]
    codec = TermCodec(rules)
    counts: dict[str, Counter] = {k: Counter() for k in kinds.COUNT_KINDS}
    stats: Counter = Counter()
    skip_lines: dict[str, list[int]] = defaultdict(list)
    for batch in partials.count_lines(partials.line_rows(inputs, rules.text_field, on_bad), rules, on_bad,
                                      {f.index: f.path for f in inputs}):
        cols = batch.to_pydict()
        for kind, key, n in zip(cols["kind"], cols["key"], cols["n"]):
            if kind in counts:
                order = kinds.COUNT_KINDS.index(kind) + 1
                ids = codec.split(np.array([key], np.int64), order)
                names = tuple(codec.decode(i).to_pylist()[0] for i in ids)
                counts[kind][names[0] if order == 1 else names] += n
            elif kind.startswith(kinds.SKIP_LINE):
                skip_lines[kind].append(key)
            else:
                stats[kind] += n
    return {k: dict(v) for k, v in counts.items()}, dict(stats), dict(skip_lines)


def reference(texts: list[str], rules: TermRules):
    ref = count_texts(texts, rules)
    return {"u": dict(ref.unigrams), "p": dict(ref.pairs), "t": dict(ref.triples)}


def write(path: Path, data: bytes) -> Path:
    if path.name.endswith(".zst"):
        # two frames: the second starts inside a line
        cut = len(data) // 2
        path.write_bytes(zstandard.compress(data[:cut]) + zstandard.compress(data[cut:]))
    elif path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def record(text: str, subset: str | None = "Pile-CC", ascii_only: bool = True) -> bytes:
    obj = {"text": text, **({"meta": {"pile_set_name": subset}} if subset else {})}
    return json.dumps(obj, ensure_ascii=ascii_only).encode()


TEXTS = ["5 hours and 7 days", "9 10 9 9", "In 1990 the \u00e9t\u00e9 lasted 3 months\u00a05 weeks",
         "no terms here", "", "12 13\n14\t15 2 years", "a \u212aelvin 2 decades\u3000ago 45", "x " * 40 + "7 8"]


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_engines_equal_the_reference_with_statistics(tmp_path, monkeypatch, block):
    """CRLF, blank lines, a last line without newline, lines across blocks and frames."""
    monkeypatch.setattr(sources, "BLOCK", block)
    lines = [record(t, ascii_only=i % 2 == 0) for i, t in enumerate(TEXTS)]
    a = write(tmp_path / "a.jsonl.zst", b"\n".join(lines[:4]) + b"\n\n  \n" + b"\r\n".join(lines[4:]) + b"\r\n")
    b = write(tmp_path / "b.jsonl.gz", b"\n".join(reversed(lines)))      # no final newline
    c = write(tmp_path / "c.jsonl", b"\t\r\n" + lines[2] + b"\n" + b"\n")
    rules = TermRules(window=4)
    expected = reference(TEXTS + TEXTS + [TEXTS[2]], rules)
    got = {e: run([a, b, c], rules, "fail", e, monkeypatch) for e in ENGINES}
    assert got["numba"] == got["numpy"]
    counts, stats, skips = got["numba"]
    assert counts == expected
    assert stats[f"{kinds.LINES}\t0"] == 10 and stats[f"{kinds.DOCS}\t0"] == 8
    assert stats[f"{kinds.LINES}\t1"] == 8 and stats[f"{kinds.DOCS}\t1"] == 8
    assert stats[f"{kinds.LINES}\t2"] == 3 and stats[f"{kinds.DOCS}\t2"] == 1
    assert stats[f"{kinds.BYTES}\t2"] == 2 + len(lines[2])
    assert stats[f"{kinds.SUBSET}\tPile-CC"] == 17
    assert skips == {f"{kinds.SKIP_LINE}\t0\tblank line": [5, 6], f"{kinds.SKIP_LINE}\t2\tblank line": [1, 3]}


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_records_are_skipped_and_named_by_line(tmp_path, monkeypatch, engine):
    monkeypatch.setattr(sources, "BLOCK", 50)
    monkeypatch.setattr(partials, "COUNT_CHUNK_BYTES", 120)
    good = [record(t) for t in TEXTS]
    bad = [b'{"text": 5}', b'{"text": "a\xff"}', b"not json", b"", b"[1]", b'{"x": "y"}', b'{"text": "\\ud800"}']
    lines = [x for pair in zip(good, bad) for x in pair] + good[len(bad):]
    path = write(tmp_path / "d.jsonl.zst", b"\n".join(lines) + b"\n")
    rules = TermRules()
    counts, stats, skips = run([path], rules, "skip", engine, monkeypatch)
    assert counts == reference(TEXTS, rules)
    assert stats[f"{kinds.DOCS}\t0"] == len(TEXTS) and stats[f"{kinds.LINES}\t0"] == len(lines)
    assert stats[f"{kinds.BYTES}\t0"] == sum(map(len, lines))
    reasons = {k.split("\t")[2]: v for k, v in skips.items()}
    assert reasons == {"text field is not a string": [2], "invalid UTF-8": [4], "not valid JSON": [6],
                       "blank line": [8], "not a JSON object": [10], "missing text field": [12],
                       "text holds a lone surrogate": [14]}
    monkeypatch.setattr(partials, "COUNT_CHUNK_BYTES", 8 << 20)
    with pytest.raises(BadInputError, match=r"d\.jsonl\.zst:2: text field is not a string"):
        run([path], rules, "fail", engine, monkeypatch)


def test_chunk_and_block_sizes_do_not_change_anything(tmp_path, monkeypatch):
    lines = [record(t + " " + str(i)) for i, t in enumerate(TEXTS * 5)]
    path = write(tmp_path / "e.jsonl.zst", b"\n".join(lines) + b"\n")
    rules = TermRules(window=6)
    want = run([path], rules, "fail", "numpy", monkeypatch)
    for block, chunk in ((1, 1), (13, 200), (1 << 20, 300), (1 << 20, 8 << 20)):
        monkeypatch.setattr(sources, "BLOCK", block)
        monkeypatch.setattr(partials, "COUNT_CHUNK_BYTES", chunk)
        assert run([path], rules, "fail", "numba", monkeypatch) == want, (block, chunk)


LINES = st.one_of(
    st.builds(record, st.text(alphabet=st.sampled_from(list("5 10 hours\u00a0\u3000\u00e9x\n\t\"\\")), max_size=30),
              st.sampled_from([None, "A", "B\u00e9"]), st.booleans()),
    st.sampled_from([b"", b" ", b"\r", b"\t \r", b"{", b'{"text": 1}', b"\xff", b'{"text": "7"}  ']))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, min_size=1, max_size=12), block=st.integers(1, 40), chunk=st.integers(1, 200),
       crlf=st.booleans(), final_newline=st.booleans())
def test_random_files_give_the_same_result_in_both_engines(monkeypatch, lines, block, chunk, crlf, final_newline):
    monkeypatch.setattr(sources, "BLOCK", block)
    monkeypatch.setattr(partials, "COUNT_CHUNK_BYTES", chunk)
    sep = b"\r\n" if crlf else b"\n"
    data = sep.join(lines) + (sep if final_newline else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp) / "r.jsonl.zst", data)
        results = [run([path], TermRules(window=3), "skip", e, monkeypatch) for e in ENGINES]
    assert results[0] == results[1]


@pytest.mark.parametrize("engine", ENGINES)
def test_key_sums_merge_runs_exactly(monkeypatch, engine):
    """Chunks of unsorted keys with repeats, summed through the run stack (compactions and
    early drains included) equal one exact sum."""
    from freqgap.counting.engines import get_engine

    monkeypatch.setattr(partials, "COMPACT_ROWS", 50)
    monkeypatch.setattr(partials, "EMIT_ROWS", 400)
    rng = np.random.default_rng(7)
    sums, want, got = partials.KeySums(get_engine(engine).merge), Counter(), Counter()
    for size in rng.integers(0, 300, 40).tolist():
        keys = rng.integers(-5, 2000, size).astype(np.int64)
        counts = rng.integers(1, 1 << 40, size).astype(np.int64)
        for k, c in zip(keys.tolist(), counts.tolist()):
            want[k] += c
        batches = list(sums.add({"p": (keys, counts)}))
        batches += list(sums.drain()) if size % 7 == 0 else []
        for b in batches:
            got.update(dict(zip(b.column(1).to_pylist(), b.column(2).to_pylist())))
    for b in sums.drain():
        keys = b.column(1).to_pylist()
        assert keys == sorted(set(keys))
        got.update(dict(zip(keys, b.column(2).to_pylist())))
    assert got == want


def test_compiled_merges_are_exact_and_sized_to_their_rows():
    """The compiled merge shrinks its arrays to its rows: each result is exact (numpy's sum
    of the concatenation), owns exactly its rows (no slice of a block with room for both
    runs), and is not changed by the next merge."""
    pytest.importorskip("numba")
    from freqgap.counting.engines import compiled

    rng = np.random.default_rng(11)
    results, wants = [], []
    for size1, size2 in [(0, 5), (40, 0), (30, 50), (200, 3), (1, 1), (100, 100)]:
        runs = []
        for size in (size1, size2):
            keys = np.unique(rng.integers(-(1 << 62), 1 << 62, size)).astype(np.int64)
            keys[: size // 3] = np.sort(rng.choice(np.arange(-50, 50), size // 3, replace=False))
            keys = np.unique(keys)
            runs.append((keys, rng.integers(1, 1 << 40, keys.size).astype(np.int64)))
        (k1, c1), (k2, c2) = runs
        got = compiled.merge_sums(k1, c1, k2, c2)
        want = partials.sum_by_key(np.concatenate((k1, k2)), np.concatenate((c1, c2)))
        results.append((got, [a.copy() for a in got]))
        wants.append(want)
    for (got, snapshot), want in zip(results, wants):
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        assert np.array_equal(got[0], snapshot[0]) and np.array_equal(got[1], snapshot[1])
        assert got[0].dtype == got[1].dtype == np.int64
        assert all(a.flags.owndata and a.base is None and a.nbytes == 8 * want[0].size for a in got)


def test_compiled_run_lengths_are_exact_and_sized_to_their_rows():
    """A chunk's sorted keys as (distinct keys, counts), each array owning exactly its rows."""
    pytest.importorskip("numba")
    from freqgap.counting.engines import compiled

    rng = np.random.default_rng(5)
    for keys in (np.empty(0, np.int64), np.array([7], np.int64), np.sort(rng.integers(0, 40, 500)),
                 np.arange(300, dtype=np.int64), np.full(64, -3, np.int64)):
        uniq, counts = compiled.runs(keys)
        want_keys, want_counts = np.unique(keys, return_counts=True)
        assert np.array_equal(uniq, want_keys) and np.array_equal(counts, want_counts)
        assert uniq.dtype == counts.dtype == np.int64
        assert all(a.flags.owndata and a.base is None and a.nbytes == 8 * want_keys.size
                   for a in (uniq, counts))


def test_a_row_far_over_the_chunk_size_is_cut_at_newlines():
    """A huge block (a highly compressed file) is counted in chunk-sized parts, numbered on."""
    rows = list(partials._row_parts(7, b"aaa\nbb\n\ncc\nd\n", 2))
    assert rows == [(7, b"aaa"), (8, b"bb"), (9, b"\ncc"), (11, b"d\n")]      # lines 7..12
    assert list(partials._row_parts(1, b"abc\n", 1)) == [(1, b"abc"), (2, b"")]
    assert list(partials._row_parts(1, b"x\ny", 10)) == [(1, b"x\ny")]
