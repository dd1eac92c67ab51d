"""Task 2's normalized files found as the authors' release names them, never a silent
fall-back to the plain files (issue 43).

The fixture is built here in the released names and layout (eval_pipeline/ of
yuhui-zh15/NeQA): neqa_100.jsonl, neqa_100_nonnegated.jsonl, neqa_100_normalized.jsonl,
neqa_100_normalized_nonnegated.jsonl; the plain questions end in " ___ ?", the normalized
ones do not. The expected prompts are the authors' Task2.prompt_zeroshot, written out."""

import json

import pytest

from freqgap.suites import neqa
from freqgap.suites.io import SuiteDataError
from freqgap.suites.runner import NeQASuite

# (negated stem, non-negated stem, choices, answer of the negated question)
ROWS = (("Glass Harbor Inn is not a", "Glass Harbor Inn is a", ["hotel", "download"], 1),
        ("The Morning Lark Show was not aired on", "The Morning Lark Show was aired on",
         ["radio", "marble"], 1),
        ("Copper is not a kind of", "Copper is a kind of", ["vegetable", "metal"], 0))


def _write(path, questions):
    path.write_text("".join(json.dumps({"question": q, "choices": c, "answer": a}) + "\n"
                            for q, c, a in questions), encoding="utf-8")


def released(tmp_path, names=("neqa_100.jsonl", "neqa_100_nonnegated.jsonl",
                              "neqa_100_normalized.jsonl",
                              "neqa_100_normalized_nonnegated.jsonl")):
    """The four files of the release (under the given names), three questions each."""
    plain_neg, plain_orig, norm_neg, norm_orig = (tmp_path / n for n in names)
    _write(plain_neg, [(f"{n} ___ ?", c, a) for n, _, c, a in ROWS])
    _write(plain_orig, [(f"{o} ___ ?", c, 1 - a) for _, o, c, a in ROWS])
    _write(norm_neg, [(n, c, a) for n, _, c, a in ROWS])
    _write(norm_orig, [(o, c, 1 - a) for _, o, c, a in ROWS])
    return plain_neg, plain_orig


def authors_task2(i, hint=False):
    """eval_pipeline/data.py Task2 on row i of the normalized files, option order by i."""
    _, orig, choices, answer = ROWS[i]
    neg = ROWS[i][0]
    ans = choices[1 - answer]
    text = (f'Sentence 1: "{orig} {ans}."\nSentence 2: "{neg} {ans}."\n'
            "Question: The above two sentences are?\nA. the same\nB. different\nAnswer:")
    if hint:
        text = "Negated sentences are different from original sentences.\n\n" + text
    return text if i % 2 == 0 else text.replace("A. the same\nB. different",
                                                "A. different\nB. the same")


def test_default_finds_the_released_normalized_pair(tmp_path):
    data, original = released(tmp_path)
    suite = NeQASuite(data, {}, original=original)
    assert [p.rsplit("/", 1)[1] for p in suite.task2_files] == \
        ["neqa_100_normalized.jsonl", "neqa_100_normalized_nonnegated.jsonl"]
    for kind, hint in (("task2", False), ("task2_hint", True)):
        prompts, golds = suite.prompts(f"neqa/{kind}")
        assert prompts == [authors_task2(i, hint) for i in range(3)]
        assert golds == [1, 0, 1]
    assert "___ ?" in suite.prompts("neqa/task1")[0][0]  # Task 1 keeps the plain files


def test_the_other_order_is_accepted(tmp_path):
    data, original = released(tmp_path, ("neqa_100.jsonl", "neqa_100_nonnegated.jsonl",
                                         "neqa_100_normalized.jsonl",
                                         "neqa_100_nonnegated_normalized.jsonl"))
    suite = NeQASuite(data, {}, original=original)
    assert suite.task2_files[1].endswith("neqa_100_nonnegated_normalized.jsonl")
    assert suite.prompts("neqa/task2")[0] == [authors_task2(i) for i in range(3)]


