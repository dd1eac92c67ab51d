"""A per-machine class-data-sharing archive for the Spark driver JVM: `get_spark()` uses it for
the JVM it starts, `conf/spark/spark-env.sh` gives it to a plain `SPARK_CONF_DIR=conf/spark
spark-submit`, and `python -m freqgap.runtime.jvm_cds ARGS` is `spark-submit ARGS` with it whatever
the conf directory.

Why: a cold driver spends a large part of its start-up loading, parsing and verifying
some 20,000 classes; a dynamic AppCDS archive (JDK 13+) maps them ready-made. The first run
on a machine dumps it at JVM exit (`-XX:ArchiveClassesAtExit`), later runs map it
(`-XX:SharedArchiveFile`). Safety, because a truncated archive crashes the JVM (SIGBUS):
  * the file name carries a key of everything the JDK checks (java, Spark's jars and their
    sizes and times, the JVM options, the class path settings), so a stale one is never named;
  * it is dumped under a private temporary name, checked with `-Xshare:on` and renamed into
    place only then (atomic), its size recorded in the name: concurrent first runs each
    write their own file and a damaged one is never used;
  * `-Xshare:auto` and CDS logging off: an archive the JVM rejects is ignored silently.
`FREQGAP_JVM_CDS=0` turns it off; the cache is `$FREQGAP_CACHE_DIR`, `$XDG_CACHE_HOME/freqgap`
or `~/.cache/freqgap` (`jvm-cds/`, ~120-190 MB an archive, the 4 used last kept).
"""

from __future__ import annotations

import glob
import hashlib
import os
import secrets
import shlex
import subprocess
import sys
import time
from pathlib import Path

ENV_SWITCH = "FREQGAP_JVM_CDS"
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
SPARK_SUBMIT_CLASS = "org.apache.spark.deploy.SparkSubmit"
_PUBLISH_FLAG = "--freqgap-publish-when-done"         # its watcher of a first run's dump
_DUMP_OPTION = "-XX:ArchiveClassesAtExit="
_STALE_TMP_S = 3600
_FRESH_TMP_S = 120                       # a dump this recent is being checked and published
_KEEP = 4                                # archives kept per machine (~120 MB each), last used first
# java options whose value is the next argument
_VALUE_OPTIONS = ("-cp", "-classpath", "--class-path", "--add-modules", "--add-opens",
                  "--add-exports", "--add-reads", "--module-path", "-p")
# Settings that change the driver JVM's command line, hence the archive.
_KEYED_SETTINGS = ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions",
                   "spark.driver.extraClassPath", "spark.driver.defaultExtraClassPath",
                   "spark.driver.memory", "spark.jars", "spark.jars.packages")
_KEYED_ENV = ("JAVA_HOME", "SPARK_CONF_DIR", "SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR",
              "YARN_CONF_DIR", "SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")


def cache_dir() -> Path:
    """Where archives are kept (created on demand)."""
    from freqgap.paths import cache_root

    return cache_root() / "jvm-cds"


def enabled() -> bool:
    """The archives are used unless switched off alone (ENV_SWITCH) or with the whole
    runtime wing (FREQGAP_RUNTIME=stock)."""
    from freqgap.runtime import enabled as runtime_enabled

    return runtime_enabled() and os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _java() -> Path | None:
    """The java binary spark-class will run (JAVA_HOME first, as it does), resolved."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home, "bin", "java") if home else None
    if candidate is None or not candidate.exists():
        found = next((Path(d, "java") for d in os.environ.get("PATH", "").split(os.pathsep)
                      if d and Path(d, "java").is_file()), None)
        candidate = found
    return candidate.resolve() if candidate else None


def archive_key(spark_home: str, settings: dict[str, str], java: Path | None = None,
                extra: str = "") -> str | None:
    """A digest of the driver JVM's identity and command line, or None without a java."""
    java = java or _java()
    if java is None:
        return None
    digest = hashlib.sha256()
    jdk = java.parent.parent
    libjvm = jdk / "lib" / "server" / "libjvm.so"
    for part in (str(java), _stamp(java), _read(jdk / "release"), _stamp(libjvm),
                 str(Path(spark_home).resolve())):
        digest.update(part.encode() + b"\0")
    for jar in sorted(glob.glob(os.path.join(spark_home, "jars", "*"))):
        digest.update(f"{os.path.basename(jar)}:{_stamp(Path(jar))}\0".encode())
    for key in _KEYED_SETTINGS:
        digest.update(f"{key}={settings.get(key, '')}\0".encode())
    for key in _KEYED_ENV:
        digest.update(f"{key}={os.environ.get(key, '')}\0".encode())
    digest.update(extra.encode(errors="surrogateescape"))
    return digest.hexdigest()[:32]


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "-"


