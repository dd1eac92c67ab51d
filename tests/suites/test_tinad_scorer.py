"""The TINaD scorer against a fixture whose every metric was computed by hand.

Fixture (tests/fixtures/suites/tinad_predictions.jsonl), 14 sentences in 3 groups:
- test_id 0, Synonymy1: all four cells answered correctly -> coherent everywhere.
- test_id 1, Synonymy1: says True to the distractor affirmation and to one of two negated
  input forms -> incoherent everywhere.
- test_id 2, Antonymy1 (pattern_id 2): the four cells right (coherent, with the flipped
  expectations), plus a true affirmation outside the test that is answered wrongly, so
  `All` (which needs all-correct or all-wrong over the whole group) is incoherent.
"""

import json

import pytest

from freqgap.suites import tinad
from freqgap.suites.io import SuiteDataError

from tests.suites.conftest import FIXTURES


def c(tp=0, fp=0, fn=0, tn=0, acc=0):
    return {"TP": tp, "FP": fp, "FN": fn, "TN": tn, "accuracy": acc}


def coh(*pairs):
    keys = tinad.COHERENCE_KEYS
    return {k: {"Coherent": a, "Incoherent": b, "Coherence_percentage": p}
            for k, (a, b, p) in zip(keys, pairs)}


V = c(tp=3, tn=2, acc=100.0)          # verbal/analytic/clausal, all
EXPECTED = {
    "all_affirmations": c(tp=2, fp=1, fn=1, tn=3, acc=71.43),
    "input_affirmation": c(tp=2, fn=1, tn=1, acc=75.0),
    "all": c(tp=6, fp=2, fn=1, tn=5, acc=78.57),
    "distractor_affirmation": c(fp=1, tn=2, acc=66.67),
    "all_negations": c(tp=4, fp=1, tn=2, acc=85.71),
    "input_negation": c(tp=1, fp=1, tn=2, acc=75.0),
    "distractor_negation": c(tp=3, acc=100.0),
    "Negation_analysis": {
        **{f"{k}_all": V for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_input": c(tp=1, tn=2, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_distractor": c(tp=2, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_all": c(tp=1, fp=1, acc=50.0) for k in ("non_verbal", "synthetic", "subclausal")},
        **{f"{k}_input": c(fp=1, acc=0.0) for k in ("non_verbal", "synthetic", "subclausal")},
        **{f"{k}_distractor": c(tp=1, acc=100.0) for k in ("non_verbal", "synthetic", "subclausal")},
    },
    "coherence_scores": coh((1, 2, 33.33), (2, 1, 66.67), (2, 1, 66.67), (2, 1, 66.67),
                            (2, 1, 66.67)),
}
SYN1 = {
    "all_affirmations": c(tp=2, fp=1, tn=1, acc=75.0),
    "input_affirmation": c(tp=2, acc=100.0),
    "all": c(tp=4, fp=2, tn=3, acc=77.78),
    "distractor_affirmation": c(fp=1, tn=1, acc=50.0),
    "all_negations": c(tp=2, fp=1, tn=2, acc=80.0),
    "input_negation": c(fp=1, tn=2, acc=66.67),
    "distractor_negation": c(tp=2, acc=100.0),
    "Negation_analysis": {
        **{f"{k}_all": c(tp=1, tn=2, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_input": c(tn=2, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_distractor": c(tp=1, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_all": c(tp=1, fp=1, acc=50.0) for k in ("non_verbal", "synthetic", "subclausal")},
        **{f"{k}_input": c(fp=1, acc=0.0) for k in ("non_verbal", "synthetic", "subclausal")},
        **{f"{k}_distractor": c(tp=1, acc=100.0) for k in ("non_verbal", "synthetic", "subclausal")},
    },
    "coherence_scores": coh(*[(1, 1, 50.0)] * 5),
}
ANT1 = {
    "input_affirmation": c(fn=1, tn=1, acc=50.0),
    "all_affirmations": c(fn=1, tn=2, acc=66.67),
    "all": c(tp=2, fn=1, tn=2, acc=80.0),
    "distractor_affirmation": c(tn=1, acc=100.0),
    "all_negations": c(tp=2, acc=100.0),
    "input_negation": c(tp=1, acc=100.0),
    "distractor_negation": c(tp=1, acc=100.0),
    "Negation_analysis": {
        **{f"{k}_all": c(tp=2, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_input": c(tp=1, acc=100.0) for k in ("verbal", "analytic", "clausal")},
        **{f"{k}_distractor": c(tp=1, acc=100.0) for k in ("verbal", "analytic", "clausal")},
    },
    "coherence_scores": coh((0, 1, 0.0), (1, 0, 100.0), (1, 0, 100.0), (1, 0, 100.0),
                            (1, 0, 100.0)),
}
EMPTY = {"coherence_scores": coh(*[(0, 0, 0)] * 5)}


def test_every_metric_matches_hand_computation():
    scores = tinad.score_file(FIXTURES / "tinad_predictions.jsonl")
    for key, value in EXPECTED.items():
        assert scores[key] == value, key
    assert scores["Synonymy1"] == SYN1
    assert scores["Antonymy1"] == ANT1
    for pattern in tinad.PATTERNS:
        if pattern not in ("Synonymy1", "Antonymy1"):
            assert scores[pattern] == EMPTY, pattern
    # same shape as the authors' JSON: overall buckets, Negation_analysis last among them,
    # then coherence_scores, then the eleven patterns in order
    keys = list(scores)
    assert keys[:3] == ["all_affirmations", "input_affirmation", "all"]
    assert keys[7:9] == ["Negation_analysis", "coherence_scores"]
    assert keys[9:] == list(tinad.PATTERNS)
    json.dumps(scores)


def test_antonymy_flips_input_distractor_expectation():
    import dataclasses

    rows = tinad.load(FIXTURES / "tinad_predictions.jsonl", with_predictions=True)
    group = [r for r in rows if r.test_id == 2 and r.line != 14]  # drop the extra sentence
    res = tinad.coherence_scores(group)
    assert res["All"]["Coherent"] == 1
    assert res["Input-Distractor_Affirmation"]["Coherent"] == 1  # equal answers: coherent
    # a distractor affirmation answered True differs from the input one: incoherent here,
    # where for a Synonymy group differing answers are the coherent ones
    flipped = [dataclasses.replace(r, prediction=True) if (r.is_distractor and r.affirmative)
               else r for r in group]
    res = tinad.coherence_scores(flipped)
    assert res["Input-Distractor_Affirmation"] == {"Coherent": 0, "Incoherent": 1,
                                                   "Coherence_percentage": 0.0}
    assert res["Affirmation-Negation_Distractor"]["Incoherent"] == 1


def test_incomplete_group_is_an_error_naming_the_group():
    rows = tinad.load(FIXTURES / "tinad_predictions.jsonl", with_predictions=True)
    only_aff = [r for r in rows if r.test_id == 0 and r.affirmative]
    with pytest.raises(SuiteDataError, match="test_id 0"):
        tinad.coherence_scores(only_aff)


def test_wrong_shape_names_field_and_line():
    with pytest.raises(SuiteDataError, match=r"tinad_bad.jsonl:2: missing field 'isDistractor'"):
        tinad.load(FIXTURES / "tinad_bad.jsonl")
    with pytest.raises(SuiteDataError, match=r":1: missing field 'prediction'"):
        tinad.load(FIXTURES / "tinad.jsonl", with_predictions=True)


def test_prompt_is_the_authors():
    assert tinad.prompt(" A cat is an animal. ") == \
        "Is the following statement True or False? A cat is an animal."
