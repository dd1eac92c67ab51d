"""The facts corpus (freqgap/corpus/facts.py) and the entity demo's chain in its smoke form:
deterministic output, documents planted as the Zipf law says, and the Spark document-unit
count of every evaluated pair equal to what the generator planted and to a plain scan."""

from __future__ import annotations

import json
import string

import pyarrow.parquet as pq
import pytest

from freqgap.config import ConfigError
from freqgap.corpus.facts import (CORPUS_DIR, QA_FILE, SHARD, facts_profile, filler_words,
                                  plan_facts, write_facts_corpus)


def _read(d):
    return [(d / CORPUS_DIR / SHARD).read_bytes(), (d / QA_FILE).read_bytes()]


def test_same_seed_same_bytes_other_seed_other_text(tmp_path):
    p = facts_profile("smoke")
    write_facts_corpus(p, tmp_path / "a")
    write_facts_corpus(p, tmp_path / "b")
    assert _read(tmp_path / "a") == _read(tmp_path / "b")
    write_facts_corpus(facts_profile("smoke", {"seed": 1}), tmp_path / "c")
    assert _read(tmp_path / "c")[0] != _read(tmp_path / "a")[0]


def test_planted_documents_follow_the_law_and_names_are_safe_terms():
    p = facts_profile("demo")
    facts = plan_facts(p)
    assert len(facts) == p.subjects * len(p.relations)
    assert [len(f.documents) for f in facts] == [int(p.max_documents * r ** -p.exponent)
                                                 for r in range(1, len(facts) + 1)]
    assert len(facts[0].documents) == p.max_documents and not facts[-1].documents
    assert all(len(set(f.documents)) == len(f.documents) for f in facts)
    names = [f.answer for f in facts] + sorted({f.subject for f in facts})
    assert len(set(n.lower() for n in names)) == len(names)
    assert not any(n.lower().endswith("s") or n.lower() in filler_words() for n in names)


def test_bad_settings_name_the_file_and_key():
    with pytest.raises(ConfigError, match=r"demo_entities.yaml.*relations.*tides"):
        facts_profile("smoke", {"relations": ["tides"]})
    with pytest.raises(ConfigError, match="max_documents must be in 1..documents"):
        facts_profile("smoke", {"max_documents": 41})


def _plain_relevant_documents(path, subject, answer):
    """Documents whose tokens (lower-cased, ASCII punctuation stripped) hold both."""
    n = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        tokens = {t.strip(string.punctuation).lower() for t in json.loads(line)["text"].split()}
        n += subject.lower() in tokens and answer.lower() in tokens
    return n


def test_smoke_chain_counts_equal_the_planted_documents(tmp_path, spark):
    from freqgap.workflows.demo_entities import EntitiesDemoOptions, run_entities_demo

    lines: list[str] = []
    res = run_entities_demo(EntitiesDemoOptions(profile="smoke", work=tmp_path, figure=None,
                                                boot_reps=20), spark=spark, log=lines.append)
    manifest = json.loads((tmp_path / CORPUS_DIR / "_manifest.json").read_text())
    planted = {tuple(sorted((f["subject"].lower(), f["answer_entity"].lower()))): f["documents"]
               for f in manifest["facts"]}
    pairs = pq.read_table(tmp_path / "counts" / "pairs").to_pylist()
    counted = {(r["t1"], r["t2"]): r["count"] for r in pairs}
    evaluated = [json.loads(x) for x in (tmp_path / QA_FILE).read_text().splitlines()][3:]
    assert evaluated and counted
    for item in evaluated:
        key = tuple(sorted((item["subject"].lower(), item["answer_entity"].lower())))
        assert counted.get(key, 0) == planted[key] == _plain_relevant_documents(
            tmp_path / CORPUS_DIR / SHARD, item["subject"], item["answer_entity"])
    assert set(counted) <= set(planted)
    assert res["figure"].is_file() and (tmp_path / "model" / "config.json").is_file()
    text = "\n".join(lines)
    assert "accuracy ×100 by relevant documents" in text and "Δ ×100" in text
    assert res["summary"] in text


def test_the_counter_checks_a_facts_shard_against_its_manifest(tmp_path):
    """The facts manifest lists its shard's sha256 like the arithmetic corpus's: an edited
    shard is refused before counting (counting/corpus_check.py)."""
    from freqgap.counting.corpus_check import CorpusChecksumError, verify_corpus_dir

    write_facts_corpus(facts_profile("smoke"), tmp_path)
    corpus = tmp_path / CORPUS_DIR
    assert verify_corpus_dir(corpus, [str(corpus / SHARD)]) == 1
    with open(corpus / SHARD, "a", encoding="utf-8") as f:
        f.write('{"text": "The capital of Nowhere is Elsewhere."}\n')
    with pytest.raises(CorpusChecksumError, match="differs from"):
        verify_corpus_dir(corpus, [str(corpus / SHARD)])
