"""The corpus generator: byte-identical under a seed, the Zipf law it promises, the control."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
import zstandard

from freqgap.config import ConfigError
from freqgap.corpus import generate_corpus, load_profile
from freqgap.counting.documents import iter_texts
from freqgap.corpus.numbers import NumberModel
from freqgap.counting.inputs import BadInputError
from freqgap.manifest import read_manifest
from freqgap.paths import SAMPLE_CORPUS_DIR
from tests.corpus.law import loglog_slope, qa_operand_counts


def _digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.glob("*.jsonl.zst"))}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny")
    generate_corpus(load_profile("tiny"), out, progress=False)
    return out


def test_same_seed_same_bytes_different_seed_different(tiny, tmp_path):
    again = tmp_path / "again"
    generate_corpus(load_profile("tiny"), again, progress=False)
    assert _digests(again) == _digests(tiny)
    other = tmp_path / "other"
    generate_corpus(load_profile("tiny", {"seed": 1}), other, progress=False)
    assert set(_digests(other)) == set(_digests(tiny))
    for name, digest in _digests(other).items():
        assert digest != _digests(tiny)[name]


def test_rewrite_with_fewer_shards_leaves_no_stale_shard(tmp_path):
    generate_corpus(load_profile("tiny", {"shards": 3, "shard_mb": 0.05}), tmp_path, progress=False)
    generate_corpus(load_profile("tiny", {"shards": 1, "shard_mb": 0.05}), tmp_path, progress=False)
    assert sorted(p.name for p in tmp_path.glob("*.jsonl.zst")) == ["pile-tiny-00.jsonl.zst"]


def test_parallel_shards_give_the_same_bytes(tiny, tmp_path):
    generate_corpus(load_profile("tiny"), tmp_path, workers=2, progress=False)
    assert _digests(tmp_path) == _digests(tiny)


def test_committed_sample_is_what_the_sample_profile_writes(tmp_path):
    generate_corpus(load_profile("sample"), tmp_path, progress=False)
    assert _digests(tmp_path) == _digests(SAMPLE_CORPUS_DIR)
    assert sorted(_digests(SAMPLE_CORPUS_DIR)) == ["pile-sample-00.jsonl.zst", "pile-sample-01.jsonl.zst"]


def test_pile_format_and_manifest(tiny):
    manifest = read_manifest(tiny)
    assert manifest["stage"] == "generate_corpus"
    assert manifest["config"]["exponent"] == 1.0
    registers = Counter()
    for path in sorted(tiny.glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(path.open("rb")) as fh:
            lines = fh.read().decode("utf-8").splitlines()
        for line in lines:
            doc = json.loads(line)
            assert set(doc) == {"text", "meta"} and isinstance(doc["text"], str)
            registers[doc["meta"]["pile_set_name"]] += 1
    assert set(registers) == set(load_profile("tiny").registers)
    assert sum(registers.values()) == manifest["totals"]["documents"]
    assert not list(tiny.glob(".*tmp"))


def test_surface_forms_and_token_kinds_present(tiny):
    text = "\n".join(iter_texts([tiny]))
    tokens = set(text.split())
    for form in (" times ", " x ", " = ", "\nA: ", " trip is ", " multiplied by ", " plus "):
        assert form in text
    assert any(t.endswith(",") and t[:-1].isdigit() for t in tokens)        # "23,"
    assert any(t.startswith("$") for t in tokens)                            # "$5"
    assert any("," in t.strip(",") and t.replace(",", "").isdigit() for t in tokens)  # "1,000"
    assert any(t.count(".") == 1 and t.replace(".", "").isdigit() for t in tokens)    # "2.5"
    assert any(t.isdigit() and len(t) >= 7 for t in tokens)                  # not a term
    units = {t for t in tokens if t.lower().rstrip("s") in ("second", "minute", "hour", "day", "week",
                                                            "month", "year", "decade")}
    assert any(t.islower() and t.endswith("s") for t in units)
    assert any(t.isupper() for t in units) and any(t.istitle() for t in units)


def test_number_law_plain_python_count(tmp_path):
    """ω of the operands, by their promised rank, falls off as rank^-exponent."""
    for exponent in (1.0, 1.5):
        out = tmp_path / str(exponent)
        profile = load_profile("tiny", {"exponent": exponent, "shard_mb": 1.0})
        generate_corpus(profile, out, progress=False)
        counts = Counter(t for text in iter_texts([out]) for t in text.split()
                         if t.isascii() and t.isdigit() and len(t) <= 6)
        ranked = [counts[t] for t in NumberModel(profile).terms[:50]]
        assert abs(loglog_slope(ranked) + exponent) < 0.15, (exponent, loglog_slope(ranked))


def test_uniform_control_flattens_operands_only(tmp_path):
    zipf, uniform = tmp_path / "z", tmp_path / "u"
    generate_corpus(load_profile("tiny", {"shard_mb": 1.0}), zipf, progress=False)
    generate_corpus(load_profile("tiny", {"shard_mb": 1.0, "operand_law": "uniform"}), uniform,
                    progress=False)
    z = qa_operand_counts(iter_texts([zipf]))
    u = qa_operand_counts(iter_texts([uniform]))
    assert len(u) == 100 and min(u.values()) > 0.4 * max(u.values())
    ranked = [z.get(x, 0) + 1 for x in NumberModel(load_profile("tiny")).operands[:50]]
    assert loglog_slope(ranked) < -0.8
    # Same documents, only the numbers redrawn: registers and words (up to plural) match.
    def skeleton(directory):
        path = sorted(directory.glob("*-00.jsonl.zst"))[0]
        with zstandard.ZstdDecompressor().stream_reader(path.open("rb")) as fh:
            docs = [json.loads(line) for line in fh.read().decode("utf-8").splitlines()[:300]]
        return [(d["meta"]["pile_set_name"], [t.lower().rstrip("s") for t in d["text"].split() if t.isalpha()])
                for d in docs]
    assert skeleton(zipf) == skeleton(uniform)


def test_bad_profile_and_bad_input_are_named(tmp_path):
    with pytest.raises(ConfigError, match="no profile 'nope'"):
        load_profile("nope")
    with pytest.raises(ConfigError, match="operand_law"):
        load_profile("tiny", {"operand_law": "normal"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\nnot json\n')
    with pytest.raises(BadInputError, match=r"bad.jsonl:2"):
        list(iter_texts([bad]))
