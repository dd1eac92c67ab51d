"""Nothing silently wrong in the suites (issue 10.7): whole TINaD groups under --limit, no
complete instances/ after a failed run, over-long prompts refused or counted, wrong JSON
types named by file, line and field, another run's settings in --out refused."""

import json

import pytest

from freqgap.errors import FreqgapError, InputMismatchError
from freqgap.inference.fake import FakeLM
from freqgap.inference.lm import PARAGRAPH, GenerateRequest
from freqgap.manifest import read_manifest
from freqgap.suites import tinad
from freqgap.suites.io import SuiteDataError
from freqgap.suites.neqa import LetterTokenError
from freqgap.suites.pipeline import run, safe_name
from freqgap.suites.runner import ContextLengthError, TinadSuite

from tests.suites.conftest import FIXTURES

TINAD_CONF = {"tinad": {"true_forms": ["True"], "false_forms": ["False"], "threshold": 0.5}}


def fake_loader(**kw):
    def load(name, **_):
        return FakeLM(name, **kw)
    return load


def never(*a, **k):
    raise AssertionError("the model was loaded although the input is bad")


def test_tinad_limit_takes_whole_groups():
    rows = tinad.load(FIXTURES / "tinad.jsonl")
    one = TinadSuite(FIXTURES / "tinad.jsonl", {}, limit=1).rows
    assert [r.test_id for r in one] == [0, 0, 0, 0]
    two = TinadSuite(FIXTURES / "tinad.jsonl", {}, limit=2).rows
    assert len(two) == 9 and {r.test_id for r in two} == {0, 1}
    assert TinadSuite(FIXTURES / "tinad.jsonl", {}, limit=99).rows == rows


def test_tinad_limit_through_the_pipeline_scores_whole_groups(tmp_path):
    res = run("tinad", FIXTURES / "tinad.jsonl", ["m"], tmp_path / "o", limit=2,
              conf=TINAD_CONF, loader=fake_loader())
    coh = res["records"][0]["metrics"]["coherence_scores"]["All"]
    assert coh["Coherent"] + coh["Incoherent"] == 2      # two groups, each whole
    assert res["instances"]["instances"] == 2 * 9         # zero_shot + polarity task per row


def test_incomplete_group_fails_before_any_model(tmp_path):
    lines = (FIXTURES / "tinad.jsonl").read_text().splitlines(True)
    bad = tmp_path / "t.jsonl"
    bad.write_text("".join(lines[:4] + lines[5:]))   # group 1 loses its input affirmation
    with pytest.raises(SuiteDataError, match=r"t.jsonl: test_id 1: no input affirmation"):
        run("tinad", bad, ["m"], tmp_path / "o", conf=TINAD_CONF, loader=never)
    assert not (tmp_path / "o" / "instances" / "_manifest.json").exists()


class BrokenLM(FakeLM):
    """Fails inside the model call (as a bug or a dead GPU would)."""

    def next_token_logprobs(self, *a, **k):
        raise RuntimeError("device lost")


def test_a_run_failing_after_the_model_leaves_no_complete_instances(tmp_path):
    out = tmp_path / "o"
    with pytest.raises(RuntimeError, match="device lost"):
        run("tinad", FIXTURES / "tinad.jsonl", ["m"], out, conf=TINAD_CONF,
            loader=lambda name, **_: BrokenLM(name))
    assert (out / "instances" / "instances.parquet").exists()
    assert not (out / "instances" / "_manifest.json").exists()
    # a complete run, then a forced rerun that fails: its instances are no longer complete
    run("tinad", FIXTURES / "tinad.jsonl", ["m"], out, conf=TINAD_CONF, loader=fake_loader())
    read_manifest(out / "instances", stage="suite_instances")
    with pytest.raises(RuntimeError):
        run("tinad", FIXTURES / "tinad.jsonl", ["m"], out, conf=TINAD_CONF, force=True,
            loader=lambda name, **_: BrokenLM(name))
    assert not (out / "instances" / "_manifest.json").exists()
    assert not (out / "summary" / "_manifest.json").exists()


