"""Shared fixtures: one local Spark session for the whole test session (it costs ~10 s)."""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark context (a SparkRuntime) shared by every test that needs Spark."""
    from freqgap.spark_session import get_spark

    session = get_spark(master="local[2]", app_name="freqgap-tests",
                        conf={"spark.driver.memory": "2g"})
    yield session
    session.stop()
