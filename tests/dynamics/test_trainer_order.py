"""The trainer's recorded data order is exactly what it trained on: every batch the model
saw equals the indexed file's entries of that step, the pieces map each token back to its
corpus document and line, and the checkpoints are the weights after N steps."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from freqgap.counting.documents import iter_documents
from freqgap.counting.indexed import IndexedDataset
from freqgap.paths import SAMPLE_CORPUS_DIR
from freqgap.training.order import read_order
from freqgap.training.settings import load_settings
from freqgap.training.train import train_model

CHECKPOINTS = [0, 1, 2, 4, 8]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    corpus = root / "corpus"
    corpus.mkdir()
    # a small slice of the sample corpus, so the test trains in seconds
    lines = [json.dumps({"text": t}) for _, _, t in iter_documents([SAMPLE_CORPUS_DIR])][:300]
    (corpus / "part.jsonl").write_text("\n".join(lines) + "\n")
    settings = load_settings("smoke", {"data_order": "packed", "checkpoints": CHECKPOINTS,
                                       "steps": 8})
    seen = []
    manifest = train_model(settings, [str(corpus)], root / "model", progress=False,
                           on_batch=lambda step, batch: seen.append((step, batch.numpy())))
    return root, settings, seen, manifest


def test_order_file_equals_the_batches_trained_on(trained):
    root, settings, seen, manifest = trained
    info = read_order(root / "model")
    data = IndexedDataset(info["prefix_path"])
    assert info["seqs_per_step"] == settings.batch_size and info["steps"] == 8
    assert len(data) == 8 * settings.batch_size == len(seen) * settings.batch_size
    for step, batch in seen:
        for j, row in enumerate(batch):
            assert np.array_equal(data[step * settings.batch_size + j], row), (step, j)
    assert manifest["data_order"]["sequences"] == len(data)


def test_pieces_point_at_the_corpus_documents(trained):
    root, settings, seen, _ = trained
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(root / "model")
    docs = {(f, line): text for f, line, text in iter_documents([root / "corpus"])}
    data = IndexedDataset(root / "model" / "data_order" / "document")
    pieces = pq.read_table(root / "model" / "data_order" / "pieces.parquet").to_pylist()
    assert {p["sequence"] for p in pieces} == set(range(len(data)))
    rebuilt: dict[int, list[int]] = {}
    for p in pieces:
        ids = tok(docs[(p["file"], p["line"])], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        rebuilt.setdefault(p["sequence"], []).extend(ids[p["token_start"]:p["token_end"]])
        assert p["step"] == p["sequence"] // settings.batch_size
        # the digest the counter checks the corpus line against (counting/order_file.py)
        text = docs[(p["file"], p["line"])]
        assert p["text_sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    for i in range(len(data)):
        assert rebuilt[i] == data[i].tolist(), i


def test_checkpoints_are_the_weights_after_n_steps(trained):
    root, _, _, manifest = trained
    from safetensors.numpy import load_file

    assert manifest["checkpoints"] == [f"step{c}" for c in CHECKPOINTS]
    weights = {c: load_file(root / "model" / f"step{c}" / "model.safetensors") for c in CHECKPOINTS}
    final = load_file(root / "model" / "model.safetensors")
    assert all(np.array_equal(final[k], weights[8][k]) for k in final)       # step8 = the end
    assert any(not np.array_equal(weights[0][k], weights[1][k]) for k in final)
    assert (root / "model" / "step0" / "tokenizer.json").is_file()


def test_order_file_counts_equal_the_token_order_counts(trained, spark, tmp_path):
    """The trainer's pieces.parquet, counted from the corpus text (char ranges), gives the same
    bucketed counts as its indexed token order decoded: two records of one order agree."""
    from freqgap.counting.job import CountOptions
    from freqgap.counting.ordered_job import OrderFileCountJob
    from freqgap.counting.rules import TermRules
    from freqgap.dynamics.counts import count_model_order
    from tests.dynamics.helpers import read_bucketed

    root, settings, _, _ = trained
    count_model_order(root / "model", tmp_path / "tokens", spark=spark, progress_interval=0.5)
    opts = CountOptions(inputs=[], output=str(tmp_path / "text"), rules=TermRules.from_conf(),
                        progress_interval=0.5)
    manifest = OrderFileCountJob(spark, opts, str(root / "model" / "data_order" / "pieces.parquet"),
                                 CHECKPOINTS).run()
    by_tokens, by_text = read_bucketed(tmp_path / "tokens"), read_bucketed(tmp_path / "text")
    assert by_tokens == by_text and len(by_text) >= 3
    assert manifest["config"]["input_kind"] == "training_order_file"
    assert manifest["order"]["rows_after_last_edge"] == 0
