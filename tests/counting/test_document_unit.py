"""The document co-occurrence unit (SPEC §2, issue 41): a pair counts the documents that
hold both terms, the unigrams gain the documents holding each term, `--pairs` restricts the
pairs, and a document with too many distinct terms is refused by file and line.

Each engine is checked against freqgap.counting.reference (the rule sets of the document
unit also run in the conformance suite, test_conformance.RULE_SETS), the Spark job against
the reference and against a plain per-document set intersection of real text."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.cli import main as freqgap_main
from freqgap.config import ConfigError
from freqgap.counting import kinds, partials
from freqgap.counting.codec import TermCodec
from freqgap.counting.engines import ENGINES, get_engine, units
from freqgap.counting.inputs import BadInputError
from freqgap.counting.pair_list import read_pairs
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules
from freqgap.errors import FreqgapError
from tests.counting.test_conformance import ADVERSARIAL, EXTRA_WORDS, conform
from tests.counting.test_property import DOC, FREE_TEXT

DOCUMENT = TermRules(unit="document")
LISTED = TermRules(unit="document", vocab=EXTRA_WORDS, number_rule="strip-punct",
                   pairs=(("9", "10"), ("hour", "5"), ("day", "9"), ("kiwi", "1st"), ("3", "5")))


def unit_docs(name: str, texts: list[str], rules: TermRules) -> dict[str, int]:
    """Documents per term from the engine's chunk step."""
    engine = get_engine(name)
    codec = TermCodec(rules)
    parts, _ = engine.chunk_keys(texts, rules, codec, engine.finder(rules))
    keys, counts = parts.get(kinds.UNIT_DOCS, (np.empty(0, np.int64),) * 2)
    return dict(zip(codec.decode(np.asarray(keys, np.int64)).to_pylist(), np.asarray(counts).tolist()))


def test_the_worked_example_of_spec():
    ref = count_texts(["9 10 9 9", "9 day 9"], DOCUMENT)
    assert ref.unigrams == {"9": 5, "10": 1, "day": 1}
    assert ref.unit_docs == {"9": 2, "10": 1, "day": 1}
    assert ref.pairs == {("10", "9"): 1, ("9", "day"): 1} and not ref.triples


@pytest.mark.parametrize("rules", [DOCUMENT, LISTED, TermRules(unit="document", max_order=1)],
                         ids=["all-pairs", "listed", "unigrams"])
@pytest.mark.parametrize("engine", ENGINES)
def test_documents_per_term_and_pair_equal_the_reference(engine, rules):
    uni, pairs, triples = conform(engine, ADVERSARIAL, rules)
    assert all(a < b for a, b in pairs) and all(a < b < c for a, b, c in triples)
    assert bool(triples) == (rules.max_order == 3 and not rules.pairs)   # no triples with a pair list
    assert unit_docs(engine, ADVERSARIAL, rules) == count_texts(ADVERSARIAL, rules).unit_docs
    if rules.pairs:
        assert set(pairs) <= set(rules.pairs)


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(DOC, FREE_TEXT), max_size=12), listed=st.booleans())
def test_generated_texts(engine, texts, listed):
    rules = LISTED if listed else DOCUMENT
    conform(engine, texts, rules)
    assert unit_docs(engine, texts, rules) == count_texts(texts, rules).unit_docs


@pytest.mark.parametrize("engine", ENGINES)
def test_pairs_made_in_small_slices_sum_to_the_same(engine, monkeypatch):
    """The bounded-memory slicing of a chunk's pairs (units.PAIRS_PER_SLICE) is exact."""
    texts = [" ".join(str(i) for i in range(n, 3 * n)) for n in (1, 7, 30, 2, 45)] + ADVERSARIAL
    want = conform(engine, texts, DOCUMENT)
    monkeypatch.setattr(units, "PAIRS_PER_SLICE", 5)
    assert conform(engine, texts, DOCUMENT) == want


def _task(engine: str, lines: bytes, rules: TermRules) -> None:
    for _ in partials.count_lines([(0, 1, lines, False, None)], rules, "fail", {0: "big.jsonl"},
                                  engine=engine):
        pass


