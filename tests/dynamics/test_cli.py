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


def test_dynamics_demo_verbose_reaches_counting_and_predict(tmp_path, monkeypatch, capsys):
    """`freqgap dynamics demo --verbose`: the Spark session and every model load get verbose
    (the stages themselves replaced by recorders; the run's wiring is what is tested)."""
    import freqgap.dynamics.counts as counts
    import freqgap.dynamics.gaps as dgaps
    import freqgap.inference.predict as predict
    import freqgap.instances.run as instances
    import freqgap.training.train as train

    seen = {}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(train, "train_model", lambda *a, **k: None)
    monkeypatch.setattr(counts, "count_model_order", lambda *a, **k: seen.update(count=k))
    monkeypatch.setattr(instances, "build_instances_dir", lambda *a, **k: None)
    monkeypatch.setattr(predict, "predict_revisions", lambda *a, **k: seen.update(predict=k))

    class Result:
        results_dir = tmp_path

    monkeypatch.setattr(dgaps, "run_dynamics_gaps", lambda *a, **k: Result())
    for argv, verbose in ((["dynamics", "demo", "--verbose", "--steps", "4"], True),
                          (["dynamics", "demo", "--steps", "4"], False)):
        seen.clear()
        assert invoke(argv) == 0
        assert seen["count"]["verbose"] is verbose and seen["predict"]["verbose"] is verbose
    assert "seconds per stage" in capsys.readouterr().out
