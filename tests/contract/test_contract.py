"""The contract module itself: fingerprints, manifest checks, schema checks, DATA.md."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap import contract
from freqgap.contract import (DATASETS, STAGES, ContractViolation, ManifestError, SchemaError,
                              cast_table, check_parquet, fingerprint, validate_table)
from freqgap.errors import FreqgapError, InputMismatchError
from freqgap.manifest import MANIFEST_NAME, build_manifest, now_iso, read_manifest, write_manifest

REPO = Path(__file__).resolve().parents[2]


def _counts_manifest(**config):
    cfg = {"window": 5, "max_order": 3, "number_rule": "strict", "max_digits": 6,
           "vocab": ["hour"], "text_field": "text", **config}
    return build_manifest("count_terms", cfg, [{"path": "a.jsonl", "size": 3, "mtime": 1}],
                          {"documents": 2, "elapsed_s": 1.5, "mb_per_s": 9.0,
                           "seconds": {"x": 1}}, now_iso(), plan_fingerprint="p",
                          outputs={"unigrams": {"rows": 1}})


def test_fingerprint_ignores_timing_versions_and_times_but_not_results():
    a, b = _counts_manifest(), _counts_manifest()
    b["totals"].update(elapsed_s=99.0, mb_per_s=0.1, seconds={"x": 7})
    b["versions"] = {"python": "0"}
    b["started"] = b["finished"] = "2000-01-01T00:00:00+00:00"
    assert fingerprint(a) == fingerprint(b)
    c = _counts_manifest(window=6)
    d = _counts_manifest()
    d["inputs"][0]["size"] = 4                     # another corpus file
    e = _counts_manifest()
    e["totals"]["documents"] = 3
    f = _counts_manifest()
    f["upstream"] = {"x": "y"}
    assert len({fingerprint(m) for m in (a, c, d, e, f)}) == 5


def test_write_then_read_roundtrip_and_the_written_fingerprint(tmp_path):
    m = _counts_manifest()
    write_manifest(tmp_path, m)
    back = read_manifest(tmp_path, stage="count_terms")
    assert back["fingerprint"] == m["fingerprint"] == fingerprint(back)
    text = (tmp_path / MANIFEST_NAME).read_text()
    assert json.loads(text)["fingerprint"] == m["fingerprint"]


def test_build_manifest_refuses_a_fingerprint_of_its_own():
    with pytest.raises(TypeError, match="computed by write_manifest"):
        build_manifest("count_terms", {}, [], {}, now_iso(), fingerprint="mine")


def test_a_producer_that_leaves_out_a_required_field_is_a_bug(tmp_path):
    m = build_manifest("instances", {}, [], {}, now_iso())     # no upstream, no counts_settings
    with pytest.raises(ContractViolation, match=r"upstream.counts.*STAGES"):
        write_manifest(tmp_path, m)
    assert not (tmp_path / MANIFEST_NAME).exists()
    assert not issubclass(ContractViolation, FreqgapError)     # a bug keeps its traceback


def test_read_manifest_errors(tmp_path):
    with pytest.raises(ManifestError, match="directory not found"):
        read_manifest(tmp_path / "nope", stage="count_terms")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ManifestError, match=r"empty: no _manifest.json; .*rerun it"):
        read_manifest(tmp_path / "empty", stage="count_terms")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / MANIFEST_NAME).write_text("{not json")
    with pytest.raises(ManifestError, match="not valid JSON"):
        read_manifest(tmp_path / "bad")
    write_manifest(tmp_path / "c", _counts_manifest())
    path = tmp_path / "c" / MANIFEST_NAME
    m = json.loads(path.read_text())
    with pytest.raises(InputMismatchError,
                       match=r"c/_manifest.json: written by stage 'count_terms' \(term counts\), "
                             r"but 'instances' \(task instances and prompts\) is expected here"):
        read_manifest(tmp_path / "c", stage="instances")
    read_manifest(tmp_path / "c", stage=("instances", "count_terms"))
    m["config"]["window"] = 9                                   # edited by hand
    path.write_text(json.dumps(m))
    with pytest.raises(ManifestError, match="fingerprint does not match"):
        read_manifest(tmp_path / "c")
    del m["fingerprint"]                                        # an older freqgap's manifest
    path.write_text(json.dumps(m))
    with pytest.raises(ManifestError, match="lacks field.*fingerprint.*older freqgap"):
        read_manifest(tmp_path / "c")
    m["status"] = "running"
    path.write_text(json.dumps(m))
    with pytest.raises(ManifestError, match="status is 'running'"):
        read_manifest(tmp_path / "c")


def test_upstream_fingerprints_are_checked_when_given(tmp_path):
    write_manifest(tmp_path, build_manifest("predictions", {}, [], {}, now_iso(),
                                            upstream={"instances": "a" * 64}))
    assert read_manifest(tmp_path, stage="predictions", upstream={"instances": "a" * 64})
    with pytest.raises(InputMismatchError, match=r"made from instances with fingerprint "
                                                 r"aaaaaaaaaaaa, not from the given instances "
                                                 r"\(bbbbbbbbbbbb\)"):
        read_manifest(tmp_path, stage="predictions", upstream={"instances": "b" * 64})


def test_validate_table_names_file_column_expected_and_found():
    t = pa.table({"term": ["5"], "kind": ["number"], "count": pa.array([3], pa.int32())})
    with pytest.raises(SchemaError, match=r"x.parquet: column 'count' is int32, expected int64"):
        validate_table("unigrams", t, "x.parquet")
    with pytest.raises(SchemaError, match=r"missing column 'kind' \(string\)"):
        validate_table("unigrams", t.drop(["kind"]), "x")
    with pytest.raises(SchemaError, match=r"unexpected column 'extra'"):
        validate_table("unigrams", t.append_column("extra", pa.array([1])), "x")
    ok = cast_table("unigrams", t)
    validate_table("unigrams", ok, "x")
    bucketed = cast_table("unigrams", t.append_column("step_bucket", pa.array([4], pa.int32())))
    assert bucketed.schema.field("step_bucket").type == pa.int64()
    validate_table("unigrams", bucketed, "x")                  # the optional column
    open_ds = t.append_column("extra", pa.array([1.5]))
    assert DATASETS["gaps"].open and not DATASETS["unigrams"].open
    with pytest.raises(ContractViolation):
        cast_table("unigrams", open_ds)
    with pytest.raises(ContractViolation, match="does not cast"):
        cast_table("unigrams", t.set_column(2, "count", pa.array(["x"])))


def test_optional_columns_take_their_place_in_every_writer_schema():
    ds = DATASETS["pairs"]
    assert ds.spark_ddl() == "t1 string, t2 string, count bigint"
    assert ds.spark_ddl(["step_bucket"]) == "t1 string, t2 string, step_bucket bigint, count bigint"
    assert ds.schema(["step_bucket"]).names == ["t1", "t2", "step_bucket", "count"]
    assert DATASETS["prompts"].spark_ddl().endswith("shot_ids array<bigint>, prefix string, "
                                                    "prompt string, answer string")


def test_a_producer_checking_its_own_output_raises_a_bug_not_a_user_error(tmp_path):
    from freqgap.contract import check_written

    pq.write_table(pa.table({"term": ["5"], "count": pa.array([3])}), tmp_path / "u.parquet")
    with pytest.raises(ContractViolation, match=r"u.parquet: missing column 'kind'"):
        check_written("unigrams", tmp_path / "u.parquet")


def test_check_parquet_reads_only_schemas_of_every_file(tmp_path):
    d = tmp_path / "unigrams"
    d.mkdir()
    good = pa.table({"term": ["5"], "kind": ["number"], "count": pa.array([3], pa.int64())})
    pq.write_table(good, d / "part-0.parquet")
    pq.write_table(good.drop(["kind"]), d / "_tmp.parquet")     # Spark's hidden files: ignored
    assert [p.name for p in check_parquet("unigrams", d)] == ["part-0.parquet"]
    pq.write_table(good.set_column(2, "count", pa.array([3.0])), d / "part-1.parquet")
    with pytest.raises(SchemaError, match=r"part-1.parquet: column 'count' is float64, expected int64"):
        check_parquet("unigrams", d)
    (d / "part-2.parquet").write_text("garbage")
    with pytest.raises(SchemaError, match="part-1.parquet"):
        check_parquet("unigrams", d)
    with pytest.raises(SchemaError, match="no Parquet files"):
        check_parquet("pairs", tmp_path / "pairs")


def test_integers_are_int64_in_every_dataset():
    for ds in DATASETS.values():
        for col in ds.columns + ds.optional:
            assert col.type in contract.TYPE_NAMES
            assert "int32" not in col.type


def test_every_stage_written_in_the_package_is_declared():
    """Every build_manifest("<stage>", …) call in freqgap/ names a stage of the contract."""
    used = set()
    for path in (REPO / "freqgap").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "build_manifest"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                used.add((node.args[0].value, str(path.relative_to(REPO))))
    assert used, "no build_manifest calls found"
    undeclared = sorted((s, p) for s, p in used if s not in STAGES)
    assert not undeclared, f"declare these stages in freqgap/contract.py STAGES: {undeclared}"
    for stage in STAGES.values():
        for name in stage.datasets:
            assert stage.name in DATASETS[name].stages


def test_data_md_is_generated_from_the_contract():
    out = subprocess.run([sys.executable, "-m", "freqgap.contract", "--markdown"], check=True,
                         capture_output=True, text=True, cwd=REPO).stdout
    committed = (REPO / "docs" / "DATA.md").read_text(encoding="utf-8")
    assert committed == out, "docs/DATA.md is stale: python -m freqgap.contract --markdown > docs/DATA.md"
    for name, ds in DATASETS.items():
        assert f"`{name}`" in out and all(f"`{c.name}`" in out for c in ds.columns)


def test_contract_imports_no_heavy_library():
    code = ("import sys, freqgap.contract, freqgap.manifest; "
            "print(sorted(m for m in ('pyarrow', 'duckdb', 'torch', 'pyspark', 'pandas') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=REPO).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("directory,stage", [("data/sample", "generate_corpus"),
                                             ("models/demo", "train_lm")])
def test_the_committed_manifests_pass_their_checks(directory, stage):
    m = read_manifest(REPO / directory, stage=stage)
    assert m["fingerprint"] == fingerprint(m)
