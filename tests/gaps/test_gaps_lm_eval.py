"""Import of lm-evaluation-harness `--log_samples` logs, then gaps over the imported rows."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from freqgap.gaps.lm_eval import LmEvalImportError, import_samples
from freqgap.gaps.run import run_gaps
from freqgap.manifest import read_manifest
from tests.gaps.fixtures import build_world, options_for

STAMP = "2024-05-01T10-00-00.123456"


def sample(doc_id: int, inst: dict, generated: str, shots: str = "", with_doc_question=True,
           **extra) -> dict:
    """One line as lm-eval (>= 0.4) writes it for a generate_until task."""
    prompt = f"{shots}Q: {inst['question']}\nA:"
    doc = {"question": inst["question"], "answer": inst["answer"]} if with_doc_question \
        else {"x1": inst["x1"], "x2": inst["x2"]}
    line = {"doc_id": doc_id, "doc": doc, "target": inst["answer"],
            "arguments": {"gen_args_0": {"arg_0": prompt,
                                         "arg_1": {"until": ["\n"], "max_gen_toks": 5}}},
            "resps": [[generated]], "filtered_resps": [generated.strip()], "filter": "none",
            "metrics": ["exact_match"], "doc_hash": "0" * 64, "prompt_hash": "1" * 64,
            "target_hash": "2" * 64,
            "exact_match": float(generated.strip() == inst["answer"])}
    line.update(extra)
    return line


def write_log(directory: Path, task: str, lines: list[dict], n_shot: int | None = 2,
              stamp: str = STAMP) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"samples_{task}_{stamp}.jsonl"
    path.write_text("".join(json.dumps(l) + "\n" for l in lines))
    if n_shot is not None:
        (directory / f"results_{stamp}.json").write_text(json.dumps(
            {"results": {task: {"exact_match,none": 0.5}}, "n-shot": {task: n_shot}}))
    return path


@pytest.fixture
def world(tmp_path):
    specs = [("mult", x1, x2, []) for x1 in range(1, 7) for x2 in (1, 2)]
    return build_world(tmp_path / "w", specs, {str(x): x for x in range(1, 7)})


def test_import_then_gaps(world, tmp_path):
    inst = world.instance_rows
    shots = "Q: What is 9 times 9?\nA: 81\n\nQ: What is 8 times 8?\nA: 64\n\n"
    lines = []
    for i, r in enumerate(inst):
        gen = f" {r['answer']}\n" if r["x1"] >= 4 else f" {r['answer']},"   # lenient only
        lines.append(sample(i, r, gen, shots, with_doc_question=i % 2 == 0))
    log = write_log(tmp_path / "lm" / "pretrained__gpt2", "mult_freq", lines)
    out = tmp_path / "preds" / "gpt2-lm-eval"
    manifest = import_samples([log], world.instances, out, "gpt2", "main", task="mult")
    t = pq.read_table(out / "part-lm-eval.parquet").to_pandas()
    assert len(t) == len(inst) and set(t["k"]) == {2} and set(t["seed"]) == {0}
    assert sorted(t["instance_id"]) == [r["instance_id"] for r in inst]
    by_id = t.set_index("instance_id")
    for r in inst:
        row = by_id.loc[r["instance_id"]]
        assert bool(row["correct"]) == (r["x1"] >= 4)          # paper rule: '12,' is wrong
        assert bool(row["correct_lenient"])
    assert manifest["totals"]["harness_metric_mean"]["exact_match"] == pytest.approx(0.5)
    assert read_manifest(out)["inputs"][0]["sha256"]

    # The imported predictions join with the counts like native ones.
    world.predictions = tmp_path / "preds"
    res = run_gaps(options_for(world, tmp_path / "results", min_seen_keys=2))
    r = res.gaps[res.gaps["freq_def"] == "1"].iloc[0]
    assert r["model"] == "gpt2" and r["k"] == 2 and r["accuracy"] == pytest.approx(0.5)
    assert r["delta"] == pytest.approx(1.0)          # x1 = 6 always right, x1 = 1 never


def test_two_runs_in_one_folder_each_gets_the_k_of_its_own_results_file(world, tmp_path):
    # lm-eval run A (zero-shot) and run B (2-shot) wrote into one folder; A's results file
    # sorts first. Each samples file must take the n-shot of the results file of its run.
    r = world.instance_rows[0]
    a = write_log(tmp_path / "lm", "mult", [sample(0, r, " 1")], n_shot=0,
                  stamp="2024-05-01T09-00-00.000001")
    b = write_log(tmp_path / "lm", "mult", [sample(0, r, " 1")], n_shot=2,
                  stamp="2024-05-01T10-00-00.000002")
    for log, k in ((a, 0), (b, 2)):
        out = tmp_path / f"o{k}"
        manifest = import_samples([log], world.instances, out, "m")
        assert pq.read_table(out / "part-lm-eval.parquet")["k"].to_pylist() == [k]
        cfg = read_manifest(out)["config"]
        assert cfg["k"] == k and cfg["filter"] == "none" and cfg["k_given"] is None
        results = log.with_name(log.name.replace("samples_mult_", "results_")
                                .replace(".jsonl", ".json"))
        assert cfg["files"] == [{"file": str(log), "lm_task": "mult", "k": k,
                                 "k_from": results.name, "filter": "none",
                                 "results_file": str(results)}]
        inputs = {Path(i["path"]).name for i in manifest["inputs"]}
        assert inputs == {log.name, results.name}
        assert all(i.get("sha256") for i in manifest["inputs"])


def test_k_given_must_agree_with_the_runs_results_file(world, tmp_path):
    log = write_log(tmp_path / "lm", "mult", [sample(0, world.instance_rows[0], " 1")], n_shot=2)
    with pytest.raises(LmEvalImportError, match=r"n-shot of 'mult' is 2, but --k is 4"):
        import_samples([log], world.instances, tmp_path / "o", "m", k=4)
    assert import_samples([log], world.instances, tmp_path / "o", "m", k=2)["config"]["k"] == 2


def test_a_results_file_of_another_run_is_not_used(world, tmp_path):
    log = write_log(tmp_path / "lm", "mult", [sample(0, world.instance_rows[0], " 1")],
                    n_shot=None)
    other = write_log(tmp_path / "lm", "add", [], n_shot=2, stamp="2023-01-01T00-00-00.0")
    assert other.with_name("results_2023-01-01T00-00-00.0.json").exists()
    with pytest.raises(LmEvalImportError, match=r"number of shots unknown: .*results_<same "
                                                r"timestamp>.json not found; pass --k"):
        import_samples([log], world.instances, tmp_path / "o", "m")


def test_k_from_the_command_line_when_no_results_file(world, tmp_path):
    log = write_log(tmp_path / "lm", "mult", [sample(0, world.instance_rows[0], " 1")],
                    n_shot=None)
    with pytest.raises(LmEvalImportError, match="number of shots unknown"):
        import_samples([log], world.instances, tmp_path / "o", "m")
    import_samples([log], world.instances, tmp_path / "o", "m", k=4)
    assert set(pq.read_table(tmp_path / "o" / "part-lm-eval.parquet")["k"].to_pylist()) == {4}


@pytest.mark.parametrize("bad,match", [
    (lambda r: sample(0, dict(r, question="What is 99 times 99?"), " 1"), "matches no instance"),
    (lambda r: sample(0, r, " 1", target="777"), "differs from the instance's answer"),
    (lambda r: sample(0, r, " 1", resps=[[[-1.5, False]]]), "no generated text"),
])
def test_bad_lines_name_file_and_line(world, tmp_path, bad, match):
    good = sample(0, world.instance_rows[1], " 2")
    log = write_log(tmp_path / "lm", "mult", [good, bad(world.instance_rows[0])])
    with pytest.raises(LmEvalImportError, match=f"{log}:2: .*{match}"):
        import_samples([log], world.instances, tmp_path / "o", "m")
    assert not (tmp_path / "o" / "_manifest.json").exists()


def test_invalid_json_names_file_and_line(world, tmp_path):
    log = write_log(tmp_path / "lm", "mult", [sample(0, world.instance_rows[0], " 1")])
    log.write_text(log.read_text() + "{not json\n")
    with pytest.raises(LmEvalImportError, match=f"{log}:2: not valid JSON"):
        import_samples([log], world.instances, tmp_path / "o", "m")


def test_the_same_instance_twice(world, tmp_path):
    r = world.instance_rows[0]
    log = write_log(tmp_path / "lm", "mult", [sample(0, r, " 1"), sample(1, r, " 2")])
    with pytest.raises(LmEvalImportError, match=f"{log}:2: a second sample.*first at {log}:1"):
        import_samples([log], world.instances, tmp_path / "o", "m")


def test_rows_of_other_filters_are_skipped(world, tmp_path):
    r = world.instance_rows[0]
    lines = [sample(0, r, " 1"), sample(0, r, " 1", filter="strict-match")]
    log = write_log(tmp_path / "lm", "mult", lines)
    import_samples([log], world.instances, tmp_path / "o", "m")
    assert pq.read_table(tmp_path / "o" / "part-lm-eval.parquet").num_rows == 1
    assert read_manifest(tmp_path / "o")["config"]["filter"] == "none"        # inferred
    import_samples([log], world.instances, tmp_path / "o2", "m", filter_name="strict-match")
    cfg = read_manifest(tmp_path / "o2")["config"]
    assert (cfg["filter"], cfg["filter_given"]) == ("strict-match", "strict-match")


def test_cli(world, tmp_path, capsys):
    from jobs.import_lm_eval import main

    log = write_log(tmp_path / "lm", "mult", [sample(0, world.instance_rows[0], " 1")])
    out = tmp_path / "o"
    assert main([str(log), "--instances", str(world.instances), "--model", "m", "--out",
                 str(out)]) == 0
    assert "imported 1 predictions" in capsys.readouterr().out
    assert main([str(log), "--instances", str(tmp_path / "nope"), "--model", "m"]) == 2
    assert "nope" in capsys.readouterr().err
