"""The driver JVM's class-data-sharing archive: keyed, published atomically, never harmful."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from freqgap.runtime import jvm_cds
from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def spark_home(tmp_path):
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "a.jar").write_bytes(b"a")
    return home


@pytest.fixture
def java(tmp_path):
    path = tmp_path / "jdk" / "bin" / "java"
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n")
    (tmp_path / "jdk" / "release").write_text('JAVA_VERSION="17.0.15"\n')
    return path


def test_key_follows_everything_the_jdk_checks(spark_home, java, tmp_path, monkeypatch):
    settings = {"spark.driver.extraJavaOptions": "-XX:+UseSerialGC", "spark.ui.enabled": "false"}
    key = jvm_cds.archive_key(str(spark_home), settings, java)
    assert key == jvm_cds.archive_key(str(spark_home), dict(settings), java)
    assert key == jvm_cds.archive_key(str(spark_home), {**settings, "spark.ui.enabled": "true"}, java)
    changed = [
        jvm_cds.archive_key(str(spark_home), {**settings, "spark.driver.extraJavaOptions": ""}, java),
        jvm_cds.archive_key(str(spark_home), {**settings, "spark.driver.memory": "4g"}, java),
        jvm_cds.archive_key(str(spark_home), {**settings, "spark.driver.extraClassPath": "/x/*"}, java),
    ]
    (tmp_path / "jdk" / "release").write_text('JAVA_VERSION="17.0.16"\n')
    changed.append(jvm_cds.archive_key(str(spark_home), settings, java))
    (spark_home / "jars" / "b.jar").write_bytes(b"b")
    changed.append(jvm_cds.archive_key(str(spark_home), settings, java))
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))          # goes on the class path
    changed.append(jvm_cds.archive_key(str(spark_home), settings, java))
    assert len({key, *changed}) == len(changed) + 1


def test_dump_first_then_map_only_a_complete_archive(tmp_path, monkeypatch):
    monkeypatch.delenv(jvm_cds.ENV_SWITCH, raising=False)
    options, pending = jvm_cds.driver_options("k" * 32, tmp_path)
    assert options.startswith(f"-XX:ArchiveClassesAtExit={pending} ") and "-Xlog:cds=off" in options
    assert pending.parent == tmp_path and pending.name.startswith("k" * 32 + ".tmp-")
    (tmp_path / f"{'k' * 32}.100.jsa").write_bytes(b"x" * 99)    # truncated: would crash the JVM
    assert jvm_cds.find_archive("k" * 32, tmp_path) is None
    assert jvm_cds.driver_options("k" * 32, tmp_path)[1] is not None
    good = tmp_path / f"{'k' * 32}.5.jsa"
    good.write_bytes(b"12345")
    assert jvm_cds.driver_options("k" * 32, tmp_path) == (
        f"-XX:SharedArchiveFile={good} -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off", None)
    monkeypatch.setenv(jvm_cds.ENV_SWITCH, "0")
    assert jvm_cds.driver_options("k" * 32, tmp_path) == ("", None)
    assert jvm_cds.driver_options(None, tmp_path) == ("", None)


def test_a_stale_temporary_dump_is_removed(tmp_path):
    old, fresh = tmp_path / "k.tmp-1-aa", tmp_path / "k.tmp-2-bb"
    old.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(old, (1, 1))
    jvm_cds.driver_options("k", tmp_path)
    assert not old.exists() and fresh.exists()


def test_check_command_keeps_the_jvm_options_and_drops_the_dump():
    command = ["/j/bin/java", "-cp", "/s/jars/*", "-Xmx1g", "-XX:ArchiveClassesAtExit=/c/t",
               "-Xlog:cds=off", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
               "org.apache.spark.deploy.SparkSubmit", "--master", "local[2]", "pyspark-shell"]
    assert jvm_cds.check_command(command, Path("/c/t")) == [
        "/j/bin/java", "-cp", "/s/jars/*", "-Xmx1g", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
        "-XX:SharedArchiveFile=/c/t", "-Xshare:on", "-Xlog:disable", "-version"]
    assert jvm_cds.check_command(["/j/bin/java", "-Xmx1g", "Main"], Path("/c/t")) is None


def test_finish_publishes_only_a_checked_dump(tmp_path, monkeypatch):
    command = ["java", "-cp", "x", "Main"]
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0 if b"good" in Path(cmd[-4].split("=", 1)[1]).read_bytes() else 1)

    monkeypatch.setattr(jvm_cds.subprocess, "run", fake_run)
    first, second = tmp_path / "key.tmp-1-aa", tmp_path / "key.tmp-2-bb"
    first.write_bytes(b"good one")
    second.write_bytes(b"good two")
    # Two concurrent first runs: each publishes its own complete file under the final name,
    # the last one replacing the other (also when their sizes differ).
    assert jvm_cds.finish(first, command, 0) == tmp_path / "key.8.jsa"
    assert jvm_cds.finish(second, command, 0) == tmp_path / "key.8.jsa"
    assert jvm_cds.find_archive("key", tmp_path).read_bytes() == b"good two"
    third = tmp_path / "key.tmp-4-dd"
    third.write_bytes(b"good three")
    assert jvm_cds.finish(third, command, 0) == tmp_path / "key.10.jsa"
    assert not (tmp_path / "key.8.jsa").exists()
    for returncode, content in ((1, b"good"), (None, b"good"), (0, b"bad")):
        pending = tmp_path / "other.tmp-3-cc"
        pending.write_bytes(content)
        assert jvm_cds.finish(pending, command, returncode) is None and not pending.exists()
    assert jvm_cds.find_archive("other", tmp_path) is None
    assert len(calls) == 4                                     # no check when the JVM failed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.10.jsa"]


_SESSION = """
import sys
import time
from pathlib import Path
from freqgap.spark_session import get_spark
spark = get_spark(master="local[1]")
assert spark.sparkContext.parallelize(range(10), 2).map(lambda x: x * x).sum() == 285
cmd = Path(f"/proc/{spark.sparkContext._gateway.proc.pid}/cmdline").read_bytes().split(b"\\0")
print("uses" if any(a.startswith(b"-XX:SharedArchiveFile=") for a in cmd) else "dumps"
      if any(a.startswith(b"-XX:ArchiveClassesAtExit=") for a in cmd) else "none")