def with_jars_first(spark_home: str, settings: dict[str, str]) -> dict[str, str]:
    """`settings` with Spark's jars ahead of a non-empty SPARK_CONF_DIR on the driver's class
    path. Why: Spark puts SPARK_CONF_DIR first, where the JDK refuses to dump or map an
    archive; every run would then pay for a dump that is thrown away. A class path the user set is left alone (and runs without an archive)."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if not enabled() or not conf_dir or "spark.driver.extraClassPath" in settings:
        return settings
    try:
        if not any(Path(conf_dir).iterdir()):
            return settings
    except OSError:
        return settings
    return {**settings, "spark.driver.extraClassPath": str(Path(spark_home, "jars", "*"))}


def find_archive(key: str, directory: Path | None = None) -> Path | None:
    """The complete archive for `key`: named KEY.SIZE.jsa and of exactly that size."""
    directory = directory or cache_dir()
    for path in sorted(directory.glob(f"{key}.*.jsa")):
        size = path.name[len(key) + 1:-len(".jsa")]
        try:
            if size.isdigit() and path.stat().st_size == int(size) > 0:
                return path
        except OSError:
            continue
    return None


def driver_options(key: str | None, directory: Path | None = None,
                   jvm_pid: int | None = None) -> tuple[str, Path | None]:
    """(JVM options to add, the temporary file a dump will write or None).

    With an archive: map it. Without: dump one at exit into a private temporary name (named
    by `jvm_pid`, the JVM's process, else this one's). While another run's fresh dump of the
    same key is being checked (the previous run of a script, just exited), wait up to 5 s for
    it to be published, else run without: never two dumps of one key side by side.
    """
    if key is None or not enabled():
        return "", None
    directory = directory or cache_dir()
    found = find_archive(key, directory)
    if found is None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _remove_stale(directory)
        except OSError:
            return "", None
        found = _being_published(key, directory)
    if found is not None:
        _mark_used(found)
        return map_options(found), None
    if _fresh_dumps(key, directory):
        return "", None                  # another run's dump is still being checked: no second one
    if not os.access(directory, os.W_OK | os.X_OK):
        return "", None                  # a read-only cache: run without an archive
    pending = directory / f"{key}.tmp-{jvm_pid or os.getpid()}-{secrets.token_hex(4)}"
    return f"{_DUMP_OPTION}{pending} {_QUIET}", pending


def map_options(archive: Path) -> str:
    """The JVM options that map `archive` (ignored silently where the JVM rejects it)."""
    return f"-XX:SharedArchiveFile={archive} -Xshare:auto {_QUIET}"


def _mark_used(archive: Path) -> None:
    """Its modification time set to now: `_prune` keeps the archives used last, so a set-up
    in daily use is not dropped for newer ones used once (each dump costs a slow run).
    Nothing in an archive's name or check depends on the time; a read-only cache keeps it."""
    try:
        os.utime(archive)
    except OSError:
        pass


def temporary_dumps(directory: Path | None = None, key: str = "*") -> list[tuple[Path, float]]:
    """(path, age in seconds) of the dumps (of `key`) not yet published or removed."""
    now = time.time()
    found = []
    for path in (directory or cache_dir()).glob(f"{key}.tmp-*"):
        try:
            found.append((path, now - path.stat().st_mtime))
        except OSError:
            continue
    return found


def _fresh_dumps(key: str, directory: Path) -> list[Path]:
    """Dumps of `key` written in the last two minutes and not yet published."""
    return [path for path, age in temporary_dumps(directory, key) if age < _FRESH_TMP_S]


def _being_published(key: str, directory: Path, wait_s: float = 5.0) -> Path | None:
    """The archive of a dump that a finished run is checking now (its JVM has just exited:
    the next run of a script, say), waited for up to `wait_s`; None if there is none."""
    end = time.monotonic() + wait_s
    while _fresh_dumps(key, directory) and time.monotonic() < end:
        time.sleep(0.1)
        found = find_archive(key, directory)
        if found is not None:
            return found
    return None


def _remove_stale(directory: Path) -> None:
    """Temporary dumps older than an hour: left by a run that was killed."""
    for path, age in temporary_dumps(directory):
        if age > _STALE_TMP_S:
            _unlink(path)


