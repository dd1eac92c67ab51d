"""One way to get a Spark session, locally or on a cluster, with the package shipped.

`spark-submit --master spark://…` (or YARN, Kubernetes) decides the master; run as a plain
script, the job uses local mode on all cores. Either way the `freqgap` package is zipped
and added with `addPyFile`, so executors import the same code without a manual step
(their Python still needs numpy, pyarrow and zstandard: the same venv, or `--archives`).
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from pathlib import Path

_SHIPPED_ATTR = "_freqgap_package_shipped"


def default_spark_conf() -> dict[str, str]:
    """Settings the counting job relies on: small Arrow batches, modest shuffle width."""
    parallel = os.cpu_count() or 2
    return {
        "spark.sql.execution.arrow.maxRecordsPerBatch": "1024",
        "spark.sql.shuffle.partitions": str(max(4, 2 * parallel)),
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.sources.partitionOverwriteMode": "static",
    }


def get_spark(master: str | None = None, app_name: str = "freqgap", conf: dict[str, str] | None = None):
    """The active session, or a new one (local[*] unless a master is given or submitted)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        ship_package(active)
        return active
    builder = SparkSession.builder.appName(app_name)
    submitted_master = os.environ.get("MASTER") or _submitted_master()
    if master:
        builder = builder.master(master)
    elif not submitted_master:
        builder = builder.master("local[*]")
    for key, value in {**default_spark_conf(), **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    ship_package(spark)
    return spark


def _submitted_master() -> bool:
    """True when spark-submit started this process (it then owns the master setting)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ or "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")


def ship_package(spark) -> None:
    """Zip the freqgap package and add it to the executors' Python path (once per context)."""
    sc = spark.sparkContext
    if getattr(sc, _SHIPPED_ATTR, False):
        return
    package_dir = Path(__file__).resolve().parent
    target = Path(tempfile.mkdtemp(prefix="freqgap-pkg-")) / "freqgap.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(package_dir.rglob("*.py")):
            zf.write(path, path.relative_to(package_dir.parent).as_posix())
    sc.addPyFile(str(target))
    setattr(sc, _SHIPPED_ATTR, True)