spark.stop()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_first_run_builds_it_later_runs_use_it_a_damaged_one_is_ignored_quietly(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "HOME": str(tmp_path),
           "FREQGAP_CACHE_DIR": str(tmp_path / "cache")}

    def session() -> tuple[str, str]:
        proc = subprocess.run([sys.executable, "-c", _SESSION], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=400)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout, proc.stderr

    assert session() == ("dumps\n", "")
    [archive] = (tmp_path / "cache" / "jvm-cds").iterdir()
    assert archive.name.endswith(f".{archive.stat().st_size}.jsa")
    assert session() == ("uses\n", "")
    archive.chmod(0o644)
    archive.write_bytes(os.urandom(archive.stat().st_size))   # damaged in place, same size
    assert session() == ("uses\n", "")                         # the JVM rejects it, silently


def test_only_the_newest_archives_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(jvm_cds.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0))
    for i in range(6):
        pending = tmp_path / f"key{i}.tmp-1-aa"
        pending.write_bytes(b"x" * (i + 1))
        os.utime(pending, (1000 + i, 1000 + i))
        jvm_cds.finish(pending, ["java", "-cp", "x", "Main"], 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"key{i}.{i + 1}.jsa" for i in range(2, 6)]


def test_the_archives_used_last_are_kept_not_the_newest(tmp_path, monkeypatch):
    """A set-up in daily use keeps its archive when others are dumped after it."""
    monkeypatch.setattr(jvm_cds.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0))

    def dump(i: int) -> None:
        pending = tmp_path / f"key{i}.tmp-1-aa"
        pending.write_bytes(b"x" * (i + 1))
        jvm_cds.finish(pending, ["java", "-cp", "x", "Main"], 0)
        os.utime(tmp_path / f"key{i}.{i + 1}.jsa", (1000 + i, 1000 + i))

    for i in range(4):
        dump(i)
    options, pending = jvm_cds.driver_options("key0", tmp_path)     # key0, the oldest, is used
    assert pending is None and "key0.1.jsa" in options
    dump(4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key0.1.jsa", "key2.3.jsa", "key3.4.jsa",
                                                          "key4.5.jsa"]


