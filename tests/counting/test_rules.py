"""SPEC §2 term rules and window semantics, on the reference and the vectorised counter."""

from __future__ import annotations

import numpy as np
import pytest

from freqgap.config import ConfigError
from freqgap.counting.codec import TermCodec
from freqgap.counting.partials import chunk_keys, sum_by_key
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules, read_vocab_file
from freqgap.counting.engines import term_finder
from freqgap.counting.engines.tokenize import find_terms
from freqgap.counting.engines.windows import pair_counts, triple_counts, unigram_counts


def vectorised(texts, rules, engine="numpy"):
    occ = term_finder(rules, engine)(texts) if engine != "numpy" else find_terms(texts, rules)
    return occurrence_counts(occ, rules)


def occurrence_counts(occ, rules):
    """(unigram, pair, triple) dicts by term names of a finder's TermOccurrences."""
    ids, c = unigram_counts(occ)
    uni = {occ.terms[i]: int(n) for i, n in zip(ids, c)}
    keys, c = pair_counts(occ, rules.window)
    pairs = {(occ.terms[a], occ.terms[b]): int(n) for (a, b), n in zip(keys, c)}
    keys, c = triple_counts(occ, rules.window)
    triples = {tuple(occ.terms[x] for x in k): int(n) for k, n in zip(keys, c)}
    return uni, pairs, triples


def both(texts, rules=None):
    """Reference counts, asserted equal to both finders' (numpy and compiled)."""
    rules = rules or TermRules()
    ref = count_texts(texts, rules)
    expected = (dict(ref.unigrams), dict(ref.pairs), dict(ref.triples))
    for engine in ("numpy", "numba"):
        assert vectorised(texts, rules, engine) == expected, engine
    return expected


def test_spec_worked_example():
    uni, pairs, triples = both(["9 10 9 9"])
    assert uni == {"9": 3, "10": 1}
    assert pairs == {("10", "9"): 3, ("9", "9"): 3}
    assert triples == {("10", "9", "9"): 3, ("9", "9", "9"): 1}


def test_spec_window_boundary():
    assert both(["5 a b c hours"])[1] == {("5", "hour"): 1}
    assert both(["5 a b c d hours"])[1] == {}


def test_documents_never_share_a_window():
    _, pairs, _ = both(["a b 7", "8 c d"])
    assert pairs == {}


@pytest.mark.parametrize("token,term", [
    ("5", "5"), ("05", "05"), ("123456", "123456"), ("1234567", None), ("23,", None),
    ("(23)", None), ("$5", None), ("1,000", None), ("2.5", None), ("-5", None),
    ("\u0663", None),            # Arabic-Indic digit: not ASCII
    ("hours", "hour"), ("Hour", "hour"), ("DECADES", "decade"), ("hourss", None),
    ("weekly", None), ("wee\u212a", "week"),  # Kelvin sign lower-cases to k in Python
])
def test_strict_rule(token, term):
    assert TermRules().term_of(token) == term
    uni = both([f"x {token} y"])[0]
    assert uni == ({term: 1} if term else {})


@pytest.mark.parametrize("token,term", [
    ("23,", "23"), ("(23)", "23"), ("$5", "5"), ("1,000", None), ("2.5", None), ("-5", "5"),
    ("hours.", "hour"), ("...", None), ("'1990s'", None),
])
def test_strip_punct_rule(token, term):
    rules = TermRules(number_rule="strip-punct")
    assert rules.term_of(token) == term
    assert both([f"x {token} y"], rules)[0] == ({term: 1} if term else {})


def test_long_numbers_still_occupy_a_position():
    # 1234567 is no term but is a position: 5 and 9 are 5 positions apart.
    assert both(["5 1234567 a b c 9"])[1] == {}
    assert both(["5 1234567 a b 9"])[1] == {("5", "9"): 1}


