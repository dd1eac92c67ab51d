"""`freqgap count` with the corpus and the output in a bucket (local[2]): the counts equal
the reference counter and a local-disk run, the exchange's run files went to the bucket,
and the manifest carries no credential or endpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from freqgap.counting.job import run_count
from freqgap.counting.storage import Storage
from tests.counting.corpus_utils import read_counts, reference, write_jsonl
from tests.counting.test_job import random_texts
from tests.s3.server import KEY_ID, SECRET, download, upload

REPO = Path(__file__).resolve().parents[2]
NAMES = ("a.jsonl", "b.jsonl.zst", "c.jsonl.gz", "d.jsonl.zst")


def write_corpus(root: Path, texts: list[str]) -> Path:
    for i, name in enumerate(NAMES):
        write_jsonl(root / name, texts[i::len(NAMES)])
    return root


def freqgap_count(env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "freqgap", "count", "--master", "local[2]", *args],
                          env={**os.environ, **env, "PYTHONPATH": str(REPO)}, cwd=cwd,
                          capture_output=True, text=True, timeout=400)


def test_bucket_to_bucket_equals_reference_and_local_disk(spark, s3_server, bucket, tmp_path):
    texts = random_texts(42, 800)
    corpus = write_corpus(tmp_path / "corpus", texts)
    upload(corpus, f"{bucket}/corpus")
    result = freqgap_count(s3_server.env, tmp_path, "--input", f"{bucket}/corpus",
                           "--out", f"{bucket}/counts", "--files-per-job", "2", "--spread", "3")
    assert result.returncode == 0, result.stderr[-3000:]
    run_count([str(corpus)], str(tmp_path / "local"), spark=spark, files_per_job=2)

    download(f"{bucket}/counts", tmp_path / "fetched")
    assert read_counts(tmp_path / "fetched") == read_counts(tmp_path / "local") == reference(texts)
    assert not (tmp_path / "fetched" / "_work").exists()           # the work area went away
    text = (tmp_path / "fetched" / "_manifest.json").read_text()
    manifest = json.loads(text)
    assert [i["path"] for i in manifest["inputs"]] == [f"{bucket}/corpus/{n}" for n in sorted(NAMES)]
    for secret in (KEY_ID, SECRET, s3_server.endpoint, f":{s3_server.port}"):
        assert secret not in text
    # Both groups' run files, and the pieces the lines were spread over, were written to
    # (and read back from) the bucket.
    name, log = bucket.split("://", 1)[1], s3_server.requests()
    for group in ("g00000", "g00001"):
        assert f"PUT /{name}/counts/_work/exchange/{group}/" in log
        assert f"PUT /{name}/counts/_work/exchange/{group}/split/" in log
    assert ".run" in log


def test_an_output_prefix_holding_other_objects_is_refused(s3_server, bucket, tmp_path):
    """The output rules on a bucket as on a disk: a prefix holding objects that are not
    counts is refused in one line (exit 2), and nothing is written or deleted there."""
    corpus = write_corpus(tmp_path / "corpus", random_texts(7, 40))
    upload(corpus, f"{bucket}/corpus")
    store = Storage(None)
    store.write_text_atomic(f"{bucket}/other/notes.txt", "not counts")
    refused = freqgap_count(s3_server.env, tmp_path, "--input", f"{bucket}/corpus",
                            "--out", f"{bucket}/other")
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "is not a freqgap counts directory" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert store.list_names(f"{bucket}/other") == ["notes.txt"]


def test_a_killed_run_resumes_from_the_bucket(s3_server, bucket, tmp_path):
    """The resume rules on a bucket: a run killed after some groups leaves no manifest, and
    --resume counts only the groups whose results are not in the bucket yet."""
    texts = random_texts(9, 800)
    for i in range(4):
        write_jsonl(tmp_path / "corpus" / f"s{i}.jsonl.zst", texts[i::4])
    upload(tmp_path / "corpus", f"{bucket}/corpus")
    out, store = f"{bucket}/counts", Storage(None)
    args = ["--input", f"{bucket}/corpus", "--out", out, "--files-per-job", "1"]
    killed = subprocess.Popen([sys.executable, "-m", "freqgap", "count", "--master", "local[1]", *args],
                              env={**os.environ, **s3_server.env, "PYTHONPATH": str(REPO)}, cwd=tmp_path,
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while (killed.poll() is None and time.monotonic() < deadline
           and not store.exists(f"{out}/_work/groups/g00001.json")):
        time.sleep(0.1)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=60)
    assert not store.exists(f"{out}/_manifest.json"), "the run finished before it could be killed"
    done_before = len([n for n in store.list_names(f"{out}/_work/groups") if n.endswith(".json")])
    assert done_before >= 2
    resumed = freqgap_count(s3_server.env, tmp_path, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    download(out, tmp_path / "fetched")
    manifest = json.loads((tmp_path / "fetched" / "_manifest.json").read_text())
    assert manifest["groups"] == {"count": 4, "counted_this_run": 4 - done_before}
    assert read_counts(tmp_path / "fetched") == reference(texts)
