"""`freqgap count --limit N`, `--by-subset` and `--doc-freq` (issue 40, item 6).

Each is checked on both engines' count task (`partials.count_lines`: the compiled JSON
reader, Arrow's reader and the per-record Python path) against the reference counter or a
plain Python count, and through the Spark job and the command line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from freqgap.cli import main as freqgap_main
from freqgap.counting import kinds, partials
from freqgap.counting.codec import TermCodec
from freqgap.counting.engines import ENGINES
from freqgap.counting.inputs import list_inputs
from freqgap.counting.limit import first_records
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules
from tests.counting.corpus_utils import read_counts, reference, write_jsonl
from tests.counting.test_conformance import ADVERSARIAL

ORDER = {kinds.UNIGRAM: 1, kinds.PAIR: 2, kinds.TRIPLE: 3, kinds.UNIT_DOCS: 1}


def task_kinds(engine: str, rows, rules: TermRules, on_bad: str = "fail") -> dict[str, Counter]:
    """{kind: Counter of term keys} of a count task's partial rows (labelled kinds too)."""
    codec = TermCodec(rules)
    out: dict[str, Counter] = {}
    for batch in partials.count_lines(rows, rules, on_bad, {0: "a.jsonl", 1: "b.jsonl"},
                                      engine=engine):
        names = batch.column(0).to_pylist()
        keys = np.asarray(batch.column(1).to_numpy(zero_copy_only=False))
        counts = np.asarray(batch.column(2).to_numpy(zero_copy_only=False))
        for kind in set(names):
            if not kinds.is_count_kind(kind):
                continue
            rows_of = np.flatnonzero(np.asarray([k == kind for k in names]))
            order = ORDER[kind.split("@", 1)[0]]
            ids = TermCodec.split(keys[rows_of].astype(np.int64), order) if order > 1 else [keys[rows_of]]
            terms = list(zip(*(codec.decode(np.asarray(i, np.int64)).to_pylist() for i in ids)))
            out.setdefault(kind, Counter()).update(
                dict(zip([t[0] if order == 1 else t for t in terms], counts[rows_of].tolist())))
    return out


def jsonl(records: list) -> bytes:
    return b"\n".join(r if isinstance(r, bytes) else json.dumps(r).encode() for r in records)


# ---- --doc-freq ---------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_doc_freq_is_the_documents_holding_each_term(engine):
    """A window count with doc_freq: unigrams, pairs and triples as before, and kind d holds
    each term's documents, equal to a plain per-document set count."""
    texts = ADVERSARIAL + ["9 9 9", "day days Day 9"]
    rules = TermRules(doc_freq=True)
    got = task_kinds(engine, [(0, 1, jsonl([{"text": t} for t in texts]), False, None)], rules)
    ref = count_texts(texts, TermRules())
    sets = [{t for t in map(rules.term_of, text.split()) if t} for text in texts]
    assert got[kinds.UNIT_DOCS] == Counter(t for s in sets for t in s)
    assert (got[kinds.UNIGRAM], got[kinds.PAIR], got[kinds.TRIPLE]) == (ref.unigrams, ref.pairs, ref.triples)
    plain = task_kinds(engine, [(0, 1, jsonl([{"text": t} for t in texts]), False, None)], TermRules())
    assert kinds.UNIT_DOCS not in plain


# ---- --limit ------------------------------------------------------------------------
def _corpus(tmp_path: Path) -> tuple[list[str], list[Path]]:
    """Three files (plain with blank lines, zstd, gzip) of generated texts."""
    from tests.counting.test_job import random_texts

    texts = random_texts(11, 90, max_len=40)
    a = tmp_path / "in" / "a.jsonl"
    write_jsonl(a, texts[:30])
    a.write_bytes(b"\n" + a.read_bytes().replace(b"\n", b"\n \n", 3))     # blank lines: no records
    files = [a, write_jsonl(tmp_path / "in" / "b.jsonl.zst", texts[30:60]),
             write_jsonl(tmp_path / "in" / "c.jsonl.gz", texts[60:])]
    return texts, files


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("limit", [1, 29, 30, 31, 47, 90, 1000])
def test_limit_counts_exactly_the_first_records(engine, limit, tmp_path):
    texts, files = _corpus(tmp_path)
    rules = TermRules()
    rows = first_records(partials.line_rows(list_inputs([str(tmp_path / "in")]), "text", "fail"), limit)
    got = task_kinds(engine, rows, rules)
    ref = count_texts(texts[:limit], rules)
    assert got.get(kinds.UNIGRAM, Counter()) == ref.unigrams
    assert got.get(kinds.PAIR, Counter()) == ref.pairs and got.get(kinds.TRIPLE, Counter()) == ref.triples


