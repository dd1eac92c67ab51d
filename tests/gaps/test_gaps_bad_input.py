"""Bad input stops `make gaps` with an error naming the file, never a silently wrong Δ."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from freqgap.gaps.inputs import GapsInputError
from freqgap.gaps.run import run_gaps
from freqgap.manifest import MANIFEST_NAME
from tests.gaps.fixtures import (COUNTS_CONFIG, PAIRS, PREDICTIONS, build_world, options_for,
                                 prediction, write_table)

T, F = True, False
SPECS = [("mult", x1, x2, [x1 % 2 == 0, T]) for x1 in range(1, 6) for x2 in (1, 2)]
UNI = {str(x): x for x in range(1, 6)}
PAIRS_ = {tuple(sorted((str(a), str(b)))): a + b for a in range(1, 6) for b in (1, 2)}


@pytest.fixture
def world(tmp_path):
    return build_world(tmp_path / "w", SPECS, UNI, PAIRS_)


def run(world, tmp_path, **kw):
    return run_gaps(options_for(world, tmp_path / "results", **kw))


def test_the_good_world_runs(world, tmp_path):
    assert len(run(world, tmp_path).gaps) == 3


def test_missing_counts_directory(world, tmp_path):
    shutil.rmtree(world.counts)
    with pytest.raises(GapsInputError, match=str(world.counts)):
        run(world, tmp_path)


def test_counts_without_manifest(world, tmp_path):
    (world.counts / MANIFEST_NAME).unlink()
    with pytest.raises(GapsInputError, match=f"{world.counts}.*{MANIFEST_NAME}"):
        run(world, tmp_path)


def test_unfinished_instances_manifest(world, tmp_path):
    path = world.instances / MANIFEST_NAME
    m = json.loads(path.read_text())
    m["status"] = "running"
    path.write_text(json.dumps(m))
    with pytest.raises(GapsInputError, match=str(path)):
        run(world, tmp_path)


def test_no_predictions_directories(world, tmp_path):
    shutil.rmtree(world.predictions)
    with pytest.raises(GapsInputError, match="no predictions directories"):
        run(world, tmp_path)


def test_empty_predictions(world, tmp_path):
    model_dir = world.predictions / "m"
    write_table(model_dir / "part-00000.parquet", [], PREDICTIONS)
    with pytest.raises(GapsInputError, match=f"{model_dir}: predictions directory holds no rows"):
        run(world, tmp_path)


def test_empty_instances(world, tmp_path):
    path = world.instances / "instance_terms.parquet"
    pq.write_table(pq.read_table(path).slice(0, 0), path)
    with pytest.raises(GapsInputError, match="instance_terms.parquet: dataset is empty"):
        run(world, tmp_path)


def test_predictions_for_instances_that_do_not_exist(world, tmp_path):
    bad = world.predictions / "m" / "part-00001.parquet"
    write_table(bad, [prediction("m", "mult", 2, 0, 999, "1", 1)], PREDICTIONS)
    with pytest.raises(GapsInputError, match=f"{bad}.*instances do not contain"):
        run(world, tmp_path)


def test_two_prediction_rows_for_one_instance(world, tmp_path):
    first = world.predictions / "m" / "part-00000.parquet"
    dup = world.predictions / "m" / "part-00001.parquet"
    write_table(dup, [world.prediction_rows[3]], PREDICTIONS)
    with pytest.raises(GapsInputError, match=f"{first}, {dup}: two or more prediction rows"):
        run(world, tmp_path)


def test_duplicate_model_directory_is_caught_too(world, tmp_path):
    shutil.copytree(world.predictions / "m", world.predictions / "m-copy")
    with pytest.raises(GapsInputError, match="m-copy.*two or more prediction rows"):
        run(world, tmp_path)


@pytest.mark.parametrize("setting,value", [("window", 10), ("number_rule", "strip-punct"),
                                           ("max_digits", 4)])
def test_counts_made_with_another_rule_than_the_instances(tmp_path, setting, value):
    other = dict(COUNTS_CONFIG, **{setting: value})
    world = build_world(tmp_path / "w", SPECS, UNI, PAIRS_, counts_config=other,
                        instances_counts_config=COUNTS_CONFIG)
    with pytest.raises(GapsInputError,
                       match=f"{world.counts / MANIFEST_NAME}: counts were made with {setting}"):
        run(world, tmp_path)


def test_instances_that_record_no_counts_are_refused(tmp_path):
    """An instances manifest without `upstream.counts` (an older freqgap) is not guessed at."""
    world = build_world(tmp_path / "w", SPECS, UNI, PAIRS_)
    path = world.instances / MANIFEST_NAME
    m = json.loads(path.read_text())
    del m["upstream"]
    path.write_text(json.dumps(m))
    with pytest.raises(GapsInputError, match=r"instances: .*lacks field\(s\) upstream.counts"):
        run(world, tmp_path)


def test_predictions_missing_a_column(world, tmp_path):
    path = world.predictions / "m" / "part-00000.parquet"
    pq.write_table(pq.read_table(path).drop(["correct"]), path)
    with pytest.raises(GapsInputError,
                       match=r"predictions/m/part-00000.parquet: missing column 'correct'"):
        run(world, tmp_path)


def test_not_parquet(world, tmp_path):
    bad = world.counts / "pairs" / "part-00009.parquet"
    bad.write_text("not parquet")
    with pytest.raises(GapsInputError, match="part-00009.parquet: not a readable Parquet file"):
        run(world, tmp_path)


def test_pairs_needed_but_not_counted(world, tmp_path):
    shutil.rmtree(world.counts / "pairs")
    with pytest.raises(GapsInputError, match=f"{world.counts}: no pairs/ dataset"):
        run(world, tmp_path)
    # Leaving out the pair definitions is the documented way round it.
    res = run(world, tmp_path, freq_defs=["1"])
    assert list(res.gaps["freq_def"]) == ["1"]


def test_a_key_counted_twice(tmp_path):
    world = build_world(tmp_path / "w", SPECS, UNI, PAIRS_)
    write_table(world.counts / "pairs" / "part-00009.parquet",
                [{"t1": "1", "t2": "2", "count": 7}], PAIRS)
    with pytest.raises(GapsInputError, match=f"{world.counts / 'pairs'}: key.*more than one row"):
        run(world, tmp_path)


def test_unsorted_instance_terms(world, tmp_path):
    path = world.instances / "instance_terms.parquet"
    t = pq.read_table(path).to_pylist()
    t[0].update(freq_def="1,2", n_terms=2, t1="9", t2="10")   # '9' > '10' as strings
    t = [r for r in t[1:] if not (r["instance_id"] == t[0]["instance_id"]
                                 and r["freq_def"] == "1,2")] + [t[0]]
    write_table(path, t, pq.read_schema(path))
    with pytest.raises(GapsInputError, match=f"{world.instances}: instance_terms rows that break"):
        run(world, tmp_path)


def test_unknown_model_filter(world, tmp_path):
    with pytest.raises(GapsInputError, match=r"found models \['m'\]"):
        run(world, tmp_path, models=["gpt-j-6b"])


def test_a_failed_run_leaves_no_complete_looking_results(world, tmp_path):
    run(world, tmp_path)
    assert (tmp_path / "results" / MANIFEST_NAME).exists()
    write_table(world.predictions / "m" / "part-00001.parquet", [world.prediction_rows[0]],
                PREDICTIONS)
    with pytest.raises(GapsInputError):
        run(world, tmp_path)
    assert not (tmp_path / "results" / MANIFEST_NAME).exists()


def test_job_exits_2_with_the_message(world, tmp_path, capsys):
    from jobs.gaps import main

    shutil.rmtree(world.counts)
    code = main(["--counts", str(world.counts), "--instances", str(world.instances),
                 "--predictions", f"{world.predictions}/*/", "--out", str(tmp_path / "r"),
                 "--no-plots"])
    assert code == 2
    assert f"error: {world.counts}" in capsys.readouterr().err

