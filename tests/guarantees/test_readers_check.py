"""Issue 38, item 2: every reader checks the manifest it depends on and the files it lists.

Writers record each data file's bytes, sha256 and rows (`files`); `read_manifest` (used by
gaps, query, instances, dynamics and predict) refuses a deleted, edited or added file; a
predict rerun into a finished directory recomputes a missing or edited chunk; predict
refuses the prompts of an instances run that did not finish."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from freqgap.config import load_conf
from freqgap.contract import PREDICTION_STAGES, ManifestError
from freqgap.gaps.inputs import GapsInputError, _complete_manifest
from freqgap.inference.fake import FakeLM
from freqgap.inference.predict import load_prompts, predict
from freqgap.inference.prompts import PromptsError
from freqgap.inference.writer import part_files
from freqgap.instances import build_instances_dir, resolve_grid
from freqgap.manifest import read_manifest
from tests.instances.counts_fixture import default_counts

pytestmark = pytest.mark.timeout(180)
KEY = ["task", "k", "seed", "instance_id"]


@pytest.fixture(scope="module")
def instances(tmp_path_factory):
    base = tmp_path_factory.mktemp("inst")
    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=["mult"], ks=[0, 2], seeds=[0], max_test_items=12)
    build_instances_dir(default_counts(base / "counts"), base / "instances", grid, conf)
    return base / "instances"


def rows(directory):
    t = pa.concat_tables(pq.read_table(f) for f in part_files(directory))
    return t.sort_by([(c, "ascending") for c in KEY]).to_pylist()


def predictions(instances, out):
    return predict(instances, out, FakeLM(), label="fake", chunk_size=5, progress_interval=1e9)


def test_writers_record_each_file_with_rows_and_sha256(instances, tmp_path):
    files = read_manifest(instances)["files"]
    assert set(files) == {"instances.parquet", "instance_terms.parquet", "prompts.parquet"}
    assert files["prompts.parquet"]["rows"] == read_manifest(instances)["totals"]["prompts_all"]
    m = predictions(instances, tmp_path / "fake")
    assert len(m["files"]) == len(part_files(tmp_path / "fake")) > 2
    assert sum(f["rows"] for f in m["files"].values()) == m["totals"]["rows"]
    assert all(len(f["sha256"]) == 64 for f in m["files"].values())


@pytest.mark.parametrize("damage", ["delete", "edit", "add"])
def test_a_reader_refuses_chunks_that_differ_from_the_manifest(instances, tmp_path, damage):
    out = tmp_path / "fake"
    predictions(instances, out)
    chunk = part_files(out)[1]
    if damage == "delete":
        chunk.unlink()
        said = "but missing"
    elif damage == "edit":         # a hand-edited `correct` column
        t = pq.read_table(chunk)
        t = t.set_column(t.schema.get_field_index("correct"), "correct",
                         pc.invert(t.column("correct")))
        pq.write_table(t, chunk)
        said = "differs from the sha256"
    else:
        shutil.copy(chunk, out / "part-09999.parquet")
        said = "not among the files"
    with pytest.raises(ManifestError, match=said):
        read_manifest(out, stage=PREDICTION_STAGES)
    with pytest.raises(GapsInputError, match=said):                  # the gaps reader
        _complete_manifest(out, "predictions", PREDICTION_STAGES)


def test_predict_rerun_recomputes_a_missing_and_an_edited_chunk(instances, tmp_path, capsys):
    clean = tmp_path / "clean"
    predictions(instances, clean)
    out = tmp_path / "fake"
    predictions(instances, out)
    files = part_files(out)
    files[0].unlink()
    t = pq.read_table(files[2])
    pq.write_table(t.set_column(t.schema.get_field_index("correct"), "correct",
                                pc.invert(t.column("correct"))), files[2])
    m = predictions(instances, out)
    assert "recomputing the rows of 2 chunk(s)" in capsys.readouterr().err
    assert read_manifest(out) == m and rows(out) == rows(clean)
    same = lambda t: {k: v for k, v in t.items() if k != "longest_prompt_tokens"}  # of this run
    assert same(m["totals"]) == same(read_manifest(clean)["totals"])


def test_predict_refuses_the_prompts_of_an_unfinished_instances_run(instances, tmp_path):
    killed = tmp_path / "killed"
    shutil.copytree(instances, killed)
    (killed / "_manifest.json").unlink()
    with pytest.raises(PromptsError, match="holds instances.parquet but no _manifest.json"):
        load_prompts(killed)
    alone = tmp_path / "alone"                 # a prompts file on its own: no upstream
    alone.mkdir()
    shutil.copy(instances / "prompts.parquet", alone / "prompts.parquet")
    assert load_prompts(alone / "prompts.parquet").instances_fingerprint is None


def test_count_records_its_files_and_a_lost_part_is_refused(spark, tmp_path):
    from freqgap.counting.job import run_count

    (tmp_path / "a.jsonl").write_text('{"text": "5 days 3 day 7"}\n{"text": "2 hours"}\n')
    out = tmp_path / "counts"
    m = run_count([str(tmp_path / "a.jsonl")], str(out), spark=spark)
    uni = {k: v for k, v in m["files"].items() if k.startswith("unigrams/")}
    assert uni and sum(v["rows"] for v in uni.values()) == m["outputs"]["unigrams"]["rows"]
    read_manifest(out, stage="count_terms")
    (out / next(iter(uni))).unlink()
    with pytest.raises(ManifestError, match="but missing"):
        read_manifest(out, stage="count_terms")


def test_a_damaged_directory_rerun_with_other_settings_is_refused_and_left_alone(instances,
                                                                                  tmp_path):
    from freqgap.errors import InputMismatchError

    out = tmp_path / "fake"
    predictions(instances, out)
    part_files(out)[0].unlink()
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(InputMismatchError, match="other settings"):
        predict(instances, out, FakeLM(), label="fake", chunk_size=5, max_new_tokens=7,
                progress_interval=1e9)
    assert sorted(p.name for p in out.iterdir()) == before


def test_gaps_warns_about_predictions_that_record_no_instances(tmp_path, capsys):
    """A prompts file on its own gives predictions without `upstream.instances`: gaps cannot
    check them against the instances and says so (it skipped the check silently)."""
    from freqgap.gaps.inputs import check_predictions_match_instances

    check_predictions_match_instances(tmp_path / "p", {"upstream": {"instances": None}},
                                      tmp_path / "inst", "f" * 64)
    err = capsys.readouterr().err
    assert "predictions record no instances" in err and "without a check" in err
    check_predictions_match_instances(tmp_path / "p", {"upstream": {"instances": "f" * 64}},
                                      tmp_path / "inst", "f" * 64)
    assert capsys.readouterr().err == ""
