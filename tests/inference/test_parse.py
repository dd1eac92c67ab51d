"""Answer parsing: the paper rule (first whitespace token, exact) and the lenient rule."""

from __future__ import annotations

import pytest

from freqgap.inference.parse import lenient_answer, paper_answer, score


@pytest.mark.parametrize("continuation, strict, lenient", [
    (" 12\n", "12", "12"),
    (" 12 apples", "12", "12"),
    (" 1,815.", "1,815.", "1815"),
    (" 1,81", "1,81", "1,81"),          # not a thousands separator: left alone
    (" 12.", "12.", "12"),
    (" $5", "$5", "5"),
    (" (23)", "(23)", "23"),
    (" -5", "-5", "-5"),                 # a sign is kept
    (" --", "--", ""),
    ("\n12", "", ""),                    # generation stops at the newline
    ("", "", ""),
    ("   ", "", ""),
    ("12\n\nQ: 13", "12", "12"),
])
def test_paper_and_lenient_rules(continuation, strict, lenient):
    assert paper_answer(continuation) == strict
    assert lenient_answer(continuation) == lenient


def test_score_reports_both_rules_side_by_side():
    assert score(" 12.", "12") == {"answer": "12.", "answer_lenient": "12", "correct": False,
                                   "correct_lenient": True}
    assert score(" 12", "12")["correct"] is True
    assert score(" 120", "12")["correct_lenient"] is False