def jvm_command(pid: int) -> list[str] | None:
    """The running JVM's command line (Linux /proc), to check a dump with the same options."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode(errors="surrogateescape") for a in raw.split(b"\0") if a] or None


def check_command(command: list[str], archive: Path) -> list[str] | None:
    """`command`'s JVM options with `archive` required (-Xshare:on) and `-version` as the main.

    The JDK accepts a dynamic archive only with the class path and options it was dumped with.
    """
    options, args = [], iter(command[1:])
    for arg in args:
        if not arg.startswith("-"):
            break                         # the main class
        if arg.startswith((_DUMP_OPTION, "-Xlog:", "-XX:SharedArchiveFile=", "-Xshare:")):
            continue
        options.append(arg)
        if arg in _VALUE_OPTIONS:
            options.append(next(args, ""))
    if not any(o in ("-cp", "-classpath", "--class-path") for o in options):
        return None
    return [command[0], *options, f"-XX:SharedArchiveFile={archive}", "-Xshare:on",
            "-Xlog:disable", "-version"]


def finish(pending: Path, command: list[str] | None, jvm_returncode: int | None,
           timeout_s: float = 120) -> Path | None:
    """Check a finished dump and rename it into place (atomically); else remove it."""
    key = pending.name.split(".tmp-")[0]
    try:
        size = pending.stat().st_size
        check = check_command(command or [], pending)
        ok = (jvm_returncode == 0 and size > 0 and check is not None
              and subprocess.run(check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 timeout=timeout_s).returncode == 0)
        if ok:
            final = pending.with_name(f"{key}.{size}.jsa")
            os.replace(pending, final)
            _prune(final, key)
            return final
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        pending.unlink()
    except OSError:
        pass
    return None


def _prune(kept: Path, key: str) -> None:
    """Other archives of the same key go (a concurrent first run made one too), and only the
    `_KEEP` archives used last stay (one per JVM set-up used lately: `_mark_used`)."""
    directory = kept.parent
    for path in directory.glob(f"{key}.*.jsa"):
        if path != kept:
            _unlink(path)
    archives = sorted(directory.glob("*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in archives[_KEEP:]:
        _unlink(path)


def _unlink(path: Path) -> None:
    try:
        path.unlink()                    # a JVM that maps it keeps its mapping
    except OSError:
        pass



def submit(argv: list[str]) -> int:
    """`spark-submit ARGS` with the driver JVM on an archive of its own (dumped on first use),
    whatever SPARK_CONF_DIR holds (`conf/spark`'s spark-env.sh does the same inside spark-submit).

    Spark puts SPARK_CONF_DIR first on the driver's class path, where the JDK refuses a
    non-empty directory; `--driver-class-path SPARK_HOME/jars/*` puts the jars ahead of it.
    """
    import pyspark

    spark_home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    spark_submit = os.path.join(spark_home, "bin", "spark-submit")
    plan = _submit_plan(spark_home, argv)
    if plan is None:
        return subprocess.call([spark_submit, *argv])   # no archive: run it unchanged
    args, submit_opts, pending = plan
    env = {**os.environ, "SPARK_HOME": spark_home, "SPARK_SUBMIT_OPTS": submit_opts}
    proc = subprocess.Popen([spark_submit, *args], env=env)
    jvm = _wait_for_java(proc.pid, proc.poll) if pending is not None else None
    returncode = proc.wait()
    if pending is not None:
        finish(pending, jvm, returncode)
    return returncode


def spark_env(jvm_pid: int, spark_class_args: list[str]) -> str:
    """Shell code for `conf/spark/spark-env.sh`, which Spark's scripts source before they run
    the launcher: for `spark-class org.apache.spark.deploy.SparkSubmit ARGS` whose driver runs
    here, `set --` the same arguments with `--driver-class-path SPARK_HOME/jars/*` first and
    the archive's options added to SPARK_SUBMIT_OPTS; '' for anything else.

    Why here: a plain `SPARK_CONF_DIR=conf/spark spark-submit ...` then maps the archive too
    (docs/performance.md). spark-class execs into the driver JVM, so `jvm_pid` (the
    script's own pid) becomes the JVM's: a first run's dump is published by a watcher process
    once that JVM has exited, as `submit` does after waiting for it.
    """
    if not spark_class_args or spark_class_args[0] != SPARK_SUBMIT_CLASS or not enabled():
        return ""
    spark_home = os.environ.get("SPARK_HOME", "")
    plan = _submit_plan(spark_home, spark_class_args[1:], jvm_pid) if spark_home else None
    if plan is None:
        return ""
    args, submit_opts, pending = plan
    if pending is not None:
        subprocess.Popen([sys.executable, "-m", "freqgap.runtime.jvm_cds", _PUBLISH_FLAG, str(jvm_pid), str(pending)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    return f"set -- {shlex.join([SPARK_SUBMIT_CLASS, *args])}\nSPARK_SUBMIT_OPTS={shlex.quote(submit_opts)}\n"


def driver_runs_here(spark_home: str, argv: list[str]) -> bool:
    """Whether spark-submit ARGS runs its driver on this machine (not in cluster mode)."""
    return _driver_runs_here(argv, _conf_words(spark_home, argv))


def _submit_plan(spark_home: str, argv: list[str],
                 jvm_pid: int | None = None) -> tuple[list[str], str, Path | None] | None:
    """(spark-submit's arguments with Spark's jars first on the driver's class path, its
    SPARK_SUBMIT_OPTS with the archive's options, the dump a first run writes or None) for
    the wrapper and spark-env.sh alike; None where no archive applies."""
    if not archive_applies(spark_home, argv):
        return None
    options, pending = driver_options(archive_key(spark_home, {}, extra=_submit_identity(spark_home, argv)),
                                      jvm_pid=jvm_pid)
    if not options:
        return None
    submit_opts = f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {options}".strip()
    return ["--driver-class-path", _jars(spark_home), *argv], submit_opts, pending


def publish_when_done(jvm_pid: int, pending: Path, start_timeout_s: float = 60) -> Path | None:
    """Wait for `jvm_pid` to become the driver JVM and to exit, then check and publish its dump."""
    command = _wait_for_java(jvm_pid, lambda: None if _alive(jvm_pid) else 0, start_timeout_s)
    if command is None:
        _unlink(pending)
        return None
    _wait_for_exit(jvm_pid)
    # Not our child: its exit status is unknown; the -Xshare:on check of the file decides.
    return finish(pending, command, 0) if pending.exists() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return Path(f"/proc/{pid}").exists() and _state(pid) != "Z"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def _wait_for_exit(pid: int) -> None:
    """Block until `pid` has exited: a pidfd where Linux has one, else a poll twice a second."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        while _alive(pid):
            time.sleep(0.5)
        return
    try:
        select.select([fd], [], [])
    finally:
        os.close(fd)


def archive_applies(spark_home: str, argv: list[str]) -> bool:
    """Whether spark-submit ARGS runs its driver here on Spark's own class path: not a class
    path of the user's (an option or a conf file setting), not a cluster-mode driver."""
    words = _conf_words(spark_home, argv)
    if any(w.startswith("--driver-class-path") or "spark.driver.extraClassPath" in w for w in words):
        return False
    return _driver_runs_here(argv, words)


def _conf_words(spark_home: str, argv: list[str]) -> list[str]:
    """spark-submit's arguments and the words of the properties files it reads."""
    words = list(argv)
    for conf_file in _conf_files(spark_home, argv):
        words += _read(conf_file).split()
    return words


def _driver_runs_here(argv: list[str], words: list[str]) -> bool:
    """Not a cluster-mode driver (an option, a --conf or a conf file setting)."""
    pairs = zip(argv, argv[1:])
    return not any((a == "--deploy-mode" and b == "cluster") or a == "--deploy-mode=cluster"
                   or (a == "--conf" and b.replace(" ", "") == "spark.submit.deployMode=cluster")
                   for a, b in pairs) and "spark.submit.deployMode cluster" not in " ".join(words)


def _conf_files(spark_home: str, argv: list[str]) -> list[Path]:
    """The properties files spark-submit reads: SPARK_CONF_DIR's defaults and --properties-file."""
    files = [Path(os.environ.get("SPARK_CONF_DIR") or Path(spark_home, "conf")) / "spark-defaults.conf"]
    for option, value in zip(argv, argv[1:]):
        if option == "--properties-file":
            files.append(Path(value))
    files += [Path(a.split("=", 1)[1]) for a in argv if a.startswith("--properties-file=")]
    return files


def _jars(spark_home: str) -> str:
    return os.path.join(spark_home, "jars", "*")


def _submit_identity(spark_home: str, argv: list[str]) -> str:
    """spark-submit's options (up to the application) and the conf files it reads. The master
    and the application's name do not change the driver's JVM command line: left out, so a
    cluster's changing port does not dump a new archive each time."""
    options, args = [], iter(argv)
    for arg in args:
        if not arg.startswith("-") and arg.endswith((".py", ".jar", ".R")):
            break                         # the application; what follows are its arguments
        if arg in ("--master", "--name"):
            next(args, None)
            continue
        options.append(arg)
    conf = [_read(path) for path in _conf_files(spark_home, argv)]
    return "\0".join(["spark-submit", *options, *conf])


def _wait_for_java(pid: int, exited, timeout_s: float = 60) -> list[str] | None:
    """The driver JVM's command line once spark-submit has exec'd into it (same pid);
    `exited()` is None while the process runs."""
    end = time.monotonic() + timeout_s
    while exited() is None and time.monotonic() < end:
        command = jvm_command(pid)
        if command and os.path.basename(command[0]) == "java" and "-cp" in command:
            return command
        time.sleep(0.05)
    return None


def main(argv: list[str]) -> int:
    """`python -m freqgap.runtime.jvm_cds`: the spark-submit wrapper, or the watcher that publishes
    a plain spark-submit's first dump (spark-env.sh's helper is `freqgap.runtime.spark_env`)."""
    if argv[:1] == [_PUBLISH_FLAG] and len(argv) == 3:
        publish_when_done(int(argv[1]), Path(argv[2]))
        return 0
    return submit(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
