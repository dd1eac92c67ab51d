"""Listed terms and multi-word phrases (SPEC §2, term lists): the worked example, the rules'
refusals, the term list file, a property test of both engines against the reference, and
100,000 listed terms."""

from __future__ import annotations

import json
import random
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.config import ConfigError
from freqgap.counting.engines import ENGINES
from freqgap.counting.rules import TermRules
from freqgap.counting.term_list import read_terms
from freqgap.errors import FreqgapError
from tests.counting.test_conformance import PHRASES, conform, engine_counts, reference_counts


@pytest.mark.parametrize("engine", ENGINES)
def test_the_worked_example(engine):
    """SPEC §2: the longest phrase wins, a phrase's tokens are no terms of their own, and a
    phrase's position is its first token's."""
    rules = TermRules(terms=("New York", "new york city", "York"))
    uni, pairs, _ = conform(engine, ["New York City 5 york new york"], rules)
    assert uni == {"new york city": 1, "5": 1, "york": 1, "new york": 1}
    assert pairs == {("5", "new york city"): 1, ("new york city", "york"): 1, ("5", "york"): 1,
                     ("5", "new york"): 1, ("new york", "york"): 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_normalization_and_the_number_rule(engine):
    """Case folds; attached punctuation matches only under strip-punct; list terms get no
    plural; --only-listed drops numbers and vocabulary words."""
    texts = ["Quellton. quellton QUELLTONS Apollo 11. 5 days"]
    strict = conform(engine, texts, TermRules(terms=("Quellton", "apollo 11")))[0]
    assert strict == {"quellton": 1, "5": 1, "day": 1}
    strip = conform(engine, texts, TermRules(terms=("Quellton", "apollo 11"), number_rule="strip-punct"))[0]
    assert strip == {"quellton": 2, "apollo 11": 1, "5": 1, "day": 1}
    only = conform(engine, texts, TermRules(terms=("Quellton", "apollo 11"), listed_only=True))[0]
    assert only == {"quellton": 1}


def test_refused_terms():
    for bad, why in (("days", "plural"), ("1990", "digits"), ("   ", "empty")):
        with pytest.raises(ConfigError, match=why):
            TermRules(terms=(bad,))
    with pytest.raises(ConfigError, match="punctuation only"):
        TermRules(terms=("New York .",), number_rule="strip-punct")
    assert TermRules(terms=("days",), listed_only=True).terms == ("days",)
    with pytest.raises(ConfigError, match="65 words: a listed term has at most 64"):
        TermRules(terms=(" ".join(["w"] * 65),))


@pytest.mark.parametrize("engine", ENGINES)
def test_the_longest_listed_phrase(engine):
    """A phrase of 64 words, the most a listed term may have, is found whole, beside its
    own 63-word prefix listed too."""
    words = [f"w{i}" for i in range(64)]
    rules = TermRules(terms=(" ".join(words), " ".join(words[:63])))
    text = " ".join(words) + " 5 " + " ".join(words[:63]) + " day"
    uni = conform(engine, [text], rules)[0]
    assert uni == {" ".join(words): 1, " ".join(words[:63]): 1, "5": 1, "day": 1}


def test_the_manifest_records_terms_only_when_listed():
    assert "terms" not in TermRules().to_config() and "listed_only" not in TermRules().to_config()
    rules = TermRules(terms=("New  York", "x"), term_meta=(("new york", "Q60", "city"),), listed_only=True)
    config = rules.to_config()
    assert config["terms"] == ["new york", "x"] and config["listed_only"] is True
    assert TermRules.from_config(config) == rules


def test_term_list_files(tmp_path):
    rules = TermRules()
    (tmp_path / "t.txt").write_text("# entities\nNew  York\n\nQuellton\n")
    assert read_terms(tmp_path / "t.txt", rules).terms == ("new york", "quellton")
    (tmp_path / "t.csv").write_text("term,id,category\nNew York,Q60,city\nquellton,,\n")
    got = read_terms(tmp_path / "t.csv", rules)
    assert got.terms == ("new york", "quellton") and got.term_meta == (("new york", "Q60", "city"),)
    (tmp_path / "t.jsonl").write_text(json.dumps({"term": "Zorbia", "category": "country"}) + "\n")
    assert read_terms(tmp_path / "t.jsonl", rules).term_meta == (("zorbia", None, "country"),)
    pq.write_table(pa.table({"term": ["A b", "c"], "id": [1, 2]}), tmp_path / "t.parquet")
    assert read_terms(tmp_path / "t.parquet", rules).term_meta == (("a b", "1", None), ("c", "2", None))
    (tmp_path / "bad.txt").write_text("New York\nhours\n")
    with pytest.raises(FreqgapError, match=r"bad.txt:2: .*plural"):
        read_terms(tmp_path / "bad.txt", rules)
    (tmp_path / "twice.csv").write_text("term,id\nNew York,1\nnew york,2\n")
    with pytest.raises(FreqgapError, match=r"twice.csv:3: .*line 2"):
        read_terms(tmp_path / "twice.csv", rules)


# Tokens that make and break the listed phrases of test_conformance.PHRASES.
PHRASE_TOKENS = st.sampled_from([
    "new", "New", "NEW", "york", "York.", "city", "City,", "apollo", "11", "11.", "Quellton", "quellton.",
    "hour", "hours", "glass", "kiwi", "pie", "Z\u00fcrich", "hbf", "\u212aelvin", "rd", "'em", "all",
    "5", "o'clock", "shadow", "b", "c", "d", "year", "2000", "A\u00d1O", "nuevo", "x", "y", "z", "w", "9"])
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\u00a0", "\u2028", "\u3000"])
PHRASE_DOC = st.lists(st.tuples(PHRASE_TOKENS, SEPARATORS), max_size=40).map(
    lambda xs: "".join(t + s for t, s in xs))
PHRASE_RULES = st.builds(TermRules, window=st.integers(2, 7), max_order=st.integers(1, 3),
                         number_rule=st.sampled_from(["strict", "strip-punct"]),
                         terms=st.lists(st.sampled_from(PHRASES), min_size=1, unique=True).map(tuple),
                         listed_only=st.booleans())


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(PHRASE_DOC, max_size=8), rules=PHRASE_RULES)
def test_generated_phrase_texts_equal_the_reference(engine, texts, rules):
    assert engine_counts(engine, texts, rules) == reference_counts(texts, rules)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("strip", ["strict", "strip-punct"])
