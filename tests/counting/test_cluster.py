"""The unchanged job, submitted with spark-submit to a real standalone cluster, gives the
same counts as local mode (and the package reaches executors without a manual step)."""

from __future__ import annotations

import pytest

from freqgap.counting.job import run_count
from tests.counting.cluster import StandaloneCluster, submit_count
from tests.counting.corpus_utils import read_counts, reference, write_jsonl
from tests.counting.test_job import random_texts



@pytest.mark.cluster
def test_standalone_cluster_equals_local_mode(spark, tmp_path):
    texts = random_texts(11, 900)
    for i in range(4):
        write_jsonl(tmp_path / "in" / f"shard-{i}.jsonl.zst", texts[i::4])
    run_count([str(tmp_path / "in")], str(tmp_path / "local"), spark=spark)
    with StandaloneCluster(tmp_path / "cluster") as cluster:
        result = submit_count(cluster, tmp_path / "in", tmp_path / "cluster-out", "--files-per-job", "2")
        assert result.returncode == 0, result.stderr[-3000:]
        # Both workers ran executors, and each received the package zip from the driver.
        shipped = list((tmp_path / "cluster").glob("worker*/app-*/*/freqgap.zip"))
        assert {p.parts[-4] for p in shipped} == {"worker0", "worker1"}
    assert read_counts(tmp_path / "cluster-out") == read_counts(tmp_path / "local") == reference(texts)
    assert "distinct terms" in result.stdout
