"""The instances of the lm-eval round trip, built the same way by the recording script
(tests/fixtures/lm_eval_roundtrip/record.sh) and by the test that replays its output:
the instance tests' synthetic counts, multiplication at k = 0 and 2, shot seed 0, 12 test
items each, predicted by the demo model (models/demo)."""

from __future__ import annotations

from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "lm_eval_roundtrip"
REPO = FIXTURE.parent.parent.parent
DEMO_MODEL = REPO / "models" / "demo"


def build_instances(root: Path) -> tuple[Path, Path]:
    """(counts, instances) under root."""
    from freqgap.config import load_conf
    from freqgap.instances import build_instances_dir, resolve_grid
    from tests.instances.counts_fixture import default_counts

    counts = default_counts(root / "counts")
    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=["mult"], ks=[0, 2], seeds=[0],
                        max_test_items=12)
    build_instances_dir(counts, root / "instances", grid, conf, progress_interval=60)
    return counts, root / "instances"


if __name__ == "__main__":       # used by record.sh: build instances, export them
    import sys

    from freqgap.gaps.lm_eval_export import export

    root = Path(sys.argv[1])
    _, instances = build_instances(root)
    print(export(instances, root / "export"))
