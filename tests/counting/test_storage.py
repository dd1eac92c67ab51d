"""The job's output-side file operations mean the same through Python (local paths) and
through Hadoop's FileSystem in the JVM (every other URI; here forced for file:// too)."""

from __future__ import annotations

import pytest

from freqgap.counting import storage as storage_module
from freqgap.counting.storage import Storage, local_path, qualify


@pytest.fixture(params=["python", "hadoop"])
def store(request, spark, monkeypatch):
    if request.param == "hadoop":
        monkeypatch.setattr(storage_module, "local_path", lambda uri: None)
    return Storage(spark)


def test_local_paths_of_uris(tmp_path):
    """The driver's storage reads a qualified path as the workers' arrow_fs does: qualify
    writes no percent-escapes, so none are decoded (a directory named `a%20b` stays so)."""
    from freqgap.counting.inputs import arrow_fs

    odd = tmp_path / "a%20b c"
    assert local_path(qualify(str(odd))) == str(odd) == arrow_fs(qualify(str(odd)))[1]
    assert local_path("s3a://bucket/a") is None and local_path("hdfs://nn:8020/a") is None


def test_both_routes_do_the_same(store, tmp_path):
    check_operations(store, qualify(str(tmp_path / "out")))


def check_operations(store: Storage, base: str) -> None:
    """The operations' meaning on one route (also the object stores': tests/s3)."""
    assert not store.exists(base) and store.list_names(base) == []
    store.mkdirs(f"{base}/groups")
    store.write_text_atomic(f"{base}/groups/g00001.json", '{"a": 1}\n')
    store.write_text_atomic(f"{base}/groups/g00000.json", "ünïcode")
    store.write_text_atomic(f"{base}/groups/g00000.json", "replaced")
    assert store.read_text(f"{base}/groups/g00000.json") == "replaced"
    assert store.read_text(f"{base}/groups/g00001.json") == '{"a": 1}\n'
    # no temporary left; checksum files (Hadoop's local file system writes them) not listed
    assert [n for n in store.list_names(f"{base}/groups") if not n.startswith(".")] == \
        ["g00000.json", "g00001.json"]
    assert all(n.endswith(".crc") is False for n in store.list_names(f"{base}/groups"))
    store.rename(f"{base}/groups", f"{base}/done/groups")          # a new parent is made
    assert store.exists(f"{base}/done/groups/g00001.json") and not store.exists(f"{base}/groups")
    store.mkdirs(f"{base}/other")
    with pytest.raises(OSError, match="could not rename"):         # an existing directory
        store.rename(f"{base}/done", f"{base}/other")
    store.write_text_atomic(f"{base}/file.txt", "x")
    with pytest.raises(OSError, match="could not rename"):         # an existing file
        store.rename(f"{base}/done/groups/g00000.json", f"{base}/file.txt")
    store.delete(f"{base}/file.txt")
    with pytest.raises(OSError, match="could not rename"):         # a missing source
        store.rename(f"{base}/missing", f"{base}/elsewhere")
    store.delete(f"{base}/done")                                   # recursive
    store.delete(f"{base}/missing")                                # absent: no error
    assert not store.exists(f"{base}/done") and store.list_names(base) == ["other"]


def test_python_route_never_calls_the_jvm(spark, tmp_path, monkeypatch):
    store = Storage(spark)
    monkeypatch.setattr(Storage, "_fs", lambda self, path: pytest.fail(f"JVM call for {path}"))
    base = qualify(str(tmp_path))
    store.mkdirs(f"{base}/a")
    store.write_text_atomic(f"{base}/a/x.json", "{}")
    assert store.list_names(f"{base}/a") == ["x.json"] and store.read_text(f"{base}/a/x.json") == "{}"
    store.delete(f"{base}/a")


def test_a_stale_checksum_file_goes_with_its_file(spark, tmp_path):
    (tmp_path / "plan.json").write_text("{}")
    (tmp_path / ".plan.json.crc").write_bytes(b"crc")
    Storage(spark).write_text_atomic(qualify(str(tmp_path / "plan.json")), '{"new": 1}')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]
