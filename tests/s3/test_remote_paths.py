"""Path options and URIs (freqgap/cli/remote_paths.py): a finished stage directory that a
later stage reads is fetched from the bucket once and read as a local copy; a URI where only
local paths work is refused in one line before any work, instead of reading or writing a
local directory named `s3:`."""

from __future__ import annotations

import unittest.mock

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from freqgap.cli import main
from tests.instances.counts_fixture import default_counts
from freqgap.counting.storage import Storage
from tests.s3.server import download, upload

INSTANCES = ["--tasks", "add,day_hour", "--k", "0,2", "--seeds", "3", "--limit", "5"]


@pytest.mark.parametrize("argv, option", [
    (["count-report", "--counts", "c", "--out", "s3://b/counts.png"], "--out s3://b/counts.png"),
    (["predict", "--prompts", "p", "--model", "models/demo", "--out", "hdfs://nn/predictions"],
     "--out hdfs://nn/predictions"),
    (["gaps", "--counts", "c", "--instances", "i", "--predictions", "s3://b/p*", "--out", "r"],
     "--predictions s3://b/p*"),
    (["gaps", "--counts", "hdfs://nn/c", "--instances", "i", "--predictions", "p"],
     "--counts hdfs://nn/c"),
    (["query", "--results", "r", "--out", "s3://b/q.csv", "SELECT 1"], "--out s3://b/q.csv"),
    (["count", "--vocab", "s3://b/words.txt", "--out", "OUT"], "--vocab s3://b/words.txt"),
])
def test_uri_where_only_local_paths_work(argv, option, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {option}: " in err and "local" in err
    assert list(tmp_path.iterdir()) == []            # no `s3:` (or any) directory made here


def test_instances_from_a_bucket_into_the_bucket(bucket, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    counts = default_counts(tmp_path / "counts")
    upload(counts, f"{bucket}/counts")
    assert main(["instances", "--counts", str(counts), "--out", str(tmp_path / "local"), *INSTANCES]) == 0
    for _ in range(2):                     # the second run reuses the fetched counts
        assert main(["instances", "--counts", f"{bucket}/counts", "--out", f"{bucket}/instances",
                     *INSTANCES]) == 0
    assert len(list((tmp_path / "cache" / "fetched").iterdir())) == 1
    assert not list((tmp_path / "cache" / "mirrors").iterdir())     # removed once published
    download(f"{bucket}/instances", tmp_path / "remote")
    for name in ("instances", "instance_terms", "prompts"):
        assert pq.read_table(tmp_path / "remote" / f"{name}.parquet").equals(
            pq.read_table(tmp_path / "local" / f"{name}.parquet"))
    assert (tmp_path / "remote" / "_manifest.json").is_file()
    assert not [p for p in (tmp_path / "remote").rglob(".*")]        # no lock or temporary file
    assert f"published to {bucket}/instances" in capsys.readouterr().out


def test_publishing_deletes_the_manifest_first_and_writes_it_last(bucket, tmp_path):
    from freqgap.counting.bucket_copies import pull, push

    store = Storage(None)
    for name, text in (("_manifest.json", "old"), ("old.parquet", "x"), ("keep.parquet", "k")):
        store.write_text_atomic(f"{bucket}/out/{name}", text)
    mirror = pull(f"{bucket}/out", tmp_path / "mirrors")
    assert sorted(p.name for p in mirror.iterdir()) == ["_manifest.json", "keep.parquet", "old.parquet"]
    (mirror / "old.parquet").unlink()
    (mirror / "new.parquet").write_text("n")
    (mirror / "_manifest.json").write_text("new")
    (mirror / ".lock").write_text("")
    order = []
    copy = pafs.copy_files

    def spy(src, dst, **kw):
        order.append(dst.rsplit("/", 1)[-1])
        return copy(src, dst, **kw)

    with unittest.mock.patch.object(pafs, "copy_files", spy):
        push(mirror, f"{bucket}/out")
    real = Storage(None)
    assert order[-1] == "_manifest.json" and sorted(order) == ["_manifest.json", "keep.parquet", "new.parquet"]
    assert real.list_names(f"{bucket}/out") == ["_manifest.json", "keep.parquet", "new.parquet"]
    assert real.read_text(f"{bucket}/out/_manifest.json") == "new"
    assert not mirror.exists()


def test_an_unfinished_directory_is_not_fetched(bucket, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    counts = default_counts(tmp_path / "counts")
    (counts / "_manifest.json").unlink()                 # a run killed before its commit
    upload(counts, f"{bucket}/counts")
    assert main(["instances", "--counts", f"{bucket}/counts", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no _manifest.json" in err
    assert not (tmp_path / "o").exists() and not (tmp_path / "cache").exists()


def test_query_cannot_write_into_a_fetched_copy(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["query", "--results", "s3://b/results", "--allow-write", "SELECT 1"]) == 2
    assert "--allow-write" in capsys.readouterr().err
