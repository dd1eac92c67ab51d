"""The stages after `count` on bucket paths only: instances, predict, gaps and query read
and write s3:// (finished inputs fetched, outputs published manifest-last,
freqgap/cli/remote_paths.py), and give what the same chain gives on a local disk."""

from __future__ import annotations

from pathlib import Path

from freqgap.cli import main
from tests.instances.counts_fixture import default_counts
from tests.s3.server import upload

REPO = Path(__file__).resolve().parents[2]
INSTANCES = ["--tasks", "add,day_hour", "--k", "0,2", "--seeds", "3", "--limit", "5"]
GAPS = ["--freq-defs", "1;1,2", "--no-plots"]          # the fixture's counts have no triples
SQL = "SELECT task, k, freq_def, n_keys, n_seeds, delta FROM gaps ORDER BY ALL"
PREDICTIONS = "SELECT task, k, seed, instance_id, correct FROM predictions ORDER BY ALL"


def chain(counts: str, root: str, capsys) -> str:
    """counts → instances → predictions → gaps under root; the gaps table as CSV."""
    model = str(REPO / "models" / "demo")
    assert main(["instances", "--counts", counts, "--out", f"{root}/instances", *INSTANCES]) == 0
    assert main(["predict", "--prompts", f"{root}/instances", "--model", model,
                 "--out", f"{root}/predictions/demo"]) == 0
    assert main(["gaps", "--counts", counts, "--instances", f"{root}/instances",
                 "--predictions", f"{root}/predictions" + ("" if "://" in root else "/*/"),
                 "--out", f"{root}/results", *GAPS]) == 0
    capsys.readouterr()
    out = ""
    for sql in (SQL, PREDICTIONS):
        assert main(["query", "--results", f"{root}/results", "--format", "csv", sql]) == 0
        out += capsys.readouterr().out
    return out


def test_instances_predict_gaps_query_on_bucket_paths(bucket, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    counts = default_counts(tmp_path / "counts")
    upload(counts, f"{bucket}/counts")
    remote = chain(f"{bucket}/counts", bucket, capsys)
    local = chain(str(counts), str(tmp_path / "local"), capsys)
    assert remote == local and remote.count("\n") > 20     # 4+ gaps rows, 20 predictions
