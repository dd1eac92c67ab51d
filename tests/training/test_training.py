"""Training a small GPT-NeoX: the loss falls, the output loads offline, runs are seeded."""

from __future__ import annotations


import pytest
import torch
from safetensors.torch import load_file

from freqgap.corpus import generate_corpus, load_profile
from freqgap.manifest import read_manifest
from freqgap.training import load_settings, train_model
from freqgap.training.tokenizer import train_tokenizer


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    generate_corpus(load_profile("tiny"), out, progress=False)
    return out


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "smoke"
    manifest = train_model(load_settings("smoke", {"steps": 40, "threads": 1}), [str(corpus)], out,
                           progress=False)
    return out, manifest


def test_a_few_steps_lower_the_loss(trained):
    _, manifest = trained
    losses = [p["loss"] for p in manifest["loss_curve"]]
    assert len(losses) == 40
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.5


def test_output_loads_offline_with_auto_classes(trained, monkeypatch):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out, manifest = trained
    model = AutoModelForCausalLM.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert type(model).__name__ == "GPTNeoXForCausalLM"
    assert (out / "model.safetensors").exists()
    assert read_manifest(out)["totals"]["parameters"] == sum(p.numel() for p in model.parameters())
    assert tok.decode(tok("Q: What is 23 times 18?\nA: 414")["input_ids"]) == "Q: What is 23 times 18?\nA: 414"
    assert manifest["inputs"] and all("sha256" in i for i in manifest["inputs"])


def test_manifest_records_the_weights_checked_on_load(trained):
    from freqgap.inference.lm import get_lm
    from freqgap.manifest import sha256_file

    out, manifest = trained
    assert manifest["weights"]["files"]["model.safetensors"]["sha256"] == \
        sha256_file(out / "model.safetensors")
    assert get_lm(str(out), device="cpu").weights_sha256 == manifest["weights"]["sha256"]


def test_same_seed_same_weights(trained, corpus, tmp_path):
    out, _ = trained
    again = tmp_path / "again"
    train_model(load_settings("smoke", {"steps": 40, "threads": 1}), [str(corpus)], again, progress=False)
    a, b = load_file(out / "model.safetensors"), load_file(again / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert (out / "tokenizer.json").read_text() == (again / "tokenizer.json").read_text()


def test_tokenizer_spells_numbers_digit_by_digit():
    texts = ["Q: What is 23 times 18?\nA: 414\n\n" * 3, "The 2010 census counted 4,512 people."] * 20
    tok = train_tokenizer(texts, vocab_size=300)
    pieces = tok.convert_ids_to_tokens(tok("A: 414 and 2010")["input_ids"])
    digits = [p for p in pieces if any(c.isdigit() for c in p)]
    assert digits == ["Ġ4", "1", "4", "Ġ2", "0", "1", "0"]


def test_bad_settings_are_named():
    from freqgap.config import ConfigError

    with pytest.raises(ConfigError, match="no profile 'nope'"):
        load_settings("nope")
    with pytest.raises(ConfigError, match="seq_len"):
        load_settings("smoke", {"seq_len": 4096})
