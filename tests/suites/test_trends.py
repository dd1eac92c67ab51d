"""Scaling-trend classifier on constructed curves, and the plot file."""

import pytest

from freqgap.analysis.suites import plot_scaling
from freqgap.suites.trends import classify

P = [7e7, 1.6e8, 4.1e8, 1e9, 2.8e9, 6.9e9, 1.2e10]


@pytest.mark.parametrize("acc,label", [
    ([0.50, 0.55, 0.60, 0.66, 0.70, 0.75, 0.80], "positive"),
    ([0.80, 0.75, 0.70, 0.62, 0.60, 0.55, 0.50], "inverse"),
    ([0.60, 0.50, 0.42, 0.40, 0.45, 0.55, 0.70], "U-shaped"),
    ([0.50, 0.60, 0.70, 0.72, 0.65, 0.55, 0.45], "inverted-U"),
    ([0.50, 0.51, 0.49, 0.50, 0.505, 0.495, 0.51], "flat"),
    ([0.50, 0.49, 0.49, 0.50, 0.51, 0.52, 0.56], "positive"),  # small dip < eps
])
def test_constructed_curves(acc, label):
    assert classify(P, acc) == label


def test_order_by_parameters_and_edge_cases():
    assert classify([3e9, 1e9, 4e9, 2e9], [0.7, 0.5, 0.8, 0.6]) == "positive"
    assert classify([1e9, 2e9, 3e9, 4e9], [0.8, 0.7, 0.6, 0.5]) == "inverse"
    assert classify([1e9], [0.5]) == "one size"        # no trend from one model
    assert classify([1e9, 2e9], [0.5, 0.6]) == "positive"
    assert classify([1e9, 2e9, 3e9], [0.6, 0.5, 0.6], eps=0.2) == "flat"
    with pytest.raises(ValueError):
        classify([1, 2], [0.5])


def test_plot_writes_png(tmp_path):
    out = plot_scaling({"zero_shot": (P, [0.6, 0.5, 0.42, 0.4, 0.45, 0.55, 0.7])},
                       tmp_path / "s.png", title="t", labels={"zero_shot": "U-shaped"},
                       chance=0.5)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_human_counts():
    from freqgap.analysis.suites import human_count

    assert [human_count(x) for x in (7e7, 1.4e9, 1.2e10, 105216, 512)] == \
        ["70M", "1.4B", "12B", "105K", "512"]
