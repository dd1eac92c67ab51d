"""Issue 38, item 7: `suite tinad --score` refuses an incomplete test_id group, as the model
path does. It scored one when the partner cells of the missing one were answered unevenly
(a file missing a line: accuracy 71.43 -> 83.33, exit 0)."""

from __future__ import annotations

import json

from freqgap.cli import main


def row(distractor: bool, affirmative: bool, prediction: bool) -> str:
    label = (not affirmative) if distractor else affirmative      # Synonymy expectations
    neg = ("affirmation", "none", "none") if affirmative else ("verbal", "analytic", "clausal")
    return json.dumps({"pattern_id": 1, "pattern": "Synonymy1", "test_id": 0,
                       "negation_type": neg[0], "semantic_type": neg[1],
                       "syntactic_scope": neg[2], "isDistractor": distractor, "label": label,
                       "sentence": f"s {distractor} {affirmative} {prediction}",
                       "prediction": prediction}) + "\n"


def test_a_group_without_its_distractor_affirmation_is_refused(tmp_path, capsys):
    # input affirmation and distractor negation answered unevenly; no distractor affirmation
    lines = [row(False, True, True), row(False, True, False), row(False, False, False),
             row(True, False, True), row(True, False, False)]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines))
    try:
        code = main(["suite", "tinad", "--score", str(cut)])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and not out and err.count("\n") == 1, (out, err)
    assert (f"{cut}: test_id 0: no distractor affirmation sentence for the coherence test "
            "(the group is incomplete)") in err, err