def test_limit_reads_nothing_after_the_last_record():
    """Rows after the N-th record are never asked for: a dry run reads what it counts."""
    def rows():
        yield (0, 1, b'{"text": "1"}\n\n{"text": "2"}', False, None)
        yield (1, 1, b"", True, None)                       # a Parquet row: one record
        raise AssertionError("read past the limit")

    assert [r[2] for r in first_records(rows(), 2)] == [b'{"text": "1"}\n\n{"text": "2"}']
    assert len(list(first_records(rows(), 3))) == 2
    bad = [(0, 0, b"", False, "cannot open"), (1, 4, b"", True, "missing text field")]
    assert list(first_records(iter(bad), 1)) == bad          # a whole-file error is no record


def test_spark_limit_is_marked_and_refused_downstream(spark, tmp_path, capsys):
    """`count --limit N` over three files equals the reference of the first N records in
    listing order; config and summary say it is a dry run; a rerun with another limit is
    another result; instances refuses the directory with one line."""
    texts, _ = _corpus(tmp_path)
    out = tmp_path / "out"
    assert freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(out),
                         "--limit", "47"]) == 0
    printed = capsys.readouterr().out
    assert "dry run: the first 47 records only (count --limit 47)" in printed
    assert read_counts(out) == reference(texts[:47])
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["config"]["limit"] == 47 and manifest["totals"]["documents"] == 47
    code = freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(out), "--limit", "5"])
    assert code == 2 and "already holds a different result" in capsys.readouterr().err
    code = freqgap_main(["instances", "--counts", str(out), "--out", str(tmp_path / "inst")])
    err = capsys.readouterr().err
    assert code == 2 and "--limit" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["--limit", "0"], "--limit: an integer >= 1 expected"),
    (["--limit", "x"], "--limit: an integer >= 1 expected"),
    (["--unit", "document", "--doc-freq"], "--doc-freq applies to the window unit"),
])
def test_cli_refuses_bad_values_in_one_line(tmp_path, capsys, argv, message):
    try:
        code = freqgap_main(["count", "--out", str(tmp_path / "o"), *argv])
    except SystemExit as exc:              # argparse's refusal of a value
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


# ---- --by-subset --------------------------------------------------------------------
SUBSET_RECORDS = [
    {"text": "9 10 9 9 day", "meta": {"pile_set_name": "Pile-CC"}},
    {"text": "9 day 9 hours 5", "meta": {"pile_set_name": "USPTO Backgrounds"}},
    {"text": "5 hours 5 1990", "meta": {}},                                 # no subset
    {"text": "9 10 years", "meta": {"pile_set_name": "Pile-CC", "other": [1, {"a": 2}]}},
    {"text": "7 7 week", "meta": {"pile_set_name": 3}},                     # not a string: none
    {"text": "2 2 2 day", "meta": {"pile_set_name": "Sub@set\tname"}},
    {"text": "", "meta": {"pile_set_name": "Empty"}},
] + [{"text": t, "meta": {"pile_set_name": f"S{i % 3}"}} for i, t in enumerate(ADVERSARIAL)]


def _subset_of(record) -> str:
    name = record.get("meta", {}).get("pile_set_name")
    return name if isinstance(name, str) else ""


def _want_by_subset(records, rules: TermRules) -> dict[str, Counter]:
    """{labelled kind: Counter} by the reference counter over each subset's texts alone."""
    want: dict[str, Counter] = {}
    for name in {_subset_of(r) for r in records}:
        ref = count_texts([r["text"] for r in records if _subset_of(r) == name], rules)
        for kind, counter in ((kinds.UNIGRAM, ref.unigrams), (kinds.PAIR, ref.pairs),
                              (kinds.TRIPLE, ref.triples)):
            if counter:
                want[kinds.with_label(kind, name)] = counter
    return want


@pytest.mark.parametrize("path", ["fast", "python"])
@pytest.mark.parametrize("engine", ENGINES)
def test_by_subset_counts_each_subset_alone(engine, path):
    """Each subset's labelled counts equal the reference over its texts alone, on the
    engine's own JSON reader (compiled or Arrow's) and on the per-record Python path (a
    surrogate-pair escape sends a chunk there); a JSON-escaped name is the same subset."""
    records = list(SUBSET_RECORDS)
    lines = [json.dumps(r).encode() for r in records]
    lines.append(b'{"text": "1 2 day", "meta": {"pile_set_name": "Pile\\u002dCC"}}')
    records.append({"text": "1 2 day", "meta": {"pile_set_name": "Pile-CC"}})
    if path == "python":
        lines.append(b'{"text": "4 \\ud83d\\ude00 4"}')
        records.append({"text": "4 \U0001F600 4", "meta": {}})
    rules = TermRules(by_subset=True)
    got = task_kinds(engine, [(0, 1, b"\n".join(lines), False, None)], rules)
    assert got == _want_by_subset(records, rules)
    plain = task_kinds(engine, [(0, 1, b"\n".join(lines), False, None)], TermRules())
    for kind, counter in plain.items():           # the sum over subsets is the plain count
        summed = Counter()
        for labelled, c in got.items():
            if labelled.split(kinds.LABEL, 1)[0] == kind:
                summed.update(c)
        assert summed == counter


