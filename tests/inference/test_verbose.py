"""--verbose: transformers' loading logs and bars are shown; without it they are hidden."""

from __future__ import annotations

import logging

import pytest

from tests.verbose_spy import spy_library_output


class _Records(logging.Handler):
    """Collects what transformers' loggers let through (their level is what we test)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def transformers_records():
    handler = _Records()
    root = logging.getLogger("transformers")
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


def test_load_logs_only_when_verbose(tiny_model_dirs, transformers_records):
    from freqgap.inference.hf import HFCausalLM

    model = str(tiny_model_dirs["gpt_neox"])
    HFCausalLM.load(model, device="cpu").close()
    assert transformers_records.messages == []
    HFCausalLM.load(model, device="cpu", verbose=True).close()
    text = "\n".join(transformers_records.messages)
    # INFO lines of the load: the config file read and the model's config.
    assert "loading configuration file" in text and model in text
    assert "GPTNeoXConfig" in text


def test_library_output_restores_transformers_settings():
    from transformers.utils import logging as hf_logging

    from freqgap.inference.hf import library_output

    before = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    with library_output(True):
        assert hf_logging.get_verbosity() == hf_logging.INFO
        assert hf_logging.is_progress_bar_enabled()
    assert (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()) == before
    with library_output(False):
        assert hf_logging.get_verbosity() == hf_logging.ERROR
        assert not hf_logging.is_progress_bar_enabled()
    assert (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()) == before


@pytest.mark.parametrize("flag", [[], ["--verbose"]])
def test_predict_cli_passes_verbose_to_the_load(flag, monkeypatch, tiny_model_dirs,
                                                instances_dir, tmp_path, transformers_records):
    """`freqgap predict [--verbose]` end to end (in-process): the model is loaded with the
    flag's verbosity, and transformers' loading logs appear exactly with --verbose."""
    from freqgap.cli import main

    seen = spy_library_output(monkeypatch)
    model = str(tiny_model_dirs["gptj"])
    code = main(["predict", "--prompts", str(instances_dir), "--model", model,
                 "--out", str(tmp_path / "p"), "--device", "cpu",
                 "--progress-interval", "1000", *flag])
    assert code == 0
    assert seen == [bool(flag)]
    logged = any("loading configuration file" in m for m in transformers_records.messages)
    assert logged == bool(flag)
