"""One real run of every producer on tiny inputs, shared by the contract tests.

generate_corpus → count_terms (Spark) → instances → predictions (FakeLM) → gaps, plus a
second corpus counted with the same settings (for the counts-mismatch tests), an
lm-evaluation-harness import and the quantifier suite with a tiny transformers model.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from freqgap.manifest import read_manifest

TASKS = ["mult", "min_sec"]


@dataclasses.dataclass
class Chain:
    root: Path
    corpus: Path
    counts: Path
    other_counts: Path            # another corpus, same settings
    instances: Path
    predictions: Path             # parent of the model directories
    results: Path

    def gaps_options(self, **overrides):
        from freqgap.gaps.options import options_from_conf

        settings = {"counts": str(self.counts), "instances": str(self.instances),
                    "predictions": str(self.predictions) + "/*/",
                    "results": str(self.root / "results"), "make_plots": False,
                    "boot_reps": 20, "min_seen_keys": 2, **overrides}
        return options_from_conf(**settings)


def build_chain(root: Path, spark) -> Chain:
    from freqgap.config import load_conf
    from freqgap.corpus import generate_corpus, load_profile
    from freqgap.counting.job import run_count
    from freqgap.gaps.run import run_gaps
    from freqgap.inference.fake import FakeLM
    from freqgap.inference.predict import predict
    from freqgap.instances import build_instances_dir, resolve_grid

    generate_corpus(load_profile("tiny"), root / "corpus", progress=False)
    generate_corpus(load_profile("tiny", {"seed": 7}), root / "corpus_b", progress=False)
    run_count([str(root / "corpus")], str(root / "counts"), spark=spark, progress_interval=60)
    run_count([str(root / "corpus_b")], str(root / "counts_b"), spark=spark,
              progress_interval=60)
    conf = load_conf("tasks")
    grid = resolve_grid(conf, "paper", tasks=TASKS, ks=[0, 2], seeds=[0], max_test_items=30)
    build_instances_dir(root / "counts", root / "instances", grid, conf, progress_interval=60)
    predict(root / "instances", root / "predictions" / "fake", FakeLM("fake"),
            progress_interval=60)
    chain = Chain(root=root, corpus=root / "corpus", counts=root / "counts",
                  other_counts=root / "counts_b", instances=root / "instances",
                  predictions=root / "predictions", results=root / "results")
    run_gaps(chain.gaps_options())
    return chain


def write_lm_eval_samples(chain: Chain, out: Path) -> Path:
    """A `--log_samples` file of lm-evaluation-harness (>= 0.4 layout) answering the first
    mult instances zero-shot, with its results file (same time stamp)."""
    import pyarrow.parquet as pq

    rows = [r for r in pq.read_table(chain.instances / "instances.parquet").to_pylist()
            if r["task"] == "mult"][:6]
    out.mkdir(parents=True, exist_ok=True)
    stamp = "2024-05-01T10-00-00.123456"
    path = out / f"samples_mult_{stamp}.jsonl"
    lines = [{"doc_id": i, "doc": {"question": r["question"], "answer": r["answer"]},
              "target": r["answer"],
              "arguments": {"gen_args_0": {"arg_0": f"Q: {r['question']}\nA:",
                                           "arg_1": {"until": ["\n"], "max_gen_toks": 5}}},
              "resps": [[f" {r['answer']}\n"]], "filtered_resps": [r["answer"]],
              "filter": "none", "metrics": ["exact_match"], "exact_match": 1.0}
             for i, r in enumerate(rows)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (out / f"results_{stamp}.json").write_text(json.dumps(
        {"results": {"mult": {"exact_match,none": 1.0}}, "n-shot": {"mult": 0}}),
        encoding="utf-8")
    return path


def manifest(directory: Path, stage) -> dict:
    return read_manifest(directory, stage=stage)
