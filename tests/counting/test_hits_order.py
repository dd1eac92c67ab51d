"""Hit lists of an indexed training-order input (`count --order… --hits`, issue 41 item 3):
each listed unit is a training sequence, named by the dataset PREFIX and its entry index
(`sequence`, from 0) with its `step`; checked against a plain scan of the decoded sequences,
for two split sizes, and against the counts summed over the step buckets."""

from __future__ import annotations

from collections import Counter

import pyarrow.parquet as pq
import pytest

from freqgap.counting.exchange.runs import spill
from freqgap.counting.hits import HitMerge, HitSettings
from freqgap.counting.order_source import count_splits, plan_splits
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules
from tests.dynamics.helpers import packed_sequences, random_texts, tiny_tokenizer, write_order

WINDOW = TermRules()
SEQUENCE = TermRules(unit="sequence")
KEYS = (("5",), ("hour",), ("12", "5"), ("5", "hour"), ("day", "hour"), ("12", "5", "hour"),
        ("7",), ("3", "24"), ("5", "5"), ("hour", "minute", "week"), ("2019", "24", "7"))
UNIT_KEYS = tuple(k for k in KEYS if len(set(k)) == len(k))
EDGES, PER_STEP = [1, 3, 6], 4


@pytest.fixture(scope="module")
def order(tmp_path_factory):
    """(prefix, tokenizer directory, decoded pieces of each sequence some checkpoint sees)."""
    tmp = tmp_path_factory.mktemp("order")
    texts = random_texts(5, 150)
    tok = tiny_tokenizer(tmp / "tok", texts)
    sequences = packed_sequences(texts, tok, 48)
    prefix = write_order(tmp / "seq", sequences)
    pieces = []
    for seq in sequences[:EDGES[-1] * PER_STEP]:
        ids = seq.tolist()
        cuts = [-1] + [j for j, t in enumerate(ids) if t == tok.eos_token_id] + [len(ids)]
        pieces.append([tok.decode(ids[a + 1:b], skip_special_tokens=True)
                       for a, b in zip(cuts, cuts[1:]) if b > a + 1])
    return prefix, str(tmp / "tok" / "tokenizer.json"), tok.eos_token_id, pieces