def test_a_missing_normalized_file_is_refused_by_name(tmp_path):
    data, original = released(tmp_path)
    (tmp_path / "neqa_100_normalized_nonnegated.jsonl").unlink()
    with pytest.raises(SuiteDataError) as err:
        NeQASuite(data, {}, original=original)
    msg = str(err.value)
    assert "\n" not in msg
    for part in ("neqa_100_normalized_nonnegated.jsonl", "neqa_100_nonnegated_normalized.jsonl",
                 "--task2-data", "--task2-original"):
        assert part in msg
    (tmp_path / "neqa_100_normalized.jsonl").unlink()
    with pytest.raises(SuiteDataError, match=r"no normalized negated file .*neqa_100_normalized"
                                             r"\.jsonl"):
        NeQASuite(data, {}, original=original)
    # the plain files, named with the flags, are the explicit way to run Task 2 on them
    plain = NeQASuite(data, {}, original=original, task2_data=data, task2_original=original)
    assert plain.task2_files == [str(data), str(original)]
    assert "Inn is a ___ ? hotel." in plain.prompts("neqa/task2")[0][0]


def test_both_orders_present_is_ambiguous(tmp_path):
    data, original = released(tmp_path)
    other = tmp_path / "neqa_100_nonnegated_normalized.jsonl"
    other.write_bytes((tmp_path / "neqa_100_normalized_nonnegated.jsonl").read_bytes())
    with pytest.raises(SuiteDataError, match="two normalized non-negated files"):
        NeQASuite(data, {}, original=original)


def test_normalized_names():
    assert [p.name for p in neqa.normalized_names("d/neqa_100_nonnegated.jsonl", "neqa_100")] == \
        ["neqa_100_normalized_nonnegated.jsonl", "neqa_100_nonnegated_normalized.jsonl"]
    assert [p.name for p in neqa.normalized_names("d/neqa_100.jsonl", "neqa_100")] == \
        ["neqa_100_normalized.jsonl"]
    assert [p.name for p in neqa.normalized_names("obqa.csv", "neqa")] == ["obqa_normalized.csv"]


def test_task2_plain_is_explicit_and_exclusive(tmp_path):
    data, original = released(tmp_path)
    (tmp_path / "neqa_100_normalized.jsonl").unlink()
    with pytest.raises(SuiteDataError, match="or --task2-plain to run Task 2 on the plain"):
        NeQASuite(data, {}, original=original)
    plain = NeQASuite(data, {}, original=original, task2_plain=True)
    assert plain.task2_plain and plain.task2_files == [str(data), str(original)]
    assert "Inn is not a ___ ? hotel." in plain.prompts("neqa/task2")[0][0]
    with pytest.raises(SuiteDataError, match="--task2-plain and --task2-data/--task2-original "
                                             "both given"):
        NeQASuite(data, {}, original=original, task2_plain=True, task2_data=data)
    with pytest.raises(SuiteDataError, match="need --original"):
        NeQASuite(data, {}, task2_plain=True)
    assert NeQASuite(data, {}, original=original, task2_data=data,
                     task2_original=original).task2_plain is False


def test_cli_passes_task2_plain_and_refuses_it_elsewhere(tmp_path, monkeypatch):
    from freqgap.suites import pipeline

    seen = {}

    def fake_run(benchmark, data, models, out, **kw):
        seen.update(kw)
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "run", fake_run)
    monkeypatch.setattr("freqgap.cli.model_check.cached_or_refuse", lambda *a: None)
    data, original = released(tmp_path)
    from freqgap.cli import main
    with pytest.raises(SystemExit):
        main(["suite", "neqa", "--data", str(data), "--original", str(original),
              "--task2-plain", "--models", "demo", "--out", str(tmp_path / "o")])
    assert seen["task2_plain"] is True
    with pytest.raises(SuiteDataError, match="--task2-plain applies to neqa only"):
        pipeline.build_suite("tinad", data, {}, task2_plain=True)
