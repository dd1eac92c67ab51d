"""A standalone master and two workers on 127.0.0.1 with nothing on a shared disk: each
worker and the driver have their own SPARK_LOCAL_DIRS, work directory and TMPDIR, and the
corpus, the exchange's run files and the output live only in the bucket. The counts are
exact, also when a worker is killed in the middle of the job (its executor's finished
run files are in the bucket, not on its lost disk)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from freqgap.counting.storage import Storage
from tests.counting.cluster import StandaloneCluster, cluster_env, count_command
from tests.counting.corpus_utils import read_counts, reference, write_jsonl
from tests.counting.test_job import random_texts
from tests.s3.server import download, upload

FILES, PER_GROUP = 8, 2              # four groups (Spark jobs): the kill lands after the first


def own_disks(root: Path, extra: dict) -> dict[str, str]:
    """The environment of a process with local directories of its own under root."""
    for sub in ("local", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return {**extra, "SPARK_LOCAL_DIRS": str(root / "local"), "TMPDIR": str(root / "tmp")}


@pytest.mark.cluster
def test_two_workers_separate_disks_bucket_only_worker_killed(s3_server, bucket, tmp_path):
    texts = random_texts(5, 1200)
    for i in range(FILES):
        write_jsonl(tmp_path / "src" / f"shard-{i:02d}.jsonl{'.zst' if i % 2 else ''}", texts[i::FILES])
    upload(tmp_path / "src", f"{bucket}/corpus")
    out = f"{bucket}/counts"
    first_group = f"{out}/_work/groups/g00000.json"
    store = Storage(None)
    disks = tmp_path / "disks"
    with StandaloneCluster(disks / "cluster",
                           worker_env=lambda i: own_disks(disks / f"worker{i}", s3_server.env)) as cluster:
        driver = disks / "driver"
        job = subprocess.Popen(
            count_command(cluster, f"{bucket}/corpus", out, "--files-per-job", str(PER_GROUP)),
            env={**cluster_env(), **own_disks(driver, s3_server.env)}, cwd=driver,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while job.poll() is None and not store.exists(first_group) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert job.poll() is None, "the job ended before a worker could be killed"
            assert store.exists(first_group), "the first group did not finish in time"
            assert list((disks / "cluster" / "worker1").glob("app-*")), "worker 1 ran no executor"
            cluster.kill_worker(1)
            stdout, stderr = job.communicate(timeout=300)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait(timeout=30)
        assert job.returncode == 0, stderr[-3000:]
        assert "Removing worker" in (disks / "cluster" / "master.log").read_text(errors="replace")
    download(out, tmp_path / "fetched")
    assert read_counts(tmp_path / "fetched") == reference(texts)
    assert "distinct terms" in stdout
    # Nothing of the job's data touched a local disk: no corpus, run file or table there.
    spilled = [p for p in disks.rglob("*") if p.name.endswith((".run", ".parquet", ".jsonl", ".zst"))]
    assert spilled == []