def test_unicode_whitespace_splits_like_str_split():
    text = "7\u00a08\u20289\x1c10\u300011\x8512\u200b13"
    assert text.split() == ["7", "8", "9", "10", "11", "12\u200b13"]
    assert both([text])[0] == {"7": 1, "8": 1, "9": 1, "10": 1, "11": 1}


@pytest.mark.parametrize("text", [
    "\u00a05\u00a0hours\u00a0", "\u00a0", "\u2000\u2001\u20027", "5\u00a0\u2028hours\u30009", "\u00e9\u00a05 \u00e95",
    "x\u00a0\u00a0\u00a0y 5 6", "5\u205f6\u202f7\u16808\u200a9\u20291\u00850", "\u212a\u00a0hours\u3000\u00e9\u20ac 3",
    "a" * 9 + "\u00a0" + "5" + "\u3000" * 2 + "hours"])
def test_non_ascii_whitespace_inside_and_between_tokens(text):
    """The compiled finder first splits on ASCII whitespace only, then splits the tokens
    holding non-ASCII whitespace: at a document's start or end, in runs, beside other
    non-ASCII characters."""
    both([text, "1 " + text + " 2", text + text])


def test_window_option_and_orders():
    rules = TermRules(window=3)
    assert both(["1 2 3 4"], rules)[1] == {("1", "2"): 1, ("2", "3"): 1, ("3", "4"): 1,
                                          ("1", "3"): 1, ("2", "4"): 1}


def test_partial_keys_respect_max_order_and_decode_back():
    rules = TermRules(max_order=1)
    parts, tokens = chunk_keys(["9 10 9 9", "a 5"], rules, TermCodec(rules))
    assert set(parts) == {"u"} and tokens.tolist() == [4, 2]
    rules = TermRules()
    codec = TermCodec(rules)
    parts, _ = chunk_keys(["9 10 9 9"], rules, codec)
    keys, counts = parts["t"]
    decoded = [codec.decode(ids).to_pylist() for ids in TermCodec.split(keys, 3)]
    assert dict(zip(zip(*decoded), counts.tolist())) == {("10", "9", "9"): 3, ("9", "9", "9"): 1}


def test_codec_round_trip_keeps_leading_zeros_and_words():
    codec = TermCodec(TermRules())
    terms = ["0", "00", "000000", "5", "05", "999999", "123456", "decade", "day", "10"]
    ids = codec.encode(terms)
    assert len(set(ids.tolist())) == len(terms) and ids.max() < (1 << 21)
    assert codec.decode(ids).to_pylist() == terms
    assert codec.decode(ids[::-1].copy()).to_pylist() == terms[::-1]


def test_sum_by_key_is_exact():
    keys = np.array([5, 3, 5, 9, 3, 5], dtype=np.int64)
    counts = np.array([1, 2, 3, 4, 5, 2 ** 40], dtype=np.int64)
    k, c = sum_by_key(keys, counts)
    assert k.tolist() == [3, 5, 9] and c.tolist() == [7, 4 + 2 ** 40, 4]


def test_exact_word_wins_over_plural_and_config_errors(tmp_path):
    rules = TermRules(vocab=("hour", "hours"))
    assert rules.term_of("hours") == "hours"
    with pytest.raises(ConfigError):
        TermRules(window=1)
    with pytest.raises(ConfigError):
        TermRules(number_rule="loose")
    with pytest.raises(ConfigError):
        TermRules(vocab=("two words",))
    (tmp_path / "v.yaml").write_text("vocab: [not, Every]\n")
    (tmp_path / "v.txt").write_text("# comment\nnone\nfew\n")
    assert read_vocab_file(tmp_path / "v.yaml") == ["not", "Every"]
    assert read_vocab_file(tmp_path / "v.txt") == ["none", "few"]
    assert TermRules(vocab=("Every",)).term_of("EVERYs") == "every"
    with pytest.raises(ConfigError, match="not found"):
        read_vocab_file(tmp_path / "missing.yaml")


