"""Co-occurrence units other than the window (SPEC §2, issue 41): the sentence unit, triples
for every such unit and their bound, the refusal of a unit too large in bounded memory, and
the sequence unit of a training-order input.

Each engine is checked against freqgap.counting.reference (whose sentence rule is written
plainly from str.split), the Spark job against the reference, and the sequence unit against
a plain per-sequence set count of the decoded sequences."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from itertools import combinations

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.cli import main as freqgap_main
from freqgap.counting import kinds, partials
from freqgap.counting.codec import TermCodec
from freqgap.counting.engines import ENGINES, get_engine, units
from freqgap.counting.engines.sentences import sentence_units
from freqgap.counting.engines.tokenize import find_terms
from freqgap.counting.inputs import BadInputError
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules, unit_term_limit
from tests.counting.test_conformance import EXTRA_WORDS, conform

SENTENCE = TermRules(unit="sentence", vocab=EXTRA_WORDS)
SENTENCE_LISTED = TermRules(unit="sentence", number_rule="strip-punct",
                            pairs=(("5", "hour"), ("9", "day"), ("7", "8"), ("5", "9", "day"),
                                   ("1", "2", "3"), ("10", "9", "hour")))
SENTENCES = [
    "It took 5 hours. Then 9 days passed! 7 8", "5 hours 9 days.", "5 hour.) 9 day", "5 (day?\") 9",
    "5 '.' 9", "5 .\"' 9", "5 ! 9 ? 7", "5 hours.9 day", "5 . . . 9", "\"5\" 9.'] 7 (8)", "",
    "  ", "...", "5\u00a0hours.\u30009 day\u2028!\u00857", "1 2. 3 4! 5 6? 7 8.\" 9 10.') 11",
    "5 hours.\u201d 9 day", "5 hours\u3002 9 day", "a. b. c. 5 6 day", "2nd 1st. kiwi 4x4 1st?",
]


def unit_counts(name: str, texts, rules: TermRules) -> tuple[dict, int]:
    """(units per term, units counted: kind n) from the engine's chunk step."""
    engine = get_engine(name)
    codec = TermCodec(rules)
    parts, _ = engine.chunk_keys(texts, rules, codec, engine.finder(rules))
    keys, counts = parts[kinds.UNIT_DOCS]
    n = int(parts[kinds.UNIT_COUNT][1].sum()) if kinds.UNIT_COUNT in parts else None
    return dict(zip(codec.decode(np.asarray(keys, np.int64)).to_pylist(), np.asarray(counts).tolist())), n


def test_the_sentence_rule_on_a_worked_example():
    ref = count_texts(["It took 5 hours. Then 9 days! (5 days.) \"9 hours?\" 5", "9 day"],
                      TermRules(unit="sentence", number_rule="strip-punct"))
    assert ref.units == 6          # five sentences, then the second document's one
    assert ref.unit_docs == {"5": 3, "9": 3, "hour": 2, "day": 3}
    assert ref.pairs == {("5", "hour"): 1, ("9", "day"): 2, ("5", "day"): 1, ("9", "hour"): 1}
    assert ref.triples == {}
    occ = find_terms(["a 5. b 6 ?", "7"], TermRules())
    assert sentence_units(["a 5. b 6 ?", "7"], occ)[1] == 3


@pytest.mark.parametrize("rules", [SENTENCE, SENTENCE_LISTED, TermRules(unit="sentence", max_order=2)],
                         ids=["all", "listed", "pairs-only"])
@pytest.mark.parametrize("engine", ENGINES)
def test_sentence_unit_equals_the_reference(engine, rules):
    """The chunk step and the whole count task (the numba engine's JSON reader hands its own
    buffer to the sentence rule) against the reference; each text alone too."""
    _, pairs, triples = conform(engine, SENTENCES, rules)
    assert pairs and all(a < b for a, b in pairs)
    assert bool(triples) == (rules.max_order == 3)
    if rules.pairs:                          # only the listed pairs and triples
        assert set(pairs) | set(triples) <= set(rules.pairs)
    ref = count_texts(SENTENCES, rules)
    assert unit_counts(engine, SENTENCES, rules) == (dict(ref.unit_docs), ref.units)
    for text in SENTENCES:
        assert unit_counts(engine, [text], rules) == (dict(count_texts([text], rules).unit_docs),
                                                      count_texts([text], rules).units)


