"""Shared fixtures of the suites' tests: fixture paths and one tiny model per session."""

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "suites"


def suite_texts() -> list[str]:
    """Tokenizer training text: the fixtures' words, so True/False, letters and critical
    words get their own tokens as in a real BPE vocabulary."""
    from tests.tiny_models import default_texts

    extra = []
    for p in sorted(q for q in FIXTURES.iterdir() if q.is_file()):
        extra.append(p.read_text(encoding="utf-8"))
    extra += ["Answer: A\nAnswer: B\n True False True False So the answer is A. B."] * 5
    return default_texts(200) + extra


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from tests.tiny_models import build_tiny_model, train_tiny_tokenizer

    tok = train_tiny_tokenizer(suite_texts(), vocab_size=700)
    return build_tiny_model("gpt_neox", tmp_path_factory.mktemp("tiny") / "gpt_neox",
                            seed=0, tokenizer=tok)


@pytest.fixture(scope="session")
def tiny(tiny_model_dir):
    from freqgap.inference.lm import get_lm

    lm = get_lm(str(tiny_model_dir), device="cpu")
    return lm.model, lm.tokenizer


@pytest.fixture(scope="session")
def tiny_lm(tiny_model_dir):
    """The tiny model behind the model interface (transformers backend, CPU float32)."""
    from freqgap.inference.lm import get_lm

    return get_lm(str(tiny_model_dir), device="cpu", batch_size=4)
