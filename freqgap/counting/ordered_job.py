"""The counting job over a training order: the same plan, resumable groups, exact merge,
atomic commit and manifest as the ordinary job, with output tables that carry `step_bucket`.
Two inputs: an indexed dataset of token ids (OrderedCountJob; splits are ranges of training
sequences, counting/order_source.py), or a JSON Lines corpus with an order file mapping
document pieces to steps (OrderFileCountJob; counting/order_file.py).

The `.bin` is splittable, so one 300-billion-token file spreads over every core of a
cluster: each Spark task reads its range of entries from the memmap (on a cluster the file
must be at the same path on every worker, e.g. a shared file system).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace as dataclass_replace
from typing import Any

from freqgap.counting.hits import HitMerge
from freqgap.counting.indexed import IndexedDataset, prefix_of
from freqgap.counting.job import CountJob, CountOptions
from freqgap.counting.order_source import (OrderInputError, check_edges, count_splits,
                                           eod_id_of, load_tokenizer, plan_splits)
from freqgap.counting.inputs import InputFile, list_inputs
from freqgap.counting.rules import SEQUENCE_UNIT

SPLIT_BYTES = 32 << 20


@dataclass
class OrderOptions:
    """How entries map to steps and buckets, and how tokens become text."""

    tokenizer: str
    edges: list[int]
    seqs_per_step: int = 1024
    eod_token: str = "<|endoftext|>"
    split_bytes: int = SPLIT_BYTES
    extra: dict[str, Any] = field(default_factory=dict)    # recorded in the config, e.g. the trainer's order.json


class OrderedCountJob(CountJob):
    """Count an indexed dataset (one PREFIX) by step bucket."""

    bucketed = True

    def __init__(self, spark, options: CountOptions, order: OrderOptions) -> None:
        super().__init__(spark, options)
        if len(options.inputs) != 1:
            raise OrderInputError(f"--order: give exactly one indexed dataset (PREFIX of "
                                  f"PREFIX.idx/.bin), got {len(options.inputs)} inputs")
        if order.seqs_per_step < 1:
            raise OrderInputError(f"--seqs-per-step {order.seqs_per_step}: must be >= 1")
        self.order = order
        self.order.edges = check_edges(order.edges, "bucket edges")
        self.prefix = prefix_of(options.inputs[0])
        self.data = IndexedDataset(self.prefix)
        needed = self.order.edges[-1] * order.seqs_per_step
        if len(self.data) < needed:
            covered = len(self.data) // order.seqs_per_step
            raise OrderInputError(
                f"{self.data.idx_path}: {len(self.data)} sequences cover steps 0..{covered - 1} "
                f"only, but the last bucket edge {self.order.edges[-1]} needs {needed} "
                f"({order.seqs_per_step} per step); give bucket edges up to {covered} or the "
                "complete file (a partial download would give counts that look complete)")
        tokenizer, self.tokenizer_file = load_tokenizer(order.tokenizer)
        self.eod = eod_id_of(tokenizer, order.eod_token)
        self.left_out = 0

    def config(self) -> dict[str, Any]:
        o = self.order
        return {**super().config(), "input_kind": "training_order", "bucket_edges": o.edges,
                "seqs_per_step": o.seqs_per_step, "eod_token": o.eod_token, "eod_id": self.eod,
                "tokenizer": os.path.abspath(self.tokenizer_file), **o.extra}

    def plan(self):
        files = []
        for i, path in enumerate((self.data.bin_path, self.data.idx_path, self.tokenizer_file)):
            st = os.stat(path)
            files.append(InputFile(i, os.path.abspath(path), st.st_size, int(st.st_mtime)))
        splits, self.left_out = plan_splits(0, self.prefix, len(self.data), self.order.seqs_per_step,
                                            self.order.edges, self.order.split_bytes)
        parallel = max(1, self.spark.sparkContext.defaultParallelism)
        per_job = self.opts.files_per_job or 16 * parallel
        groups = [splits[i:i + per_job] for i in range(0, len(splits), per_job)]
        return files, groups

    def _spread_for(self, group) -> int:
        return 0                 # splits are ranges of sequences: already as many as wanted

    def _task_counter(self, paths: dict[int, str]):
        rules, tok, eod, hits = self.rules, self.tokenizer_file, self.eod, self.opts.hits
        per_step, edges = self.order.seqs_per_step, list(self.order.edges)
        return lambda splits: count_splits(splits, rules, tok, eod, per_step, edges, hits)

    def _hit_merge(self) -> HitMerge:
        """Hit lists name training sequences: by entry index, with their steps."""
        return HitMerge(self.opts.hits, seqs_per_step=self.order.seqs_per_step)

    def _write_hits(self, merged: HitMerge | None, paths: dict[int, str]) -> dict[str, Any]:
        """Every hit is in the one dataset: `file` is its PREFIX."""
        return super()._write_hits(merged, {0: os.path.abspath(self.prefix)})

    def manifest_extra(self) -> dict[str, Any]:
        return {"order": {"sequences": len(self.data), "sequences_after_last_edge": self.left_out,
                          "last_edge": self.order.edges[-1]}}


class OrderFileCountJob(CountJob):
    """Count a JSON Lines corpus by step bucket from an order file (counting/order_file.py)."""

    bucketed = True
    lists_hits = False       # its tasks (order_file.count_file_splits) find no hits

    def __init__(self, spark, options: CountOptions, order_file: str, edges: list[int]) -> None:
        from freqgap.counting.order_file import read_order_file

        super().__init__(spark, options)
        if options.rules.unit == SEQUENCE_UNIT:
            raise OrderInputError(f"--order-file {order_file}: its rows are document pieces with "
                                  "steps, not training sequences; --unit sequence needs an "
                                  "indexed dataset (--order-of DIR or --training-order)")
        self.order_file = os.path.abspath(order_file)
        self.edges = check_edges(edges, "bucket edges")
        self.table = read_order_file(self.order_file)
        self.left_out = 0

    def config(self) -> dict[str, Any]:
        return {**super().config(), "input_kind": "training_order_file",
                "bucket_edges": self.edges, "order_file": self.order_file}

    def plan(self):
        from freqgap.counting.order_file import plan_file_splits

        splits, corpus, self.left_out = plan_file_splits(self.order_file, self.table, self.edges, 1)
        files = [InputFile(0, self.order_file, os.path.getsize(self.order_file),
                           int(os.stat(self.order_file).st_mtime))]
        files += [InputFile(i + 1, f.path, f.size, f.mtime)
                  for i, f in enumerate(list_inputs(corpus))]
        by_path = {f.path: f.index for f in files}
        splits = [dataclass_replace(s, index=by_path.get(s.path, s.index)) for s in splits]
        parallel = max(1, self.spark.sparkContext.defaultParallelism)
        per_job = self.opts.files_per_job or 16 * parallel
        return files, [splits[i:i + per_job] for i in range(0, len(splits), per_job)]

    def _spread_for(self, group) -> int:
        return 0                 # splits are pieces of the order: already as many as wanted

    def _task_counter(self, paths: dict[int, str]):
        from freqgap.counting.order_file import count_file_splits

        rules, edges = self.rules, list(self.edges)
        return lambda splits: count_file_splits(splits, rules, edges)

    def manifest_extra(self) -> dict[str, Any]:
        return {"order": {"rows": len(self.table), "rows_after_last_edge": self.left_out,
                          "last_edge": self.edges[-1]}}
