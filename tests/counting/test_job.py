"""The Spark counting job end to end: exactness, invariance, bad input, resume, commit."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.counting.job import CountJobError, run_count
from freqgap.counting.rules import TermRules
from freqgap.cli import build_parser, main as freqgap_main
from tests.counting.corpus_utils import read_counts, reference, write_jsonl
from tests.counting.test_property import DOC

REPO = Path(__file__).resolve().parents[2]
WORDS = ["the", "of", "5", "12", "7", "hours", "Day", "years,", "1,000", "2019", "05", "minute",
         "1234567", "(3)", "weeks", "x", "decade"]


def random_texts(seed: int, n: int, max_len: int = 120) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, max_len))) for _ in range(n)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Five files in three formats, and their texts."""
    root = tmp_path_factory.mktemp("corpus")
    texts = random_texts(0, 1000)
    chunks = [texts[i::5] for i in range(5)]
    names = ["a.jsonl", "b.jsonl.zst", "c.jsonl.gz", "d.jsonl.zst", "e.jsonl"]
    for name, chunk in zip(names, chunks):
        write_jsonl(root / name, chunk)
    return root, texts


def test_counts_equal_reference(spark, corpus, tmp_path):
    root, texts = corpus
    manifest = run_count([str(root)], str(tmp_path / "out"), spark=spark, progress_interval=0.5)
    assert read_counts(tmp_path / "out") == reference(texts)
    totals = manifest["totals"]
    assert totals["documents"] == 1000 and totals["files"] == 5
    assert totals["tokens"] == sum(len(t.split()) for t in texts)
    by_name = {Path(i["path"]).name: i for i in manifest["inputs"]}
    for i, name in enumerate(["a.jsonl", "b.jsonl.zst", "c.jsonl.gz", "d.jsonl.zst", "e.jsonl"]):
        chunk = texts[i::5]
        assert by_name[name]["tokens"] == sum(len(t.split()) for t in chunk)
        assert by_name[name]["docs"] == by_name[name]["lines"] == len(chunk)
    assert manifest["status"] == "complete" and manifest["config"]["window"] == 5
    assert json.loads((tmp_path / "out" / "_manifest.json").read_text())["fingerprint"] == manifest["fingerprint"]
    assert not (tmp_path / "out" / "_work").exists()


def test_partitioning_and_input_order_do_not_matter(spark, corpus, tmp_path):
    root, _ = corpus
    files = sorted(str(p) for p in root.iterdir())
    shuffled = files[:]
    random.Random(3).shuffle(shuffled)
    run_count(files, str(tmp_path / "one"), spark=spark, files_per_job=1, spread=0)
    run_count(shuffled, str(tmp_path / "many"), spark=spark, files_per_job=5, spread=7)
    run_count(files[::-1], str(tmp_path / "auto"), spark=spark, files_per_job=3)
    one = read_counts(tmp_path / "one")
    assert one == read_counts(tmp_path / "many") == read_counts(tmp_path / "auto")


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(DOC, min_size=1, max_size=30), st.sampled_from(["strict", "strip-punct"]),
       st.integers(2, 6))
def test_spark_equals_reference_on_random_documents(spark, tmp_path_factory, texts, rule, window):
    root = tmp_path_factory.mktemp("prop")
    write_jsonl(root / "in.jsonl.zst", texts)
    rules = TermRules(number_rule=rule, window=window)
    run_count([str(root)], str(root / "out"), rules=rules, spark=spark, spread=3)
    assert read_counts(root / "out") == reference(texts, rules)


BAD_LINES = {
    "not-json.jsonl": (b'{"text": "1 2"}\n{"text": 5 hours}\n', 2, "not valid JSON"),
    "missing.jsonl": (b'{"text": "1 2"}\n{"body": "3"}\n', 2, "missing text field"),
    "number.jsonl": (b'{"text": "1"}\n{"text": "2"}\n{"text": 17}\n', 3, "text field is not a string"),
    "utf8.jsonl": (b'{"text": "1"}\n{"text": "caf\xe9 9"}\n', 2, "invalid UTF-8"),
    "array.jsonl": (b'[1, 2]\n', 1, "not a JSON object"),
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_bad_record_fails_naming_file_and_line(spark, tmp_path, name):
    data, line, reason = BAD_LINES[name]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / name).write_bytes(data)
    with pytest.raises(CountJobError) as err:
        run_count([str(tmp_path / "in")], str(tmp_path / "out"), spark=spark)
    assert f"{name}:{line}: {reason}" in str(err.value)
    assert not (tmp_path / "out" / "_manifest.json").exists()
    assert not (tmp_path / "out" / "unigrams").exists()


