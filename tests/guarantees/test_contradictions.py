"""Issue 38, item 4: a run that skipped (almost) everything is not a result, and settings
that contradict each other or a recorded order.json are refused (one line, exit 2)."""

from __future__ import annotations

import json

import pytest

from freqgap.cli import main
from freqgap.config import ConfigError
from freqgap.counting.inputs import BadInputError
from freqgap.counting.job import CountJob, CountOptions, run_count
from freqgap.counting.rules import TermRules

pytestmark = pytest.mark.timeout(180)


def run_cli(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def test_a_skip_run_that_skipped_every_record_is_refused(spark, tmp_path):
    inp = tmp_path / "a.jsonl"
    inp.write_text("".join(f'{{"text": "{i} days"}}\n' for i in range(6)))
    rules = TermRules.from_conf({"text_field": "body"})
    with pytest.raises(BadInputError, match=r"a\.jsonl:1: missing text field: --on-bad-record "
                                            r"skip skipped 6 of 6 records \(100%"):
        run_count([str(inp)], str(tmp_path / "out"), rules=rules, spark=spark,
                  on_bad_record="skip")
    assert not (tmp_path / "out" / "_manifest.json").exists()


def test_more_than_the_stated_share_is_refused_and_the_share_is_configurable(spark, tmp_path):
    inp = tmp_path / "a.jsonl"
    inp.write_text('{"text": "1 day"}\nnot json\nnot json\n')
    with pytest.raises(BadInputError, match=r"skipped 2 of 3 records \(67%, more than "
                                            r"--max-skipped-share 0\.5\)"):
        run_count([str(inp)], str(tmp_path / "out"), spark=spark, on_bad_record="skip")
    m = run_count([str(inp)], str(tmp_path / "ok"), spark=spark, on_bad_record="skip",
                  max_skipped_share=0.9)
    assert m["totals"]["skipped_records"] == 2 and m["totals"]["documents"] == 1


def test_a_plural_vocabulary_form_is_refused(tmp_path):
    """`--vocab` holding `days` beside `day` made ω{day} drop from 3 to 1."""
    opts = CountOptions(inputs=[str(tmp_path)], output=str(tmp_path / "out"),
                        rules=TermRules.from_conf(extra_words=["Days"]))
    with pytest.raises(ConfigError, match="vocabulary word 'days' is the plural of 'day'"):
        CountJob(None, opts)


def order_model(tmp_path, **fields):
    model = tmp_path / "model"
    (model / "data_order").mkdir(parents=True)
    info = {"format": "megatron-mmap", "prefix": "document", "seqs_per_step": 4,
            "seq_len": 16, "eod_token": "<|endoftext|>", "tokenizer": "..",
            "checkpoints": [0, 1, 2, 4], **fields}
    (model / "data_order" / "order.json").write_text(json.dumps(info))
    return model


@pytest.mark.parametrize("argv,said", [
    (["--seqs-per-step", "2"], "--seqs-per-step 2 contradicts seqs_per_step 4 recorded in"),
    (["--eod-token", "</s>"], "--eod-token </s> contradicts eod_token '<|endoftext|>'"),
    (["--bucket-edges", "0,4,2"], "--bucket-edges: bucket edges out of order (4 then 2)"),
])
def test_a_flag_contradicting_order_json_or_edges_out_of_order(tmp_path, capsys, argv, said):
    model = order_model(tmp_path)
    code, err = run_cli(["count", "--order-of", model, "--out", tmp_path / "out", *argv], capsys)
    assert code == 2 and err.count("\n") == 1 and said in err, err


@pytest.mark.parametrize("text,said", [
    ('{"prefix": "document", "seqs', "not valid JSON"),
    (json.dumps({"prefix": "document", "tokenizer": ".."}), "field 'seqs_per_step' is None"),
    (None, "checkpoints: bucket edges out of order (4 then 2)"),
])
def test_a_truncated_or_incomplete_order_json_is_one_line(tmp_path, capsys, text, said):
    model = order_model(tmp_path, checkpoints=[0, 4, 2])
    if text is not None:
        (model / "data_order" / "order.json").write_text(text)
    code, err = run_cli(["count", "--order-of", model, "--out", tmp_path / "out"], capsys)
    assert code == 2 and err.count("\n") == 1 and said in err, err
