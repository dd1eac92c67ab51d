"""Issue 38 (minor): `instances --k 2,2` wrote every prompt twice; a repeated k, seed or task
is refused naming the flag (or the conf/tasks.yaml field)."""

from __future__ import annotations

import pytest

from freqgap.cli import main


@pytest.mark.parametrize("flag,value", [("--k", "2,2"), ("--seeds", "0,1,0"),
                                        ("--tasks", "mult,mult")])
def test_a_value_given_twice_is_refused(tmp_path, capsys, flag, value):
    try:
        code = main(["instances", "--counts", str(tmp_path / "counts"), "--out",
                     str(tmp_path / "inst"), flag, value])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"{flag}: " in err and "given twice; give each value once" in err, err
    assert not (tmp_path / "inst").exists()