def test_file_level_errors_fail_or_are_skipped_and_reported(spark, tmp_path):
    inp = tmp_path / "in"
    good = write_jsonl(inp / "good.jsonl.zst", ["5 hours", "7 days"])
    full = write_jsonl(tmp_path / "full.jsonl.zst", random_texts(1, 2000)).read_bytes()
    (inp / "trunc.jsonl.zst").write_bytes(full[: len(full) // 2])
    (inp / "empty.jsonl").write_bytes(b"")
    (inp / "mixed.jsonl").write_bytes(b'{"text": "9 9"}\nnot json\n{"text": null}\n\n{"text": "3 weeks"}\n')
    with pytest.raises(CountJobError, match="truncated zstd|empty file|not valid JSON"):
        run_count([str(inp)], str(tmp_path / "fail"), spark=spark)
    manifest = run_count([str(inp)], str(tmp_path / "skip"), spark=spark, on_bad_record="skip")
    skipped = {Path(p).name: v for p, v in manifest["skipped"].items()}
    assert skipped["empty.jsonl"] == {"empty file: no records": {"count": 1, "first_lines": []}}
    assert list(skipped["trunc.jsonl.zst"]) == ["truncated zstd file: the last frame does not end"]
    assert skipped["mixed.jsonl"]["not valid JSON"] == {"count": 1, "first_lines": [2]}
    assert skipped["mixed.jsonl"]["text field is not a string"] == {"count": 1, "first_lines": [3]}
    assert skipped["mixed.jsonl"]["blank line"]["first_lines"] == [4]
    counts = read_counts(tmp_path / "skip")["unigrams"]
    assert counts["9"] >= 2 and counts["hour"] >= 1 and counts["week"] >= 1
    assert good.exists()


def test_glob_matching_nothing_is_an_error(spark, tmp_path):
    with pytest.raises(Exception, match="matches no file"):
        run_count([str(tmp_path / "none-*.jsonl.zst")], str(tmp_path / "out"), spark=spark)


def test_output_holding_a_different_result(spark, corpus, tmp_path):
    root, _ = corpus
    out = str(tmp_path / "out")
    first = run_count([str(root)], out, spark=spark)
    again = run_count([str(root)], out, spark=spark)          # same result: nothing to do
    assert again["finished"] == first["finished"]
    with pytest.raises(CountJobError, match="already holds a different result"):
        run_count([str(root)], out, rules=TermRules(window=3), spark=spark)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(CountJobError, match="not a freqgap counts directory"):
        run_count([str(root)], str(tmp_path / "other"), spark=spark)


def test_fifty_megabyte_single_line_document(spark, tmp_path):
    unit = "alpha 12 beta gamma hours delta " * 8 + "1234567 week "
    reps = 50_000_000 // len(unit) + 1
    write_jsonl(tmp_path / "in" / "big.jsonl.zst", [unit * reps, "5 days"])
    run_count([str(tmp_path / "in")], str(tmp_path / "out"), spark=spark)
    got = read_counts(tmp_path / "out")
    # Counts of a periodic text are linear in the number of periods: extrapolate the
    # reference counter's counts of 2 and 3 periods to `reps` periods.
    two, three = reference([unit * 2, "5 days"]), reference([unit * 3, "5 days"])
    for table in ("unigrams", "pairs", "triples"):
        expected = {k: two[table][k] + (three[table][k] - two[table][k]) * (reps - 2)
                    for k in three[table]}
        assert got[table] == expected


def _env():
    env = dict(os.environ)
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    return env


def test_resume_after_kill_equals_clean_run(spark, tmp_path):
    inp = tmp_path / "in"
    texts = random_texts(7, 1200, max_len=400)
    for i in range(6):
        write_jsonl(inp / f"s{i}.jsonl.zst", texts[i::6])
    out = tmp_path / "out"
    cmd = [sys.executable, str(REPO / "jobs" / "count_terms.py"), "--input", str(inp), "--out",
           str(out), "--files-per-job", "1", "--master", "local[1]", "--progress-interval", "1"]
    proc = subprocess.Popen(cmd, env=_env(), start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    groups = out / "_work" / "groups"
    while time.monotonic() < deadline and proc.poll() is None:
        if groups.exists() and len([p for p in groups.iterdir() if not p.name.endswith(".tmp")]) >= 2:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert not (out / "_manifest.json").exists(), "the run finished before it could be killed"
    done_before = len(list(groups.glob("g*.json")))     # a group's results file: done
    manifest = run_count([str(inp)], str(out), spark=spark, files_per_job=1, resume=True)
    assert manifest["groups"]["counted_this_run"] == 6 - done_before
    assert read_counts(out) == reference(texts)


def test_rerun_without_resume_starts_clean(spark, corpus, tmp_path):
    root, texts = corpus
    out = tmp_path / "out"
    (out / "_work" / "groups" / "g00000").mkdir(parents=True)
    (out / "_work" / "plan.json").write_text(json.dumps({"fingerprint": "stale"}))
    with pytest.raises(CountJobError, match="inputs or settings changed"):
        run_count([str(root)], str(out), spark=spark, resume=True)
    run_count([str(root)], str(out), spark=spark)
    assert read_counts(out) == reference(texts)


def test_resume_refuses_a_run_of_another_work_format(spark, corpus, tmp_path):
    """An interrupted run of an older freqgap (other run files) is not resumed: a clear error."""
    root, texts = corpus
    out = tmp_path / "out"
    fp = run_count([str(root)], str(out), spark=spark)["plan_fingerprint"]
    (out / "_manifest.json").unlink()
    (out / "_work" / "groups").mkdir(parents=True)
    (out / "_work" / "plan.json").write_text(json.dumps({"fingerprint": fp}))     # no work_format
    with pytest.raises(CountJobError, match="another version of freqgap"):
        run_count([str(root)], str(out), spark=spark, resume=True)
    run_count([str(root)], str(out), spark=spark)
    assert read_counts(out) == reference(texts)


def test_cli_help_lists_every_option(capsys):
    with pytest.raises(SystemExit):
        build_parser("count").parse_args(["count", "--help"])
    text = capsys.readouterr().out
    for option in ("--input", "--out", "--window", "--number-rule", "--vocab", "--max-order",
                   "--on-bad-record", "--resume", "--files-per-job", "--spread", "--master"):
        assert option in text


def test_cli_reports_bad_input_with_exit_code(spark, tmp_path, capsys):
    (tmp_path / "x.jsonl").write_bytes(b'{"text": "1"}\n{oops\n')
    code = freqgap_main(["count", "--input", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "x.jsonl:2: not valid JSON" in capsys.readouterr().err


def test_cli_vocab_and_orders(spark, tmp_path, capsys):
    write_jsonl(tmp_path / "in.jsonl", ["not 5 few hours", "Nots 7"])
    (tmp_path / "v.txt").write_text("not\nfew\n")
    code = freqgap_main(["count", "--input", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "o"),
                     "--vocab", str(tmp_path / "v.txt"), "--max-order", "2", "--window", "3"])
    assert code == 0
    got = read_counts(tmp_path / "o")
    assert got["unigrams"] == {"not": 2, "few": 1, "5": 1, "hour": 1, "7": 1}
    assert got["triples"] == {}
    assert ("5", "not") in got["pairs"] and ("hour", "not") not in got["pairs"]
    manifest = json.loads((tmp_path / "o" / "_manifest.json").read_text())
    assert manifest["config"]["window"] == 3 and "not" in manifest["config"]["vocab"]
    assert "distinct terms 5" in capsys.readouterr().out


def test_parquet_input_with_a_text_column(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = random_texts(5, 300)
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": list(range(300)), "body": texts}), tmp_path / "in" / "docs.parquet",
                   row_group_size=64)
    rules = TermRules.from_config({**TermRules().to_config(), "text_field": "body"})
    manifest = run_count([str(tmp_path / "in")], str(tmp_path / "out"), rules=rules, spark=spark)
    assert read_counts(tmp_path / "out") == reference(texts)
    assert manifest["totals"]["documents"] == 300


def test_default_groups_by_bytes_and_files(spark, tmp_path, monkeypatch):
    """A small corpus is one group (no checkpoint round trip); bigger ones get groups of at
    least 2 files per core and GROUP_MIN_BYTES, without a small remainder group."""
    from freqgap.counting import job as job_module
    from freqgap.counting.job import CountJob, CountOptions
    from freqgap.counting.rules import TermRules
    from freqgap.counting.inputs import InputFile

    files = [InputFile(i, f"/x/{i}.jsonl", 100, 0) for i in range(11)]
    job = CountJob(spark, CountOptions(inputs=[], output=str(tmp_path / "o"), rules=TermRules()))
    assert [len(g) for g in job._groups(files)] == [11]
    monkeypatch.setattr(job_module, "GROUP_MIN_BYTES", 250)
    per = 2 * spark.sparkContext.defaultParallelism          # 4 on local[2]
    sizes = [len(g) for g in job._groups(files)]
    assert sum(sizes) == 11 and all(n >= per for n in sizes) and len(sizes) == 11 // per
    assert job._spread_for(files[:1]) == 0            # 100 bytes: the split job costs more
    assert job._spread_for(files[:2]) == 0
    big = [InputFile(i, f"/x/{i}.jsonl.zst", job_module.SPREAD_MIN_BYTES, 0) for i in range(2)]
    assert job._spread_for(big[:1]) == 2 * spark.sparkContext.defaultParallelism
    assert job._spread_for(big[:2]) == 0                # as many files as cores: no idle core
    small = [InputFile(0, "/x/0.jsonl.zst", job_module.SPREAD_MIN_BYTES - 1, 0)]
    assert job._spread_for(small) == 0
    explicit = CountJob(spark, CountOptions(inputs=[], output=str(tmp_path / "o2"), rules=TermRules(), spread=3))
    assert explicit._spread_for(small) == 3
