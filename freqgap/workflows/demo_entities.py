"""`make demo-entities` / `freqgap demo-entities`: accuracy rising with relevant documents.

facts corpus (invented facts in Zipf-distributed numbers of documents, freqgap/corpus/facts.py)
→ Spark count with the document unit, restricted to the QA items' entity pairs → a small
model trained on the corpus → the QA suite (freqgap/suites/qa.py: predictions, Δ with its
interval, accuracy by log-binned relevant-document count and its figure). Settings:
conf/demo_entities.yaml (corpus and training) and conf/suites.yaml `qa` (shots, bins).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

FIGURE = Path("docs/img/demo_entities.png")


@dataclass
class EntitiesDemoOptions:
    """Where the demo writes; the defaults are `make demo-entities`'s."""

    profile: str = "demo"                   # profile of conf/demo_entities.yaml
    work: Path = Path("out/demo-entities")  # corpus/, qa.jsonl, count-inputs/, counts/, model/, qa/
    figure: Path | None = FIGURE            # where the figure is copied (None: not copied)
    threads: int | None = None              # torch threads (conf: training.threads)
    boot_reps: int | None = None            # bootstrap resamples of Δ (conf/gaps.yaml)
    device: str | None = None
    verbose: bool = False


def run_entities_demo(opts: EntitiesDemoOptions, spark=None,
                      log: Callable[[str], None] = print) -> dict[str, Any]:
    """Every stage in turn; returns the QA result (freqgap.suites.qa.run_qa), its printed
    summary under `summary` and the seconds per stage under `times`."""
    from freqgap.analysis.qa import bins_table, delta_lines
    from freqgap.counting.job import run_count, summary_text as count_summary
    from freqgap.counting.pair_list import read_pairs
    from freqgap.counting.rules import TermRules
    from freqgap.counting.term_list import read_terms
    from freqgap.corpus.facts import (CORPUS_DIR, QA_FILE, demo_settings, facts_profile,
                                      write_facts_corpus)
    from freqgap.suites.qa import run_qa, write_count_inputs
    from freqgap.training.settings import load_settings
    from freqgap.training.train import train_model

    times: dict[str, float] = {}
    work = Path(opts.work)
    conf = demo_settings(opts.profile)

    t = time.monotonic()
    profile = facts_profile(opts.profile)
    corpus = write_facts_corpus(profile, work)
    tot = corpus["totals"]
    log(f"[entities] wrote {work / CORPUS_DIR}: {tot['documents']:,} documents, {tot['facts']} "
        f"facts planted {tot['plantings']:,} times ({tot['facts_without_documents']} in no "
        f"document), {work / QA_FILE}")
    times["corpus_s"] = time.monotonic() - t

    t = time.monotonic()
    inputs = write_count_inputs(work / QA_FILE, work / "count-inputs")
    counts = work / "counts"
    if counts.exists():
        shutil.rmtree(counts)           # counts of an earlier corpus would be refused
    log("[entities] counting relevant documents (Spark, --unit document)")
    # freqgap count --unit document --number-rule strip-punct --terms … --pairs … (the
    # entity terms are the QA suite's, docs/suites.md)
    rules = read_terms(inputs["entities"], TermRules.from_conf(
        {"unit": "document", "number_rule": "strip-punct"}))
    rules = dataclasses.replace(rules, pairs=read_pairs(inputs["pairs"], rules))
    log(count_summary(run_count([str(work / CORPUS_DIR)], str(counts), rules=rules,
                                spark=spark)))
    times["count_s"] = time.monotonic() - t

    t = time.monotonic()
    overrides = dict(conf.get("training") or {})
    if opts.threads:
        overrides["threads"] = opts.threads
    settings = load_settings(conf["train_profile"], overrides)
    log(f"[entities] training {settings.steps} steps of {settings.batch_size} x "
        f"{settings.seq_len} tokens ({settings.threads} threads)")
    model_dir = work / "model"
    trained = train_model(settings, [str(work / CORPUS_DIR)], model_dir, progress=True)
    log(f"[entities] trained {model_dir}: {trained['totals']['parameters']:,} parameters, "
        f"{trained['totals']['epochs']} epochs, final loss {trained['totals']['final_loss_ema']}")
    times["train_s"] = time.monotonic() - t

    t = time.monotonic()
    result = run_qa(work / QA_FILE, counts, [str(model_dir)], work / "qa", device=opts.device,
                    force=True, boot_reps=opts.boot_reps, verbose=opts.verbose)
    times["qa_s"] = time.monotonic() - t
    summary = "\n".join([delta_lines(result["gaps"]), bins_table(result["bins"]),
                         f"figure: {result['figure']}"])
    if opts.figure is not None:
        Path(opts.figure).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result["figure"], opts.figure)
        summary += f" (copied to {opts.figure})"
    log(summary)
    log("[entities] seconds: " + ", ".join(f"{k[:-2]} {v:.0f}" for k, v in times.items()))
    return {**result, "summary": summary, "times": times}