def plain_scan(prefix: str, pieces: list[list[str]], keys, rules: TermRules, limit: int) -> list[tuple]:
    """The hits table's rows by a plain scan: each sequence counted alone (window unit: its
    pieces, no window across two; sequence unit: its pieces as one document)."""
    counted = []
    for i, texts in enumerate(pieces):
        counted.append(count_texts(texts, rules) if rules.unit == "window"
                       else count_texts([" ".join(texts)], TermRules(unit="document")))
    rows = []
    for key in HitSettings(keys).keys:
        held = []
        for i, ref in enumerate(counted):
            n = (ref.unigrams, ref.pairs, ref.triples)[len(key) - 1][key[0] if len(key) == 1 else key]
            if n:
                held.append((prefix, None, i, i // PER_STEP, n))
        total = sum(h[-1] for h in held)
        terms = list(key) + [None] * (3 - len(key))
        rows += [(len(key), *terms, *h, len(held), total) for h in held[:limit]]
    return rows


def task_rows(order, rules: TermRules, settings: HitSettings, split_bytes: int) -> tuple[int, list]:
    """(splits, the hits rows of one count task per split, merged as the job merges them)."""
    prefix, tok, eod, _ = order
    splits, _ = plan_splits(0, prefix, 10 ** 6, PER_STEP, EDGES, split_bytes)
    merged = HitMerge(settings, seqs_per_step=PER_STEP)
    for k, split in enumerate(splits):
        result = spill(count_splits([split], rules, tok, eod, PER_STEP, EDGES, settings),
                       f"{prefix}-runs-{split_bytes}-{k}")
        merged.absorb([result])
        assert not any(kind.startswith("hit") for kind, _ in result.stats)
    return len(splits), merged.rows({0: prefix})


@pytest.mark.parametrize("rules, keys", [(WINDOW, KEYS), (SEQUENCE, UNIT_KEYS)],
                         ids=["window", "sequence"])
def test_task_hits_equal_a_plain_scan_for_any_split_size(order, rules, keys):
    prefix, _, _, pieces = order
    for limit in (2, 1000):
        settings = HitSettings(keys, limit)
        want = plain_scan(prefix, pieces, keys, rules, limit)
        many, small = task_rows(order, rules, settings, 300)
        one, whole = task_rows(order, rules, settings, 1 << 30)
        assert many > 5 and one == 1
        assert small == whole == want
    assert {r[1:4] for r in want} == {k + (None,) * (3 - len(k)) for k in HitSettings(keys).keys}
    assert any(r[-2] > 1 for r in want)


@pytest.mark.parametrize("rules, keys", [(WINDOW, KEYS), (SEQUENCE, UNIT_KEYS)],
                         ids=["window", "sequence"])
def test_spark_hits_of_a_training_order_agree_with_the_counts(spark, order, tmp_path, rules, keys):
    import os

    from freqgap.counting.job import CountOptions
    from freqgap.counting.ordered_job import OrderedCountJob, OrderOptions

    prefix, tok, _, pieces = order
    settings = HitSettings(keys, 3)
    opts = CountOptions(inputs=[prefix + ".bin"], output=str(tmp_path / "out"), rules=rules,
                        hits=settings, files_per_job=2)
    manifest = OrderedCountJob(spark, opts, OrderOptions(tokenizer=tok, edges=EDGES,
                                                         seqs_per_step=PER_STEP,
                                                         split_bytes=400)).run()
    assert manifest["config"]["hits"] == settings.to_config()
    table = pq.read_table(tmp_path / "out" / "hits")
    assert table.column_names[5:8] == ["line", "sequence", "step"]
    rows = table.to_pylist()
    assert manifest["outputs"]["hits"]["rows"] == len(rows)
    assert [tuple(r.values()) for r in rows] == plain_scan(os.path.abspath(prefix), pieces, keys,
                                                           rules, 3)
    counts, units = Counter(), Counter()         # summed over the step buckets
    for r in pq.read_table(tmp_path / "out" / "unigrams").to_pylist():
        counts[(r["term"],)] += r["count"]
        units[(r["term"],)] += r.get("documents") or 0
    for name, n in (("pairs", 2), ("triples", 3)):
        for r in pq.read_table(tmp_path / "out" / name).to_pylist():
            counts[tuple(r[f"t{i}"] for i in range(1, n + 1))] += r["count"]
    for r in rows:
        key = tuple(t for t in (r["t1"], r["t2"], r["t3"]) if t is not None)
        assert r["total_occurrences"] == counts[key]
        if rules.by_unit:
            assert r["total_units"] == (units[key] if len(key) == 1 else counts[key])


def test_cli_lists_training_sequences_and_refuses_hits_of_an_order_file(spark, order, tmp_path, capsys):
    from freqgap.cli import main as freqgap_main

    prefix, tok, _, pieces = order
    (tmp_path / "k.txt").write_text("5\n12 5\n")
    out = tmp_path / "out"
    assert freqgap_main(["count", "--training-order", "--input", prefix, "--tokenizer", tok,
                         "--seqs-per-step", str(PER_STEP), "--bucket-edges", "1,3,6",
                         "--unit", "sequence", "--hits", str(tmp_path / "k.txt"),
                         "--hits-limit", "2", "--out", str(out)]) == 0
    rows = [tuple(r.values()) for r in pq.read_table(out / "hits").to_pylist()]
    assert rows == plain_scan(prefix, pieces, (("5",), ("12", "5")), SEQUENCE, 2) and rows
    code = freqgap_main(["count", "--order-file", str(tmp_path / "o.parquet"), "--bucket-edges",
                         "1,3", "--hits", str(tmp_path / "k.txt"), "--out", str(tmp_path / "o2")])
    assert code == 2 and "an --order-file count does not take it" in capsys.readouterr().err