def test_letters_that_are_not_single_tokens_are_refused(tmp_path):
    with pytest.raises(LetterTokenError, match="tokenizer of charlm: ' A' encodes as"):
        run("neqa", FIXTURES / "neqa.jsonl", ["charlm"], tmp_path / "o", loader=fake_loader())
    assert not (tmp_path / "o" / "instances" / "_manifest.json").exists()


def test_overlong_prompts_are_refused(tmp_path):
    with pytest.raises(ContextLengthError,
                       match=r"tinad/zero_shot: 14 of 14 prompts need more than m's 40-token "
                             r"context \(longest \d+ tokens\)"):
        run("tinad", FIXTURES / "tinad.jsonl", ["m"], tmp_path / "o", conf=TINAD_CONF,
            loader=fake_loader(max_length=40))
    assert not (tmp_path / "o" / "predictions" / "m" / "_manifest.json").exists()
    conf = {"neqa": {"letters": ["A", "B"], "cot_max_new_tokens": 200}}
    with pytest.raises(ContextLengthError, match="neqa/few_shot_cot"):
        run("neqa", FIXTURES / "neqa.jsonl", ["m"], tmp_path / "n", conf=conf,
            loader=fake_loader(max_length=1000))


def test_overlong_prompts_truncated_are_counted_and_announced(tmp_path, capsys):
    out = tmp_path / "q"
    res = run("quantifiers", FIXTURES / "quantifiers_context.csv", ["m"], out,
              conf={"overlong": "truncate", "quantifiers": {"reduce": "sum"}},
              loader=fake_loader(max_length=30))
    err = capsys.readouterr().err
    assert "warning: quantifiers: " in err and "cut on the left" in err
    manifest = read_manifest(out / "predictions" / "m", stage="suite_predictions")
    n = manifest["totals"]["truncated_prompts"]["quantifiers"]
    contexts = {c for c in json.loads((out / "predictions" / "m" / "metrics.json").read_text())
                ["truncated_prompts"]}
    assert contexts == {"quantifiers"}
    # each (context, word) scored is counted once: those over 30 characters with the word
    import pyarrow.parquet as pq
    det = pq.read_table(out / "details" / "m.parquet").to_pylist()
    assert n == sum(len(d["context"]) + 1 + len(d["word"]) > 30 for d in det) > 0
    assert n == sum(d["truncated"] > 0 for d in det)
    assert res["records"][0]["truncated_prompts"] == {"quantifiers": n}


@pytest.mark.parametrize("field,value,kind", [("sentence", None, "null"),
                                              ("sentence", 12345, "number"),
                                              ("pattern", ["Synonymy1"], "array")])
def test_tinad_wrong_json_types(tmp_path, field, value, kind):
    rows = [json.loads(l) for l in (FIXTURES / "tinad.jsonl").read_text().splitlines()]
    rows[2][field] = value
    bad = tmp_path / "t.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(SuiteDataError, match=rf"t.jsonl:3: field '{field}' is .* \({kind}\), "
                                             "not a string"):
        tinad.load(bad)
    rows[2][field] = "x" if field == "sentence" else "Synonymy1"
    rows[3]["test_id"] = None
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(SuiteDataError, match=r"t.jsonl:4: field 'test_id' is None"):
        tinad.load(bad)


def test_other_settings_in_the_output_directory_are_refused(tmp_path):
    out = tmp_path / "q"
    first = run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], out, loader=fake_loader())
    again = run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], out, loader=never)
    assert again["records"] == first["records"]                 # same settings: reused
    before = {p.name: p.read_bytes() for p in (out / "instances").iterdir()}
    with pytest.raises(InputMismatchError, match=r"holds a run of other settings or data"):
        run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], out, limit=4, loader=never)
    read_manifest(out / "instances", stage="suite_instances")   # the old run stays complete,
    assert {p.name: p.read_bytes() for p in (out / "instances").iterdir()} == before  # untouched
    # predictions of a model made from other instances are refused too
    other = tmp_path / "r"
    run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], other, limit=4, loader=fake_loader())
    (other / "instances" / "_manifest.json").unlink()
    with pytest.raises(InputMismatchError, match=r"predictions/m: predictions made from other"):
        run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], other, loader=never)


