"""The error model of the command: every bad invocation is one stderr line and exit 2.

Each case is a user mistake; the command must stop with exactly one line on stderr,
`freqgap <cmd>: error: …`, no traceback, and exit status 2, before doing any work where
the mistake is in an option. A real bug (not a FreqgapError) keeps its traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freqgap.cli import main

pytestmark = pytest.mark.timeout(120)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "suites"


def invoke(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:     # argparse's own errors
        return exc.code


@pytest.fixture()
def files(tmp_path, monkeypatch):
    """A scratch cwd with a plain file (an output path inside it cannot be a directory)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("x\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "samples.jsonl").write_text("")
    return tmp_path


# (subcommand shown in the message, argv, a fragment the message must hold)
CASES = [
    ("freqgap", ["nope"], "invalid choice"),
    ("freqgap count", ["--conf", "missing-dir", "count"], "--conf missing-dir: not a directory"),
    ("freqgap count", ["count", "--window", "0"], "--window"),
    ("freqgap count", ["count", "--window", "100000"], "100000"),
    ("freqgap count", ["count", "--window", "five"], "--window"),
    ("freqgap count", ["count", "--files-per-job", "-1"], "--files-per-job"),
    ("freqgap count", ["count", "--spread", "-2"], "--spread"),
    ("freqgap count", ["count", "--progress-interval", "0"], "--progress-interval"),
    ("freqgap count", ["count", "--progress-interval", "nan"], "--progress-interval"),
    ("freqgap count", ["count", "--max-order", "4"], "--max-order"),
    ("freqgap count", ["count", "--out", "file.txt/counts"], "file.txt is a file"),
    ("freqgap count", ["count", "--vocab", "no-such-vocab.txt"], "no-such-vocab.txt"),
    ("freqgap count", ["count", "--input", ","], "--input"),
    ("freqgap count", ["count", "--input", "no-such-corpus/*.jsonl"], "input matches no file"),
    ("freqgap count", ["count", "--input", "empty"], "input matches no file"),
    ("freqgap instances", ["instances", "--k", "-1"], "--k"),
    ("freqgap instances", ["instances", "--k", "2,x"], "--k"),
    ("freqgap instances", ["instances", "--seeds", "0,-3"], "--seeds"),
    ("freqgap instances", ["instances", "--limit", "0"], "--limit"),
    ("freqgap instances", ["instances", "--grid", "huge"], "--grid"),
    ("freqgap instances", ["instances", "--counts", "missing"], "missing"),
    ("freqgap instances", ["instances", "--counts", "empty"], "empty"),
    ("freqgap instances", ["instances", "--counts", "empty", "--out", "file.txt"], "file.txt"),
    ("freqgap instances", ["instances", "--progress-interval", "0.1"], "--progress-interval"),
    ("freqgap predict", ["predict", "--model", "demo", "--batch-size", "0"], "--batch-size"),
    ("freqgap predict", ["predict", "--model", "demo", "--chunk-size", "0"], "--chunk-size"),
    ("freqgap predict", ["predict", "--model", "demo", "--max-new-tokens", "-1"], "--max-new-tokens"),
    ("freqgap predict", ["predict", "--model", "demo", "--shard", "3/2"], "--shard"),
    ("freqgap predict", ["predict", "--model", "demo", "--merge", "0"], "--merge"),
    ("freqgap predict", ["predict", "--model", "demo", "--dtype", "float8"], "--dtype"),
    ("freqgap predict", ["predict"], "--model"),
    ("freqgap predict", ["predict", "--model", "demo", "--out", "file.txt/p"], "file.txt is a file"),
    ("freqgap predict", ["predict", "--model", "demo", "--prompts", "missing"], "missing"),
    ("freqgap gaps", ["gaps", "--bin-percent", "0"], "--bin-percent"),
    ("freqgap gaps", ["gaps", "--bin-percent", "80"], "bin_percent"),
    ("freqgap gaps", ["gaps", "--boot-reps", "-1"], "--boot-reps"),
    ("freqgap gaps", ["gaps", "--threads", "0"], "--threads"),
    ("freqgap gaps", ["gaps", "--freq-defs", "9"], "9"),
    ("freqgap gaps", ["gaps", "--counts", "missing", "--out", "r"], "missing"),
    ("freqgap gaps", ["gaps", "--out", "file.txt/r"], "file.txt is a file"),
    ("freqgap query", ["query", "--results", "missing", "SELECT 1"], "missing"),
    ("freqgap query", ["query"], "SQL"),
    ("freqgap import-lm-eval", ["import-lm-eval", "none.jsonl", "--model", "m"], "out/instances"),
    ("freqgap import-lm-eval", ["import-lm-eval", "samples.jsonl", "--model", "m", "--k", "-1"],
     "--k"),
    ("freqgap import-lm-eval", ["import-lm-eval", "samples.jsonl"], "--model"),
    ("freqgap suite", ["suite"], "BENCHMARK"),
    ("freqgap suite", ["suite", "mmlu"], "invalid choice"),
    ("freqgap suite tinad", ["suite", "tinad", "--data", "x", "--models", "demo", "--out", "o",
                             "--original", "y"], "--original"),
    ("freqgap suite neqa", ["suite", "neqa", "--data", "x", "--models", "demo", "--out", "o",
                            "--batch-size", "0"], "--batch-size"),
    ("freqgap suite neqa", ["suite", "neqa", "--data", "x", "--models", "demo", "--out", "o",
                            "--limit", "-5"], "--limit"),
    ("freqgap suite neqa", ["suite", "neqa", "--data", "x", "--models", ",", "--out", "o"],
     "--models"),
    ("freqgap suite neqa", ["suite", "neqa", "--data", "missing.jsonl", "--models", "demo",
                            "--out", "o"], "missing.jsonl"),
    ("freqgap suite quantifiers", ["suite", "quantifiers", "--data",
                                   str(FIXTURES / "quantifiers.csv"), "--models", "demo",
                                   "--out", "file.txt/o"], "file.txt is a file"),
    ("freqgap corpus", ["corpus", "--profile", "nope", "--out", "c"], "--profile"),
    ("freqgap corpus", ["corpus", "--out", "c", "--shards", "0"], "--shards"),
    ("freqgap corpus", ["corpus", "--out", "c", "--workers", "0"], "--workers"),
    ("freqgap corpus", ["corpus", "--out", "c", "--shard-mb", "-1"], "--shard-mb"),
    ("freqgap corpus", ["corpus", "--out", "file.txt/c"], "file.txt is a file"),
    ("freqgap train", ["train", "--corpus", "missing-corpus", "--out", "m"], "missing-corpus"),
    ("freqgap train", ["train", "--out", "m", "--steps", "0"], "--steps"),
    ("freqgap train", ["train", "--out", "m", "--threads", "0"], "--threads"),
    ("freqgap train", ["train", "--out", "m", "--profile", "nope"], "--profile"),
    ("freqgap train", ["train", "--out", "m", "--device", "tpu"], "device"),
    ("freqgap simulate", ["simulate", "--k", "-1"], "--k"),
    ("freqgap simulate", ["simulate", "--boot-reps", "-1"], "--boot-reps"),
    ("freqgap simulate", ["simulate", "--task", "nope"], "nope"),
    ("freqgap simulate", ["simulate", "--train-profile", "nope"], "nope"),
    ("freqgap simulate", ["simulate", "--out", "file.txt/r"], "file.txt is a file"),
    ("freqgap demo", ["demo", "--corpus", "missing-corpus"], "missing-corpus"),
    ("freqgap demo", ["demo", "--progress-interval", "0"], "--progress-interval"),
    ("freqgap demo", ["demo", "--grid", "nope"], "--grid"),
    ("freqgap dynamics demo", ["dynamics", "demo", "--steps", "0"], "--steps"),
    ("freqgap dynamics demo", ["dynamics", "demo", "--boot-reps", "-1"], "--boot-reps"),
    ("freqgap dynamics", ["dynamics"], "ACTION"),
]


@pytest.mark.parametrize("prog,argv,fragment", CASES, ids=[" ".join(c[1]) for c in CASES])
def test_bad_invocation_is_one_line_and_exit_2(files, capsys, prog, argv, fragment):
    code = invoke(argv)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    assert fragment in lines[0]
    assert "Traceback" not in captured.err + captured.out


@pytest.fixture(scope="module")
def bad_world(tmp_path_factory):
    """A small consistent counts/instances/predictions world whose copies get damaged."""
    from tests.gaps.fixtures import random_world

    return random_world(tmp_path_factory.mktemp("bad") / "w", n_x1=6, tasks=("mult",))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _as_string(column: str):
    def damage(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        i = table.schema.get_field_index(column)
        pq.write_table(table.set_column(i, column, table[column].cast(pa.string())), path)
    return damage


# (stage, file of the world to damage, damage, fragment): an empty or wrongly typed input
# file is one line naming that file (not DuckDB's or pyarrow's error)
BAD_FILES = [
    ("instances", "counts/unigrams/part-00000.parquet", _empty, "not a readable Parquet file"),
    ("instances", "counts/unigrams/part-00000.parquet", _as_string("count"),
     "column 'count' is string, expected int64"),
    ("gaps", "counts/unigrams/part-00000.parquet", _as_string("count"),
     "column 'count' is string, expected int64"),
    ("gaps", "instances/instances.parquet", _empty, "not a readable Parquet file"),
    ("gaps", "predictions/tiny-a/part-00000.parquet", _empty, "not a readable Parquet file"),
    ("gaps", "predictions/tiny-a/part-00000.parquet", _as_string("instance_id"),
     "column 'instance_id' is string, expected int64"),
]


@pytest.mark.parametrize("stage,rel,damage,fragment", BAD_FILES,
                         ids=[f"{b[0]}-{b[1]}-{b[2].__name__}" for b in BAD_FILES])
def test_bad_input_file_is_one_line_naming_it(bad_world, tmp_path, capsys, stage, rel, damage,
                                              fragment):
    import shutil

    world = tmp_path / "w"
    shutil.copytree(bad_world.counts.parent, world)
    damage(world / rel)
    argv = (["instances", "--counts", str(world / "counts"), "--grid", "demo"]
            if stage == "instances" else
            ["gaps", "--counts", str(world / "counts"), "--instances", str(world / "instances"),
             "--predictions", f"{world}/predictions/*/", "--boot-reps", "5", "--no-plots"])
    code = invoke(argv + ["--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"freqgap {stage}: error: {world / rel}: ")
    assert fragment in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()        # refused before writing: nothing left


def test_a_bug_keeps_its_traceback(monkeypatch, files):
    """Only FreqgapError is turned into a message: anything else propagates."""
    import freqgap.cli.query as query

    def broken(args):
        raise KeyError("a bug")

    monkeypatch.setattr(query, "run", broken)
    with pytest.raises(KeyError, match="a bug"):
        main(["query", "SELECT 1"])


def test_multi_line_message_is_joined_into_one_line(monkeypatch, files, capsys):
    import freqgap.cli.query as query
    from freqgap.errors import UsageError

    def fails(args):
        raise UsageError("first part\nsecond part")

    monkeypatch.setattr(query, "run", fails)
    assert main(["query", "SELECT 1"]) == 2
    assert capsys.readouterr().err == "freqgap query: error: first part; second part\n"


def test_conf_dir_replaces_one_file(files, capsys, monkeypatch):
    """--conf DIR: a file there replaces conf/<name>.yaml; the others stay the defaults."""
    from freqgap.config import load_conf
    from freqgap.paths import CONF_ENV

    monkeypatch.setenv(CONF_ENV, "")      # main() sets it; monkeypatch removes it afterwards
    over = files / "myconf"
    over.mkdir()
    terms = load_conf("terms")
    (over / "terms.yaml").write_text(json.dumps({**terms, "window": 3}))
    # the help shows the overriding file's default, and the other files are still found
    assert invoke(["--conf", str(over), "count", "--help"]) == 0
    assert "(conf/terms.yaml: 3)" in " ".join(capsys.readouterr().out.split())
    assert load_conf("terms")["window"] == 3 and load_conf("tasks")["grids"]


@pytest.mark.timeout(300)
def test_spark_error_is_one_line_without_spark_log(tmp_path):
    """Once Spark has started, a user error is still one line: no INFO log, no Py4J stack."""
    import os
    import subprocess
    import sys

    script = Path(sys.executable).parent / "freqgap"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "freqgap"]
    (tmp_path / "bad.jsonl").write_text('{"text": "1 2"}\n{oops\n')
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    out = subprocess.run([*cmd, "count", "--input", "bad.jsonl", "--out", "o", "--master",
                          "local[1]"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=280)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert lines[-1].startswith("freqgap count: error: ") and "bad.jsonl:2: not valid JSON" in lines[-1]
    # before it only the job's own progress lines: nothing of Spark's log or a Java stack
    assert all(line.startswith("[count_terms] ") for line in lines[:-1]), out.stderr
    assert not (tmp_path / "o" / "_manifest.json").exists()


def test_no_numeric_option_escapes_validation():
    """The sweep: every numeric flag of every subcommand has a range-checking type (from
    freqgap.cli.common) or a fixed set of choices; a bare int/float would accept 0 or -1."""
    import argparse

    from freqgap.cli import build_parser

    def walk(parser, words=()):
        yield words, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, words + (name,))

    bare = [f"{' '.join(words)} {'/'.join(a.option_strings)}"
            for words, p in walk(build_parser(all_commands=True)) for a in p._actions
            if a.type in (int, float) and not a.choices]
    assert bare == []


def test_unwritable_output_is_refused_before_work(tmp_path, monkeypatch):
    """(Root may write anywhere, so the permission check is exercised through os.access.)"""
    import os

    from freqgap.cli.common import writable_dir
    from freqgap.errors import UsageError

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path else real(p, mode))
    with pytest.raises(UsageError, match="is not writable"):
        writable_dir("--out", tmp_path / "new" / "dir")
    assert writable_dir("--out", "s3a://bucket/counts") == Path("s3a://bucket/counts")


def test_closed_stdout_is_not_a_traceback():
    """`freqgap … | head`: the reader leaves early; exit 1 without a BrokenPipeError trace."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)                      # nobody will read: the first write fails (EPIPE)
    try:
        scores = Path(__file__).resolve().parents[1] / "fixtures/suites/tinad_predictions.jsonl"
        proc = subprocess.run([sys.executable, "-m", "freqgap", "suite", "tinad", "--score",
                               str(scores)], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