def test_a_submit_key_covers_spark_submits_options_and_conf_file_not_the_apps_arguments(
        tmp_path, monkeypatch):
    (tmp_path / "spark-defaults.conf").write_text("spark.ui.enabled false\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    base = jvm_cds._submit_identity("/s", ["--master", "local[2]", "jobs/a.py", "--input", "x"])
    assert base == jvm_cds._submit_identity("/s", ["--master", "local[2]", "jobs/b.py", "--out", "y"])
    assert base != jvm_cds._submit_identity("/s", ["--master", "local[2]", "--driver-memory", "4g", "a.py"])
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions -Xss1m\n")
    assert base != jvm_cds._submit_identity("/s", ["--master", "local[2]", "jobs/a.py"])


def test_submit_leaves_a_users_class_path_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(jvm_cds.subprocess, "call", lambda cmd: calls.append(cmd) or 0)
    assert jvm_cds.submit(["--driver-class-path", "/x.jar", "a.py"]) == 0
    assert calls[0][1:] == ["--driver-class-path", "/x.jar", "a.py"]


_SUBMITTED = """
import os
from pathlib import Path
from pyspark import SparkContext
sc = SparkContext()
total = sc.parallelize(range(10), 2).map(lambda x: x * x).sum()
jvm = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\\0")
print(total, "uses" if any(a.startswith(b"-XX:SharedArchiveFile=") for a in jvm) else "dumps"
      if any(a.startswith(b"-XX:ArchiveClassesAtExit=") for a in jvm) else "none")
sc.stop()
"""


def test_jars_go_ahead_of_a_non_empty_spark_conf_dir(tmp_path, monkeypatch):
    """SPARK_CONF_DIR first on the class path makes the JDK refuse the archive: every run
    would dump one and throw it away."""
    from freqgap.runtime.jvm_cds import with_jars_first

    conf = tmp_path / "conf"
    conf.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    assert with_jars_first("/spark", {"a": "1"}) == {"a": "1"}           # empty: harmless
    (conf / "spark-defaults.conf").write_text("x 1\n")
    assert with_jars_first("/spark", {"a": "1"}) == {"a": "1", "spark.driver.extraClassPath": "/spark/jars/*"}
    mine = {"spark.driver.extraClassPath": "/my.jar"}
    assert with_jars_first("/spark", mine) == mine                        # the user's own: kept
    monkeypatch.delenv("SPARK_CONF_DIR")
    assert with_jars_first("/spark", {"a": "1"}) == {"a": "1"}


def _spark_env_args(args: list[str], env: dict[str, str]) -> list[str]:
    """What spark-class's "$@" becomes after conf/spark/spark-env.sh is sourced with `args`."""
    script = ('set -a; set -- "$@"; . "$FREQGAP_SPARK_ENV"; set +a; '
              'printf "%s\\n" "$@"; printf "OPTS=%s\\n" "$SPARK_SUBMIT_OPTS"')
    proc = subprocess.run(["bash", "-c", script, "spark-class", *args], capture_output=True, text=True,
                          env={**env, "FREQGAP_SPARK_ENV": str(REPO / "conf" / "spark" / "spark-env.sh")},
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_spark_env_puts_the_jars_first_and_maps_the_archive_only_for_a_driver_here(tmp_path, spark_home):
    cache = tmp_path / "cache"
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.ui.enabled false\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO),
           "PYSPARK_PYTHON": sys.executable, "SPARK_HOME": str(spark_home),
           "SPARK_CONF_DIR": str(conf), "FREQGAP_CACHE_DIR": str(cache), "SPARK_SUBMIT_OPTS": "-Dmine=1"}
    submit = ["org.apache.spark.deploy.SparkSubmit", "--master", "local[1]", "job.py", "a b", "--x"]
    # An archive for this submit's key exists: its options, the jars first, arguments intact.
    key = _submit_key(env, spark_home, submit[1:])
    (cache / "jvm-cds").mkdir(parents=True)
    archive = cache / "jvm-cds" / f"{key}.3.jsa"
    archive.write_bytes(b"abc")
    lines = _spark_env_args(submit, env)
    assert lines[:-1] == [submit[0], "--driver-class-path", str(spark_home / "jars" / "*"), *submit[1:]]
    assert lines[-1] == f"OPTS=-Dmine=1 -XX:SharedArchiveFile={archive} -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
    unchanged = [submit, ["org.apache.spark.deploy.master.Master", "--port", "1"],
                 [submit[0], "--driver-class-path", "/my.jar", "job.py"],
                 [submit[0], "--conf", "spark.driver.extraClassPath=/my.jar", "job.py"],
                 [submit[0], "--deploy-mode", "cluster", "job.py"],
                 [submit[0], "--conf", "spark.submit.deployMode=cluster", "job.py"]]
    for i, args in enumerate(unchanged):
        run_env = {**env, "FREQGAP_JVM_CDS": "0"} if i == 0 else env
        assert _spark_env_args(args, run_env) == [*args, "OPTS=-Dmine=1"], args
    # A class path in the conf file spark-submit reads is the user's too.
    (conf / "spark-defaults.conf").write_text("spark.driver.extraClassPath /my.jar\n")
    assert _spark_env_args(submit, env) == [*submit, "OPTS=-Dmine=1"]
    # A Python that lacks freqgap (or fails) leaves spark-submit as it was.
    assert _spark_env_args(submit, {**env, "PYTHONPATH": "", "PYSPARK_PYTHON": "/bin/false"}) \
        == [*submit, "OPTS=-Dmine=1"]