def test_vocabulary_words_may_start_with_a_digit():
    # issue 10.1: digit-led words were sent to the number path only and never counted.
    rules = TermRules(vocab=("1st", "2nd", "4x4", "hour"))
    uni, pairs, _ = both(["the 1st and 2nds of 4X4s 1st hour 12 2nd"], rules)
    assert uni == {"1st": 2, "2nd": 2, "4x4": 1, "hour": 1, "12": 1}
    assert pairs[("1st", "hour")] == 1 and pairs[("12", "2nd")] == 1
    assert both(["(1st) 2nd."], TermRules(vocab=("1st", "2nd"), number_rule="strip-punct"))[0] == \
        {"1st": 1, "2nd": 1}


def test_all_digit_vocabulary_word_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="'42' is made only of ASCII digits"):
        TermRules(vocab=("hour", "42"))
    (tmp_path / "v.txt").write_text("1st\n42\n")
    with pytest.raises(ConfigError, match=r"v\.txt: vocabulary word '42'"):
        read_vocab_file(tmp_path / "v.txt")
    assert TermRules(vocab=("\u0664\u0662",)).term_of("\u0664\u0662") == "\u0664\u0662"  # not ASCII


def test_window_is_bounded():
    assert TermRules(window=64).window == 64
    with pytest.raises(ConfigError, match="within 2..64"):
        TermRules(window=65)


def test_conf_is_the_default():
    rules = TermRules.from_conf()
    assert rules.window == 5 and rules.max_order == 3 and rules.number_rule == "strict"
    assert "decade" in rules.vocab


def test_compiled_finder_knows_every_character_that_lower_cases_to_ascii():
    from freqgap.counting.rule_tables import LOWER_TO_ASCII

    found = "".join(c for c in map(chr, range(0x80, 0x110000)) if c.lower().isascii())
    assert found == LOWER_TO_ASCII
    both(["wee\u212a hour\u212a \u0130year"], TermRules(vocab=("week", "hourk", "i\u0307year")))


@pytest.mark.parametrize("max_digits", [1, 3, 6])
def test_compiled_string_order_of_codes_is_python_string_order(max_digits):
    """The finder orders term codes by integers, never making strings: the same order as
    sorting the terms as strings, words with digits, punctuation and non-ASCII included."""
    vocab = TermRules().vocab + ("1st", "2nd", "1990s", "4x4", "9999999x", "a\u00f1o", "#1", "05th", "\u01c5x")
    rules = TermRules(max_digits=max_digits, vocab=vocab)
    finder = term_finder(rules, "numba")
    codec = TermCodec(rules)
    rng = np.random.default_rng(max_digits)
    codes = np.unique(np.concatenate((rng.integers(0, codec.word_base, 3000),
                                      np.arange(codec.word_base, codec.word_base + len(codec.words)),
                                      codec.bases[1:max_digits + 1], codec.bases[2:max_digits + 2] - 1)))
    names = codec.decode(codes).to_pylist()
    by_key = [names[i] for i in np.argsort(finder._string_order(codes), kind="stable")]
    assert by_key == sorted(names)
    # looked up once computed: a second finder that has met half the codes, asked for all
    # of them in another order, gives each code the integer computed afresh
    again = term_finder(rules, "numba")
    again._string_order(codes[::2])
    assert np.array_equal(again._string_order(codes[::-1]), finder._string_order_of(codes[::-1]))


def test_every_whitespace_character_is_below_the_scanned_range():
    """rules.PY_WHITESPACE scans code points below WHITESPACE_BELOW only (import time):
    this Python's whole Unicode database has no whitespace above it."""
    from freqgap.counting.rules import PY_WHITESPACE, WHITESPACE_BELOW

    assert "".join(c for c in map(chr, range(0x110000)) if c.isspace()) == PY_WHITESPACE
    assert len(PY_WHITESPACE) == 29 and max(map(ord, PY_WHITESPACE)) < WHITESPACE_BELOW
