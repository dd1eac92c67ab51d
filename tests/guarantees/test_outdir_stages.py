"""Issue 38, item 1: one output-directory guard for every stage (freqgap/outdir.py).

No stage writes over another stage's result, over or around its own inputs, or over its
own result of other settings without --force; every spelling of one directory (a symlink)
shares its lock. Each case was a lost or silently replaced result before the guard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freqgap.cli import main
from freqgap.outdir import DirLock, sibling_lock

pytestmark = pytest.mark.timeout(120)


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def stage_dir(path: Path, stage: str, config: dict | None = None) -> Path:
    """A directory holding a (stand-in) result of `stage`: only its manifest is read."""
    path.mkdir(parents=True)
    (path / "_manifest.json").write_text(json.dumps({"stage": stage, "status": "complete",
                                                     "config": config or {}}))
    (path / "table.parquet").write_bytes(b"precious")
    return path


@pytest.fixture
def world(tmp_path):
    return {"counts": stage_dir(tmp_path / "counts", "count_terms"),
            "inst": stage_dir(tmp_path / "inst", "instances"),
            "preds": stage_dir(tmp_path / "preds" / "demo", "predictions")}


GAPS = ["gaps", "--counts", "{counts}", "--instances", "{inst}", "--predictions",
        "{preds}", "--out", "{out}"]
DYN = ["dynamics", "gaps", "--counts", "{counts}", "--instances", "{inst}", "--predictions",
       "{preds}", "--out", "{out}"]


@pytest.mark.parametrize("argv,target", [
    (GAPS, "inst"), (GAPS, "counts"), (GAPS, "preds"),
    (["instances", "--counts", "{counts}", "--out", "{out}"], "counts"),
    (DYN, "counts"), (DYN, "inst"),
], ids=["gaps-inst", "gaps-counts", "gaps-preds", "instances-counts", "dyn-counts", "dyn-inst"])
def test_out_at_another_stages_result_or_an_input_is_refused(world, capsys, argv, target):
    before = {p: p.read_bytes() for d in world.values() for p in d.iterdir()}
    code, err = run_cli([a.format(out=world[target], **world) for a in argv], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"--out {world[target]}: " in err and ("is the input" in err or "holds the result" in err)
    assert {p: p.read_bytes() for p in before} == before


def test_out_holding_another_stage_is_refused_even_apart_from_inputs(world, tmp_path, capsys):
    other = stage_dir(tmp_path / "old-corpus", "generate_corpus")
    code, err = run_cli([a.format(out=other, **world) for a in GAPS], capsys)
    assert code == 2 and "holds the result of stage 'generate_corpus', not of 'gaps'" in err, err


def test_out_containing_or_inside_an_input_is_refused(world, tmp_path, capsys):
    code, err = run_cli([a.format(out=tmp_path, **world) for a in GAPS], capsys)
    assert code == 2 and "contains the input" in err, err
    code, err = run_cli(["instances", "--counts", world["counts"], "--out",
                         world["counts"] / "inst"], capsys)
    assert code == 2 and "lies inside the input" in err, err
    assert not (world["counts"] / "inst").exists()


def test_out_through_a_symlink_to_an_input_is_refused(world, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(world["counts"])
    code, err = run_cli(["instances", "--counts", world["counts"], "--out", link], capsys)
    assert code == 2 and "is the input" in err, err


def test_gaps_result_of_other_settings_is_replaced_only_with_force(world, tmp_path, capsys):
    """`make gaps GAPS_ARGS="--binning quantile"` replaced the default results/ silently."""
    from freqgap.gaps.options import options_from_conf

    out = tmp_path / "results"
    made = options_from_conf(counts=str(world["counts"]), instances=str(world["inst"]),
                             predictions=str(world["preds"]), results=str(out))
    assert made.binning == "rank"
    stage_dir(out, "gaps", made.to_dict())
    argv = [a.format(out=out, **world) for a in GAPS] + ["--binning", "quantile"]
    code, err = run_cli(argv, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "already holds a result of other settings (binning: 'rank' -> 'quantile')" in err
    assert "--force" in err and (out / "table.parquet").read_bytes() == b"precious"
    code, err = run_cli(argv + ["--force"], capsys)   # goes on (and stops at the stand-in inputs)
    assert "other settings" not in err and "holds the result" not in err, err


def test_count_through_a_symlink_shares_the_lock(tmp_path, capsys):
    """Two counts into one directory, one spelled through a symlink, both 'wrote' once."""
    inp = tmp_path / "input.jsonl"
    inp.write_text('{"text": "1 2"}\n')
    real = tmp_path / "cs"
    real.mkdir()
    link = tmp_path / "cslink"
    link.symlink_to(real)
    assert sibling_lock(link) == sibling_lock(real)
    with DirLock(real, sibling_lock(real)):
        code, err = run_cli(["count", "--input", inp, "--out", link, "--window", "3"], capsys)
    assert code == 2 and "another run (pid" in err, err


def test_directory_lock_is_on_the_resolved_path(tmp_path):
    from freqgap.outdir import DirectoryBusyError

    (tmp_path / "d").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "d")
    with DirLock(tmp_path / "d"):
        with pytest.raises(DirectoryBusyError):
            DirLock(tmp_path / "alias").acquire()
        with pytest.raises(DirectoryBusyError):
            DirLock(tmp_path / "alias" / ".." / "d").acquire()


@pytest.mark.parametrize("error", [
    OSError(28, "No space left on device"),
    RuntimeError("py4j.protocol.Py4JJavaError: An error occurred while calling o51.save.\n"
                 ": java.io.IOException: No space left on device\n\tat java.base/..." * 30),
], ids=["python", "spark"])
def test_a_full_disk_is_one_line_naming_device_and_directory(tmp_path, error):
    from freqgap.outdir import DiskFullError, claim, device_of

    with pytest.raises(DiskFullError) as caught:
        with claim(tmp_path / "cs", beside=True, stage="count_terms"):
            raise error
    said = str(caught.value)
    assert "\n" not in said and said == (f"no space left on {device_of(tmp_path)} while writing "
                                         f"{tmp_path / 'cs'}; free space and rerun with --resume")
