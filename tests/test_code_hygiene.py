"""Comments and docstrings of the package say why, never what a machine measured on a day:
no CPU-seconds, dates or CPU families and host names (they go stale with the next machine;
figures live in docs/performance.md and bench/RESULTS.md)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "freqgap"
FORBIDDEN = re.compile(
    r"CPU-s\b|CPU-seconds?|\b(19|20)\d\d-[01]\d-[0-3]\d\b"
    r"|\b(Zen ?[1-9]?|EPYC|Xeon|Ryzen|Threadripper|Opteron|Skylake|Cascade ?Lake|Ice ?Lake|Sapphire ?Rapids"
    r"|Haswell|Broadwell|Graviton|Neoverse|Apple M[1-4])\b")


def prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and string literal of a Python source (docstrings are
    string literals; so are messages, which must not carry such figures either)."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            out.append((tok.start[0], tok.string))
    return out


def offenders(path: Path) -> list[str]:
    return [f"{path.relative_to(PACKAGE.parent)}:{line}: {m.group(0)!r}"
            for line, text in prose(path.read_text(encoding="utf-8"))
            for m in [FORBIDDEN.search(text)] if m]


def test_no_measured_figures_dates_or_cpu_names_in_the_package():
    bad = [o for path in sorted(PACKAGE.rglob("*.py")) for o in offenders(path)]
    assert bad == [], ("say why and link docs/performance.md instead of:\n  " + "\n  ".join(bad))


def test_the_check_finds_each_kind(tmp_path):
    probe = tmp_path / "probe.py"
    for text in ("# 0.2 CPU-s a task", '"""Measured 2026-12-03."""', "# on AMD Zen 4", "x = 1  # an EPYC host"):
        probe.write_text(text + "\n")
        assert FORBIDDEN.search(prose(probe.read_text())[0][1]), text
    probe.write_text("# one pass over the bytes, not eleven (docs/performance.md)\nzen = 4\n")
    assert not [t for _, t in prose(probe.read_text()) if FORBIDDEN.search(t)]
