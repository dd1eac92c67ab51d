"""numpy's AVX2 sorts instead of its AVX-512 ones on AMD CPUs of family 19h with AVX-512,
where those run several times slower.

Why: the counting task sorts every chunk's window keys with numpy (`compiled._sort_keys`).
numpy dispatches its sorts to x86-simd-sort's AVX-512 code wherever the CPU has AVX-512,
and that code writes each partition step with a compress-store to memory (`vpcompressq`),
which AMD's family 19h cores with AVX-512 run as microcode (numpy/x86-simd-sort issue 6,
numpy PR 32690; measured: docs/performance.md). numpy reads
`NPY_DISABLE_CPU_FEATURES` once, when it is first imported, so this must run before that:
`freqgap/counting/__init__.py` calls it, ahead of every module that imports numpy, in the
driver, the worker daemon and every Python worker. Sorted values are the same either way.

It changes nothing where the user set `NPY_DISABLE_CPU_FEATURES` (or
`FREQGAP_NUMPY_AVX512_SORTS=1`), where numpy is already imported, or on any other CPU
(Intel's AVX-512 sorts are numpy's fastest; AMD's family 26 runs the compress-store fast).
"""

from __future__ import annotations

import os
import sys

from freqgap.runtime import enabled as runtime_enabled

# numpy's names of its AVX-512 dispatch targets: since 2.4 by x86-64 level, before by
# feature group (an unknown name only draws an ImportWarning, hence the version check).
AVX512_TARGETS_SINCE_2_4 = "X86_V4 AVX512_ICL AVX512_SPR"
AVX512_TARGETS_BEFORE_2_4 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
ZEN4_FAMILY = 25            # AMD family 19h: with AVX-512 only in its later models
NPY_VAR = "NPY_DISABLE_CPU_FEATURES"
OPT_OUT = "FREQGAP_NUMPY_AVX512_SORTS"


def cpu_fields(cpuinfo: str) -> dict[str, str]:
    """The fields of the first processor in /proc/cpuinfo's text ("vendor_id", "flags" ...)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def is_zen4(cpuinfo: str) -> bool:
    """Whether /proc/cpuinfo's text describes an AMD CPU of family 19h with AVX-512."""
    fields = cpu_fields(cpuinfo)
    return (fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == str(ZEN4_FAMILY)
            and "avx512f" in fields.get("flags", "").split())


def avx512_targets(numpy_version: str) -> str:
    """numpy's names of its AVX-512 targets for this numpy version ("2.4.6" -> since 2.4)."""
    major, minor = (int(part) for part in (numpy_version.split(".") + ["0"])[:2])
    return AVX512_TARGETS_SINCE_2_4 if (major, minor) >= (2, 4) else AVX512_TARGETS_BEFORE_2_4


def sort_environment(cpuinfo: str, numpy_version: str, environ: dict[str, str] | os._Environ) -> dict[str, str]:
    """The environment numpy should be imported with for fast sorts here: empty unless such
    an AMD CPU and the user chose nothing."""
    if NPY_VAR in environ or environ.get(OPT_OUT) == "1" or not is_zen4(cpuinfo):
        return {}
    return {NPY_VAR: avx512_targets(numpy_version)}


def prefer_fast_sorts(cpuinfo_path: str = "/proc/cpuinfo") -> dict[str, str]:
    """Set numpy's AVX-512 targets aside in this process (and so its children) if it runs
    on such an AMD CPU and numpy is not imported yet; returns what it set."""
    if "numpy" in sys.modules or not runtime_enabled():
        return {}
    try:
        with open(cpuinfo_path, encoding="ascii", errors="replace") as handle:
            cpuinfo = handle.read(1 << 14)        # the first processor's block is ~2 KB
    except OSError:
        return {}
    if not is_zen4(cpuinfo):       # the common case, without importlib.metadata (~30 ms)
        return {}
    from importlib import metadata

    try:
        changes = sort_environment(cpuinfo, metadata.version("numpy"), os.environ)
    except (metadata.PackageNotFoundError, ValueError):
        return {}
    os.environ.update(changes)
    return changes
