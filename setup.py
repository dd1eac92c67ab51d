"""Build hook: ship the checkout's conf/, sql/, sample corpus and demo model inside the
wheel as freqgap/_data/ (the defaults of `freqgap count` and `freqgap demo` name them).

The top-level conf/ and sql/ stay the one source of truth (nothing is copied into the
source tree); `freqgap.paths` reads them from the checkout when it is there, else from
the installed package. Everything else about the package is in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("conf", "sql", "data/sample", "models/demo")   # freqgap.paths reads them


class BuildPyWithData(build_py):
    """build_py, plus every SHIPPED tree copied to <build>/freqgap/_data/<same path>."""

    def run(self):
        super().run()
        for name in SHIPPED:
            for src in sorted((ROOT / name).rglob("*")):
                if src.is_file() and "__pycache__" not in src.parts:
                    dest = Path(self.build_lib) / "freqgap" / "_data" / src.relative_to(ROOT)
                    self.mkpath(str(dest.parent))
                    self.copy_file(str(src), str(dest))


setup(cmdclass={"build_py": BuildPyWithData})
