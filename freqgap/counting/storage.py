"""Output-side file operations through Hadoop's FileSystem API (the JVM's), so the job's
commit protocol works alike on local disks, HDFS and object stores Spark can write to."""

from __future__ import annotations

import os
from urllib.parse import urlparse


def qualify(path: str) -> str:
    """An absolute URI: local paths become file:///abs/path so driver and executors agree."""
    if len(urlparse(path).scheme) > 1:
        return path.rstrip("/")
    return "file://" + os.path.abspath(path)


class Storage:
    """exists / delete / rename / read and write small text files, via the session's JVM."""

    def __init__(self, spark) -> None:
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()
        # Looked up once: each `_jvm.org.apache.hadoop.fs.Path` is five py4j round trips, and
        # the JVM answers "is `org` a class?" by searching every jar (170 of a small run's 400
        # py4j calls went to this). File systems are kept per scheme and authority, as
        # Hadoop's own FileSystem.get caches them.
        self._path_class = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
        self._file_systems: dict[tuple[str, str], object] = {}

    def _fs(self, path: str):
        jpath = self._path_class(path)
        where = urlparse(path)
        key = (where.scheme, where.netloc)
        fs = self._file_systems.get(key)
        if fs is None:
            fs = self._file_systems[key] = jpath.getFileSystem(self._conf)
        return fs, jpath

    def exists(self, path: str) -> bool:
        fs, p = self._fs(path)
        return bool(fs.exists(p))

    def delete(self, path: str) -> None:
        fs, p = self._fs(path)
        if fs.exists(p):
            fs.delete(p, True)

    def mkdirs(self, path: str) -> None:
        fs, p = self._fs(path)
        fs.mkdirs(p)

    def rename(self, src: str, dst: str) -> None:
        fs, p = self._fs(src)
        if not fs.rename(p, self._fs(dst)[1]):
            raise OSError(f"could not rename {src} to {dst}")

    def list_names(self, path: str) -> list[str]:
        fs, p = self._fs(path)
        if not fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(p))

    def read_text(self, path: str) -> str:
        fs, p = self._fs(path)
        stream = fs.open(p)
        try:
            return bytes(stream.readAllBytes()).decode("utf-8")
        finally:
            stream.close()

    def write_text_atomic(self, path: str, text: str) -> None:
        """Write to a hidden temporary name, then rename over the target."""
        parent, name = path.rsplit("/", 1)
        tmp = f"{parent}/.{name}.tmp"
        fs, p = self._fs(tmp)
        stream = fs.create(p, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        self.delete(path)
        self.rename(tmp, path)