@pytest.mark.parametrize("engine", ENGINES)
def test_a_document_with_too_many_distinct_terms_is_refused_by_file_and_line(engine):
    """10^5 distinct terms in one document (5 * 10^9 pairs): refused before any pair is made."""
    big = " ".join(str(i) for i in range(100_000))
    lines = b"\n".join(json.dumps({"text": t}).encode() for t in ["1 2", "3 day", big, "4"])
    with pytest.raises(BadInputError) as err:
        _task(engine, lines, DOCUMENT)
    message = str(err.value)
    assert message.startswith("big.jsonl:3: ") and "100000 distinct terms" in message
    assert "max_unit_terms = 2000" in message and "--pairs" in message and "\n" not in message
    small = TermRules(unit="document", max_unit_terms=2)
    with pytest.raises(BadInputError, match=r"^big\.jsonl:2: .*holds 3 distinct"):
        _task(engine, b'{"text": "1 2 1"}\n{"text": "1 2 day"}', small)
    rows = [(0, 7, b"1 2 3", True, None), (0, 8, b"1 2 day", True, None)]   # Parquet texts
    with pytest.raises(BadInputError, match=r"^big\.jsonl:7: .*holds 3 distinct"):
        list(partials.count_lines(rows[:1], small, "fail", {0: "big.jsonl"}, engine=engine))
    # the same document with a pair list is counted (only the listed pairs)
    listed = TermRules(unit="document", pairs=(("1", "99999"), ("2", "day")))
    assert conform(engine, ["1 2", "3 day", big, "4"], listed)[1] == {("1", "99999"): 1}


def test_the_default_unit_keeps_the_config_and_fingerprint_of_a_window_count():
    """A window count records exactly the settings it did before the unit existed."""
    assert set(TermRules().to_config()) == {"window", "max_order", "number_rule", "max_digits",
                                            "vocab", "text_field", "subset_field"}
    config = DOCUMENT.to_config()
    assert config["unit"] == "document" and "pairs" not in config
    assert TermRules.from_config(LISTED.to_config()) == LISTED
    assert TermRules.from_config(config) == DOCUMENT


def test_rules_refuse_a_bad_unit_or_pair_list():
    with pytest.raises(ConfigError, match="unit must be one of"):
        TermRules(unit="paragraph")
    with pytest.raises(ConfigError, match="needs a unit other than the window"):
        TermRules(pairs=(("5", "day"),))
    with pytest.raises(ConfigError, match="not a term"):
        TermRules(unit="document", pairs=(("5", "days"),))
    assert TermRules(unit="document", pairs=(("day", "5"), ("5", "day"))).pairs == (("5", "day"),)


def test_pair_files_in_each_format(tmp_path):
    import pyarrow as pa

    (tmp_path / "p.csv").write_text("t1,t2\n5,day\n\n 10 , 9\n")
    (tmp_path / "p.jsonl").write_text('{"t1": "5", "t2": "day"}\n{"t1": 10, "t2": "9"}\n')
    pq.write_table(pa.table({"t1": ["5", "10"], "t2": ["day", "9"]}), tmp_path / "p.parquet")
    for name in ("p.csv", "p.jsonl", "p.parquet"):
        assert read_pairs(tmp_path / name, DOCUMENT) == (("5", "day"), ("10", "9"))
    (tmp_path / "bad.csv").write_text("t1,t2\n5,day\n5,days\n")
    with pytest.raises(FreqgapError, match=r"bad\.csv:3: 'days' is not a term"):
        read_pairs(tmp_path / "bad.csv", DOCUMENT)
    (tmp_path / "self.jsonl").write_text('{"t1": "5", "t2": "5"}\n')
    with pytest.raises(FreqgapError, match=r"self\.jsonl:1: .*itself"):
        read_pairs(tmp_path / "self.jsonl", DOCUMENT)


def _license_documents() -> list[str]:
    """Real text: the paragraphs of this machine's license texts (Debian's common-licenses),
    or of the Python standard library's license when those are missing."""
    files = sorted(Path("/usr/share/common-licenses").glob("*"))
    files = [f for f in files if f.is_file()][:12]
    if not files:
        import sysconfig

        files = [Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"]
    docs = []
    for f in files:
        docs += [p for p in f.read_text(encoding="utf-8", errors="replace").split("\n\n") if p.strip()]
    return docs


def test_spark_document_unit_equals_a_plain_set_intersection_of_real_text(spark, tmp_path, capsys):
    """`freqgap count --unit document` over real text: every pair's count is the number of
    documents whose term sets hold both, each unigram's `documents` the documents holding
    it; with --pairs, the listed pairs' counts are the same numbers."""
    from tests.counting.corpus_utils import write_jsonl

    docs = _license_documents()
    half = len(docs) // 2
    write_jsonl(tmp_path / "in" / "a.jsonl", docs[:half])
    write_jsonl(tmp_path / "in" / "b.jsonl.zst", docs[half:])
    words = ["license", "software", "copy", "work", "program", "source", "code", "right",
             "version", "term", "condition", "notice", "patent", "warranty", "author"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    rules = TermRules(unit="document", number_rule="strip-punct", vocab=TermRules().vocab + tuple(words))
    flags = ["--unit", "document", "--number-rule", "strip-punct", "--vocab", str(tmp_path / "vocab.txt")]
    sets = [{t for t in map(rules.term_of, d.split()) if t is not None} for d in docs]
    terms = sorted(set().union(*sets))
    want_pairs = {(a, b): n for a, b in combinations(terms, 2)
                  if (n := sum(1 for s in sets if a in s and b in s))}
    want_docs = {t: sum(1 for s in sets if t in s) for t in terms}
    assert len(want_pairs) > 100 and max(want_pairs.values()) > 20   # real co-occurrences
    out = tmp_path / "out"
    assert freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(out),
                         *flags]) == 0
    uni = pq.read_table(out / "unigrams").to_pylist()
    assert {r["term"]: r["documents"] for r in uni} == want_docs
    assert {r["term"]: r["count"] for r in uni} == dict(count_texts(docs, rules).unigrams)
    assert {(r["t1"], r["t2"]): r["count"] for r in pq.read_table(out / "pairs").to_pylist()} == want_pairs
    want_triples = Counter(t for s in sets for t in combinations(sorted(s), 3))
    assert {(r["t1"], r["t2"], r["t3"]): r["count"]
            for r in pq.read_table(out / "triples").to_pylist()} == want_triples
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["config"]["unit"] == "document"
    listed = sorted(want_pairs)[::7] + [("999999", terms[0])]
    (tmp_path / "pairs.csv").write_text("t1,t2\n" + "".join(f"{b},{a}\n" for a, b in listed))
    assert freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(tmp_path / "o2"),
                         *flags, "--pairs", str(tmp_path / "pairs.csv")]) == 0
    got = {(r["t1"], r["t2"]): r["count"] for r in pq.read_table(tmp_path / "o2" / "pairs").to_pylist()}
    assert got == {p: want_pairs[p] for p in listed if p in want_pairs}


