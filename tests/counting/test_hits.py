"""Hit lists (`count --hits KEYS_FILE`, issue 41 item 3): per key the documents holding it,
by file and line, at most --hits-limit, with totals that equal the counts.

The oracle is a plain per-document scan: each document counted alone by the reference
counter (freqgap.counting.reference), so a key's occurrences there are its count in a corpus
of that one document. Checked through a count task (both engines, both units), then the
Spark job under different partitionings, whose hits tables must be identical."""

from __future__ import annotations

import dataclasses
import json
import random

import pyarrow.parquet as pq
import pytest

from freqgap.cli import main as freqgap_main
from freqgap.counting import partials
from freqgap.counting.engines import ENGINES
from freqgap.counting.exchange.runs import spill
from freqgap.counting.hits import HitMerge, HitSettings, read_keys
from freqgap.counting.reference import _ends_sentence, count_texts
from freqgap.counting.rules import TermRules
from freqgap.errors import FreqgapError
from tests.counting.corpus_utils import write_jsonl
from tests.counting.test_conformance import ADVERSARIAL, PHRASES
from tests.counting.test_job import random_texts

WINDOW = TermRules()
DOCUMENT = TermRules(unit="document")
SENTENCE = TermRules(unit="sentence")
WINDOW_KEYS = (("5",), ("hour",), ("12", "5"), ("5", "5"), ("day", "hour"), ("7", "hour"),
               ("05", "12", "5"), ("5", "5", "5"), ("9",), ("10", "9"), ("9", "9", "9"),
               ("12", "5", "hour"))
UNIT_KEYS = tuple(k for k in WINDOW_KEYS if len(set(k)) == len(k))
LISTED = TermRules(unit="document", pairs=(("12", "5"), ("5", "hour"), ("12", "5", "hour"), ("10", "9")))
LISTED_KEYS = (("5",), ("12", "5"), ("5", "hour"), ("12", "5", "hour"), ("10", "9"))
PHRASE_KEYS = (("new york",), ("new york city",), ("5", "new york"), ("new york", "york"),
               ("9", "new york"), ("hour", "new york", "york"), ("york",), ("hour glass", "hour"))


def units_of(docs: list[tuple[str, int, str]], rules: TermRules) -> list[tuple]:
    """(file, line, (sentence,) or (), text of the unit) of every unit: a document, or under
    the sentence unit each of its sentences (ended by a token the reference says ends one)."""
    if rules.unit != "sentence":
        return [(path, line, (), text) for path, line, text in docs]
    out = []
    for path, line, text in docs:
        sentences = [[]]
        for token in text.split():
            sentences[-1].append(token)
            if _ends_sentence(token):
                sentences.append([])
        out += [(path, line, (i + 1,), " ".join(tokens)) for i, tokens in enumerate(sentences) if tokens]
    return out


def plain_scan(docs: list[tuple[str, int, str]], keys, rules: TermRules, limit: int) -> list[tuple]:
    """The hits table's rows by a plain scan: docs are (file, line, text); each unit is
    counted alone (a sentence as a document of its own)."""
    alone = dataclasses.replace(rules, unit="document") if rules.unit == "sentence" else rules
    counted = [(path, line, sentence, count_texts([text], alone))
               for path, line, sentence, text in sorted(units_of(docs, rules))]
    rows = []
    for key in HitSettings(keys).keys:                  # in the table's order
        held = []
        for path, line, sentence, ref in counted:
            table = (ref.unigrams, ref.pairs, ref.triples)[len(key) - 1]
            n = table[key[0] if len(key) == 1 else key]
            if n:
                held.append((path, line, *sentence, n))
        total = sum(h[-1] for h in held)
        terms = list(key) + [None] * (3 - len(key))
        rows += [(len(key), *terms, *h, len(held), total) for h in held[:limit]]
    return rows


def task_hits(engine: str, texts: list[str], rules: TermRules, settings: HitSettings,
              tmp_path) -> list[tuple]:
    """The hits table's rows of one count task over `texts` (one JSON Lines file)."""
    rows = [(0, i + 1, json.dumps({"text": t}).encode(), False, None) for i, t in enumerate(texts)]
    batches = partials.count_lines(rows, rules, "fail", {0: "f.jsonl"}, engine, hits=settings)
    result = spill(batches, str(tmp_path / engine))
    merged = HitMerge(settings, rules.unit == "sentence")
    merged.absorb([result])
    assert not any(kind.startswith("hit") for kind, _ in result.stats)
    return merged.rows({0: "f.jsonl"})


