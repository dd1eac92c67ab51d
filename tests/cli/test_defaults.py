"""The defaults name files that exist wherever the command runs (issue 40, item 2):
`freqgap count` and `freqgap demo` with no corpus take the sample shipped with the package,
by absolute path, from a directory that holds nothing (the wheel test runs the demo so)."""

from __future__ import annotations

from freqgap.cli import main
from freqgap.paths import DEMO_MODEL_DIR, SAMPLE_CORPUS_DIR


def test_shipped_defaults_exist_by_absolute_path():
    assert SAMPLE_CORPUS_DIR.is_absolute() and len(list(SAMPLE_CORPUS_DIR.glob("*.jsonl.zst"))) == 2
    assert (DEMO_MODEL_DIR / "config.json").is_file()


def test_count_without_input_counts_the_sample_from_any_directory(tmp_path, monkeypatch):
    import freqgap.cli.count as count

    seen = {}
    monkeypatch.setattr(count, "_run", lambda args: seen.update(input=args.input) or 0)
    monkeypatch.chdir(tmp_path)
    assert main(["count", "--out", "counts"]) == 0
    assert seen["input"] == [str(SAMPLE_CORPUS_DIR)]


def test_demo_without_corpus_uses_the_sample_from_any_directory(tmp_path, monkeypatch):
    import freqgap.workflows.demo as demo

    seen = {}
    monkeypatch.setattr(demo, "run_demo", lambda opts: seen.update(opts=opts))
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    assert seen["opts"].corpus == str(SAMPLE_CORPUS_DIR) and seen["opts"].model == "demo"