def test_cli_scores_a_predictions_file(capsys):
    from freqgap.cli import main

    assert main(["suite", "tinad", "--score", str(FIXTURES / "tinad_predictions.jsonl")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(tinad.score_file(FIXTURES / "tinad_predictions.jsonl")))
    assert main(["suite", "tinad", "--score", str(FIXTURES / "tinad.jsonl")]) == 2
    assert "tinad.jsonl:1: missing field 'prediction'" in capsys.readouterr().err
    assert main(["suite", "tinad", "--score", str(FIXTURES / "tinad_predictions.jsonl"),
                 "--models", "m"]) == 2
    assert "drop --models" in capsys.readouterr().err
    assert main(["suite", "tinad", "--models", "m"]) == 2
    assert "--data, --out required" in capsys.readouterr().err


def test_cli_neqa_options_reach_the_suite(tmp_path, monkeypatch):
    from freqgap.cli import main
    from freqgap.suites import pipeline

    seen = {}

    def fake_run(benchmark, data, models, out, **kw):
        seen.update(kw, benchmark=benchmark)
        return {"instances": {}, "trends": {}, "gaps": None}

    monkeypatch.setattr(pipeline, "run", fake_run)
    assert main(["suite", "neqa", "--data", "d.jsonl", "--models", "m", "--out",
                 str(tmp_path / "o"), "--task2-data", "n.jsonl", "--letter-scoring", "full",
                 "--sample", "100", "--seed", "42"]) == 0
    assert (seen["task2_data"], seen["letter_scoring"], seen["sample"], seen["seed"]) == \
        ("n.jsonl", "full", 100, 42)
    assert issubclass(LetterTokenError, FreqgapError)


def test_cot_prompts_cut_on_the_left_when_truncation_is_chosen(tmp_path, capsys):
    from freqgap.suites.runner import NeQASuite

    suite = NeQASuite(FIXTURES / "neqa.jsonl", {"letters": ["A", "B"], "cot_max_new_tokens": 20},
                      overlong="truncate")
    lm = FakeLM("m", max_length=300)
    prompts = suite.prompts("neqa/few_shot_cot")[0]
    texts = suite.chain_of_thought(lm, prompts, "neqa/few_shot_cot")
    assert len(texts) == len(prompts) and suite.truncated == {"neqa/few_shot_cot": len(prompts)}
    assert "warning: neqa/few_shot_cot:" in capsys.readouterr().err
    # what the model saw: the last 280 characters of each prompt
    want = lm.generate_until([GenerateRequest(p[-280:], max_new_tokens=20, stop=PARAGRAPH)
                              for p in prompts])
    assert texts == want


def test_one_run_per_output_directory(tmp_path):
    from freqgap.outdir import DirectoryBusyError, DirLock

    out = tmp_path / "q"
    out.mkdir()
    with DirLock(out):     # as a concurrent run would hold it
        with pytest.raises(DirectoryBusyError, match="another run"):
            run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], out, loader=never)
    assert not (out / "instances").exists()


def test_unreadable_inputs_are_one_line_errors(tmp_path):
    from freqgap.suites import neqa, quantifiers

    with pytest.raises(SuiteDataError, match=r"is a directory"):
        neqa.load(tmp_path)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b'{"question": "q", "choices": ["a", "b"], "answer": 0}\n\xff\xfe\n')
    with pytest.raises(SuiteDataError, match=r"b.jsonl:2: not UTF-8 text"):
        neqa.load(binary)
    csv = tmp_path / "b.csv"
    csv.write_bytes(b"backbone,quantifier,quantifier_type,critical_word,typicality\n\xff,a,b,c,d\n")
    with pytest.raises(SuiteDataError, match=r"b.csv: not UTF-8 text"):
        quantifiers.load(csv)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(SuiteDataError, match=r"e.csv:1: header lacks"):
        quantifiers.load(empty)
