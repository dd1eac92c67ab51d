"""The number law of the generated corpus, checked through the project's own Spark count."""

from __future__ import annotations

import pyarrow.parquet as pq

from freqgap.corpus import generate_corpus, load_profile
from freqgap.corpus.numbers import NumberModel
from tests.corpus.law import loglog_slope


def test_zipf_law_in_spark_counts(spark, tmp_path):
    from freqgap.counting.job import run_count

    profile = load_profile("tiny", {"shard_mb": 1.0})
    generate_corpus(profile, tmp_path / "corpus", progress=False)
    manifest = run_count([str(tmp_path / "corpus")], str(tmp_path / "counts"), spark=spark)
    assert manifest["status"] == "complete"
    uni = pq.read_table(tmp_path / "counts" / "unigrams").to_pylist()
    omega = {r["term"]: r["count"] for r in uni if r["kind"] == "number"}
    numbers = NumberModel(profile)
    # ω by promised rank falls off as rank^-exponent over the operands ...
    ranked = [omega[t] for t in numbers.terms[:50]]
    assert abs(loglog_slope(ranked) + profile.exponent) < 0.15
    # ... and the instance stage's rule (top 200 number terms, at most 2 digits) finds
    # every operand 0..99, as SPEC §3 expects.
    top = sorted(omega.items(), key=lambda kv: (-kv[1], kv[0]))[:200]
    assert {int(t) for t, _ in top if len(t) <= 2} == set(range(profile.operand_max + 1))
    words = {r["term"]: r["count"] for r in uni if r["kind"] == "word"}
    assert set(words) == set(profile.unit_weights)
