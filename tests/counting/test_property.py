"""Property tests of the compiled engine's own passes (JSON reader, block edges, key sorts);
the engines against the reference counter: test_conformance.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.counting.rules import TermRules
from tests.counting.test_rules import occurrence_counts, vectorised
from freqgap.counting.reference import count_texts

TOKENS = st.sampled_from([
    "5", "05", "9", "10", "0", "000000", "123456", "1234567", "23,", "(7)", "$5", "1,000", "2.5",
    "-5", "\u0663", "hour", "Hours", "HOURSS", "day.", "Days", "wee\u212a", "decade", "x", "é",
    "…", "年", "9\u200b", "'5'", "month,", "…5",
    "1st", "1ST", "2nds", "2nd.", "(3d)", "1990s", "1990", "4x4", "4X4s", "9th", "A\u00d1Os", "a\u00f1o", "wee\u212as",
    "\u212aiwi", "KIWIS", "o'clock", "O'Clock.", "'em", "'EMs", "Apple", "quinces", "@pple", "`em", "[iwi"])
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\u2028", "\x1c", "\u3000", "\x85",
                              "\r\n", "\u200b"])
DOC = st.lists(st.tuples(TOKENS, SEPARATORS), max_size=40).map(lambda xs: "".join(t + s for t, s in xs))
FREE_TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=["Nd", "Zs", "Cc", "Lu", "Ll", "Po"]),
                    max_size=60)
RULES = st.builds(TermRules, window=st.integers(2, 7), number_rule=st.sampled_from(["strict", "strip-punct"]),
                  max_digits=st.integers(1, 6),
                  vocab=st.sampled_from([TermRules().vocab,
                                         TermRules().vocab + ("1st", "2nd", "3d", "4x4", "1990s"),
                                         TermRules().vocab + ("a\u00f1o", "\u01c5x"),
                                         # a form that only the Kelvin sign begins in upper case,
                                         # apostrophes in and before a form, many first letters
                                         TermRules().vocab + ("kiwi", "o'clock"),
                                         TermRules().vocab + ("'em",),
                                         TermRules().vocab + ("apple", "banana", "cherry", "fig", "grape", "kiwi",
                                                              "lemon", "nut", "olive", "pear", "quince")]))


def _as_dict(parts) -> dict:
    """chunk_keys' {kind: (keys, counts)} as {kind: {key: count}}."""
    return {k: dict(zip(v[0].tolist(), v[1].tolist())) for k, v in parts.items()}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(DOC, FREE_TEXT), max_size=12), rules=RULES,
       max_order=st.integers(1, 3))
def test_compiled_partial_keys_equal_numpy_ones(texts, rules, max_order):
    """chunk_keys with the compiled finder (its own window keys) equals the numpy path."""
    from freqgap.counting.codec import TermCodec
    from freqgap.counting.engines import term_finder
    from freqgap.counting.partials import chunk_keys

    rules = TermRules.from_config({**rules.to_config(), "max_order": max_order})
    codec = TermCodec(rules)
    want, want_tokens = chunk_keys(texts, rules, codec, engine="numpy")
    got, got_tokens = chunk_keys(texts, rules, codec, term_finder(rules, "numba"), "numba")
    assert _as_dict(got) == _as_dict(want) and got_tokens.tolist() == want_tokens.tolist()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(DOC, FREE_TEXT), max_size=12), rules=RULES, ascii_json=st.booleans())
def test_compiled_finder_on_the_json_readers_buffer_equals_reference(texts, rules, ascii_json):
    """The path a real task takes: JSON Lines -> the compiled reader's buffer (whitespace as
    spaces, padded) -> the word-at-a-time token pass; raw UTF-8 and \\u escapes alike."""
    import json

    from freqgap.counting.engines import term_finder
    from freqgap.counting.engines.jsonscan import extract_texts

    payloads = [json.dumps({"text": t}, ensure_ascii=ascii_json).encode() for t in texts]
    got = extract_texts(payloads, "text", None) if payloads else None
    if got is None:                      # e.g. a lone surrogate: the Python path takes it
        return
    occ = term_finder(rules, "numba")(got[0])
    ref = count_texts(texts, rules)
    assert occurrence_counts(occ, rules) == (dict(ref.unigrams), dict(ref.pairs), dict(ref.triples))
    assert occ.tokens_per_doc.tolist() == [len(t.split()) for t in texts]


