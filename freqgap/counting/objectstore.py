"""The job's output-side file operations on object stores (s3://, gs://, abfs://…), through
pyarrow.fs: no Hadoop jar (hadoop-aws, gcs-connector) is needed on the driver, and the
credentials and endpoint come from the standard environment variables the tasks' pyarrow
reads too (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, …).

Why not the same operations as a file system: an object store has no directories and no
rename. A "directory" is a key prefix; renaming one copies each object server-side and
then deletes the source, so a rename is not atomic. The job stays all-or-nothing because
`_manifest.json` is written last, as one object (a PUT is seen whole or not at all), and
every reader requires it: tables without a manifest are an unfinished run, redone from
scratch by the next run (docs/cluster.md, "Object stores").
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import wraps
from urllib.parse import urlparse

from freqgap.counting.inputs import arrow_fs
from freqgap.errors import FreqgapError, UsageError

# Schemes pyarrow.fs opens natively (Hadoop's s3a/s3n names are s3 to Arrow).
OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss"})


def is_object_store(uri: str) -> bool:
    return urlparse(uri).scheme in OBJECT_STORE_SCHEMES


def refuse_credentials(uri: str) -> None:
    """A URI carrying a user name, key or query (pyarrow accepts
    s3://KEY:SECRET@bucket/… and ?endpoint_override=…) would be written into manifests and
    logs: refused, with where credentials go instead."""
    parts = urlparse(uri)
    if parts.scheme not in OBJECT_STORE_SCHEMES:
        return
    secret = parts.password is not None or bool(parts.query)
    if not parts.scheme.startswith("abfs"):          # abfs://container@account… is no secret
        secret = secret or parts.username is not None
    if secret:
        raise UsageError(f"{parts.scheme}://…: credentials, endpoints and options do not belong in "
                         "the URI (it is recorded in the manifest); set AWS_ENDPOINT_URL, "
                         "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION (or the "
                         "store's own variables) in the environment instead")


class ObjectStoreError(FreqgapError):
    """The store refused an operation (no such bucket, access denied, endpoint down)."""


@contextmanager
def answering(uri: str):
    """The store's refusal as one line that names the URI and what to check."""
    try:
        yield
    except OSError as exc:
        reason = " ".join(str(exc).split())
        raise ObjectStoreError(f"{uri}: {reason} (check that the bucket exists, and "
                               "AWS_ENDPOINT_URL and the credentials in the environment)") from None


def _checked(method):
    @wraps(method)
    def call(self, uri: str, *args):
        with answering(uri):
            return method(self, uri, *args)
    return call


class ObjectStore:
    """exists / delete / mkdirs / rename / list / read and write small text files; a
    refusal of the store is an ObjectStoreError (one line), except rename's own "could
    not rename" (an OSError, as on the other routes)."""

    @staticmethod
    def _info(uri: str):
        fs, path = arrow_fs(uri)
        with answering(uri):
            return fs, path, fs.get_file_info(path)

    @_checked
    def exists(self, uri: str) -> bool:
        import pyarrow.fs as pafs

        return self._info(uri)[2].type != pafs.FileType.NotFound

    @_checked
    def delete(self, uri: str) -> None:
        """Recursive; a missing path is no error."""
        import pyarrow.fs as pafs

        fs, path, info = self._info(uri)
        if info.type == pafs.FileType.Directory:
            fs.delete_dir(path)
        elif info.type != pafs.FileType.NotFound:
            fs.delete_file(path)

    @_checked
    def mkdirs(self, uri: str) -> None:
        fs, path = arrow_fs(uri)
        fs.create_dir(path, recursive=True)

    def rename(self, src: str, dst: str) -> None:
        """Move src to dst, which must not exist: a file by the store's move, a directory
        object by object (server-side copies, then the source deleted). Not atomic: the
        caller's commit point is the manifest (module docstring)."""
        import pyarrow.fs as pafs

        fs, source, info = self._info(src)
        _, target, there = self._info(dst)
        if info.type == pafs.FileType.NotFound or there.type != pafs.FileType.NotFound:
            raise OSError(f"could not rename {src} to {dst}")
        with answering(src):
            if info.type != pafs.FileType.Directory:
                fs.move(source, target)
                return
            fs.create_dir(target, recursive=True)
            for item in fs.get_file_info(pafs.FileSelector(source, recursive=True)):
                inner = target + item.path[len(source):]
                if item.type == pafs.FileType.Directory:
                    fs.create_dir(inner, recursive=True)
                else:
                    fs.copy_file(item.path, inner)
            fs.delete_dir(source)

    @_checked
    def list_names(self, uri: str) -> list[str]:
        import pyarrow.fs as pafs

        fs, path = arrow_fs(uri)
        infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        return sorted(i.base_name for i in infos)

    @_checked
    def read_text(self, uri: str) -> str:
        fs, path = arrow_fs(uri)
        with fs.open_input_stream(path, compression=None) as stream:
            return stream.read().decode("utf-8")

    @_checked
    def write_text_atomic(self, uri: str, text: str) -> None:
        """One PUT: an object store shows a new object whole or not at all."""
        fs, path = arrow_fs(uri)
        with fs.open_output_stream(path, compression=None) as out:
            out.write(text.encode("utf-8"))

