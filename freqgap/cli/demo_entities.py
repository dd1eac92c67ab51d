"""Invented facts planted in Zipf-distributed numbers of documents, a small model trained on
them, the QA suite evaluated against document-unit counts: accuracy by relevant-document
count with Δ and its interval, and the figure (`make demo-entities`; docs/demo_entities.md).
Settings: conf/demo_entities.yaml.

  freqgap demo-entities                       # the demo profile, figure to docs/img/
  freqgap demo-entities --profile smoke --work out/demo-entities-smoke --no-figure
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_device, positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freqgap.config import load_conf

    profiles = sorted(load_conf("demo_entities").get("profiles") or {})
    p.add_argument("--profile", default="demo", choices=profiles,
                   help="profile of conf/demo_entities.yaml")
    p.add_argument("--work", default="out/demo-entities", metavar="DIR",
                   help="directory of corpus/, qa.jsonl, count-inputs/, counts/, model/, qa/")
    p.add_argument("--figure", default="docs/img/demo_entities.png", metavar="PNG",
                   help="where to copy the accuracy-by-relevant-documents figure")
    p.add_argument("--no-figure", action="store_true", help="do not copy the figure")
    p.add_argument("--threads", type=positive_int, metavar="N",
                   help="torch CPU threads for training (conf: training.threads)")
    p.add_argument("--boot-reps", type=positive_int, metavar="N",
                   help="bootstrap resamples of Δ (conf/gaps.yaml)")
    add_device(p)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.outdir import claim_each
    from freqgap.workflows.demo_entities import EntitiesDemoOptions, run_entities_demo

    with claim_each(("--work", args.work)):          # one demo per directory
        run_entities_demo(EntitiesDemoOptions(
            profile=args.profile, work=Path(args.work),
            figure=None if args.no_figure else Path(args.figure), threads=args.threads,
            boot_reps=args.boot_reps, device=args.device, verbose=args.verbose))
    return 0
