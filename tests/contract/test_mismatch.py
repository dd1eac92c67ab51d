"""Issue 10.5 and the stage checks: inputs of other runs are refused, never joined.

Each test fails on the code before the contract: gaps compared only the counts' settings,
so counts of another corpus gave a Δ reported as "compatibility: checked", and no reader
looked at a manifest's stage.
"""

from __future__ import annotations

import json
import shutil

import pytest

from freqgap.cli import main
from freqgap.errors import InputMismatchError
from freqgap.manifest import MANIFEST_NAME, read_manifest


def _gaps_argv(chain, out, counts=None, instances=None, *extra):
    return ["gaps", "--counts", str(counts or chain.counts),
            "--instances", str(instances or chain.instances),
            "--predictions", str(chain.predictions) + "/*/", "--out", str(out),
            "--boot-reps", "20", "--no-plots", *extra]


def test_counts_of_another_corpus_with_the_same_settings_are_refused(chain, tmp_path):
    from freqgap.gaps.run import run_gaps

    with pytest.raises(InputMismatchError) as err:
        run_gaps(chain.gaps_options(counts=str(chain.other_counts), results=str(tmp_path / "r")))
    message = str(err.value)
    assert "\n" not in message
    assert f"{chain.other_counts / MANIFEST_NAME}: counts " in message
    assert "same settings, other inputs (another corpus" in message
    assert str(chain.counts) in message and "--counts-mismatch-ok" in message
    assert not (tmp_path / "r" / MANIFEST_NAME).exists()


def test_counts_mismatch_ok_accepts_and_records_it(chain, tmp_path, capsys):
    from freqgap.gaps.run import run_gaps

    res = run_gaps(chain.gaps_options(counts=str(chain.other_counts), results=str(tmp_path / "r"),
                                      counts_mismatch_ok=True))
    assert "accepted (--counts-mismatch-ok)" in capsys.readouterr().err
    m = read_manifest(tmp_path / "r", stage="gaps")
    assert m == res.manifest
    assert m["counts_mismatch_ok"] is True and m["config"]["counts_mismatch_ok"] is True
    assert m["compatibility"] == "mismatch accepted (--counts-mismatch-ok)"
    assert m["upstream"]["counts"] == read_manifest(chain.other_counts)["fingerprint"]
    assert m["upstream"]["instances_counts"] == read_manifest(chain.counts)["fingerprint"]
    assert m["upstream"]["counts"] != m["upstream"]["instances_counts"]


def test_the_gaps_command_refuses_in_one_line_and_accepts_with_the_flag(chain, tmp_path, capsys):
    assert main(_gaps_argv(chain, tmp_path / "r", counts=chain.other_counts)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("freqgap gaps: error: ") and "\n" not in err
    assert "--counts-mismatch-ok" in err and "Traceback" not in err
    assert main(_gaps_argv(chain, tmp_path / "r", chain.other_counts, None,
                           "--counts-mismatch-ok")) == 0
    assert read_manifest(tmp_path / "r", stage="gaps")["counts_mismatch_ok"] is True
    assert main(_gaps_argv(chain, tmp_path / "r2")) == 0          # the right counts
    assert read_manifest(tmp_path / "r2")["counts_mismatch_ok"] is False


def test_counts_with_other_settings_name_the_setting(chain, tmp_path):
    """Counts whose settings differ say which setting, not just 'other fingerprint'."""
    from freqgap.gaps.run import run_gaps
    from freqgap.manifest import write_manifest

    other = tmp_path / "counts_w7"
    shutil.copytree(chain.counts, other)
    m = json.loads((other / MANIFEST_NAME).read_text())
    m["config"]["window"] = 7
    write_manifest(other, m)                                    # re-sealed: a valid manifest
    with pytest.raises(InputMismatchError, match=r"counts were made with window=7 but the "
                                                 r"instances were made from counts with window=5"):
        run_gaps(chain.gaps_options(counts=str(other), results=str(tmp_path / "r")))


def test_a_manifest_of_the_wrong_stage_is_refused(chain, tmp_path, capsys):
    """A predictions directory passed as counts (gaps, instances) or as instances."""
    from freqgap.config import load_conf
    from freqgap.gaps.run import run_gaps
    from freqgap.instances import build_instances_dir, resolve_grid

    preds = chain.predictions / "fake"
    with pytest.raises(InputMismatchError, match=r"counts: .*fake/_manifest.json: written by "
                       r"stage 'predictions' \(a model's predictions\), but 'count_terms' "
                       r"\(term counts\) is expected here"):
        run_gaps(chain.gaps_options(counts=str(preds), results=str(tmp_path / "r")))
    with pytest.raises(InputMismatchError, match="'instances' .* or 'suite_instances'"):
        run_gaps(chain.gaps_options(instances=str(chain.counts), results=str(tmp_path / "r")))
    grid = resolve_grid(load_conf("tasks"), "paper", tasks=["mult"], ks=[0], seeds=[0])
    with pytest.raises(InputMismatchError, match="written by stage 'predictions'"):
        build_instances_dir(preds, tmp_path / "inst", grid)
    assert not (tmp_path / "inst" / MANIFEST_NAME).exists()
    assert main(["instances", "--counts", str(preds), "--out", str(tmp_path / "i2")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("freqgap instances: error: ") and "'predictions'" in err
    assert "\n" not in err


def test_predictions_of_other_instances_are_refused(chain, tmp_path):
    """Instances rebuilt from other counts are other instances: the old predictions don't
    belong to them, even where task and instance_id coincide."""
    from freqgap.config import load_conf
    from freqgap.gaps.run import run_gaps
    from freqgap.instances import build_instances_dir, resolve_grid

    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=["mult", "min_sec"], ks=[0, 2], seeds=[0],
                        max_test_items=30)
    build_instances_dir(chain.other_counts, tmp_path / "inst_b", grid, conf,
                        progress_interval=60)
    with pytest.raises(InputMismatchError, match=r"fake/_manifest.json: predictions of other "
                                                 r"instances .* rerun predict"):
        run_gaps(chain.gaps_options(counts=str(chain.other_counts),
                                    instances=str(tmp_path / "inst_b"),
                                    results=str(tmp_path / "r")))