def _submit_key(env: dict[str, str], spark_home, args: list[str]) -> str:
    """The archive key spark-env.sh's helper computes for `args` in `env`."""
    code = ("import sys; from freqgap.runtime import jvm_cds; print(jvm_cds.archive_key(sys.argv[1], {}, "
            "extra=jvm_cds._submit_identity(sys.argv[1], sys.argv[2:])))")
    return subprocess.run([sys.executable, "-c", code, str(spark_home), *args], env=env, check=True,
                          capture_output=True, text=True, timeout=60).stdout.strip()


def test_the_submit_key_ignores_the_master_and_the_name_not_driver_options(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    base = jvm_cds._submit_identity("/s", ["--master", "spark://127.0.0.1:4011", "--name", "a", "j.py"])
    assert base == jvm_cds._submit_identity("/s", ["--master", "local[2]", "j.py"])
    assert base != jvm_cds._submit_identity("/s", ["--driver-java-options", "-Xss1m", "j.py"])
    (tmp_path / "extra.conf").write_text("spark.driver.memory 2g\n")
    assert base != jvm_cds._submit_identity("/s", ["--properties-file", str(tmp_path / "extra.conf"), "j.py"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("launcher", ["wrapper", "plain spark-submit"])
def test_spark_submit_builds_then_uses_its_archive(tmp_path, launcher):
    """With SPARK_CONF_DIR=conf/spark, `python -m freqgap.runtime.jvm_cds ARGS` and a plain
    `spark-submit ARGS` (spark-env.sh; a watcher publishes the first run's dump after its JVM
    exits) both dump the archive once, then map it."""
    from tests.counting.cluster import SPARK_HOME

    script = tmp_path / "job.py"
    script.write_text(_SUBMITTED)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "HOME": str(tmp_path),
           "PYSPARK_DRIVER_PYTHON": sys.executable, "FREQGAP_CACHE_DIR": str(tmp_path / "cache"),
           "SPARK_CONF_DIR": str(REPO / "conf" / "spark")}
    archives = tmp_path / "cache" / "jvm-cds"
    command = ([sys.executable, "-m", "freqgap.runtime.jvm_cds"] if launcher == "wrapper"
               else [str(SPARK_HOME / "bin" / "spark-submit")])

    def run() -> str:
        proc = subprocess.run([*command, "--master", "local[1]", str(script)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    assert run() == "285 dumps\n"
    for _ in range(600):                       # a watcher checks the dump, then renames it
        if list(archives.glob("*.jsa")) and not list(archives.glob("*.tmp-*")):
            break
        time.sleep(0.1)
    assert [p.name.endswith(f".{p.stat().st_size}.jsa") for p in archives.iterdir()] == [True]
    assert run() == "285 uses\n"


def test_a_run_waits_for_a_dump_being_published_and_never_dumps_beside_it(tmp_path, monkeypatch):
    """The next run of a script starts while the last one's watcher checks its dump: it maps
    the archive once published, and never writes a second dump of the same key beside it."""
    import threading

    monkeypatch.delenv(jvm_cds.ENV_SWITCH, raising=False)
    pending = tmp_path / "k.tmp-1-aa"
    pending.write_bytes(b"abc")
    timer = threading.Timer(0.3, lambda: pending.rename(tmp_path / "k.3.jsa"))
    timer.start()
    try:
        assert jvm_cds.driver_options("k", tmp_path)[0].startswith(f"-XX:SharedArchiveFile={tmp_path / 'k.3.jsa'} ")
    finally:
        timer.cancel()
    (tmp_path / "k.3.jsa").unlink()
    pending.write_bytes(b"abc")                                  # a check that never ends
    assert jvm_cds.driver_options("k", tmp_path) == ("", None)
    os.utime(pending, (time.time() - 600, time.time() - 600))    # an old one: a dump as usual
    options, fresh = jvm_cds.driver_options("k", tmp_path)
    assert options.startswith("-XX:ArchiveClassesAtExit=") and fresh != pending
