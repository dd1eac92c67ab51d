"""A real Spark standalone cluster on 127.0.0.1: one master and two workers, started with
Spark's own launch classes (`spark-class org.apache.spark.deploy.master.Master`, `…Worker`)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_NO_DAEMONIZE="1")
    return env


class StandaloneCluster:
    """Context manager: master + workers; `url` is the spark:// master URL."""

    def __init__(self, workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                 worker_env=None) -> None:
        """worker_env(i): extra environment of worker i (its own disks, credentials)."""
        self.workdir, self.workers, self.cores, self.memory = workdir, workers, cores, memory
        self.worker_env = worker_env or (lambda i: {})
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def _start(self, args: list[str], log: str, extra_env: dict | None = None) -> None:
        handle = open(self.workdir / log, "wb")
        self.procs.append(subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args],
                                           env={**cluster_env(), **(extra_env or {})}, stdout=handle,
                                           stderr=subprocess.STDOUT, start_new_session=True))

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker i with its executor and Python workers (one process group)."""
        proc = self.procs[1 + i]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def __enter__(self) -> "StandaloneCluster":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                     str(self.port), "--webui-port", str(free_port())], "master.log")
        self._wait_for_port(self.port, 90)
        for i in range(self.workers):
            self._start(["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                         "--cores", str(self.cores), "--memory", self.memory, "--webui-port",
                         str(free_port()), "--work-dir", str(self.workdir / f"worker{i}")],
                        f"worker{i}.log", self.worker_env(i))
        self._wait_for_workers(90)
        return self

    def _wait_for_port(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        raise TimeoutError(f"Spark master did not open port {port}; see {self.workdir}/master.log")

    def _wait_for_workers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        log = self.workdir / "master.log"
        while time.monotonic() < deadline:
            if log.read_text(errors="replace").count("Registering worker") >= self.workers:
                return
            time.sleep(0.5)
        raise TimeoutError(f"workers did not register; see {self.workdir}")

    def __exit__(self, *exc) -> None:
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def count_command(cluster: StandaloneCluster, inputs: Path | str, out: Path | str, *args: str) -> list[str]:
    """`spark-submit jobs/count_terms.py --input INPUTS --out OUT ARGS` on the cluster."""
    repo = Path(__file__).resolve().parents[2]
    return [str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster.url,
            "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=1g",
            str(repo / "jobs" / "count_terms.py"), "--input", str(inputs), "--out", str(out), *args]


def submit_count(cluster: StandaloneCluster, inputs: Path, out: Path, *args: str,
                 env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """count_command run to its end."""
    return subprocess.run(count_command(cluster, inputs, out, *args),
                          env={**cluster_env(), **(env or {})}, cwd=cwd or out.parent,
                          capture_output=True, text=True, timeout=420)
