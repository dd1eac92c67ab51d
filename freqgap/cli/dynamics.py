"""Frequency over training time (docs/dynamics.md): Δ at every checkpoint of a model, with ω
as of that checkpoint's step, from counts by training position (`freqgap count --order-of`
or `--training-order`) and predictions per revision (`freqgap predict --revisions`).

Examples:
  freqgap dynamics demo                        # make dynamics: train, count, predict, Δ per step
  freqgap dynamics gaps --counts out/counts-pythia --instances out/instances-pythia \\
      --predictions 'out/predictions/pythia-70m-step*/' --out results/dynamics-pythia-70m
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (HelpFormatter, Parser, add_device, add_out, common_parent,
                                positive_int, str_list)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)

    def action(name: str, summary: str) -> argparse.ArgumentParser:
        """A nested subcommand with the shared --conf/--verbose (also after its name)."""
        return sub.add_parser(name, help=summary, description=summary,
                              parents=[common_parent(nested=True)], formatter_class=HelpFormatter)

    demo = action("demo", "make dynamics: the demo model trained here with log-spaced "
                          "checkpoints, its data order counted by step, Δ per checkpoint "
                          "(conf/dynamics.yaml demo)")
    from freqgap.config import load_conf

    profile_steps = load_conf("training")["profiles"]["dynamics"].get("steps")
    demo.add_argument("--steps", type=positive_int, metavar="N",
                      help=f"training steps (conf/training.yaml dynamics profile: "
                           f"{profile_steps}); the checkpoints beyond N are dropped and N is "
                           "added")
    demo.add_argument("--resume", action="store_true",
                      help="reuse out/dynamics/model when its manifest matches the settings")
    demo.add_argument("--boot-reps", type=positive_int, metavar="N",
                      help="bootstrap resamples per checkpoint and group (conf: 1000)")
    add_device(demo)
    gaps = action("gaps", "Δ, accuracy and the logistic slope per checkpoint from "
                          "bucketed counts, instances and predictions of several revisions stepN")
    gaps.add_argument("--counts", required=True, metavar="DIR",
                      help="counts by training position (freqgap count --order-of / --training-order)")
    gaps.add_argument("--instances", required=True, metavar="DIR",
                      help="the instances made from those counts (freqgap instances)")
    gaps.add_argument("--predictions", required=True, metavar="GLOB",
                      help="glob of prediction directories, one per revision stepN (freqgap "
                           "predict --revisions), quoted")
    add_out(gaps, "results/dynamics", "gaps_by_step.parquet, per_key_by_step.parquet, plots/, "
                                      "summary.md, dynamics.duckdb")
    gaps.add_argument("--tasks", type=str_list, metavar="T,T,…", help="tasks (default: all found)")
    gaps.add_argument("--summary", metavar="TASK:DEF:K", default="mult:1:2",
                      help="the group of the printed summary (first step whose Δ interval is "
                           "above 0)")
    gaps.add_argument("--boot-reps", type=positive_int, metavar="N",
                      help="bootstrap resamples per checkpoint and group (conf/gaps.yaml: 1000)")


def _summary(text: str) -> dict:
    from freqgap.errors import UsageError

    parts = text.split(":")
    if len(parts) != 3 or not parts[2].isdigit():
        raise UsageError(f"--summary {text}: TASK:FREQ_DEF:K expected, e.g. mult:1:2")
    return {"task": parts[0], "freq_def": parts[1], "k": int(parts[2])}


def _print_result(result) -> None:
    summary = result.results_dir / "summary.md"
    if summary.is_file():
        print(summary.read_text(encoding="utf-8"))
    print(f"wrote {result.results_dir}/: gaps_by_step.parquet, per_key_by_step.parquet, "
          "plots/delta_over_steps.png, plots/accuracy_by_exposures.png, summary.md")


def run(args: argparse.Namespace) -> int:
    if args.action == "gaps":
        from freqgap.dynamics.gaps import run_dynamics_gaps
        from freqgap.gaps.options import options_from_conf

        summary = _summary(args.summary)
        opts = options_from_conf(counts=args.counts, instances=args.instances,
                                 predictions=args.predictions, results=args.out,
                                 tasks=args.tasks, boot_reps=args.boot_reps)
        from freqgap.gaps.run import input_paths
        from freqgap.outdir import claim

        # one run per output directory, never over another result or an input
        with claim(opts.path(opts.results), stage="dynamics_gaps", inputs=input_paths(opts)):
            result = run_dynamics_gaps(opts, summary=summary)
        _print_result(result)
        return 0
    from freqgap.workflows.dynamics import DynamicsDemoOptions, run_dynamics_demo

    opts = DynamicsDemoOptions.from_conf(resume=args.resume or None, boot_reps=args.boot_reps,
                                         device=args.device, verbose=args.verbose or None)
    if args.steps:
        from freqgap.training.settings import load_settings

        kept = [c for c in load_settings(opts.train_profile).checkpoints if c < args.steps]
        opts.train_overrides = {"steps": args.steps, "checkpoints": kept + [args.steps]}
    from freqgap.outdir import claim_each

    # one run per directory: conf/dynamics.yaml's work and results
    with claim_each(("work", opts.work), ("results", opts.results)):
        result, times = run_dynamics_demo(opts)
    _print_result(result)
    print("seconds per stage: " + ", ".join(f"{k[:-2]} {v:.0f}" for k, v in times.items())
          + f"; total {sum(times.values()):.0f}")
    return 0