@pytest.mark.parametrize("engine", ENGINES)
def test_by_subset_parquet_rows_and_another_field(engine):
    """Parquet texts have no subset (''); --subset-field names another (dotted) field, read
    on the Python path; documents per term are counted per subset with doc_freq."""
    rules = TermRules(by_subset=True)
    got = task_kinds(engine, [(0, 1, b"5 day 5", True, None), (0, 2, b"5", True, None)], rules)
    assert got == {"u@": Counter({"5": 3, "day": 1}), "p@": Counter({("5", "day"): 2, ("5", "5"): 1}),
                   "t@": Counter({("5", "5", "day"): 1})}
    rules = TermRules(by_subset=True, doc_freq=True, subset_field="source.name")
    records = [{"text": "9 9 day", "source": {"name": "a"}}, {"text": "9 5", "source": {"name": "b"}},
               {"text": "9", "source": {"name": "a"}}, {"text": "5 5"}]
    got = task_kinds(engine, [(0, 1, jsonl(records), False, None)], rules)
    assert got["d@a"] == Counter({"9": 2, "day": 1}) and got["d@b"] == Counter({"9": 1, "5": 1})
    assert got["d@"] == Counter({"5": 1}) and got["u@"] == Counter({"5": 2})
    assert got["u@a"] == Counter({"9": 3, "day": 1})


def _key(table: str, row: dict):
    """A table row's key as the reference counter writes it."""
    return row["term"] if table == "unigrams" else tuple(row[c] for c in ("t1", "t2", "t3") if c in row)


def test_spark_by_subset_sums_to_the_plain_count(spark, tmp_path):
    """`count --by-subset --doc-freq` over two files: tables keyed by subset, each subset's
    rows equal to the reference over its texts, their sum the plain count's; the manifest
    totals each subset; `--doc-freq` alone adds `documents` to a plain count; instances and
    gaps refuse counts by subset."""
    from freqgap.contract import refuse_partial_counts
    from freqgap.counting.job import run_count
    from freqgap.errors import FreqgapError

    records = SUBSET_RECORDS * 3
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(jsonl(records[:20]) + b"\n")
    import zstandard

    (tmp_path / "in" / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(jsonl(records[20:])))
    inputs = [str(tmp_path / "in")]
    rules = TermRules(by_subset=True, doc_freq=True)
    manifest = run_count(inputs, str(tmp_path / "by"), rules=rules, spark=spark, files_per_job=1)
    run_count(inputs, str(tmp_path / "plain"), rules=TermRules(doc_freq=True), spark=spark)
    tables = {name: pq.read_table(tmp_path / "by" / name).to_pylist() for name in ("unigrams", "pairs", "triples")}
    got: dict[str, Counter] = {}
    for name, kind in (("unigrams", kinds.UNIGRAM), ("pairs", kinds.PAIR), ("triples", kinds.TRIPLE)):
        for row in tables[name]:
            got.setdefault(kinds.with_label(kind, row["subset"]), Counter())[_key(name, row)] += row["count"]
    assert got == _want_by_subset(records, TermRules())
    assert list(tables["unigrams"][0]) == ["term", "kind", "subset", "documents", "count"]
    plain = read_counts(tmp_path / "plain")
    assert plain == reference([r["text"] for r in records])
    for name in ("unigrams", "pairs", "triples"):
        summed = Counter()
        for row in tables[name]:
            summed[_key(name, row)] += row["count"]
        assert summed == Counter(plain[name])
    sets = [(_subset_of(r), {t for t in map(rules.term_of, r["text"].split()) if t}) for r in records]
    assert {(r["term"], r["subset"]): r["documents"] for r in tables["unigrams"]} == \
        dict(Counter((t, name) for name, terms in sets for t in terms))
    docs = {r["term"]: r["documents"] for r in pq.read_table(tmp_path / "plain" / "unigrams").to_pylist()}
    assert docs == dict(Counter(t for _, terms in sets for t in terms))
    totals = manifest["subset_totals"]
    assert {n: t["documents"] for n, t in totals.items()} == dict(Counter(_subset_of(r) for r in records))
    assert sum(t["term_occurrences"] for t in totals.values()) == manifest["totals"]["term_occurrences"]
    assert totals["Pile-CC"]["distinct_terms"] == sum(1 for r in tables["unigrams"] if r["subset"] == "Pile-CC")
    assert manifest["config"]["by_subset"] is True
    with pytest.raises(FreqgapError, match="--by-subset"):
        refuse_partial_counts(json.loads((tmp_path / "by" / "_manifest.json").read_text()), tmp_path / "by")
    refuse_partial_counts(json.loads((tmp_path / "plain" / "_manifest.json").read_text()), tmp_path / "plain")
