"""`freqgap suite ... --verbose`: the models are loaded with transformers' logs shown."""

import json

import pytest

from tests.suites.conftest import FIXTURES
from tests.verbose_spy import spy_library_output


@pytest.mark.parametrize("flag", [[], ["--verbose"]])
def test_suite_cli_passes_verbose_to_the_load(flag, monkeypatch, tmp_path, tiny_model_dir):
    from freqgap.cli import main
    from freqgap.config import load_conf
    from freqgap.paths import CONF_ENV

    monkeypatch.setenv(CONF_ENV, "")      # main() sets it; monkeypatch removes it afterwards
    conf = load_conf("suites")
    conf["neqa"] = {**conf["neqa"], "prompt_types": ["zero_shot"]}   # no CoT: fast
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "suites.yaml").write_text(json.dumps(conf))
    seen = spy_library_output(monkeypatch)
    code = main(["suite", "neqa", "--data", str(FIXTURES / "neqa.jsonl"), "--models",
                 str(tiny_model_dir), "--out", str(tmp_path / "out"), "--device", "cpu",
                 "--conf", str(tmp_path / "conf"), *flag])
    assert code == 0
    assert seen == [bool(flag)]


def test_pipeline_hands_verbose_to_the_loader(tmp_path):
    from freqgap.inference.fake import FakeLM
    from freqgap.suites.pipeline import run

    calls = []

    def loader(name, **kw):
        calls.append(kw.get("verbose"))
        return FakeLM(name)

    conf = {"tinad": {"true_forms": ["True"], "false_forms": ["False"]}}
    run("tinad", FIXTURES / "tinad.jsonl", ["a"], tmp_path / "v", conf=conf, loader=loader,
        verbose=True)
    run("tinad", FIXTURES / "tinad.jsonl", ["a"], tmp_path / "q", conf=conf, loader=loader)
    assert calls == [True, False]