WORDS = st.sampled_from(["5", "9", "10", "hours", "day", "1st", "x", ".", "!", "?", "5.", "day!",
                         "9?", "hours.\"", "10)", "(7", "7.)", "'8'.", "x.'", "\"", ")", "5.5"])
SPACES = st.sampled_from([" ", "  ", "\n", "\u00a0", "\u3000", "\t"])
TEXT = st.lists(st.tuples(WORDS, SPACES), max_size=30).map(lambda ws: "".join(w + s for w, s in ws))


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(TEXT, max_size=8))
def test_generated_sentences(engine, texts):
    conform(engine, texts, SENTENCE)
    ref = count_texts(texts, SENTENCE)
    assert unit_counts(engine, texts, SENTENCE) == (dict(ref.unit_docs), ref.units)


def test_the_triple_bound():
    """n terms make C(n,3) triples: with triples a unit may hold the largest n whose triples
    are at most the pairs of max_unit_terms."""
    assert unit_term_limit(2000, 3) == 229 and unit_term_limit(2000, 2) == 2000
    assert unit_term_limit(10, 3) == 7                 # C(7,3) = 35 <= C(10,2) = 45 < C(8,3)
    assert TermRules(unit="document", max_unit_terms=10).unit_term_limit == 7


@pytest.mark.parametrize("unit", ["document", "sentence"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_unit_over_the_triple_bound_is_refused_and_one_at_it_counted(engine, unit):
    rules = TermRules(unit=unit, max_unit_terms=10)
    seven = " ".join(str(i) for i in range(7))
    _, pairs, triples = conform(engine, [seven, "day hour week"], rules)
    assert len(triples) == 35 + 1 and len(pairs) == 21 + 3
    lines = b"\n".join(json.dumps({"text": t}).encode() for t in ["1 2", seven + " 8"])
    with pytest.raises(BadInputError) as err:
        list(partials.count_lines([(0, 1, lines, False, None)], rules, "fail", {0: "u.jsonl"},
                                  engine=engine))
    message = str(err.value)
    assert message.startswith("u.jsonl:2: ") and "holds 8 distinct terms, more than 7" in message
    assert "max_unit_terms = 10" in message and "--max-order 2" in message
    # the same unit without triples is counted
    conform(engine, [seven + " 8"], TermRules(unit=unit, max_unit_terms=10, max_order=2))


@pytest.mark.parametrize("engine", ENGINES)
def test_triples_made_in_small_slices_sum_to_the_same(engine, monkeypatch):
    texts = [" ".join(str(i) for i in range(n, 3 * n)) + ". 1 2 3" for n in (1, 7, 20, 2)] + SENTENCES
    for rules in (TermRules(unit="document"), SENTENCE):
        want = conform(engine, texts, rules)
        monkeypatch.setattr(units, "PAIRS_PER_SLICE", 5)
        assert conform(engine, texts, rules) == want
        monkeypatch.undo()


_PEAK = """
import json, sys
from freqgap.counting import partials
from freqgap.counting.inputs import BadInputError
from freqgap.counting.rules import TermRules

engine, unit = sys.argv[1], sys.argv[2]
rules = TermRules(unit=unit)
def task(texts):
    lines = b"\\n".join(json.dumps({"text": t}).encode() for t in texts)
    try:
        for _ in partials.count_lines([(0, 1, lines, False, None)], rules, "fail", {0: "big.jsonl"},
                                      engine=engine):
            pass
    except BadInputError as exc:
        return str(exc)
def peak_kib():
    # VmHWM is this process's own high-water mark; ru_maxrss would carry the parent's
    # (pytest's) peak across fork and exec.
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
task(["1 2 3 day", " ".join(str(i) for i in range(200))])     # warm: imports, 1.3 M triples
before = peak_kib()
message = task(["1 2", " ".join(str(i) for i in range(100_000)), "4"])
after = peak_kib()
print(json.dumps({"message": message, "grown_kib": after - before, "peak_kib": after}))
"""


@pytest.mark.parametrize("engine, unit", [("numpy", "document"), ("numba", "sentence")])
def test_ten_to_the_fifth_distinct_terms_are_refused_in_bounded_memory(engine, unit):
    """A unit with the numbers 0..99999 (5 * 10^9 pairs, 1.7 * 10^14 triples) and no pair
    list: the documented refusal, and the process's peak memory grows by less than 64 MiB
    over a warm-up, staying under 1 GiB in all (the pairs alone would take 40 GB)."""
    if engine not in ENGINES:
        pytest.skip(f"{engine} engine not available")
    out = subprocess.run([sys.executable, "-c", _PEAK, engine, unit], capture_output=True,
                         text=True, timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["message"].startswith("big.jsonl:2: ")
    assert "holds 100000 distinct terms, more than 229" in result["message"]
    assert "max_unit_terms = 2000" in result["message"]
    assert result["grown_kib"] < 64 * 1024 and result["peak_kib"] < 1024 * 1024, result


@pytest.mark.parametrize("argv, message", [
    (["--unit", "sequence"], "--unit sequence needs a training-order input"),
    (["--unit", "sentence", "--window", "3"], "--window applies to the window unit"),
    (["--unit", "window:x"], "W must be a whole number"),
])
def test_cli_refuses_a_unit_without_its_input(tmp_path, capsys, argv, message):
    code = freqgap_main(["count", "--out", str(tmp_path / "o"), *argv])
    assert code == 2 and message in capsys.readouterr().err


def test_cli_units_parse():
    from freqgap.cli import build_parser
    from freqgap.cli.count import options_from_args

    parse = build_parser("count").parse_args
    assert options_from_args(parse(["count", "--unit", "sentence"])).rules.unit == "sentence"
    rules = options_from_args(parse(["count", "--unit", "sentence", "--max-unit-terms", "50"])).rules
    assert rules.max_unit_terms == 50 and rules.to_config()["unit"] == "sentence"


def test_spark_sentence_unit_equals_the_reference(spark, tmp_path):
    """`freqgap count --unit sentence`: pairs and triples count the sentences holding their
    terms, the unigrams' `documents` the sentences holding each term, the manifest's
    totals.units the sentences; over two files (one zstd)."""
    from tests.counting.corpus_utils import write_jsonl
    from tests.counting.test_job import random_texts

    rng = np.random.default_rng(3)
    texts = [" ".join(w + (rng.choice([".", "!", "?\"", ""], p=[.1, .05, .05, .8]))
                      for w in t.split()) for t in random_texts(11, 200, max_len=40)] + SENTENCES
    write_jsonl(tmp_path / "in" / "a.jsonl", texts[::2])
    write_jsonl(tmp_path / "in" / "b.jsonl.zst", texts[1::2])
    out = tmp_path / "out"
    assert freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(out),
                         "--unit", "sentence"]) == 0
    rules = TermRules(unit="sentence")
    ref = count_texts(texts, rules)
    uni = pq.read_table(out / "unigrams").to_pylist()
    assert {r["term"]: (r["count"], r["documents"]) for r in uni} == \
        {t: (n, ref.unit_docs[t]) for t, n in ref.unigrams.items()}
    assert {(r["t1"], r["t2"]): r["count"] for r in pq.read_table(out / "pairs").to_pylist()} == ref.pairs
    assert {(r["t1"], r["t2"], r["t3"]): r["count"]
            for r in pq.read_table(out / "triples").to_pylist()} == ref.triples
    assert len(ref.triples) > 20
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["config"]["unit"] == "sentence" and manifest["totals"]["units"] == ref.units


def _plain_sequence_counts(sequences, tok, per_step, edges, rules):
    """{bucket: (occurrences, sequences per term, pairs, triples, sequences)}: each training
    sequence decoded piece by piece (EOD-delimited), its terms a set, counted plainly."""
    out: dict[int, tuple] = {}
    for i, seq in enumerate(sequences):
        later = [e for e in edges if e > i // per_step]
        if not later:
            continue
        ids = seq.tolist()
        cuts = [-1] + [j for j, t in enumerate(ids) if t == tok.eos_token_id] + [len(ids)]
        texts = [tok.decode(ids[a + 1:b], skip_special_tokens=True) for a, b in zip(cuts, cuts[1:])
                 if b > a + 1]
        terms = [t for t in map(rules.term_of, " ".join(texts).split()) if t is not None]
        held = sorted(set(terms))
        uni, docs, pairs, triples, n = out.setdefault(later[0], (Counter(), Counter(), Counter(),
                                                                Counter(), [0]))
        uni.update(terms)
        docs.update(held)
        pairs.update(combinations(held, 2))
        triples.update(combinations(held, 3))
        n[0] += 1
    return out


def test_spark_sequence_unit_equals_a_plain_count_of_the_decoded_sequences(spark, tmp_path):
    """`--unit sequence` over an indexed dataset: per step bucket, a pair (triple) counts the
    training sequences holding its terms, across the EOD-delimited pieces of a sequence."""
    from freqgap.counting.job import CountOptions
    from freqgap.counting.ordered_job import OrderedCountJob, OrderOptions
    from tests.dynamics.helpers import packed_sequences, random_texts, tiny_tokenizer, write_order

    texts = random_texts(2, 150)
    tok = tiny_tokenizer(tmp_path / "tok", texts)
    sequences = packed_sequences(texts, tok, 48)
    edges, per_step = [1, 3, 6], 4
    prefix = write_order(tmp_path / "seq", sequences)
    rules = TermRules(unit="sequence")
    opts = CountOptions(inputs=[prefix], output=str(tmp_path / "out"), rules=rules,
                        progress_interval=0.5)
    manifest = OrderedCountJob(spark, opts, OrderOptions(tokenizer=str(tmp_path / "tok"), edges=edges,
                                                         seqs_per_step=per_step,
                                                         split_bytes=400)).run()
    want = _plain_sequence_counts(sequences, tok, per_step, edges, rules)
    got: dict[int, tuple] = {}
    for r in pq.read_table(tmp_path / "out" / "unigrams").to_pylist():
        slot = got.setdefault(r["step_bucket"], (Counter(), Counter(), Counter(), Counter()))
        slot[0][r["term"]] = r["count"]
        slot[1][r["term"]] = r["documents"]
    for name, at in (("pairs", 2), ("triples", 3)):
        for r in pq.read_table(tmp_path / "out" / name).to_pylist():
            key = tuple(r[f"t{i}"] for i in range(1, at + 1))
            got[r["step_bucket"]][at][key] = r["count"]
    assert set(got) == set(want) == set(edges)
    for bucket, (uni, docs, pairs, triples, _) in want.items():
        assert got[bucket] == (uni, docs, pairs, triples), bucket
    assert sum(len(w[2]) for w in want.values()) > 50      # real co-occurrences across pieces
    assert manifest["totals"]["units"] == sum(w[4][0] for w in want.values()) == edges[-1] * per_step
    assert manifest["config"]["unit"] == "sequence"


def test_a_pair_list_may_list_triples(tmp_path):
    """--pairs rows of three terms (column t3) are triples: counted per unit like the
    listed pairs; they need max_order 3, and distinct terms."""
    import pyarrow as pa

    from freqgap.config import ConfigError
    from freqgap.counting.pair_list import read_pairs
    from freqgap.errors import FreqgapError

    document = TermRules(unit="document")
    (tmp_path / "p.csv").write_text("t1,t2,t3\n5,day,\nday,9,10\n")
    (tmp_path / "p.jsonl").write_text('{"t1": "5", "t2": "day"}\n{"t1": "day", "t2": 9, "t3": "10"}\n')
    pq.write_table(pa.table({"t1": ["5", "day"], "t2": ["day", "9"], "t3": [None, "10"]}),
                   tmp_path / "p.parquet")
    for name in ("p.csv", "p.jsonl", "p.parquet"):
        assert read_pairs(tmp_path / name, document) == (("5", "day"), ("day", "9", "10"))
    with pytest.raises(FreqgapError, match=r"p\.csv:3: a triple; triples need --max-order 3"):
        read_pairs(tmp_path / "p.csv", TermRules(unit="document", max_order=2))
    (tmp_path / "self.csv").write_text("t1,t2,t3\n5,day,5\n")
    with pytest.raises(FreqgapError, match=r"self\.csv:2: .*itself"):
        read_pairs(tmp_path / "self.csv", document)
    rules = TermRules(unit="document", pairs=(("day", "9", "10"), ("5", "day")))
    assert rules.pairs == (("10", "9", "day"), ("5", "day"))
    with pytest.raises(ConfigError, match="triples need --max-order 3"):
        TermRules(unit="document", max_order=2, pairs=(("day", "9", "10"),))
    ref = count_texts(["9 10 day 5", "day 9", "10 9 day day"], rules)
    assert ref.triples == {("10", "9", "day"): 2} and ref.pairs == {("5", "day"): 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_listed_triples_equal_the_reference(engine):
    rules = TermRules(unit="document", pairs=(("9", "10", "day"), ("1", "2", "3"), ("5", "9"),
                                              ("00000", "12345", "123456")))
    texts = SENTENCES + ["1 2 3 1", "3 2", "12345 123456 00000", "day 10 9 9"]
    _, pairs, triples = conform(engine, texts, rules)
    assert triples == {("1", "2", "3"): 1, ("00000", "12345", "123456"): 1, ("10", "9", "day"): 1}
