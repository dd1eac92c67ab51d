"""export → lm-eval → import → gaps, replayed from a real lm-evaluation-harness run.

tests/fixtures/lm_eval_roundtrip/ holds what `record.sh` got from lm-eval 0.4.13 (hf
backend, models/demo): the export it was fed, the sample logs of the full run and of the
run restricted with `--samples` to the examples file `freqgap gaps --examples` wrote. The
tests rebuild the same instances, check that today's export is byte for byte what lm-eval
ran (so the fixture cannot drift from the code), import the logs and compare them, sample
for sample, with `freqgap predict` on the same model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import yaml

from freqgap.gaps.lm_eval import LmEvalImportError, import_samples
from freqgap.gaps.lm_eval_export import LmEvalExportError, export
from freqgap.gaps.run import run_gaps
from tests.gaps.lm_eval_roundtrip_world import DEMO_MODEL, FIXTURE, build_instances

KEY = ("task", "k", "seed", "instance_id")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("roundtrip")
    counts, instances = build_instances(root)
    return root, counts, instances


def logs(run: str) -> list[Path]:
    return sorted((FIXTURE / run).glob("samples_*.jsonl"))


def by_key(rows):
    return {tuple(r[c] for c in KEY): r for r in rows}


def test_the_export_is_byte_identical_to_what_lm_eval_ran(world, tmp_path):
    _, _, instances = world
    out = tmp_path / "export"
    assert export(instances, out) == {"freqgap_mult_k0_s0": 12, "freqgap_mult_k2_s0": 12}
    recorded = FIXTURE / "export"
    names = sorted(p.relative_to(recorded) for p in recorded.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    for name in names:
        got, want = (out / name).read_text(), (recorded / name).read_text()
        if name.suffix == ".yaml":      # the dataset's absolute path is where it was written
            was = yaml.safe_load(want)["dataset_kwargs"]["data_files"]["test"]
            want = want.replace(str(Path(was).parent.parent), str(out.resolve()))
        assert got == want, name
    with pytest.raises(LmEvalExportError, match="exists and is not empty"):
        export(instances, out)


def test_round_trip_equals_freqgap_predict_sample_for_sample(world, tmp_path):
    from freqgap.inference.predict import predict

    root, counts, instances = world
    preds = tmp_path / "predictions"
    manifest = import_samples(logs("samples"), instances, preds / "demo-lm-eval", "demo")
    assert manifest["config"]["k"] == [0, 2] and manifest["config"]["seed"] == 0
    assert [f["k_from"] for f in manifest["config"]["files"]] == ["doc", "doc"]
    imported = by_key(pq.read_table(preds / "demo-lm-eval" / "part-lm-eval.parquet").to_pylist())
    predict(instances, tmp_path / "native" / "demo", str(DEMO_MODEL), device="cpu",
            progress_interval=60)
    native = by_key(ds.dataset(tmp_path / "native" / "demo", format="parquet").to_table()
                    .to_pylist())
    assert len(native) == 24 and imported.keys() == native.keys()
    for key, row in native.items():
        assert (imported[key]["answer"], imported[key]["correct"]) == \
            (row["answer"], row["correct"]), key
        # lm-eval cuts the text at the stop sequence; freqgap keeps the newline token
        assert row["continuation"].startswith(imported[key]["continuation"])
    n_correct = sum(r["correct"] for r in native.values())
    assert 0 < n_correct < 24                      # the comparison can tell right from wrong
    # lm-eval's own metric was the paper rule too (the export's filter)
    results = json.loads(next((FIXTURE / "samples").glob("results_*.json")).read_text())
    per_task = {name: r["exact_match,paper_rule"] for name, r in results["results"].items()}
    for name, acc in per_task.items():
        k = int(name.split("_k")[1].split("_")[0])
        rows = [r for r in native.values() if r["k"] == k]
        assert acc == pytest.approx(sum(r["correct"] for r in rows) / len(rows))

    # gaps over the imported rows writes the examples file lm-eval was run with, and that
    # run logged exactly those documents
    from freqgap.gaps.options import options_from_conf

    opts = options_from_conf(counts=str(counts), instances=str(instances),
                             predictions=str(preds) + "/*/", results=str(tmp_path / "results"),
                             make_plots=False, boot_reps=20, min_seen_keys=2)
    run_gaps(opts, examples=(tmp_path / "examples.json", "1"))
    assert (tmp_path / "examples.json").read_text() == (FIXTURE / "examples.json").read_text()
    chosen = json.loads((FIXTURE / "examples.json").read_text())
    for path in logs("samples_examples"):
        name = path.name[len("samples_"):].rsplit("_", 1)[0]
        assert [json.loads(line)["doc_id"] for line in path.open()] == chosen[name]


def test_an_exported_log_must_carry_the_instances_prompts(world, tmp_path):
    _, _, instances = world
    lines = logs("samples")[0].read_text().splitlines()
    bad = json.loads(lines[3])
    bad["arguments"]["gen_args_0"]["arg_0"] = "Q: What is 1 times 1?\nA: 1\n\n" + \
        bad["arguments"]["gen_args_0"]["arg_0"]
    log = tmp_path / "logs" / logs("samples")[0].name
    log.parent.mkdir()
    shutil.copy(next((FIXTURE / "samples").glob("results_*.json")), log.parent)
    log.write_text("\n".join(lines[:3] + [json.dumps(bad)] + lines[4:]) + "\n")
    with pytest.raises(LmEvalImportError, match=r":4: the prompt lm-eval sent is not the "
                                                r"instance's prompt"):
        import_samples([log], instances, tmp_path / "p1", "demo")
    with pytest.raises(LmEvalImportError, match=r":1: --k 2 but the exported document is 0"):
        import_samples(logs("samples")[:1], instances, tmp_path / "p2", "demo", k=2)


def test_examples_under_a_definition_without_bins_is_one_line(world, tmp_path):
    from freqgap.gaps.lm_eval_examples import ExamplesError
    from freqgap.gaps.options import options_from_conf

    root, counts, instances = world
    preds = tmp_path / "predictions"
    import_samples(logs("samples"), instances, preds / "demo-lm-eval", "demo")
    opts = options_from_conf(counts=str(counts), instances=str(instances),
                             predictions=str(preds) + "/*/", results=str(tmp_path / "results"),
                             make_plots=False, boot_reps=0, min_seen_keys=2)
    # the synthetic counts hold no number-number pairs: no key of 1,2 is seen
    with pytest.raises(ExamplesError, match=r"^--examples-freq-def 1,2: no key of this run is "
                                            r"binned under it \(definitions binned: 1\)$"):
        run_gaps(opts, examples=(tmp_path / "examples.json", "1,2"))
    assert not (tmp_path / "examples.json").exists()


def test_cli_export_then_refuses_a_used_folder(world, tmp_path, capsys):
    from freqgap.cli import main

    _, _, instances = world
    argv = ["export-lm-eval", "--instances", str(instances), "--out", str(tmp_path / "t")]
    assert main(argv) == 0
    assert "exported 24 prompts as 2 lm-eval task(s)" in capsys.readouterr().out
    assert main(argv) == 2
    assert "exists and is not empty" in capsys.readouterr().err


def test_ids_intact_where_questions_are_shared(tmp_path):
    """mult_hash and add_hash ask the same questions: the question-text import needs --task
    per file; exported logs are read by their documents' ids, both tasks in one import."""
    from freqgap.config import load_conf
    from freqgap.instances import build_instances_dir, resolve_grid
    from tests.instances.counts_fixture import default_counts

    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=["mult_hash", "add_hash"], ks=[2], seeds=[0],
                        max_test_items=5)
    instances = tmp_path / "instances"
    build_instances_dir(default_counts(tmp_path / "counts"), instances, grid, conf,
                        progress_interval=60)
    export(instances, tmp_path / "export")
    files = []
    for task_yaml in sorted((tmp_path / "export").glob("*.yaml")):
        name = task_yaml.stem
        docs = [json.loads(line) for line in
                (tmp_path / "export" / "data" / f"{name}.jsonl").read_text().splitlines()]
        lines = [{"doc_id": i, "doc": d, "target": d["answer"],
                  "arguments": {"gen_args_0": {"arg_0": d["prompt"], "arg_1": {}}},
                  "resps": [[f" {d['answer']}" if i % 2 else " 0"]], "filter": "paper_rule"}
                 for i, d in enumerate(docs)]
        files.append(tmp_path / "logs" / f"samples_{name}_2026-01-01T00-00-00.000000.jsonl")
        files[-1].parent.mkdir(exist_ok=True)
        files[-1].write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_samples(files, instances, tmp_path / "p", "m")
    rows = pq.read_table(tmp_path / "p" / "part-lm-eval.parquet").to_pylist()
    prompts = pq.read_table(instances / "prompts.parquet").to_pylist()
    assert sorted((r["task"], r["instance_id"]) for r in rows) == \
        sorted((p["task"], p["instance_id"]) for p in prompts)
    assert {r["task"] for r in rows} == {"mult_hash", "add_hash"}
    odd = {(d["task"], d["instance_id"]) for f in files
           for i, d in enumerate(json.loads(line)["doc"] for line in f.read_text().splitlines())
           if i % 2}
    assert {(r["task"], r["instance_id"]) for r in rows if r["correct"]} == odd
