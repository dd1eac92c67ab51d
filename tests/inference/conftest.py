"""Shared fixtures: tiny models of the three architectures and a small prompts file."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Weight checksums are cached per user; tests keep theirs apart (subprocesses inherit it).
import tempfile  # noqa: E402

os.environ.setdefault("FREQGAP_CACHE_DIR", tempfile.mkdtemp(prefix="freqgap-test-cache-"))

import pytest  # noqa: E402
import torch  # noqa: E402

from freqgap.instances import build_instances_dir, resolve_grid  # noqa: E402
from freqgap.config import load_conf  # noqa: E402
from tests.instances.counts_fixture import default_counts  # noqa: E402
from tests.tiny_models import ARCHS, build_tiny_model, train_tiny_tokenizer  # noqa: E402

# Tiny models gain nothing from threads; on a busy 2-core CI machine, several threads
# per process make them an order of magnitude slower (spin-waiting).
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_tokenizer():
    return train_tiny_tokenizer()


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory, tiny_tokenizer):
    """arch -> directory; GPT-Neo gets a 16-token local window so prompts cross it."""
    base = tmp_path_factory.mktemp("tiny_models")
    return {arch: build_tiny_model(arch, base / arch, seed=1, tokenizer=tiny_tokenizer,
                                   window_size=16)
            for arch in ARCHS}


@pytest.fixture(scope="session")
def lms(tiny_model_dirs):
    """arch -> HFCausalLM on the CPU (float32), loaded through the registry."""
    from freqgap.inference.lm import get_lm

    return {arch: get_lm(str(d), device="cpu") for arch, d in tiny_model_dirs.items()}


@pytest.fixture(scope="session")
def loaded_models(lms):
    """arch -> (model, tokenizer, lm), for tests of the decoder underneath the interface."""
    return {arch: (lm.model, lm.tokenizer, lm) for arch, lm in lms.items()}


@pytest.fixture(scope="session")
def instances_dir(tmp_path_factory):
    """Prompts of mult and min_sec, k in {0, 2, 8}, seeds 0-1, at most 24 items each."""
    base = tmp_path_factory.mktemp("inst")
    counts = default_counts(base / "counts")
    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=["mult", "min_sec"], ks=[0, 2, 8], seeds=[0, 1],
                        max_test_items=24)
    build_instances_dir(counts, base / "instances", grid, conf)
    return base / "instances"
