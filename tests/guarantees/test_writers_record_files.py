"""Issue 38, item 2: `import-lm-eval` and the suites record each data file's bytes, sha256
and rows in their manifests (`files`), so every reader (gaps, the suites' own rerun)
refuses or redoes an edited, deleted or added file. Before, their manifests listed no
files and readers skipped the check: a hand-edited `correct` was joined as if computed."""

from __future__ import annotations

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from freqgap.contract import PREDICTION_STAGES, ManifestError
from freqgap.gaps.inputs import GapsInputError, _complete_manifest
from freqgap.inference.fake import FakeLM
from freqgap.manifest import read_manifest
from freqgap.suites.pipeline import run
from tests.suites.conftest import FIXTURES

pytestmark = pytest.mark.timeout(120)


def flip_correct(path) -> None:
    """A hand edit: every `correct` inverted, the file rewritten in place."""
    t = pq.read_table(path)
    pq.write_table(t.set_column(t.schema.get_field_index("correct"), "correct",
                                pc.invert(t.column("correct"))), path)


def test_an_edited_import_is_refused_by_gaps(tmp_path):
    from freqgap.gaps.lm_eval import import_samples
    from tests.gaps.fixtures import build_world
    from tests.gaps.test_gaps_lm_eval import sample, write_log

    world = build_world(tmp_path / "w", [("mult", x1, x2, []) for x1 in range(1, 7)
                                         for x2 in (1, 2)], {str(x): x for x in range(1, 7)})
    log = write_log(tmp_path / "lm", "mult_freq",
                    [sample(i, r, f" {r['answer']}\n") for i, r in enumerate(world.instance_rows)])
    out = tmp_path / "preds" / "m"
    m = import_samples([log], world.instances, out, model="m", task="mult")
    assert m["files"]["part-lm-eval.parquet"]["rows"] == m["totals"]["rows"] == 12
    _complete_manifest(out, "predictions", PREDICTION_STAGES)          # intact: read
    flip_correct(out / "part-lm-eval.parquet")
    with pytest.raises(GapsInputError, match="differs from the sha256"):
        _complete_manifest(out, "predictions", PREDICTION_STAGES)
    (out / "part-lm-eval.parquet").unlink()
    with pytest.raises(GapsInputError, match="but missing"):
        _complete_manifest(out, "predictions", PREDICTION_STAGES)


def test_suite_tables_are_checked_and_an_edited_model_is_redone(tmp_path):
    out = tmp_path / "q"
    loads = []

    def loader(name, **_):
        loads.append(name)
        return FakeLM(name)

    run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], out, loader=loader)
    preds = out / "predictions" / "m" / "predictions.parquet"
    clean = preds.read_bytes()
    inst = read_manifest(out / "instances", stage="suite_instances")
    assert set(inst["files"]) == {"instances.parquet", "instance_terms.parquet"}
    assert read_manifest(preds.parent)["files"]["predictions.parquet"]["rows"] > 0
    flip_correct(preds)
    with pytest.raises(GapsInputError, match="differs from the sha256"):      # gaps' reader
        _complete_manifest(preds.parent, "predictions", PREDICTION_STAGES)
    run("quantifiers", FIXTURES / "quantifiers.csv", ["m"], out, loader=loader)
    assert loads == ["m", "m"] and preds.read_bytes() == clean    # redone, not reused
    (out / "instances" / "instance_terms.parquet").unlink()
    with pytest.raises(ManifestError, match="but missing"):
        read_manifest(out / "instances", stage="suite_instances")
