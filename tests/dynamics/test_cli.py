"""The dynamics flags of `freqgap count` and `freqgap dynamics`: mistakes are one line and
exit 2 before Spark or a model starts."""

from __future__ import annotations

import pytest

from freqgap.cli import main


def invoke(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("argv, fragment", [
    (["count", "--tokenizer", "tok", "--out", "o"], "--tokenizer applies to counting by training position"),
    (["count", "--training-order", "--input", "doc", "--out", "o"], "--training-order needs --tokenizer"),
    (["count", "--training-order", "--order-of", "m", "--out", "o"], "give one of them"),
    (["count", "--order-of", "nowhere", "--out", "o"], "data_order/order.json: not found"),
    (["count", "--bucket-edges", "4,x", "--out", "o"], "an integer >= 0 expected"),
    (["count", "--order-file", "o.parquet", "--training-order", "--out", "o"], "give one of them"),
    (["count", "--order-file", "o.parquet", "--tokenizer", "t", "--out", "o"], "does not apply to --order-file"),
    (["dynamics", "gaps", "--counts", "c", "--instances", "i", "--predictions", "p",
      "--summary", "mult-1-2"], "TASK:FREQ_DEF:K expected"),
])
def test_mistakes_are_one_line_exit_2(argv, fragment, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert invoke(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
