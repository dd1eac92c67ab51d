"""The launcher JVM's class archive: made once from the real launcher, then only mapped; a
set-up that can't dump is not tried again; off with FREQGAP_JVM_CDS=0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from freqgap.runtime import launcher_cds
from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FREQGAP_JVM_CDS", raising=False)
    monkeypatch.setenv(launcher_cds.ENV, "-Dmine=1")
    return tmp_path / "cache" / "jvm-cds-launcher"


def _no_java_runs(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"ran {args[0]}")
    monkeypatch.setattr(subprocess, "run", refuse)


def test_made_once_then_mapped(cache, monkeypatch):
    from tests.counting.cluster import SPARK_HOME

    first = launcher_cds.launcher_opts(str(SPARK_HOME))
    archives = list(cache.glob("*.jsa"))
    assert len(archives) == 1 and archives[0].name.endswith(f".{archives[0].stat().st_size}.jsa")
    assert first == f"-Dmine=1 -XX:SharedArchiveFile={archives[0]} -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
    assert not list(cache.glob("*.tmp-*"))
    _no_java_runs(monkeypatch)
    assert launcher_cds.launcher_opts(str(SPARK_HOME)) == first


def test_a_launcher_that_cannot_dump_is_not_tried_again(cache, tmp_path, monkeypatch):
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)            # no launcher class: the dump run fails
    assert launcher_cds.launcher_opts(str(home)) == "-Dmine=1"
    assert not list(cache.glob("*.jsa")) and not list(cache.glob("*.tmp-*"))
    assert len(list(cache.glob("*.failed"))) == 1
    _no_java_runs(monkeypatch)
    assert launcher_cds.launcher_opts(str(home)) == "-Dmine=1"


def test_off_switch_and_the_environment_is_restored(cache, monkeypatch):
    from tests.counting.cluster import SPARK_HOME

    monkeypatch.setenv("FREQGAP_JVM_CDS", "0")
    _no_java_runs(monkeypatch)
    assert launcher_cds.launcher_opts(str(SPARK_HOME)) == "-Dmine=1"
    with launcher_cds.options_in_environment(str(SPARK_HOME)):
        assert os.environ[launcher_cds.ENV] == "-Dmine=1"
    monkeypatch.delenv(launcher_cds.ENV)
    with launcher_cds.options_in_environment(str(SPARK_HOME)):
        assert launcher_cds.ENV not in os.environ


def test_spark_env_gives_a_plain_spark_submit_the_launcher_archive(tmp_path):
    """Sourced before spark-class runs the launcher: SPARK_LAUNCHER_OPTS maps the archive."""
    from tests.counting.cluster import SPARK_HOME

    script = 'set -a; . "$FREQGAP_SPARK_ENV"; set +a; printf "%s\\n" "${SPARK_LAUNCHER_OPTS:-}"'
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SPARK_HOME": str(SPARK_HOME),
           "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable,
           "FREQGAP_CACHE_DIR": str(tmp_path / "cache"),
           "FREQGAP_SPARK_ENV": str(REPO / "conf" / "spark" / "spark-env.sh")}
    proc = subprocess.run(["bash", "-c", script, "spark-class", "org.apache.spark.deploy.SparkSubmit",
                           "--master", "local[1]", "job.py"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    archive = next((tmp_path / "cache" / "jvm-cds-launcher").glob("*.jsa"))
    assert proc.stdout.strip() == f"-XX:SharedArchiveFile={archive} -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