@pytest.mark.parametrize("through_json", [False, True])
def test_compiled_finder_across_its_32k_blocks(through_json):
    """Texts far longer than the finder's block (BLOCK_BYTES): terms and long tokens
    (non-ASCII too) on both sides of every block boundary, a text starting mid-block."""
    import json
    import random

    from freqgap.counting.engines.compiled import BLOCK_BYTES
    from freqgap.counting.engines import term_finder
    from freqgap.counting.engines.jsonscan import extract_texts

    block = BLOCK_BYTES
    rng = random.Random(7)
    words = ["5", "12", "hour", "Days", "x", "wee\u212a", "é", "7\u00a05", "decade,", "a" * 40]
    texts = []
    for length in (block - 3, 3 * block + 11, 5 * block // 2):
        parts, size = [], 0
        while size < length:
            w = rng.choice(words) if rng.random() < 0.97 else "9" * rng.randrange(1, 3 * block // 2)
            parts.append(w)
            size += len(w.encode()) + 1
        texts.append(rng.choice([" ", "\n", "\u3000"]).join(parts))
    texts.insert(1, "1 2 3")
    rules = TermRules(window=5)
    ref = count_texts(texts, rules)
    want = (dict(ref.unigrams), dict(ref.pairs), dict(ref.triples))
    if through_json:
        batch, _ = extract_texts([json.dumps({"text": t}).encode() for t in texts], "text", None)
        occ = term_finder(rules, "numba")(batch)
        assert occ.tokens_per_doc.tolist() == [len(t.split()) for t in texts]
        assert occurrence_counts(occ, rules) == want
    else:
        assert vectorised(texts, rules, "numba") == want


@pytest.mark.parametrize("window,max_order", [(64, 3), (10, 3), (64, 2)])
def test_window_keys_of_dense_runs(window, max_order):
    """_window_keys sizes its arrays from each term's window end (two pointers): dense runs
    of numbers in long documents, where nearly every term has W - 1 later terms in its
    window (3,000 terms x 1,953 triples each at W = 64), equal the numpy path."""
    import random

    from freqgap.counting.codec import TermCodec
    from freqgap.counting.engines import term_finder
    from freqgap.counting.partials import chunk_keys

    rng = random.Random(window * 10 + max_order)
    texts = [" ".join(rng.choice(["5", "17", "hours", "x", "2", "days", "400"]) for _ in range(1500))
             for _ in range(3)]
    rules = TermRules(window=window, max_order=max_order)
    codec = TermCodec(rules)
    want, _ = chunk_keys(texts, rules, codec, engine="numpy")
    got, _ = chunk_keys(texts, rules, codec, term_finder(rules, "numba"), "numba")
    assert _as_dict(got) == _as_dict(want)


def test_window_keys_count_their_descents_and_sort_either_way():
    """_window_keys reports how many keys are smaller than the one made before (what
    _sort_keys picks timsort or quicksort by); both sorts give sorted keys."""
    import random

    import numpy as np

    from freqgap.counting.codec import BITS
    from freqgap.counting.engines.compiled import LONG_RUNS, _sort_keys, _window_keys
    from freqgap.counting.engines import term_finder

    rng = random.Random(7)
    texts = [" ".join(rng.choice(["5", "17", "hours", "x", "2", "days", "400", "3"]) for _ in range(400))
             for _ in range(4)]
    rules = TermRules(window=10)
    occ = term_finder(rules, "numba").find_terms(texts, names=False)
    pairs, triples, pair_descents, triple_descents = _window_keys(
        occ.doc, occ.pos, occ.term_id, occ.term_codes, rules.window, BITS, True)
    for keys, descents in ((pairs, pair_descents), (triples, triple_descents)):
        assert descents == np.count_nonzero(keys[1:] < keys[:-1])
    descending = np.repeat(np.arange(50, dtype=np.int64), 3)[::-1].copy()   # runs of 3 equal keys
    runs = np.concatenate([np.arange(100, dtype=np.int64) + i for i in range(8)])  # 8 long runs
    for keys in (triples.copy(), descending, runs):
        want = np.sort(keys)
        descents = int(np.count_nonzero(keys[1:] < keys[:-1]))
        _sort_keys(keys, descents)
        assert np.array_equal(keys, want)
    # the long runs take timsort, the descending keys quicksort
    assert runs.size >= LONG_RUNS * (7 + 1) and descending.size < LONG_RUNS * (49 + 1)
