"""The demo chain behind `freqgap demo` and `make demo`: every stage on the bundled sample.

count (Spark, local) → counts picture → instances (grid `demo`) → predictions of the
committed demo model → gaps with a Table-2-like summary. Each stage is the same library
call as its own subcommand and writes its own manifest; a rerun reuses finished counts
(same inputs and settings) and redoes the rest, since the prompts are rewritten.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from freqgap.paths import SAMPLE_CORPUS_DIR


@dataclass
class DemoOptions:
    """Where the demo reads and writes; the defaults are `make demo`'s."""

    corpus: str = str(SAMPLE_CORPUS_DIR)  # shipped with the package: any directory works
    work: Path = Path("out")              # counts/, instances/, predictions/, reports/
    results: Path = Path("results")       # the gaps stage's output
    model: str = "demo"                   # alias of conf/models.yaml
    grid: str = "demo"                    # grid of conf/tasks.yaml
    device: str | None = None
    verbose: bool = False
    progress_interval: float = 5.0


def run_demo(opts: DemoOptions, spark=None, log: Callable[[str], None] = print) -> str:
    """Run the chain; returns the printed summary of the gaps stage."""
    from freqgap.analysis.counts import number_frequencies, plot_counts
    from freqgap.config import load_conf
    from freqgap.counting.job import run_count, summary_text as count_summary
    from freqgap.gaps.options import options_from_conf
    from freqgap.gaps.run import run_gaps
    from freqgap.analysis.gaps import summary_text
    from freqgap.inference.predict import model_label, predict
    from freqgap.instances import build_instances_dir, resolve_grid
    from freqgap.spark_session import get_spark

    work = Path(opts.work)
    counts, instances = work / "counts", work / "instances"
    predictions = work / "predictions"
    spark = spark or get_spark(app_name="freqgap-demo", verbose=opts.verbose)
    manifest = run_count([opts.corpus], str(counts), spark=spark,
                         progress_interval=opts.progress_interval)
    log(count_summary(manifest))
    top = number_frequencies(counts, limit=10)
    log("most frequent number terms: " + ", ".join(f"{t} ({c:,})" for t, c in top))
    log(f"plot: {plot_counts(counts, work / 'reports' / 'counts.png')}")

    conf = load_conf("tasks")
    built = build_instances_dir(counts, instances, resolve_grid(conf, opts.grid), conf,
                                progress_interval=opts.progress_interval)
    t = built["totals"]
    log(f"wrote {instances}: {t['instances_all']} instances, {t['prompts_all']} prompts")

    label = model_label(opts.model, None)  # an alias, or a model directory's last part
    model_dir = predictions / label
    if model_dir.exists():
        shutil.rmtree(model_dir)          # the prompts were rewritten: predict them afresh
    done = predict(instances, model_dir, opts.model, device=opts.device, label=label,
                   progress_interval=opts.progress_interval, verbose=opts.verbose)
    acc = done["totals"]["accuracy"]
    log(f"{model_dir}: {done['totals']['rows']} predictions, accuracy "
        f"{'n/a' if acc is None else f'{100 * acc:.1f}%'} (paper rule)")

    gaps = options_from_conf(counts=str(counts), instances=str(instances),
                             predictions=f"{predictions}/*/", results=str(opts.results))
    result = run_gaps(gaps)
    text = summary_text(result.gaps, gaps.tables, gaps.task_labels, gaps.binning,
                        gaps.bin_percent, gaps.boot_level, result.results_dir, result.plots,
                        reference=gaps.paper_reference)
    log(text)
    return text
