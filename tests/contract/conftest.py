"""Fixtures of the contract tests: one real run of every producer (tests/contract/chain.py)."""

from __future__ import annotations

import pytest

from tests.contract.chain import build_chain, write_lm_eval_samples


@pytest.fixture(scope="session")
def chain(spark, tmp_path_factory):
    return build_chain(tmp_path_factory.mktemp("chain"), spark)


@pytest.fixture(scope="session")
def lm_eval_dir(chain, tmp_path_factory):
    from freqgap.gaps.lm_eval import import_samples

    base = tmp_path_factory.mktemp("lm_eval")
    log = write_lm_eval_samples(chain, base / "logs")
    import_samples([log], chain.instances, base / "preds" / "lmeval", "lmeval", "main",
                   task="mult")
    return base / "preds" / "lmeval"


@pytest.fixture(scope="session")
def suite_out(tmp_path_factory):
    """The quantifier suite over its fixture with one tiny GPT-NeoX model."""
    from freqgap.suites.pipeline import run
    from tests.suites.conftest import FIXTURES
    from tests.tiny_models import build_tiny_model, default_texts, train_tiny_tokenizer

    base = tmp_path_factory.mktemp("suite")
    texts = default_texts(200) + [(FIXTURES / "quantifiers.csv").read_text(encoding="utf-8")] * 3
    tok = train_tiny_tokenizer(texts, vocab_size=700)
    model = build_tiny_model("gpt_neox", base / "model", seed=0, tokenizer=tok)
    run("quantifiers", FIXTURES / "quantifiers.csv", [str(model)], base / "out")
    return base / "out"
