"""Rule set `pythia-case-study` equals a literal transcription of the Pythia study's counter.

The transcription below is EleutherAI/pythia, commit a19eecb807ec2c79a39ebf18108816e6ffffc1d5,
case-studies/term_frequency/run_freq_count.py, lines 17-23 (the patterns, written here as
raw f-strings: the same pattern text without Python's invalid-escape warnings) and 48-71
(`count_from_line`'s loop over one decoded line, `add_freq` as Counter increments). It is
compared on adversarial and generated text with freqgap's own pass
(freqgap.counting.engines.pythia_case_study), through both engines' chunk step, both
engines' whole count task over JSON Lines, and `freqgap count --rules pythia-case-study`.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import string
from collections import Counter

import numpy as np
import pytest

from freqgap.cli import main as freqgap_main
from freqgap.config import ConfigError
from freqgap.counting import kinds, partials
from freqgap.counting.codec import TermCodec
from freqgap.counting.engines import ENGINES, get_engine
from freqgap.counting.rule_sets import rule_set_values, term_rules
from freqgap.counting.rules import PYTHIA_CASE_STUDY, RULE_SETS, TermRules
from tests.counting.corpus_utils import read_counts, write_jsonl

# --- transcription (run_freq_count.py lines 17-23) ---
time = "minute|hour|day|week|month|year|decade"
punct = re.escape(string.punctuation)
search_string_unary = re.compile(r' (\d){1,5} ')
search_string_time_unit_a = re.compile(rf'(?=( (\d){{1,5}} ((\w|[{punct}])+\s+){{0,3}}?({time})))')
search_string_time_unit_b = re.compile(rf'(?=( ({time}) ((\w|[{punct}])+\s+){{0,3}}?(\d){{1,5}}))')
search_string_lazy = re.compile(rf'(?=( (\d){{1,5}} ((\w|[{punct}])+\s+){{1,3}}(\d){{1,5}}))')
search_string_greedy = re.compile(rf'(?=( (\d){{1,5}} ((\w|[{punct}])+\s+){{1,3}}?(\d){{1,5}}))')


def transcribed_counts(lines: list[str]) -> Counter:
    """run_freq_count.py lines 48-71, over already decoded lines."""
    frequency_count: Counter = Counter()
    for line in lines:
        line = " " + line
        matches = re.finditer(search_string_lazy, line)
        for window in [m.group(1) for m in matches]:

            numbers = sorted([int(i) for i in re.findall(r'\d{1,5}', window)])

            for num in numbers:
                frequency_count[str(num)] += 1

            for (num_0, num_1) in itertools.combinations(numbers, 2):
                key = "{}-{}".format(num_0, num_1)
                frequency_count[key] += 1

        for re_string in [search_string_time_unit_a, search_string_time_unit_b]:
            matches = re.finditer(re_string, line)
            for window in [m.group(1) for m in matches]:
                numbers = sorted([int(i) for i in re.findall(r'\d{1,5}', window)])
                time_units = re.findall(re.compile(f'{time}'), window)

                for num in numbers:
                    for unit in time_units:
                        key = "{}-{}".format(num, unit)
                        frequency_count[key] += 1
    return frequency_count
# --- end of transcription ---


ADVERSARIAL = [
    "today 5 today", " 5 today and days", "5 Monday 7", "3 yesterday's 4 hours", "x 5 yesterday's day",
    "123456 5 7", "5 123456 7", "5 a 123456", "5 a 1234567890123", "12345 a 99999", "00012 a 7",
    "1 2", "1 a 2", "1 a b 2", "1 a b c 2", "1 a b c d 2", "1 2 3 4 5 6 7 8 9",
    "day 5", "days 5", "day 5 a 6", "day a b c 5", "day a b c d 5", "5 a b c day", "5 a b c d day",
    "5 day", "5 days", "5, days", "(5) days", "5 days, 7", "5 a, b. 7", "5 a! 7x", "5 a 7x",
    "5  a 7", "5\ta 7", "5\na 7", "5 a\n7", "5 a\t\t7", "5 a\u00a07", "\u00a05 a 7", "5 a\u20ac 7",
    "5 \u2014 7", "5 x_y 7", "\u0663 a \u0664", "\u00b2 a 3", "5 a \u00b2", "weekday 5 monthly", "decades 3 decade",
    "5 hourglass", "5 minuteman", "3 Day 4", "4 DAY", "dayear 5", "5 a dayear", "5 today's", "",
    " ", "5", "5 ", " 5 a 7 ", "5 a 7 b 9 c 11 d 13", "2019 2020 a 2021", "1,000 a 5",
]
WORDS = ["5", "12", "7", "99999", "123456", "0", "007", "today", "Monday", "days", "day", "year",
         "yesterday's", "a", "the", "x1y", "\u20ac", "5,", "(3)", "\u0663", "\u00b2", "hour.", "decade"]
SEPARATORS = [" ", " ", " ", "  ", "\n", "\t", "\u00a0"]


def generated_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [rng.choice(WORDS) + rng.choice(SEPARATORS) for _ in range(rng.randint(0, 30))]
        out.append("".join(parts))
    return out


TEXTS = ADVERSARIAL + generated_texts(0, 300)


def pythia_rules() -> TermRules:
    return term_rules(PYTHIA_CASE_STUDY, {})


def study_keys(unigrams: dict, pairs: dict) -> Counter:
    """freqgap's unigram and pair counts under the study's key spelling ("5", "3-12", "5-day")."""
    out: Counter = Counter({term: n for term, n in unigrams.items()})
    for (a, b), n in pairs.items():
        if a.isdigit() and b.isdigit():
            a, b = sorted((a, b), key=int)
        out[f"{a}-{b}"] += n
    return out


def _named(codec: TermCodec, order: int, keys, counts) -> dict:
    columns = [codec.decode(ids).to_pylist() for ids in TermCodec.split(np.asarray(keys, np.int64), order)]
    names = columns[0] if order == 1 else list(zip(*columns))
    return dict(zip(names, np.asarray(counts).tolist()))


def chunk_counts(engine: str, texts: list[str], rules: TermRules) -> Counter:
    codec = TermCodec(rules)
    chosen = get_engine(engine)
    parts, tokens = chosen.chunk_keys(texts, rules, codec, None)
    assert tokens.tolist() == [len(t.split()) for t in texts]
    assert set(parts) == {kinds.UNIGRAM, kinds.PAIR}
    return study_keys(_named(codec, 1, *parts[kinds.UNIGRAM]), _named(codec, 2, *parts[kinds.PAIR]))


def test_the_transcription_reads_as_the_study_describes():
    """Guards the transcription itself: substring units, 5-digit numbers, windows of 1-3
    words between two numbers (0-3 for a number and a unit, both orders)."""
    assert transcribed_counts([" 5 today and days"]) == {"5-day": 2}
    assert transcribed_counts(["1 a b c 2"]) == {"1": 1, "2": 1, "1-2": 1}
    assert transcribed_counts(["1 a b c d 2", "1 2"]) == {}
    assert transcribed_counts(["123456 5 7"]) == {}
    assert transcribed_counts(["5 a 123456"]) == {"5": 1, "12345": 1, "5-12345": 1}
    assert transcribed_counts(["day 5", "5 days", "days 5"]) == {"5-day": 2}


@pytest.mark.parametrize("engine", ENGINES)
def test_chunk_step_equals_the_transcription(engine):
    rules = pythia_rules()
    for text in ADVERSARIAL:
        assert chunk_counts(engine, [text], rules) == transcribed_counts([text]), text
    assert chunk_counts(engine, TEXTS, rules) == transcribed_counts(TEXTS)


@pytest.mark.parametrize("engine", ENGINES)
def test_count_task_equals_the_transcription(engine, monkeypatch):
    """The whole count task over JSON Lines (the numba engine's own JSON reader, which
    writes every whitespace character as spaces, is not used under this rule set)."""
    monkeypatch.setenv("FREQGAP_ENGINE", engine)
    rules = pythia_rules()
    lines = b"\n".join(json.dumps({"text": t}).encode() for t in TEXTS)
    codec = TermCodec(rules)
    sums = {kinds.UNIGRAM: Counter(), kinds.PAIR: Counter()}
    for batch in partials.count_lines([(0, 1, lines, False, None)], rules, "fail", {0: "t.jsonl"},
                                      engine=engine):
        cols = batch.to_pydict()
        for kind, key, n in zip(cols["kind"], cols["key"], cols["n"]):
            assert kind != kinds.TRIPLE
            if kind in sums:
                sums[kind].update(_named(codec, 1 if kind == kinds.UNIGRAM else 2, [key], [n]))
    assert study_keys(sums[kinds.UNIGRAM], sums[kinds.PAIR]) == transcribed_counts(TEXTS)


def test_count_job_equals_the_transcription(spark, tmp_path, capsys):
    write_jsonl(tmp_path / "in" / "a.jsonl", TEXTS[::2])
    write_jsonl(tmp_path / "in" / "b.jsonl", TEXTS[1::2])
    code = freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(tmp_path / "o"),
                         "--rules", PYTHIA_CASE_STUDY])
    assert code == 0, capsys.readouterr().err
    got = read_counts(tmp_path / "o")
    assert got["triples"] == {}
    assert study_keys(got["unigrams"], got["pairs"]) == transcribed_counts(TEXTS)
    config = json.loads((tmp_path / "o" / "_manifest.json").read_text())["config"]
    assert config["rule_set"] == PYTHIA_CASE_STUDY and config["max_digits"] == 5


def test_rule_sets_are_named_in_one_place():
    assert rule_set_values("razeghi") == {}
    assert term_rules("razeghi", {}) == TermRules.from_conf()
    assert "rule_set" not in TermRules.from_conf().to_config()   # the default's fingerprint stays
    rules = pythia_rules()
    assert rules.pythia_windows and rules.max_digits == 5 and rules.max_order == 2
    assert "second" not in rules.vocab and TermRules.from_config(rules.to_config()) == rules
    assert set(RULE_SETS) == {"razeghi", PYTHIA_CASE_STUDY}


def test_a_rule_set_refuses_what_it_fixes(capsys, tmp_path):
    with pytest.raises(ConfigError, match="fixes --max-order, --window"):
        term_rules(PYTHIA_CASE_STUDY, {"window": 3, "max_order": 3, "number_rule": "strict"})
    with pytest.raises(ConfigError, match="fixes --vocab"):
        term_rules(PYTHIA_CASE_STUDY, {}, extra_words=["not"])
    with pytest.raises(ConfigError, match="unknown rule set 'pythia'"):
        term_rules("pythia", {})
    with pytest.raises(ConfigError, match="window unit"):
        term_rules(PYTHIA_CASE_STUDY, {"unit": "document"})
    with pytest.raises(ConfigError, match="--terms"):
        term_rules(PYTHIA_CASE_STUDY, {"terms": ("new york",)})
    write_jsonl(tmp_path / "in" / "a.jsonl", ["5 days"])
    code = freqgap_main(["count", "--input", str(tmp_path / "in"), "--out", str(tmp_path / "o"),
                         "--rules", PYTHIA_CASE_STUDY, "--window", "3"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--rules pythia-case-study fixes --window" in err[0]
