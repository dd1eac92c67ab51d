"""A real S3-compatible endpoint on 127.0.0.1 for the tests: moto's server mode
(`python -m moto.server`, from the dev extras), started as a process of its own, so every
client (pyarrow in this process, a `freqgap` subprocess, Spark's executors) reaches it over
HTTP exactly as it would reach a bucket elsewhere, through the standard environment
variables alone."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.counting.cluster import free_port

KEY_ID, SECRET = "freqgap-test-key-id", "freqgap-test-secret-0123456789"


class S3Server:
    """Context manager: the server's process; `env` holds what a client needs."""

    def __init__(self, log: Path) -> None:
        self.log, self.port = log, free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": KEY_ID,
                    "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
                    "AWS_EC2_METADATA_DISABLED": "true", "NO_PROXY": "127.0.0.1,localhost"}
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "S3Server":
        handle = open(self.log, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                                      str(self.port)], stdout=handle, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the S3 server exited; see {self.log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise TimeoutError(f"the S3 server did not open port {self.port}; see {self.log}")

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def new_bucket(self) -> str:
        """A new, empty bucket (buckets are made by the test, never by freqgap)."""
        import pyarrow.fs as pafs

        name = f"fg-{uuid.uuid4().hex[:12]}"
        fs = pafs.S3FileSystem(endpoint_override=self.endpoint, access_key=KEY_ID, secret_key=SECRET,
                               region="us-east-1", allow_bucket_creation=True)
        fs.create_dir(name)
        return name

    def requests(self) -> str:
        """The server's request log (one line per HTTP request)."""
        return self.log.read_text(errors="replace")


def upload(local: Path, uri: str) -> None:
    """Copy a local file or directory tree to s3://bucket/prefix (environment credentials)."""
    import pyarrow.fs as pafs

    fs, path = pafs.FileSystem.from_uri(uri)
    pafs.copy_files(str(local), path, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)


def download(uri: str, local: Path) -> None:
    import pyarrow.fs as pafs

    fs, path = pafs.FileSystem.from_uri(uri)
    local.mkdir(parents=True, exist_ok=True)
    pafs.copy_files(path, str(local), source_filesystem=fs, destination_filesystem=pafs.LocalFileSystem())
