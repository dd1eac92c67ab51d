"""Output-side file operations, one route per kind of path: Python's own calls for local
paths (file:// URIs), pyarrow.fs for object stores (s3://, s3a://, gs://, abfs://:
`objectstore`, no Hadoop jar needed), and Hadoop's FileSystem API (the JVM's) for the other
URIs (hdfs://, viewfs://…), so the job's commit protocol works alike on all of them.

Why local paths skip the JVM: every operation through Hadoop is a py4j round trip and JVM
work (a cold run first loads Hadoop's FileSystem classes, scans the jars for file system
implementations and parses core-default.xml; its local file system writes a .crc file
beside each file and forks `chmod`), a cost in every run's JVM, more in a cold one
(docs/performance.md). The operations keep Hadoop's meaning: a recursive delete that ignores a
missing path, a rename that refuses an existing target, listings without checksum files.
"""

from __future__ import annotations

import os
import shutil
from urllib.parse import urlparse

from freqgap.counting.inputs import local_path   # the workers' reading of the same URIs
from freqgap.counting.objectstore import ObjectStore, is_object_store, refuse_credentials


def qualify(path: str) -> str:
    """An absolute URI: local paths become file:///abs/path so driver and executors agree."""
    if len(urlparse(path).scheme) > 1:
        refuse_credentials(path)
        return path.rstrip("/")
    return "file://" + os.path.abspath(path)


class Storage:
    """exists / delete / rename / read and write small text files: local paths in Python,
    object stores through pyarrow.fs, other URIs through the session's JVM."""

    def __init__(self, spark) -> None:
        self._spark = spark
        self._objects = ObjectStore()
        self._conf = None
        self._path_class = None
        self._file_systems: dict[tuple[str, str], object] = {}

    def _fs(self, path: str):
        if self._path_class is None:
            # Looked up once: each `_jvm.org.apache.hadoop.fs.Path` is five py4j round trips,
            # and the JVM answers "is `org` a class?" by searching every jar. File systems
            # are kept per scheme and authority, as Hadoop's own FileSystem.get caches them.
            context = self._spark.sparkContext
            self._conf = context._jsc.hadoopConfiguration()
            self._path_class = context._jvm.org.apache.hadoop.fs.Path
        jpath = self._path_class(path)
        where = urlparse(path)
        key = (where.scheme, where.netloc)
        fs = self._file_systems.get(key)
        if fs is None:
            fs = self._file_systems[key] = jpath.getFileSystem(self._conf)
        return fs, jpath

    def exists(self, path: str) -> bool:
        if is_object_store(path):
            return self._objects.exists(path)
        local = local_path(path)
        if local is not None:
            return os.path.lexists(local)
        fs, p = self._fs(path)
        return bool(fs.exists(p))

    def delete(self, path: str) -> None:
        if is_object_store(path):
            return self._objects.delete(path)
        local = local_path(path)
        if local is None:
            fs, p = self._fs(path)
            if fs.exists(p):
                fs.delete(p, True)
            return
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        elif os.path.lexists(local):
            os.remove(local)
        head, name = os.path.split(local)
        crc = os.path.join(head, f".{name}.crc")      # one an earlier, Hadoop-written run left
        if os.path.isfile(crc):
            os.remove(crc)

    def mkdirs(self, path: str) -> None:
        if is_object_store(path):
            return self._objects.mkdirs(path)
        local = local_path(path)
        if local is not None:
            os.makedirs(local, exist_ok=True)
            return
        fs, p = self._fs(path)
        fs.mkdirs(p)

    def rename(self, src: str, dst: str) -> None:
        """Move src to dst, which must not exist (the job deletes a target first): Hadoop's
        file systems disagree on a rename onto an existing path (HDFS moves into a
        directory, the local one replaces an empty one), so no route does one."""
        if is_object_store(src) or is_object_store(dst):
            if urlparse(src)[:2] != urlparse(dst)[:2]:
                raise OSError(f"could not rename {src} to {dst}: another store")
            return self._objects.rename(src, dst)
        if self.exists(dst) or not self.exists(src):
            raise OSError(f"could not rename {src} to {dst}")
        local_src, local_dst = local_path(src), local_path(dst)
        if local_src is not None and local_dst is not None:
            os.makedirs(os.path.dirname(local_dst), exist_ok=True)
            os.rename(local_src, local_dst)
            return
        fs, p = self._fs(src)
        if not fs.rename(p, self._fs(dst)[1]):
            raise OSError(f"could not rename {src} to {dst}")

    def list_names(self, path: str) -> list[str]:
        if is_object_store(path):
            return self._objects.list_names(path)
        local = local_path(path)
        if local is not None:
            if not os.path.isdir(local):
                return []
            return sorted(n for n in os.listdir(local) if not (n.startswith(".") and n.endswith(".crc")))
        fs, p = self._fs(path)
        if not fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(p))

    def read_text(self, path: str) -> str:
        if is_object_store(path):
            return self._objects.read_text(path)
        local = local_path(path)
        if local is not None:
            with open(local, encoding="utf-8") as f:
                return f.read()
        fs, p = self._fs(path)
        stream = fs.open(p)
        try:
            return bytes(stream.readAllBytes()).decode("utf-8")
        finally:
            stream.close()

    def write_text_atomic(self, path: str, text: str) -> None:
        """Write to a hidden temporary name, then rename over the target (on an object
        store, one PUT of the target: `objectstore`)."""
        if is_object_store(path):
            return self._objects.write_text_atomic(path, text)
        parent, name = path.rsplit("/", 1)
        tmp = f"{parent}/.{name}.tmp"
        local = local_path(tmp)
        if local is not None:
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(local, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            fs, p = self._fs(tmp)
            stream = fs.create(p, True)
            try:
                stream.write(bytearray(text.encode("utf-8")))
            finally:
                stream.close()
        self.delete(path)
        self.rename(tmp, path)
