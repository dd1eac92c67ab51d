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

import hashlib
import shutil
import uuid
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
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
def _answering(uri: str):
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
        with _answering(uri):
            return method(self, uri, *args)
    return call


class ObjectStore:
    """exists / delete / mkdirs / rename / list / read and write small text files; a
    refusal of the store is an ObjectStoreError (one line), except rename's own "could
    not rename" (an OSError, as on the other routes)."""

    @staticmethod
    def _info(uri: str):
        fs, path = arrow_fs(uri)
        with _answering(uri):
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
        with _answering(src):
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


def fetch_finished(uri: str, cache: Path) -> Path:
    """A local copy of a finished stage's directory in a bucket, for the stages that read
    local paths: `cache`/<hash of the URI and its manifest>/<name>. Fetched once per result
    and never half: the manifest must be there (an unfinished run is refused), the copy is
    made under a hidden name and renamed into place whole, and a manifest that changed
    while copying (a run writing there) is refused. The run's work area is not fetched."""
    import pyarrow.fs as pafs

    from freqgap.manifest import MANIFEST_NAME

    store, uri = ObjectStore(), uri.rstrip("/")
    if not store.exists(f"{uri}/{MANIFEST_NAME}"):
        raise ObjectStoreError(f"{uri}: no {MANIFEST_NAME}, so not the output of a finished run "
                               "(run the stage that writes it to the end, or check the URI)")
    manifest = store.read_text(f"{uri}/{MANIFEST_NAME}")
    name = uri.rsplit("/", 1)[-1]
    target = cache / hashlib.sha256(f"{uri}\0{manifest}".encode()).hexdigest()[:20]
    if (target / name / MANIFEST_NAME).is_file():
        return target / name
    staging = cache / f".{target.name}.{uuid.uuid4().hex[:8]}"
    fs, root = arrow_fs(uri)
    with _answering(uri):
        for item in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
            inner = item.path[len(root) + 1:]
            if item.type != pafs.FileType.File or inner.split("/", 1)[0] == "_work":
                continue
            local = staging / name / inner
            local.parent.mkdir(parents=True, exist_ok=True)
            pafs.copy_files(item.path, str(local), source_filesystem=fs,
                            destination_filesystem=pafs.LocalFileSystem())
    if (staging / name / MANIFEST_NAME).read_text(encoding="utf-8") != manifest:
        shutil.rmtree(staging)
        raise ObjectStoreError(f"{uri}: its {MANIFEST_NAME} changed while it was fetched (a run is "
                               "writing there); try again when it has finished")
    try:
        staging.rename(target)
    except OSError:                       # fetched by another process meanwhile: keep that one
        shutil.rmtree(staging)
    return target / name


def pull(uri: str, cache: Path) -> Path:
    """A local mirror of everything under `uri` (empty when there is nothing), for a stage
    that writes local paths: `cache`/<hash of the URI>/<name>, made afresh each time, so
    the stage sees the earlier result it may reuse or resume."""
    import pyarrow.fs as pafs

    uri = uri.rstrip("/")
    name = uri.rsplit("/", 1)[-1]
    mirror = cache / hashlib.sha256(uri.encode()).hexdigest()[:20] / name
    shutil.rmtree(mirror.parent, ignore_errors=True)
    mirror.mkdir(parents=True)
    fs, root = arrow_fs(uri)
    with _answering(uri):
        for item in fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True)):
            if item.type == pafs.FileType.File:
                local = mirror / item.path[len(root) + 1:]
                local.parent.mkdir(parents=True, exist_ok=True)
                pafs.copy_files(item.path, str(local), source_filesystem=fs,
                                destination_filesystem=pafs.LocalFileSystem())
    return mirror


def push(mirror: Path, uri: str) -> None:
    """Publish a stage's finished local mirror under `uri`, all-or-nothing for readers:
    every manifest there is deleted first, the data files are uploaded (and objects the
    stage no longer has deleted), and the manifests are uploaded last. Hidden files (lock
    and temporary files) stay behind; the mirror is removed after."""
    import pyarrow.fs as pafs

    from freqgap.manifest import MANIFEST_NAME

    uri = uri.rstrip("/")
    fs, root = arrow_fs(uri)
    files = sorted(p.relative_to(mirror).as_posix() for p in mirror.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(mirror).parts))
    last = [f for f in files if f.rsplit("/", 1)[-1] == MANIFEST_NAME]
    with _answering(uri):
        there = [i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
                 if i.type == pafs.FileType.File]
        for path in sorted(there, key=lambda p: not p.endswith("/" + MANIFEST_NAME)):
            if path[len(root) + 1:] not in files or path.endswith("/" + MANIFEST_NAME):
                fs.delete_file(path)
        for name in [f for f in files if f not in last] + last:
            pafs.copy_files(str(mirror / name), f"{root}/{name}", source_filesystem=pafs.LocalFileSystem(),
                            destination_filesystem=fs)
    shutil.rmtree(mirror.parent, ignore_errors=True)
