"""The IO layer on a real S3 endpoint (tests/s3/server.py), without Spark: the job's
output-side operations mean what they mean on a local disk, remote compressed inputs are
decompressed once, and credentials never ride in a URI."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap.counting.sources import iter_lines, iter_parquet_texts
from freqgap.counting.storage import Storage, qualify
from freqgap.errors import UsageError
from tests.counting.corpus_utils import write_jsonl
from tests.counting.test_storage import check_operations
from tests.s3.server import upload


def test_storage_operations_on_a_bucket(bucket):
    check_operations(Storage(None), f"{bucket}/out")      # no Spark, no JVM: pyarrow.fs


def test_directory_rename_moves_every_object(bucket):
    store = Storage(None)
    for name in ("a/x.txt", "a/sub/y.txt", "a/sub/deeper/z.txt"):
        store.write_text_atomic(f"{bucket}/{name}", name)
    store.rename(f"{bucket}/a", f"{bucket}/b/a")
    assert not store.exists(f"{bucket}/a")
    assert store.list_names(f"{bucket}/b/a") == ["sub", "x.txt"]
    assert store.read_text(f"{bucket}/b/a/sub/deeper/z.txt") == "a/sub/deeper/z.txt"


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.zst", ".jsonl.gz"])
def test_remote_compressed_input_is_decompressed_once(bucket, tmp_path, suffix):
    texts = [f"line {i} with some words" for i in range(3000)]
    local = write_jsonl(tmp_path / f"shard{suffix}", texts)
    upload(local, f"{bucket}/in/shard{suffix}")
    assert list(iter_lines(f"{bucket}/in/shard{suffix}")) == list(iter_lines(str(local)))


def test_remote_parquet_input(bucket, tmp_path):
    local = tmp_path / "shard.parquet"
    pq.write_table(pa.table({"text": ["a b", "c"]}), local)
    upload(local, f"{bucket}/in/shard.parquet")
    assert list(iter_parquet_texts(f"{bucket}/in/shard.parquet", "text")) == [(1, "a b"), (2, "c")]


@pytest.mark.parametrize("uri", ["s3://KEY:SECRET@bucket/out", "s3a://KEY@bucket/out",
                                 "s3://bucket/out?endpoint_override=127.0.0.1:9000"])
def test_credentials_in_an_output_uri_are_refused(uri):
    with pytest.raises(UsageError, match="AWS_ACCESS_KEY_ID"):
        qualify(uri)


def test_a_missing_bucket_is_one_line(bucket):
    from freqgap.counting.objectstore import ObjectStoreError

    with pytest.raises(ObjectStoreError, match=r"^s3://fg-no-such-bucket/out/_work: .*check that the bucket"):
        Storage(None).mkdirs("s3://fg-no-such-bucket/out/_work")
