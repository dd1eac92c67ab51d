"""The exchange: how a count's partial sums travel from the count tasks to the reducers,
through run files instead of Spark's shuffle.

Contract:
  * Count tasks write their partial sums as *run files* (one per kind, keys strictly
    increasing, an index every INDEX_STEP keys) under the job's work directory, which must
    be storage every executor can reach (a shared file system or an object store; a local
    disk only in local mode). `runs` writes and reads them, `runcodec` is their row layout.
  * The driver carries only each task's small `task_results.TaskResult` (run file names,
    rows, index keys) and cuts the key space into one range per reducer from those index
    keys (`task_results.key_ranges`); it never touches a per-key row.
  * A reduce task reads its key range from every run file and sums them exactly
    (`final_tables`), then writes its part of the Parquet tables.
  * Spark schedules and retries the tasks; the exchange sums. A retried task writes its run
    files under fresh names, and only the results of the attempt Spark kept are read.

This package imports nothing itself: the driver imports `task_results` alone (no numpy or
pyarrow), the tasks the rest. Compiled parts (run encoding and merging) sit behind the
engine seam (freqgap.counting.engines).
"""
