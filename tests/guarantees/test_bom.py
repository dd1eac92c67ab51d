"""Issue 38 (minor): a record starting with a byte-order mark says "BOM" and what to do."""

from __future__ import annotations

import pytest

from freqgap.counting.records import INVALID_UTF8, NOT_JSON, RecordError, parse_record


@pytest.mark.parametrize("raw,reason,encoding", [
    (b'\xef\xbb\xbf{"text": "5 days"}', NOT_JSON, "UTF-8"),
    ('{"text": "5 days"}'.encode("utf-16"), INVALID_UTF8, "UTF-16"),
    ('{"text": "5 days"}'.encode("utf-32"), INVALID_UTF8, "UTF-32"),
])
def test_a_bom_is_named(raw, reason, encoding):
    with pytest.raises(RecordError) as caught:
        parse_record(raw, "text", None)
    assert caught.value.reason == reason
    assert f"starts with a {encoding} byte-order mark (BOM): save the file as UTF-8 without " \
           "BOM" in str(caught.value)


def test_a_record_without_bom_keeps_its_message():
    with pytest.raises(RecordError, match=r"^not valid JSON: Expecting value at column 1$"):
        parse_record(b"x", "text", None)


def test_count_names_the_bom_with_file_and_line(spark, tmp_path):
    from freqgap.counting.job import CountJobError, run_count

    (tmp_path / "bom.jsonl").write_bytes(b'\xef\xbb\xbf{"text": "5 days"}\n{"text": "2 days"}\n')
    with pytest.raises(CountJobError, match=r"bom\.jsonl:1: not valid JSON: .*UTF-8 byte-order "
                                            r"mark \(BOM\)"):
        run_count([str(tmp_path / "bom.jsonl")], str(tmp_path / "out"), spark=spark)
