"""The compiled JSON reader equals Python's json on what it accepts, and refuses the rest."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.counting.engines.jsonscan import PAD, extract_texts
from freqgap.counting.records import RecordError, parse_record


def spaced(text: str) -> str:
    """The text as the finder's buffer holds it: every whitespace character (str.split's) as
    ASCII spaces of the same UTF-8 length (tokens split the same)."""
    return "".join(" " * len(c.encode()) if c.isspace() else c for c in text)


def python_path(payloads):
    texts, subsets = [], {}
    for p in payloads:
        text, subset = parse_record(p, "text", "meta.pile_set_name")
        texts.append(spaced(text))
        if subset is not None:
            subsets[subset] = subsets.get(subset, 0) + 1
    return texts, subsets


def compiled(payloads):
    got = extract_texts(payloads, "text", "meta.pile_set_name")
    if got is None:
        return None
    batch, subsets = got
    n = batch.offsets[-1]
    assert not np.isin(batch.data[:n], np.frombuffer(b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", np.uint8)).any()
    assert batch.data.shape[0] == n + PAD and (batch.data[n:] == 32).all()
    raw = batch.data.tobytes()
    texts = [raw[batch.offsets[i]:batch.offsets[i + 1] - 1].decode("utf-8") for i in range(len(batch))]
    return texts, subsets


def check(payloads):
    """Accepted: same texts and subsets as Python. Refused: fine (the Python path decides)."""
    got = compiled(payloads)
    if got is not None:
        assert got == python_path(payloads)
    return got


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                      max_leaves=8)
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXT, st.one_of(st.none(), TEXT, VALUES), st.dictionaries(st.text(max_size=5), VALUES, max_size=3),
                          st.booleans(), st.booleans()), min_size=1, max_size=6))
def test_random_records_match_python(records):
    payloads = []
    for text, subset, extra, ascii_only, meta_first in records:
        obj = dict(extra)
        obj.pop("text", None)
        obj.pop("meta", None)
        meta = {"pile_set_name": subset}
        items = ([("meta", meta)] if meta_first else []) + list(obj.items()) + [("text", text)] + \
            ([] if meta_first else [("meta", meta)])
        payloads.append(json.dumps(dict(items), ensure_ascii=ascii_only).encode("utf-8"))
    got = check(payloads)
    if all("\\ud" not in p.decode().lower() for p in payloads):
        assert got is not None           # the plain case is never refused


@pytest.mark.parametrize("payload", [
    b'{"text": "a\\u00e9\\n\\t\\"b\\\\\\/", "meta": {"pile_set_name": "Pile-CC"}}',
    b'  {"x": [1, -0.5e+3, true, false, null, {"y": []}], "text": "5 hours"}  ',
    b'{"meta": 3, "text": "x"}', b'{"text": "", "meta": {}}', b'{"te\\u0078t": "a", "\\"": 1}',
    b'{"text": "a", "m\\u0065ta": {"pile_set_n\\u0061me": "\\u00e9\\n"}}', b'{"meta": {"pile_set_name": 7}, "text": "y"}',
    '{"text": "a\u00a0b\u3000\u00e9\\u00a0\\u2028\\u20ac\u0085 \U0001f600"}'.encode(), b'{"text": "x"}\r', b'\t{"text": "x"} \r',
])
def test_plain_records_are_read(payload):
    assert check([payload]) is not None


@pytest.mark.parametrize("payload", [
    b'{"text": 5}', b'{"txt": "a"}', b'[1]', b'{"text": "a", "text": "b"}', b'{"text": "a"} x',
    b'{"text": "\\ud83d\\ude00"}', b'{"text": "a", "n": NaN}', b'{"text": "a\x01"}',
    b'{"text": "\xff"}', b'{"text": "\xed\xa0\x80"}', b'{"text": "a",}', b'{"te\\u0078t": "a", "text": "b"}',
    b'{"text": "a", "n": 01}', b'{"text": "a", "x": [1,]}', b'{"text": "a"', b'{"text": "a", "x": {"a" 1}}',
    b'{"text": "a", "meta": {"pile_set_name": "a", "pile_set_name": "b"}}',
    b'{"text": "a", "x": ' + b"[" * 600 + b"]" * 600 + b"}",
])
def test_other_records_go_to_the_python_path(payload):
    assert compiled([b'{"text": "ok"}', payload]) is None
    try:
        python_path([payload])
    except (RecordError, RecursionError):
        pass


@pytest.mark.parametrize("payload", [
    b'{"text": "a"}\xff', b'{"t\xffext": "a", "text": "b"}', b'{"text": "a", "x": "\xc3"}',
    b'\xef\xbb\xbf{"text": "a"}', b'{"text": "a", "x": \xc3\xa9}', b'{"text": "a", "meta": {"pile_set_name": "\xe0\x80\x80"}}',
    b'{"text": "abcdefg\xc3"}', b'{"text": "abcdefgh\x1f"}',
])
def test_invalid_utf8_anywhere_goes_to_the_python_path(payload):
    """UTF-8 is checked inside strings only: elsewhere a non-ASCII byte breaks the grammar."""
    assert compiled([b'{"text": "ok"}', payload]) is None
    with pytest.raises(RecordError):
        python_path([payload])


@pytest.mark.parametrize("special", ["\\n", '\\"', "\\\\", "\\u00e9", "\\u20ac", "\u00e9", "\u20ac", "\U0001f600", "\\/"])
def test_specials_at_every_offset_of_the_8_byte_copy(special):
    """The text copy moves 8 bytes a step: a special byte at any offset, near the end too."""
    payloads = [('{"text": "' + "x" * k + special + "y" * m + '"}').encode() for k in range(18) for m in (0, 1, 7, 8, 9)]
    assert check(payloads) is not None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(alphabet=st.sampled_from(["a", "5", " ", "\u00a0", "\u3000", "\u2028", "\u2000", "\x85", "\u200b",
                                                            "\u00e9", "\u20ac", "\U0001f600", "\n", '"', "\\", "\x1c"]),
                                  max_size=30), st.booleans()), min_size=1, max_size=5))
def test_whitespace_becomes_spaces(records):
    """Whitespace, raw or escaped, ASCII or not, becomes ASCII spaces of the same UTF-8
    length, and the buffer ends in PAD spaces (checked in `compiled`)."""
    got = check([json.dumps({"text": t}, ensure_ascii=a).encode() for t, a in records])
    assert got is not None or any(a and "\U0001f600" in t for t, a in records)   # \ud83d\ude00: Python's


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet=st.sampled_from(["a", "b", "-", "\u00e9", "\\"]), max_size=4), min_size=0, max_size=60))
def test_distinct_slices_tally_each_byte_string_exactly(names):
    """Every distinct byte string once, in order of first use, with how often it occurs: short
    names from a small alphabet repeat often and share hash-table slots (probing)."""
    from freqgap.counting.engines.jsonscan import _distinct_slices

    raw = [n.encode() for n in names]
    buf = np.frombuffer(b"".join(raw) + b"#", np.uint8)
    ends = np.cumsum([len(r) for r in raw], dtype=np.int64)
    starts = ends - np.array([len(r) for r in raw], dtype=np.int64)
    got_s, got_e, got_n = _distinct_slices(buf, starts, ends)
    want: dict[bytes, int] = {}
    for r in raw:
        want[r] = want.get(r, 0) + 1
    got = [(buf[s:e].tobytes(), n) for s, e, n in zip(got_s.tolist(), got_e.tolist(), got_n.tolist())]
    assert got == list(want.items())


def test_subset_names_interleaved_and_escaped_are_tallied_by_name():
    """Names that change every record (as in the Pile), and one name written two ways (an
    escape and its character), are counted per decoded name, as Python counts them."""
    names = ["Pile-CC", "PubMed Central", "Pile-CC", "ArXiv", "Pile\\u002dCC", "ArXiv", "Pile-CC"] * 7
    payloads = [('{"text": "%d items", "meta": {"pile_set_name": "%s"}}' % (i, n)).encode()
                for i, n in enumerate(names)]
    got = check(payloads)
    assert got is not None and got[1] == {"Pile-CC": 28, "PubMed Central": 7, "ArXiv": 14}
