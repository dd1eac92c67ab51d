"""Options that take local paths only refuse a URI in one line, before any work, instead
of reading or writing a local directory named `s3:` (freqgap/cli/remote_paths.py)."""

from __future__ import annotations

import pytest

from freqgap.cli import main


@pytest.mark.parametrize("argv, option", [
    (["instances", "--counts", "s3://b/counts", "--out", "OUT"], "--counts s3://b/counts"),
    (["instances", "--out", "s3://b/instances"], "--out s3://b/instances"),
    (["predict", "--prompts", "gs://b/instances", "--model", "models/demo", "--out", "OUT"],
     "--prompts gs://b/instances"),
    (["gaps", "--counts", "c", "--instances", "i", "--predictions", "p", "--out", "s3a://b/r"],
     "--out s3a://b/r"),
    (["query", "--results", "s3://b/results", "--list"], "--results s3://b/results"),
    (["count", "--vocab", "s3://b/words.txt", "--out", "OUT"], "--vocab s3://b/words.txt"),
])
def test_uri_where_only_local_paths_work(argv, option, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {option}: " in err and "local" in err
    assert list(tmp_path.iterdir()) == []            # no `s3:` (or any) directory made here
