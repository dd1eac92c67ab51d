"""Every producer, run for real on tiny inputs, writes what freqgap/contract.py declares:
its Parquet files have exactly the contract's columns and types, its manifest passes
read_manifest(stage=...) with every required field, and it records the fingerprints of the
outputs it was made from."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from freqgap.contract import DATASETS, STAGES, check_parquet
from freqgap.manifest import read_manifest


def _stage_dir(request, stage):
    chain = request.getfixturevalue("chain") if stage not in {"suite_instances",
                                                             "suite_predictions",
                                                             "suite_summary"} else None
    if stage == "generate_corpus":
        return chain.corpus
    if stage == "count_terms":
        return chain.counts
    if stage == "instances":
        return chain.instances
    if stage == "predictions":
        return chain.predictions / "fake"
    if stage == "gaps":
        return chain.results
    if stage == "import_lm_eval":
        return request.getfixturevalue("lm_eval_dir")
    out = request.getfixturevalue("suite_out")
    if stage == "suite_instances":
        return out / "instances"
    if stage == "suite_summary":
        return out / "summary"
    return next(d for d in sorted((out / "predictions").iterdir()) if d.is_dir())


PRODUCERS = ["generate_corpus", "count_terms", "instances", "predictions", "gaps",
             "import_lm_eval", "suite_instances", "suite_predictions", "suite_summary"]


@pytest.mark.parametrize("stage", PRODUCERS)
def test_producer_output_follows_the_contract(request, stage):
    directory = _stage_dir(request, stage)
    manifest = read_manifest(directory, stage=stage)          # stage, fields, fingerprint
    for name in STAGES[stage].datasets:
        ds = DATASETS[name]
        files = sorted(directory.glob(ds.path)) if "*" in ds.path else \
            check_parquet(ds, directory / ds.path.rstrip("/"))
        assert files, f"{directory}: no {ds.path}"
        for f in files:
            check_parquet(ds, f)                                # names and types
            found = [(fld.name, fld.type) for fld in pq.read_schema(f)]
            if not ds.open:   # exactly the declared columns, in the declared order
                present = [c.name for c in ds.optional if c.name in dict(found)]
                want = [(fld.name, fld.type) for fld in ds.schema(present)]
                assert found == want, f
    assert manifest["status"] == "complete"


def test_the_chain_records_its_upstream_fingerprints(chain, lm_eval_dir):
    counts = read_manifest(chain.counts, stage="count_terms")
    instances = read_manifest(chain.instances, stage="instances",
                              upstream={"counts": counts["fingerprint"]})
    assert instances["upstream"]["counts_dir"] == str(chain.counts)
    assert instances["counts_settings"]["window"] == counts["config"]["window"]
    read_manifest(chain.predictions / "fake", stage="predictions",
                  upstream={"instances": instances["fingerprint"]})
    read_manifest(lm_eval_dir, stage="import_lm_eval",
                  upstream={"instances": instances["fingerprint"]})
    gaps = read_manifest(chain.results, stage="gaps",
                         upstream={"counts": counts["fingerprint"],
                                   "instances": instances["fingerprint"]})
    assert gaps["counts_mismatch_ok"] is False and gaps["compatibility"] == "checked"
    assert list(gaps["upstream"]["predictions"].values()) == [
        read_manifest(chain.predictions / "fake")["fingerprint"]]


def test_an_identical_recount_keeps_the_fingerprint(chain, spark, tmp_path):
    """Counting the same files again gives the same fingerprint (timings left out), so the
    instances stay valid; the other corpus, with the same settings, gives another."""
    from freqgap.counting.job import run_count

    again = run_count([str(chain.corpus)], str(tmp_path / "again"), spark=spark,
                      progress_interval=60)
    first = read_manifest(chain.counts)
    assert again["fingerprint"] == first["fingerprint"]
    other = read_manifest(chain.other_counts)
    assert other["config"] == first["config"] and other["fingerprint"] != first["fingerprint"]


def test_instances_rebuilt_from_rewritten_identical_counts_keep_their_fingerprint(chain, tmp_path):
    """The instances name their counts by fingerprint (not mtime): touching or rewriting the
    same counts and rebuilding the instances leaves the predictions made from them valid."""
    import os

    from freqgap.config import load_conf
    from freqgap.instances import build_instances_dir, resolve_grid
    from freqgap.manifest import MANIFEST_NAME
    from tests.contract.chain import TASKS

    os.utime(chain.counts / MANIFEST_NAME, (1, 1))
    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=TASKS, ks=[0, 2], seeds=[0], max_test_items=30)
    again = build_instances_dir(chain.counts, tmp_path / "inst", grid, conf, progress_interval=60)
    assert again["fingerprint"] == read_manifest(chain.instances)["fingerprint"]