def test_non_ascii_components(engine, strip):
    """Non-ASCII tokens whose characters str.lower() leaves alone are matched in the numba
    engine's compiled pass, the others (upper case, the Kelvin sign, Σ, beyond the Basic
    Multilingual Plane) by Python: both ways give the reference's counts."""
    rules = TermRules(terms=("zürich hbf", "σας οδός", "\U0001d400x party", "😀 party", "kelvin scale",
                             "ǆemal bey", "straße nord"), number_rule=strip)
    texts = ["Zürich hbf ZÜRICH HBF zürich Hbf. ΣΑΣ οδός σας ΟΔΌΣ ΣΑΣ ΟΔΟΣ",
             "\U0001d400x party 😀 party 😀 PARTY \u212aelvin scale ǅemal bey Ǆemal bey",
             "STRASSE nord straße NORD «straße» nord, zürich, hbf"]
    assert engine_counts(engine, texts, rules) == reference_counts(texts, rules)


def _many_terms(n: int, rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
    """A pool of words and n listed terms: single words and phrases of 2 to 4 of the pool's
    first words (so texts of those words hold many overlapping phrases)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(3 * n // 10)})
    terms: set[str] = set()
    while len(terms) < n:
        size = rng.choice((1, 2, 2, 3, 4))
        terms.add(" ".join(rng.choice(words[:3000] if size > 1 else words) for _ in range(size)))
    return words[:3000], tuple(sorted(terms))


@pytest.mark.parametrize("engine", ENGINES)
def test_100k_listed_terms(engine):
    """100,000 listed terms (a fifth single words, the rest phrases of 2-4 words) count
    exactly on both engines, in bounded time."""
    rng = random.Random(41)
    pool, terms = _many_terms(100_000, rng)
    started = time.monotonic()
    rules = TermRules(terms=terms)
    assert len(rules.terms) == 100_000 and rules.max_phrase_tokens == 4
    pieces = pool + ["5", "Day", "12"]
    texts = [" ".join(rng.choice(terms) if rng.random() < 0.5 else rng.choice(pieces)
                      for _ in range(rng.randint(0, 120))) for _ in range(120)]
    got = engine_counts(engine, texts, rules)
    assert time.monotonic() - started < 60
    want = reference_counts(texts, rules)
    assert got == want
    assert sum(" " in t for t in want[0]) > 1000        # phrases were found, not just words


@pytest.mark.parametrize("wrong, right", [("yolk", "york"), ("internationalisation", "internationalization")])
def test_a_token_hash_collision_is_found_out(wrong, right):
    """The numba engine's phrase pass trusts a token's hash only as far as its bytes: a
    token given another component's hash (as a collision of hashes would give it) is found
    out when a phrase through it is found, and no phrase is counted through it (short
    tokens: one packed compare; long ones: byte by byte)."""
    from freqgap.counting.codec import codec_for
    from freqgap.counting.engines import phrases_compiled as pc
    import numpy as np
    rules = TermRules(terms=(f"new {right}", f"{right} city"))
    phrases = pc.CompiledPhrases(rules, codec_for(rules))
    text = f"new {wrong} city new {right} city"
    data = np.frombuffer((" " + text + " " * 64).encode(), np.uint8).copy()
    n_tok = 6
    t_start, t_end = (np.zeros(n_tok + pc._SPARE, np.int64) for _ in range(2))
    th = np.zeros(n_tok, np.uint64)
    rare = np.zeros((n_tok, 3), np.int64)
    found, n_rare = pc._token_hashes(data, len(text) + 1, phrases.strip, phrases.seed, phrases.changes,
                                     t_start, t_end, th, rare)
    assert (found, n_rare) == (n_tok, 0) and th[1] != th[4]
    assert th[4] == phrases.comp_hash[phrases.table.components[right]]
    th[1] = th[4]                                     # the collision
    first_tok = np.array([0, n_tok], np.int64)
    cand = np.zeros(n_tok + 1, np.int64)
    n_cand = pc._candidates(th, first_tok, phrases.multiplier, phrases.filters, cand)
    assert cand[:n_cand].tolist() == [0, 1, 3, 4]
    best, best_code = np.zeros(n_tok, np.int64), np.zeros(n_tok, np.int64)
    pc._longest_at(th, cand, n_cand, first_tok, phrases.multiplier, phrases.table.longest,
                   phrases.table_slots, phrases.p_rec, best, best_code, data, t_start, t_end, phrases.strip,
                   phrases.comp_w, phrases.comp_bytes, phrases.comp_off, np.full(n_tok, pc._NOT_RARE, np.int64))
    assert best[:n_cand].tolist() == [0, 0, 2, 2]


def test_a_phrase_whose_hash_matches_but_ids_differ_is_not_taken():
    """A walk takes the longest phrase whose token-hash sequence matches and then compares
    its tokens with the phrase's components: where they differ (another sequence of the
    same hash, made here by changing the record), the candidate is walked again comparing
    at each phrase met, and the longest phrase whose tokens do match is taken."""
    from freqgap.counting.codec import codec_for
    from freqgap.counting.engines import phrases_compiled as pc
    import numpy as np
    rules = TermRules(terms=("new york", "new york city"))
    codec = codec_for(rules)
    phrases = pc.CompiledPhrases(rules, codec)
    short, long_ = codec.encode(["new york", "new york city"]).tolist()
    text = "new york city"
    data = np.frombuffer((" " + text + " " * 64).encode(), np.uint8).copy()
    n_tok = 3
    t_start, t_end = (np.zeros(n_tok + pc._SPARE, np.int64) for _ in range(2))
    th, rare = np.zeros(n_tok, np.uint64), np.zeros((n_tok, 3), np.int64)
    pc._token_hashes(data, len(text) + 1, phrases.strip, phrases.seed, phrases.changes, t_start, t_end, th, rare)
    first_tok = np.array([0, n_tok], np.int64)
    cand = np.zeros(n_tok + 1, np.int64)
    n_cand = pc._candidates(th, first_tok, phrases.multiplier, phrases.filters, cand)

    def longest(p_rec):
        best, code = np.zeros(n_tok, np.int64), np.zeros(n_tok, np.int64)
        pc._longest_at(th, cand, n_cand, first_tok, phrases.multiplier, phrases.table.longest,
                       phrases.table_slots, p_rec, best, code, data, t_start, t_end, phrases.strip,
                       phrases.comp_w, phrases.comp_bytes, phrases.comp_off, np.full(n_tok, pc._NOT_RARE, np.int64))
        return best[0], code[0]

    assert longest(phrases.p_rec) == (3, long_)
    changed = phrases.p_rec.copy()
    at = int(np.flatnonzero(changed == long_)[0])         # the record: code, then its three ids
    changed[at + 3] = changed[at + 1]
    assert longest(changed) == (2, short)


def test_the_sequence_table_spills_and_finds_every_entry():
    """The numba engine's table of token-hash sequences: entries that find their home bucket
    full go to the buckets after it, which are marked, and every entry is found again; an
    absent sequence is not; a prefix met again as a phrase holds both kinds; two phrases
    under one key are refused (the builder then takes another seed)."""
    from freqgap.counting.engines import phrases_compiled as pc
    import numpy as np
    rng = np.random.default_rng(41)
    n = 12                                            # all at home in bucket 0 of two: 4 spill
    drawn = rng.integers(0, 2 ** 63, 200, dtype=np.int64).astype(np.uint64)
    e_hash = np.array([h for h in drawn if pc._seq_key(h, 3, 1)[0] == 0][:n], np.uint64)
    e_len = np.full(n, 3, np.int64)
    e_info = (np.uint64(pc._PHRASE << 8) | ((np.arange(n, dtype=np.uint64) * np.uint64(5) + np.uint64(1)) << np.uint64(10)))
    table = pc._empty_buckets(2)
    assert table.ctypes.data % 64 == 0
    assert pc._insert_sequences(e_hash, e_len, e_info, table)
    assert table[0, 0] & pc._SPILL and not table[1, 0] & pc._SPILL and (table[1] != 0).sum() == 4
    for i in range(n):
        info = int(pc._seq_info(table, e_hash[i], 3, 1))
        assert info >> 8 & 3 == pc._PHRASE and (info >> 10 & ((1 << pc._RECORD_BITS) - 1)) == 5 * i + 1
    assert all(pc._seq_info(table, e_hash[i], 2, 1) == 0 for i in range(n))
    prefix = np.array([pc._PREFIX << 8], np.uint64)
    assert pc._insert_sequences(e_hash[:1], e_len[:1], prefix, table)
    assert int(pc._seq_info(table, e_hash[0], 3, 1)) >> 8 & 3 == pc._PHRASE | pc._PREFIX
    assert not pc._insert_sequences(e_hash[:1], e_len[:1], e_info[1:2], table)


def test_phrases_beyond_the_records_room_are_refused(monkeypatch):
    """The numba engine's phrase records have a bounded room (`_RECORD_BITS`): a list
    beyond it is refused in one line that names the way on, not stored wrongly."""
    from freqgap.counting.codec import codec_for
    from freqgap.counting.engines import phrases_compiled as pc
    monkeypatch.setattr(pc, "_RECORD_BITS", 4)          # 15 words of records: 5 phrases need 16
    rules = TermRules(terms=tuple(f"new town{i}" for i in range(5)))
    with pytest.raises(ConfigError, match="5 listed phrases of 10 words.*FREQGAP_ENGINE=numpy"):
        pc.CompiledPhrases(rules, codec_for(rules))
    fewer = TermRules(terms=tuple(f"new town{i}" for i in range(4)))
    pc.CompiledPhrases(fewer, codec_for(fewer))