def test_spark_refuses_a_document_with_too_many_terms(spark, tmp_path, capsys):
    from tests.counting.corpus_utils import write_jsonl

    write_jsonl(tmp_path / "c.jsonl", ["1 2 3", "1 2 3 4 5 6 day"])
    code = freqgap_main(["count", "--input", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "o"),
                         "--unit", "document", "--max-unit-terms", "5"])
    assert code == 2
    err = capsys.readouterr().err
    assert "c.jsonl:2: the document holds 7 distinct terms" in err
    assert not (tmp_path / "o" / "unigrams").exists()


@pytest.mark.parametrize("argv, message", [
    (["--unit", "paragraph"], "expected window:W, sentence, document or sequence"),
    (["--unit", "window:4", "--window", "5"], "disagree"),
    (["--pairs", "p.csv"], "--pairs applies to --unit sentence, document or sequence only"),
    (["--unit", "document", "--window", "3"], "--window applies to the window unit"),
])
def test_cli_refuses_options_of_the_other_unit(tmp_path, capsys, argv, message):
    code = freqgap_main(["count", "--out", str(tmp_path / "o"), *argv])
    assert code == 2 and message in capsys.readouterr().err


def test_window_unit_given_explicitly_is_the_default(tmp_path):
    from freqgap.cli import build_parser
    from freqgap.cli.count import options_from_args

    parse = build_parser("count").parse_args
    default = options_from_args(parse(["count"])).rules
    assert options_from_args(parse(["count", "--unit", "window"])).rules == default
    assert options_from_args(parse(["count", "--unit", "window:7"])).rules.window == 7
    assert "unit" not in default.to_config()


def test_spark_document_counts_do_not_depend_on_partitioning(spark, tmp_path):
    """One file per job and unspread, all files in one spread job, shuffled: the same exact
    sums, equal to the reference (documents per term included)."""
    import random

    from freqgap.counting.job import run_count
    from tests.counting.corpus_utils import write_jsonl
    from tests.counting.test_job import random_texts

    texts = random_texts(7, 300, max_len=60)
    names = ["a.jsonl", "b.jsonl.zst", "c.jsonl.gz"]
    for i, name in enumerate(names):
        write_jsonl(tmp_path / "in" / name, texts[i::3])
    files = [str(tmp_path / "in" / n) for n in names]
    shuffled = files[::-1]
    random.Random(1).shuffle(shuffled)
    got = []
    for out, inputs, options in (("one", files, {"files_per_job": 1, "spread": 0}),
                                 ("spread", shuffled, {"files_per_job": 3, "spread": 5})):
        run_count(inputs, str(tmp_path / out), rules=DOCUMENT, spark=spark, **options)
        uni = pq.read_table(tmp_path / out / "unigrams").to_pylist()
        pairs = pq.read_table(tmp_path / out / "pairs").to_pylist()
        triples = pq.read_table(tmp_path / out / "triples").to_pylist()
        got.append(({r["term"]: (r["count"], r["documents"]) for r in uni},
                    {(r["t1"], r["t2"]): r["count"] for r in pairs},
                    {(r["t1"], r["t2"], r["t3"]): r["count"] for r in triples}))
    ref = count_texts(texts, DOCUMENT)
    want = ({t: (n, ref.unit_docs[t]) for t, n in ref.unigrams.items()}, dict(ref.pairs),
            dict(ref.triples))
    assert got[0] == got[1] == want
