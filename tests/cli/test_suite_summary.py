"""A suite run ends with a readable table, not a JSON blob, and a one-model curve is not
called "flat" (issue 40, item 4)."""

from __future__ import annotations

from pathlib import Path

from freqgap.analysis.suites import summary_table
from freqgap.inference.fake import FakeLM
from freqgap.suites.pipeline import run
from freqgap.suites.trends import classify

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "suites"


def _tinad(tmp_path, models):
    conf = {"tinad": {"true_forms": ["True"], "false_forms": ["False"]}}
    return run("tinad", FIXTURES / "tinad.jsonl", models, tmp_path / "out", conf=conf,
               loader=lambda name, **kw: FakeLM(name))


def test_the_summary_is_a_table_with_sizes_metrics_and_trends(tmp_path):
    result = _tinad(tmp_path, ["a"])
    text = summary_table(result["summary"])
    lines = text.splitlines()
    assert lines[0] == "accuracy ×100 by model"
    assert lines[1].split()[:2] == ["model", "parameters"]
    row = next(line for line in lines if line.startswith("a "))
    values = row.split()[2:]
    assert values and all(v == "–" or float(v) >= 0 for v in values)
    assert lines[-1].startswith("trend") and "flat" not in text  # a fake model: no size
    assert "{" not in text                                     # no JSON


def test_a_trend_row_names_each_metrics_label():
    summary = {"metrics": {"pythia-70m": {"all": 0.5, "exp1": 0.25}},
               "parameters": {"pythia-70m": 7e7}, "headline": ["all", "exp1"],
               "trends": {"all": "one size", "exp1": "one size"}}
    lines = summary_table(summary).splitlines()
    assert lines[3].split() == ["pythia-70m", "70M", "50.0", "25.0"]
    assert lines[-1].split() == ["trend", "one", "size", "one", "size"]


def test_one_model_has_no_trend():
    assert classify([7e7], [0.4]) == "one size"
    assert classify([7e7, 7e7], [0.4, 0.6]) == "one size"     # one size, twice
    assert classify([7e7, 4e8], [0.4, 0.5]) == "positive"
