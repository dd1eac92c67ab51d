"""Where PySpark is imported from: the installed package rather than Spark's zip of it.

Used by the worker daemon and by the `jobs/` scripts that spark-submit runs (their drivers
get the zips first on sys.path too).
"""

from __future__ import annotations

import sys


def prefer_installed_packages(path: list[str] | None = None) -> list[str]:
    """Take PySpark's and py4j's zips off the import path where they are copies of the
    installed packages (pip's layout); returns the entries taken off.

    Why: Spark puts `pyspark.zip` and `py4j-<version>-src.zip` first on every Python
    worker's path (and spark-submit on its Python driver's), and a zip holds no compiled
    `.pyc`: the daemon (or driver) then compiles each PySpark module it imports from source,
    several times what loading the installed package's `__pycache__` costs. pip's pyspark
    carries the zip inside itself (`<site>/pyspark/python/lib/pyspark.zip`, built from the
    same sources), so where that is the pyspark this interpreter would import without the
    zip, the zip goes; the py4j zip goes where the installed py4j has the version in its
    name. Anything else (a Spark distribution's zips, another layout) stays as Spark set it.
    """
    import importlib.machinery
    from pathlib import Path

    from freqgap.runtime import enabled as runtime_enabled

    if not runtime_enabled():
        return []
    if path is None:
        if "pyspark" in sys.modules or "py4j" in sys.modules:      # too late to choose
            return []
        path = sys.path

    def installed_origin(name: str, without: str) -> Path | None:
        spec = importlib.machinery.PathFinder.find_spec(name, [p for p in path if p != without])
        return Path(spec.origin).resolve() if spec is not None and spec.origin else None

    removed = []
    for entry in list(path):
        zip_path = Path(entry)
        if zip_path.name == "pyspark.zip" and len(zip_path.parents) > 3:
            package = zip_path.parents[2]
            same = installed_origin("pyspark", entry) == (package / "__init__.py").resolve()
        elif zip_path.name.startswith("py4j-") and zip_path.name.endswith("-src.zip"):
            version = zip_path.name[len("py4j-"):-len("-src.zip")]
            origin = installed_origin("py4j", entry)
            same = origin is not None and _py4j_version(origin.parent) == version
        else:
            continue
        if same:
            path.remove(entry)
            removed.append(entry)
    return removed


def _py4j_version(package: "Path") -> str | None:
    """The version an installed py4j declares (`py4j/version.py`), read without importing
    it or `importlib.metadata`: that import alone is a visible part of a spark-submit
    driver's start, and py4j may not be imported before the choice of which py4j it is."""
    import re

    try:
        text = (package / "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", text, re.MULTILINE)
    return match.group(1) if match else None
