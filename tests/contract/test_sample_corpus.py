"""Issue 10.3 (the sample-corpus half): a generated corpus — the committed sample above
all — is checked against the sha256 its manifest records before it is counted."""

from __future__ import annotations

import shutil

import pytest

from freqgap.counting import corpus_check
from freqgap.counting.corpus_check import CorpusChecksumError, verify_corpus_inputs
from freqgap.counting.inputs import list_inputs
from freqgap.errors import FreqgapError
from freqgap.manifest import MANIFEST_NAME
from freqgap.paths import SAMPLE_CORPUS_DIR


def _verify(directory):
    return verify_corpus_inputs([str(directory)], [f.path for f in list_inputs([str(directory)])])


@pytest.fixture
def sample_copy(tmp_path, monkeypatch):
    """A copy of data/sample/ that the check treats as the committed sample."""
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE_CORPUS_DIR, copy)
    monkeypatch.setattr(corpus_check, "SAMPLE_CORPUS_DIR", copy)
    return copy


def test_the_committed_sample_matches_its_manifest():
    assert _verify(SAMPLE_CORPUS_DIR) == 2


def test_a_changed_shard_is_refused_saying_make_sample_corpus(sample_copy):
    shard = sorted(sample_copy.glob("*.jsonl.zst"))[1]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(CorpusChecksumError) as err:
        _verify(sample_copy)
    message = str(err.value)
    assert message.startswith(f"{shard}: sha256 ") and "\n" not in message
    assert f"recorded in {sample_copy / MANIFEST_NAME}" in message
    assert "make sample-corpus" in message
    assert isinstance(err.value, FreqgapError)


def test_a_missing_or_unlisted_shard_is_refused(sample_copy):
    extra = sample_copy / "pile-sample-02.jsonl.zst"
    shutil.copy(sorted(sample_copy.glob("*.jsonl.zst"))[0], extra)
    with pytest.raises(CorpusChecksumError, match=r"pile-sample-02.jsonl.zst: not among the "
                                                  r"shards listed"):
        _verify(sample_copy)
    extra.unlink()
    sorted(sample_copy.glob("*.jsonl.zst"))[0].unlink()
    with pytest.raises(CorpusChecksumError, match=r"pile-sample-00.jsonl.zst: listed in .* but "
                                                  r"missing; run `make sample-corpus`"):
        _verify(sample_copy)


def test_other_generated_corpora_say_how_to_regenerate(tmp_path):
    from freqgap.corpus import generate_corpus, load_profile

    generate_corpus(load_profile("tiny", {"shards": 1, "shard_mb": 0.02}), tmp_path / "c",
                    progress=False)
    assert _verify(tmp_path / "c") == 1
    shard = next((tmp_path / "c").glob("*.jsonl.zst"))
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(CorpusChecksumError, match="regenerate it with `freqgap corpus`"):
        _verify(tmp_path / "c")


def test_single_shards_or_a_glob_of_the_sample_are_checked_too(sample_copy):
    shards = sorted(sample_copy.glob("*.jsonl.zst"))
    glob = str(sample_copy / "*-01.jsonl.zst")
    assert verify_corpus_inputs([glob], [str(shards[1])]) == 1        # one shard: no "missing"
    shards[1].write_bytes(shards[1].read_bytes() + b"\0")
    with pytest.raises(CorpusChecksumError, match="pile-sample-01.jsonl.zst: sha256"):
        verify_corpus_inputs([str(shards[1])], [str(shards[1])])
    assert verify_corpus_inputs([str(shards[0])], [str(shards[0])]) == 1


def test_plain_directories_and_single_files_are_not_checked(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "1 2"}\n')
    assert _verify(tmp_path) == 0
    assert verify_corpus_inputs([str(tmp_path / "a.jsonl")], [str(tmp_path / "a.jsonl")]) == 0


def test_the_counting_job_checks_before_any_work(spark, sample_copy, tmp_path):
    from freqgap.counting.job import run_count

    shard = sorted(sample_copy.glob("*.jsonl.zst"))[0]
    shard.write_bytes(shard.read_bytes()[:-1])
    with pytest.raises(CorpusChecksumError, match="make sample-corpus"):
        run_count([str(sample_copy)], str(tmp_path / "counts"), spark=spark)
    assert not (tmp_path / "counts").exists()
