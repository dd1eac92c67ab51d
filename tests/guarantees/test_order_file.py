"""Issue 38, items 5 and 8: an order file is checked before and while it is counted.

Rows beyond the corpus, a partial text range, a float or string step and an empty order
file are one line (they were tracebacks); a `text_sha256` column (the trainer writes it)
makes a corpus whose lines were edited, swapped or shifted refused (it was counted at the
wrong steps)."""

from __future__ import annotations

import hashlib
import json

import pytest

from freqgap.counting.job import CountJobError, CountOptions
from freqgap.counting.order_source import OrderInputError
from freqgap.counting.order_file import read_order_file
from freqgap.counting.ordered_job import OrderFileCountJob
from freqgap.counting.rules import TermRules

pytestmark = pytest.mark.timeout(180)
TEXTS = ["5 days ago", "3 hours later", "7 weeks and 2 days"]


def corpus(tmp_path, texts=TEXTS):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


def order(tmp_path, rows, name="order.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rows_for(path, digests=True):
    return [{"file": str(path), "line": i + 1, "step": i,
             **({"text_sha256": hashlib.sha256(t.encode()).hexdigest()} if digests else {})}
            for i, t in enumerate(TEXTS)]


def count(spark, out, order_path):
    opts = CountOptions(inputs=[], output=str(out), rules=TermRules.from_conf())
    return OrderFileCountJob(spark, opts, str(order_path), [10]).run()


@pytest.mark.parametrize("rows,said", [
    ([{"file": "c", "line": 1, "step": 1.5}], "column step is double, integers expected"),
    ([{"file": "c", "line": 1, "step": "3"}], "column step is string, integers expected"),
    ([{"file": "c", "line": 1, "step": 1, "char_start": 0}], "char_start and char_end come together"),
])
def test_a_bad_order_file_is_one_line(tmp_path, rows, said):
    with pytest.raises(OrderInputError, match=said):
        read_order_file(str(order(tmp_path, rows)))


def test_an_empty_file_is_one_line(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(OrderInputError, match="empty.jsonl: (not a readable order file|the order "
                                              "file holds no rows)"):
        read_order_file(str(tmp_path / "empty.jsonl"))


def test_rows_beyond_the_corpus_are_refused_naming_the_line(spark, tmp_path):
    path = corpus(tmp_path)
    rows = rows_for(path, digests=False) + [{"file": str(path), "line": 9, "step": 3}]
    with pytest.raises(CountJobError, match=r"corpus\.jsonl: no line 9 .*belongs to another corpus"):
        count(spark, tmp_path / "out", order(tmp_path, rows))
    assert not (tmp_path / "out" / "_manifest.json").exists()


def test_an_edited_corpus_is_refused_by_the_text_digests(spark, tmp_path):
    path = corpus(tmp_path)
    order_path = order(tmp_path, rows_for(path))
    m = count(spark, tmp_path / "out", order_path)               # the corpus as recorded
    assert m["totals"]["documents"] == 3
    corpus(tmp_path, [TEXTS[1], TEXTS[0], TEXTS[2]])             # two lines swapped
    with pytest.raises(CountJobError, match=r"corpus\.jsonl:1: not the text .* recorded for "
                                            r"this line \(its sha256 differs"):
        count(spark, tmp_path / "again", order_path)
