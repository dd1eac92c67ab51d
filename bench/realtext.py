"""A real-text benchmark corpus, built at first use from Debian documentation and dictionaries.

Why: the generated bench corpus is number-dense (a sixth of its tokens are terms) and flatters
nothing but the window code; English prose written by other people has about one term per
hundred and fifty tokens and long documents. The packages are fetched with `apt-get download`
(no root, no install), unpacked with `dpkg -x` into out/bench/realtext/, and every text file
becomes one Pile-format document ({"text", "meta": {"pile_set_name": <package>}}), split at
paragraphs when longer than 64 KB. Where a package holds the same text twice (Sphinx HTML and
its reStructuredText sources), only the plain source is kept. Documents are shuffled with a
fixed seed and written, zstd-compressed, as many small files and as two big files of the same
records. The package versions go into the corpus manifest and the benchmark report.
"""

from __future__ import annotations

import gzip
import html
import json
import random
import re
import subprocess
from pathlib import Path

import zstandard

PACKAGES = ("linux-doc-6.1", "python3.11-doc", "perl-doc", "dict-gcide", "dict-wn", "dict-foldoc",
            "dict-jargon", "debian-reference-en", "debian-policy", "developers-reference",
            "gnu-standards", "python-django-doc", "postgresql-doc-15", "git-doc", "sqlite3-doc",
            "ruby3.1-doc", "octave-doc", "maxima-doc", "glibc-doc", "manpages", "fortunes",
            "rust-doc")
TEXT_SUFFIXES = (".txt", ".rst", ".pod", ".texi", ".md", ".yaml", ".info", ".dict", ".html", ".htm")
MAX_DOC_CHARS = 64_000
_TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def _fetch(debs: Path) -> dict[str, str]:
    """Download the packages once; {package: version}."""
    debs.mkdir(parents=True, exist_ok=True)
    missing = [p for p in PACKAGES if not list(debs.glob(f"{p}_*.deb"))]
    if missing:
        subprocess.run(["apt-get", "download", *missing], cwd=debs, check=True)
    versions = {}
    for p in PACKAGES:
        deb = sorted(debs.glob(f"{p}_*.deb"))[0]
        versions[p] = subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], check=True,
                                     capture_output=True, text=True).stdout.strip()
    return versions


def _unpack(debs: Path, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for p in PACKAGES:
        target = root / p
        if not target.exists():
            deb = sorted(debs.glob(f"{p}_*.deb"))[0]
            tmp = target.with_name(p + ".tmp")
            subprocess.run(["dpkg", "-x", str(deb), str(tmp)], check=True)
            tmp.rename(target)


def _read(path: Path) -> str | None:
    """The file's text (gzip/dictzip decompressed, HTML tags removed), or None if binary."""
    name = path.name
    raw = path.read_bytes()
    if name.endswith((".gz", ".dz")):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            return None
        name = name[:-3]
    if not name.endswith(TEXT_SUFFIXES) or b"\0" in raw[:4096]:
        return None
    text = raw.decode("utf-8", errors="replace")
    if name.endswith((".html", ".htm")):
        text = html.unescape(_TAG.sub(" ", text))
    return text


def _files_of(package_dir: Path) -> list[Path]:
    """The package's text files, without the duplicates Sphinx builds (HTML of sources)."""
    files = sorted(p for p in package_dir.rglob("*") if p.is_file())
    names = [str(p) for p in files]
    has_rst_gz = any(n.endswith(".rst.gz") for n in names)
    has_sources = any("/_sources/" in n for n in names)
    keep = []
    for p, n in zip(files, names):
        if has_rst_gz and ("/_sources/" in n or n.endswith((".html", ".html.gz"))):
            continue
        if has_sources and n.endswith((".html", ".html.gz")):
            continue
        keep.append(p)
    return keep


def _documents(text: str) -> list[str]:
    """One document, or paragraph-aligned pieces of at most MAX_DOC_CHARS characters."""
    if len(text) <= MAX_DOC_CHARS:
        return [text] if text.strip() else []
    docs, current, size = [], [], 0
    for para in text.split("\n\n"):
        if size + len(para) > MAX_DOC_CHARS and current:
            docs.append("\n\n".join(current))
            current, size = [], 0
        current.append(para)
        size += len(para) + 2
    if current:
        docs.append("\n\n".join(current))
    return [d for d in docs if d.strip()]


def _write_shards(lines: list[bytes], directory: Path, shards: int) -> None:
    tmp = directory.with_name(directory.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    per = sum(len(line) for line in lines) / shards
    index, done, out = 0, 0, []
    for line in lines + [None]:
        if line is None or (done >= (index + 1) * per and index < shards - 1):
            cctx = zstandard.ZstdCompressor(level=3)
            (tmp / f"real-{index:02d}.jsonl.zst").write_bytes(cctx.compress(b"".join(out)))
            index, out = index + 1, []
        if line is not None:
            out.append(line)
            done += len(line)
    tmp.rename(directory)


def ensure_realtext(root: Path, target_mb: float = 320.0, small_files: int = 24) -> dict:
    """Build (once) root/small (`small_files` files) and root/big (2 files); their manifest."""
    manifest_path = root / "manifest.json"
    if manifest_path.exists():
        return json.loads(manifest_path.read_text())
    versions = _fetch(root / "debs")
    _unpack(root / "debs", root / "unpacked")
    lines: list[bytes] = []
    per_package: dict[str, float] = {}
    for p in PACKAGES:
        size = 0
        for path in _files_of(root / "unpacked" / p):
            text = _read(path)
            if text is None:
                continue
            for doc in _documents(text):
                line = (json.dumps({"text": doc, "meta": {"pile_set_name": p}}, ensure_ascii=False)
                        + "\n").encode("utf-8")
                lines.append(line)
                size += len(line)
        per_package[p] = round(size / 1e6, 1)
    random.Random(14).shuffle(lines)
    kept, total = [], 0
    for line in lines:
        if total >= target_mb * 1e6:
            break
        kept.append(line)
        total += len(line)
    _write_shards(kept, root / "small", small_files)
    _write_shards(kept, root / "big", 2)
    manifest = {"packages": versions, "mb_per_package_before_cap": per_package,
                "documents": len(kept), "json_lines_mb": round(total / 1e6, 1)}
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


if __name__ == "__main__":
    import sys

    print(json.dumps(ensure_realtext(Path(sys.argv[1] if len(sys.argv) > 1 else "out/bench/realtext")),
                     indent=1))