@pytest.mark.parametrize("rules, keys", [(WINDOW, WINDOW_KEYS), (TermRules(window=3), WINDOW_KEYS),
                                         (DOCUMENT, UNIT_KEYS), (SENTENCE, UNIT_KEYS),
                                         (LISTED, LISTED_KEYS),
                                         (TermRules(terms=PHRASES), PHRASE_KEYS),
                                         (TermRules(unit="sentence", terms=PHRASES), PHRASE_KEYS)],
                         ids=["window5", "window3", "document", "sentence", "listed", "phrases",
                              "sentence-phrases"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_task_s_hits_equal_a_plain_scan(engine, rules, keys, tmp_path):
    texts = ADVERSARIAL + ["5 5 5 9 9 9", "day 5 x hours", "12 hours. 5 (9 10)! 12 5 day?\" 9",
                          "New York 5 york. new york hours York 9 New York City"]
    texts += [t.replace(" x ", " x. ") for t in random_texts(3, 200, max_len=40)]
    for limit in (1, 4, 1000):
        settings = HitSettings(keys, limit)
        want = plain_scan([("f.jsonl", i + 1, t) for i, t in enumerate(texts)], keys, rules, limit)
        assert task_hits(engine, texts, rules, settings, tmp_path / str(limit)) == want
    assert {r[1:4] for r in want} == {k + (None,) * (3 - len(k)) for k in HitSettings(keys).keys}


def test_the_window_unit_counts_a_pair_s_position_pairs_per_document(tmp_path):
    texts = ["9 10 9 9", "x", "9 day 9", "5 a b c hours 5"]
    got = task_hits("numpy", texts, WINDOW, HitSettings((("9", "9"), ("5", "hour"), ("9",)), 10),
                    tmp_path)
    assert got == [(1, "9", None, None, "f.jsonl", 1, 3, 2, 5), (1, "9", None, None, "f.jsonl", 3, 2, 2, 5),
                   (2, "5", "hour", None, "f.jsonl", 4, 2, 1, 2),
                   (2, "9", "9", None, "f.jsonl", 1, 3, 2, 4), (2, "9", "9", None, "f.jsonl", 3, 1, 2, 4)]


def _keys_file(path, keys) -> str:
    path.write_text("".join(" ".join(k) + "\n" for k in keys))
    return str(path)


@pytest.mark.parametrize("rules, keys", [(WINDOW, WINDOW_KEYS), (DOCUMENT, UNIT_KEYS),
                                         (SENTENCE, UNIT_KEYS)], ids=["window", "document", "sentence"])
def test_spark_hits_do_not_depend_on_partitioning_and_agree_with_the_counts(spark, tmp_path, rules, keys):
    from freqgap.counting.job import run_count
    from freqgap.manifest import read_manifest

    texts = [t.replace(" x ", " x. ") for t in random_texts(11, 240, max_len=50)]
    names = ["a.jsonl", "b.jsonl.zst", "c.jsonl.gz"]
    docs = []
    for i, name in enumerate(names):
        part = texts[i::3]
        write_jsonl(tmp_path / "in" / name, part)
        docs += [(str(tmp_path / "in" / name), n + 1, t) for n, t in enumerate(part)]
    files = [str(tmp_path / "in" / n) for n in names]
    shuffled = files[::-1]
    random.Random(2).shuffle(shuffled)
    settings = HitSettings(keys, 3)
    tables = []
    for out, inputs, options in (("one", files, {"files_per_job": 1, "spread": 0}),
                                 ("spread", shuffled, {"files_per_job": 3, "spread": 5})):
        manifest = run_count(inputs, str(tmp_path / out), rules=rules, spark=spark, hits=settings,
                             **options)
        read_manifest(tmp_path / out, stage="count_terms")       # hits/ is among its files
        assert "hits/part-000.parquet" in manifest["files"]
        assert manifest["config"]["hits"] == settings.to_config()
        rows = pq.read_table(tmp_path / out / "hits").to_pylist()
        assert manifest["outputs"]["hits"]["rows"] == len(rows)
        tables.append([tuple(r.values()) for r in rows])
        unigrams = pq.read_table(tmp_path / out / "unigrams").to_pylist()
        counts = {(r["term"],): r["count"] for r in unigrams}
        units = {(r["term"],): r.get("documents") for r in unigrams}
        counts.update({(r["t1"], r["t2"]): r["count"] for r in pq.read_table(tmp_path / out / "pairs").to_pylist()})
        counts.update({(r["t1"], r["t2"], r["t3"]): r["count"]
                       for r in pq.read_table(tmp_path / out / "triples").to_pylist()})
        for r in rows:
            key = tuple(t for t in (r["t1"], r["t2"], r["t3"]) if t is not None)
            assert r["total_occurrences"] == counts[key]
            if rules.by_unit:
                assert r["total_units"] == (units[key] if len(key) == 1 else counts[key])
    assert tables[0] == tables[1] == plain_scan(docs, keys, rules, 3)


def test_the_default_count_records_no_hits_setting(tmp_path):
    from freqgap.counting.job import CountJob, CountOptions

    job = CountJob.__new__(CountJob)
    job.rules, job.opts = WINDOW, CountOptions(["x"], "y", WINDOW)
    assert "hits" not in job.config()
    job.opts = CountOptions(["x"], "y", WINDOW, hits=HitSettings((("5",),), 7))
    assert job.config()["hits"] == {"keys": [["5"]], "limit": 7}


def test_keys_files_in_each_format(tmp_path):
    import pyarrow as pa

    (tmp_path / "k.csv").write_text("t1,t2,t3\n5,hour,\nday,,\n12,5,5\n")
    (tmp_path / "k.jsonl").write_text('{"t1": "5", "t2": "hour"}\n{"t1": "day"}\n{"t1": 12, "t2": "5", "t3": "5"}\n')
    pq.write_table(pa.table({"t1": ["hour", "day", "12"], "t2": ["5", None, "5"],
                             "t3": [None, None, "5"]}), tmp_path / "k.parquet")
    _keys_file(tmp_path / "k.txt", [("# a comment",), ("5", "hour"), ("day",), ("5", "12", "5")])
    want = (("day",), ("5", "hour"), ("12", "5", "5"))
    for name in ("k.csv", "k.jsonl", "k.parquet", "k.txt"):
        assert HitSettings(read_keys(tmp_path / name, WINDOW)).keys == want, name


@pytest.mark.parametrize("content, rules, message", [
    ("5\nhours\n", WINDOW, "k.txt:2: 'hours' is not a term"),
    ("", WINDOW, "the keys file is empty"),
    ("# only a comment\n", WINDOW, "the keys file is empty"),
    ("5 5\n", DOCUMENT, "k.txt:1: the key (5, 5) repeats a term"),
    ("5 12 5\n", SENTENCE, "k.txt:1: the key (12, 5, 5) repeats a term"),
    ("5 12 7\n", TermRules(unit="document", pairs=(("12", "5"),)), "k.txt:1: the key (12, 5, 7) is not in --pairs"),
    ("5 7\n", TermRules(unit="document", pairs=(("12", "5"),)), "k.txt:1: the key (5, 7) is not in --pairs"),
    ("5 12 7\n", TermRules(max_order=2), "k.txt:1: a key of 3 terms"),
    ("5 12\n", TermRules(max_order=1), "k.txt:1: a key of 2 terms"),
])
def test_a_bad_keys_file_is_named_by_line(tmp_path, content, rules, message):
    (tmp_path / "k.txt").write_text(content)
    with pytest.raises(FreqgapError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_keys(tmp_path / "k.txt", rules)


def test_cli_refuses_a_bad_keys_file_in_one_line_with_status_2(tmp_path, capsys):
    _keys_file(tmp_path / "k.txt", [("5",), ("kiwi", "5")])
    code = freqgap_main(["count", "--out", str(tmp_path / "out"), "--hits", str(tmp_path / "k.txt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "k.txt:2: 'kiwi' is not a term" in err[0]
    assert freqgap_main(["count", "--out", str(tmp_path / "out"), "--hits-limit", "5"]) == 2
    assert "--hits-limit applies with --hits" in capsys.readouterr().err


def test_resume_with_other_hit_settings_is_refused(spark, tmp_path):
    from freqgap.counting.inputs import list_inputs
    from freqgap.counting.job import CountJob, CountJobError, CountOptions, fingerprint

    write_jsonl(tmp_path / "in" / "a.jsonl", ["5 hours", "day 5"])
    inputs, out = [str(tmp_path / "in")], str(tmp_path / "out")
    first = CountJob(spark, CountOptions(inputs, out, WINDOW, hits=HitSettings((("5",),), 3)))
    files = list_inputs(inputs)
    first._prepare_work(fingerprint(first.config(), files), files)     # an interrupted run
    for hits in (HitSettings((("5",),), 4), HitSettings((("day",),), 3), None):
        job = CountJob(spark, CountOptions(inputs, out, WINDOW, resume=True, hits=hits))
        with pytest.raises(CountJobError, match="inputs or settings changed"):
            job.run()


def test_keys_name_listed_phrases(tmp_path):
    rules = TermRules(terms=PHRASES)
    (tmp_path / "k.txt").write_text("new york\t5\nnew york city\n")
    (tmp_path / "k.csv").write_text("t1,t2\nnew york,5\nnew york city,\n")
    for name in ("k.txt", "k.csv"):
        assert HitSettings(read_keys(tmp_path / name, rules)).keys == (("new york city",), ("5", "new york"))
    (tmp_path / "bad.txt").write_text("new york 5\n")          # no tab in the file: one-token terms
    with pytest.raises(FreqgapError, match="bad.txt:1: 'new' is not a term"):
        read_keys(tmp_path / "bad.txt", rules)


def test_a_training_order_count_refuses_hit_lists():
    from freqgap.counting.job import CountJobError, CountOptions
    from freqgap.counting.ordered_job import OrderFileCountJob

    with pytest.raises(CountJobError, match="--hits lists documents of JSON Lines"):
        OrderFileCountJob(None, CountOptions(["x"], "y", WINDOW, hits=HitSettings((("5",),))), "o", [0, 1])
