"""Counting by training position: per step bucket, the job's counts equal the plain reference
counter run on the decoded text of that bucket's sequences; cumulative sums give ω as of a
checkpoint; the result does not depend on how the sequences are split over tasks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from freqgap.counting.job import CountOptions
from freqgap.counting.order_source import (OrderInputError, buckets_of_steps, check_edges,
                                           entry_pieces)
from freqgap.counting.ordered_job import OrderedCountJob, OrderOptions
from freqgap.counting.rules import TermRules
from tests.dynamics.helpers import (expected_by_bucket, packed_sequences, random_texts,
                                    read_bucketed, tiny_tokenizer, write_order)

EDGES = [0, 1, 2, 4, 8, 16]
PER_STEP = 3
SEQ_LEN = 48


@pytest.fixture(scope="module")
def order(tmp_path_factory):
    root = tmp_path_factory.mktemp("order")
    texts = random_texts(1, 400)
    tok = tiny_tokenizer(root / "tok", texts)
    sequences = packed_sequences(texts, tok, SEQ_LEN)
    assert len(sequences) > EDGES[-1] * PER_STEP, "the test needs sequences after the last edge"
    prefix = write_order(root / "document", sequences)
    return root, texts, tok, sequences, prefix


def run(spark, prefix, tok_dir, out, split_bytes=1 << 20, edges=EDGES, **kw):
    opts = CountOptions(inputs=[prefix], output=str(out), rules=TermRules(), progress_interval=0.5, **kw)
    order = OrderOptions(tokenizer=str(tok_dir), edges=edges, seqs_per_step=PER_STEP,
                         split_bytes=split_bytes)
    return OrderedCountJob(spark, opts, order).run()


def test_buckets_follow_the_checkpoint_rule():
    steps = np.array([0, 1, 2, 3, 4, 7, 8, 15, 16, 99])
    # checkpoint stepN has seen steps 0..N-1: step t goes to the smallest edge > t
    assert buckets_of_steps(steps, EDGES).tolist() == [1, 2, 4, 4, 8, 8, 16, 16, -1, -1]
    with pytest.raises(OrderInputError, match="strictly increasing"):
        check_edges([0, 4, 4], "conf/dynamics.yaml: bucket_edges")


def test_pieces_never_cross_eod():
    assert [p.tolist() for p in entry_pieces(np.array([0, 5, 6, 0, 0, 7]), 0)] == [[5, 6], [7]]
    assert [p.tolist() for p in entry_pieces(np.array([4, 5]), 0)] == [[4, 5]]


def test_bucketed_counts_equal_reference_per_bucket(spark, order, tmp_path):
    root, texts, tok, sequences, prefix = order
    manifest = run(spark, prefix, root / "tok", tmp_path / "out", split_bytes=300)
    got = read_bucketed(tmp_path / "out")
    want = expected_by_bucket(sequences, tok, PER_STEP, EDGES, TermRules())
    assert set(got) == set(want) == set(EDGES[1:])
    for bucket in want:
        for name in ("unigrams", "pairs", "triples"):
            assert got[bucket][name] == +want[bucket][name], (bucket, name)
    assert manifest["order"] == {"sequences": len(sequences), "last_edge": 16,
                                 "sequences_after_last_edge": len(sequences) - 16 * PER_STEP}
    assert manifest["config"]["bucket_edges"] == EDGES
    assert manifest["inputs"][0]["lines"] == 16 * PER_STEP
    assert manifest["groups"]["count"] >= 1


def test_cumulative_omega_is_the_count_of_everything_seen(spark, order, tmp_path):
    """ω at checkpoint s (sum over buckets <= s) = the reference count of all text in the
    sequences of steps 0..s-1."""
    root, texts, tok, sequences, prefix = order
    run(spark, prefix, root / "tok", tmp_path / "out")
    got = read_bucketed(tmp_path / "out")
    for s in (1, 4, 16):
        cum = Counter()
        for bucket, tables in got.items():
            if bucket <= s:
                cum.update(tables["unigrams"])
        seen = sequences[:s * PER_STEP]
        expected = expected_by_bucket(seen, tok, PER_STEP, [s], TermRules())[s]["unigrams"]
        assert cum == +expected, s


def test_independent_of_partitioning(spark, order, tmp_path):
    root, texts, tok, sequences, prefix = order
    run(spark, prefix, root / "tok", tmp_path / "a", split_bytes=1 << 30)
    run(spark, prefix, root / "tok", tmp_path / "b", split_bytes=100, files_per_job=2)
    assert read_bucketed(tmp_path / "a") == read_bucketed(tmp_path / "b")


def test_bad_settings_are_named(spark, order, tmp_path):
    root, texts, tok, sequences, prefix = order
    with pytest.raises(OrderInputError, match="--tokenizer .*nowhere"):
        run(spark, prefix, tmp_path / "nowhere", tmp_path / "o")
    with pytest.raises(OrderInputError, match="bucket edges"):
        run(spark, prefix, root / "tok", tmp_path / "o", edges=[4, 2])
    covered = len(sequences) // PER_STEP
    with pytest.raises(OrderInputError, match=f"cover steps 0..{covered - 1} only"):
        run(spark, prefix, root / "tok", tmp_path / "o", edges=[0, covered + 1])
