"""`make dynamics` / `freqgap dynamics demo`: Δ over the training time of a model trained here.

train (packed data order recorded, log-spaced checkpoints) → count what it trained on by
checkpoint bucket (Spark) → instances → predictions at every checkpoint → Δ per checkpoint
(the gaps stage's SQL with ω as of each step) → plots and the printed summary.
Settings: conf/dynamics.yaml `demo` and conf/training.yaml's `dynamics` profile.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from freqgap.dynamics.settings import demo_settings


@dataclass
class DynamicsDemoOptions:
    """What `make dynamics` runs; defaults from conf/dynamics.yaml `demo`."""

    corpus: str = "data/sample"
    train_profile: str = "dynamics"
    train_overrides: dict[str, Any] = field(default_factory=dict)
    work: Path = Path("out/dynamics")
    results: Path = Path("results/dynamics")
    tasks: tuple[str, ...] = ("mult",)
    ks: tuple[int, ...] = (2,)
    seeds: tuple[int, ...] = (0, 1)
    max_test_items: int | None = 400
    boot_reps: int = 1000
    summary: dict[str, Any] = field(default_factory=lambda: {"task": "mult", "freq_def": "1", "k": 2})
    device: str | None = None
    verbose: bool = False     # libraries' logs (Spark INFO, transformers loading) shown
    resume: bool = False      # keep a trained model whose manifest matches the settings

    @classmethod
    def from_conf(cls, **overrides: Any) -> "DynamicsDemoOptions":
        conf = demo_settings()
        opts = cls(corpus=conf["corpus"], train_profile=conf["train_profile"],
                   work=Path(conf["work"]), results=Path(conf["results"]),
                   tasks=tuple(conf["tasks"]), ks=tuple(int(k) for k in conf["k"]),
                   seeds=tuple(int(s) for s in conf["seeds"]),
                   max_test_items=conf.get("max_test_items"), boot_reps=int(conf["boot_reps"]),
                   summary=dict(conf["summary"]))
        for key, value in overrides.items():
            if value is not None:
                setattr(opts, key, value)
        return opts


def _fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _trained(model_dir: Path, config: dict[str, Any], resume: bool) -> dict[str, Any] | None:
    from freqgap.errors import FreqgapError
    from freqgap.manifest import read_manifest

    if not resume:
        return None
    try:
        manifest = read_manifest(model_dir, stage="train_lm")
    except FreqgapError:          # missing, unfinished, other stage or damaged: retrained
        return None
    return manifest if manifest.get("config") == config else None


def run_dynamics_demo(opts: DynamicsDemoOptions, spark=None, log: Callable[[str], None] = print):
    """Every stage in turn; returns (DynamicsResult, seconds per stage)."""
    from freqgap.dynamics.counts import count_model_order
    from freqgap.dynamics.gaps import run_dynamics_gaps
    from freqgap.gaps.options import options_from_conf
    from freqgap.inference.predict import predict_revisions
    from freqgap.instances.run import build_instances_dir
    from freqgap.instances.tasks import Grid
    from freqgap.training.settings import load_settings
    from freqgap.training.train import train_model

    times: dict[str, float] = {}
    work = Path(opts.work)
    model_dir = work / "model"
    settings = load_settings(opts.train_profile, opts.train_overrides)
    t = time.monotonic()
    config = {**settings.to_dict(), "corpus": [opts.corpus]}
    if _trained(model_dir, config, opts.resume) is None:
        log(f"[dynamics] training {settings.steps} steps, checkpoints {list(settings.checkpoints)}")
        train_model(settings, [opts.corpus], model_dir)
    else:
        log(f"[dynamics] reusing the trained model in {model_dir} (--resume)")
    times["train_s"] = time.monotonic() - t

    t = time.monotonic()
    counts = work / "counts"
    if counts.exists():
        shutil.rmtree(counts)       # counts of an earlier model would be refused, not replaced
    log("[dynamics] counting the training order by checkpoint bucket (Spark)")
    count_model_order(model_dir, counts, spark=spark, verbose=opts.verbose)
    times["count_s"] = time.monotonic() - t

    t = time.monotonic()
    grid = Grid(tasks=tuple(opts.tasks), ks=tuple(opts.ks), seeds=tuple(opts.seeds),
                max_test_items=opts.max_test_items)
    build_instances_dir(counts, _fresh(work / "instances"), grid)
    times["instances_s"] = time.monotonic() - t

    t = time.monotonic()
    revisions = [f"step{c}" for c in settings.checkpoints]
    log(f"[dynamics] predicting at {len(revisions)} checkpoints: {', '.join(revisions)}")
    predictions = _fresh(work / "predictions")
    predict_revisions(work / "instances" / "prompts.parquet", predictions, str(model_dir), revisions,
                      name="dynamics-demo", device=opts.device, verbose=opts.verbose)
    times["predict_s"] = time.monotonic() - t

    t = time.monotonic()
    gaps_opts = options_from_conf(counts=str(counts), instances=str(work / "instances"),
                                  predictions=str(predictions / "*/"), results=str(opts.results),
                                  tasks=list(opts.tasks), boot_reps=opts.boot_reps)
    result = run_dynamics_gaps(gaps_opts, summary=opts.summary)
    times["gaps_s"] = time.monotonic() - t
    return result, times
