"""PySpark's worker daemon, with the counting code loaded once before it forks the workers.

Why: every Python worker otherwise imports numpy, pyarrow, zstandard and freqgap.counting
and loads numba's cached machine code itself; forked from a daemon that did
it once, each worker starts with all of it in place (copy-on-write). Spark runs it as
`python -m freqgap.runtime.worker_daemon` (`spark.python.daemon.module`): get_spark() sets
that in local mode only, where this package is on the workers' path before any task runs
(a cluster's executors see the shipped zip only once a task starts). It also imports
PySpark's worker module and keeps zip archives' directories across importlib's cache
invalidation (`keep_zip_directories`): with both, a fresh worker's first task costs little
beyond its work. And it imports PySpark from the installed package rather than Spark's zip
of it where the two are the same (`prefer_installed_packages`). What each saves:
docs/performance.md.
"""

from __future__ import annotations

import gc
import os
import sys

from freqgap.runtime.pyspark_path import prefer_installed_packages


def preload() -> None:
    """Import the task code and run it once on one record (numba loads its cached code).

    The cyclic garbage collector is off meanwhile and runs no collection after it: the
    imports make objects that all live on, so its passes over them found nothing to free,
    and a last full collection before the freeze would only free a few cycles of the
    warm-up's (Python's documented pre-fork
    idiom: gc.disable() early, gc.freeze() before the fork, no collection between)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        _load_task_code()
    finally:
        # The workers' gc.collect() after each task would otherwise walk, and so copy, every
        # object inherited here: frozen objects are never collected.
        gc.freeze()
        if enabled:
            gc.enable()


def _load_task_code() -> None:
    import importlib

    # PySpark's daemon imports its worker module after each fork, lest an import start a
    # thread before the fork; this one starts none (paid once here, not in every worker).
    importlib.import_module("pyspark.worker")
    # The modules of every task kind (count, spill, split, reduce), imported once here
    # rather than in each worker (the reduce's Parquet writer included).
    for name in ("exchange.runs", "exchange.final_tables", "spread"):
        importlib.import_module(f"freqgap.counting.{name}")
    from freqgap.counting.partials import count_lines
    from freqgap.counting.rules import TermRules

    record = b'{"text": "5 hours 10 days 5 7", "meta": {"pile_set_name": "warm-up"}}'
    for _ in count_lines([(0, 1, record, False, None)], TermRules(), "fail", {0: "warm-up"}):
        pass
    import numpy as np
    from freqgap.counting.engines import get_engine

    engine = get_engine()
    keys = np.arange(1, 3, dtype=np.int64)
    engine.decode_run(*engine.encode_run(keys, keys, 2), keys[:1], 2, 2)   # the run files
    engine.term_indices(keys, 3)                 # the reduce's dictionary columns


def keep_zip_directories():
    """Make `zipimporter.invalidate_caches()` re-read an archive only if its file changed.

    Why: a worker's first task calls importlib.invalidate_caches() (PySpark's
    setup_spark_files), and since Python 3.10 every zipimporter then re-reads its whole
    archive's directory: in local mode pyspark.zip 14 times (one importer per package) and
    spark-core's jar twice, tens of thousands of entries parsed in Python per fresh worker,
    more than the rest of its start. Each importer this daemon holds is stamped with
    its archive's (mtime, size) before it forks; an importer whose archive is unchanged since
    its stamp keeps its directory, any other re-reads it as before and is stamped anew. The
    stamp is the importer's own (an archive has one importer per package in it: each must
    see a change). Returns a function that undoes it."""
    import zipimport

    original = zipimport.zipimporter.invalidate_caches

    def stamp(archive: str) -> tuple[int, int] | None:
        try:
            st = os.stat(archive)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def invalidate_caches(self) -> None:
        now = stamp(self.archive)
        if now is not None and getattr(self, "_freqgap_stamp", None) == now:
            return
        original(self)
        self._freqgap_stamp = now

    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, zipimport.zipimporter):
            finder._freqgap_stamp = stamp(finder.archive)
    zipimport.zipimporter.invalidate_caches = invalidate_caches

    def undo() -> None:
        zipimport.zipimporter.invalidate_caches = original
    return undo


def main() -> None:
    prefer_installed_packages()
    try:
        preload()
    except Exception:      # noqa: BLE001 - only a head start: each worker imports what it needs
        pass
    keep_zip_directories()
    from pyspark import daemon

    try:
        daemon.manager()
    except SystemExit as stop:       # its shutdown: skip tearing down the preloaded heap
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(stop.code if isinstance(stop.code, int) else 1)


if __name__ == "__main__":
    main()
