"""A malformed record's message reads as one sentence (no doubled words from json's own text)."""

import pytest

from freqgap.counting.records import RecordError, parse_record


@pytest.mark.parametrize("raw", [b'{"text": "unterminated', b'{"text": 1 "x"}', b'{"text": '])
def test_json_error_has_no_doubled_at(raw):
    with pytest.raises(RecordError) as err:
        parse_record(raw, "text", None)
    assert " at at " not in str(err.value)
    assert "column" in str(err.value)
