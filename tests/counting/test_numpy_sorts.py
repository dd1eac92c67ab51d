"""numpy's AVX2 sorts on AMD Zen 4 (freqgap.runtime.numpy_sorts): which CPUs, which numpy
names, the user's own choice kept, and the setting in place before numpy's import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freqgap.runtime.numpy_sorts import avx512_targets, is_zen4, sort_environment
from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]


def cpuinfo(vendor: str, family: int, flags: str, processors: int = 2) -> str:
    block = (f"processor\t: {{n}}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: 17\n"
             f"model name\t: Some CPU\nflags\t\t: fpu sse2 avx2 {flags}\n")
    return "\n".join(block.format(n=n) for n in range(processors))


ZEN4 = cpuinfo("AuthenticAMD", 25, "avx512f avx512dq avx512bw avx512vl")
ZEN3 = cpuinfo("AuthenticAMD", 25, "")                      # family 19h without AVX-512
ZEN5 = cpuinfo("AuthenticAMD", 26, "avx512f avx512dq avx512bw avx512vl")
INTEL = cpuinfo("GenuineIntel", 6, "avx512f avx512dq avx512bw avx512vl")


@pytest.mark.parametrize("text, expected", [(ZEN4, True), (ZEN3, False), (ZEN5, False), (INTEL, False),
                                            ("", False)])
def test_only_zen4_is_recognised(text, expected):
    assert is_zen4(text) is expected


def test_the_flag_must_be_a_whole_word():
    assert not is_zen4(cpuinfo("AuthenticAMD", 25, "avx512fx"))


@pytest.mark.parametrize("version, names", [
    ("2.4.6", "X86_V4 AVX512_ICL AVX512_SPR"), ("2.5.0", "X86_V4 AVX512_ICL AVX512_SPR"),
    ("3.0.0rc1", "X86_V4 AVX512_ICL AVX512_SPR"),
    ("2.3.5", "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"),
    ("2.0.0", "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR")])
def test_numpy_names_its_avx512_targets_by_version(version, names):
    assert avx512_targets(version) == names


def test_the_users_choice_is_kept():
    assert sort_environment(ZEN4, "2.4.6", {}) == {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
    assert sort_environment(ZEN4, "2.4.6", {"NPY_DISABLE_CPU_FEATURES": ""}) == {}
    assert sort_environment(ZEN4, "2.4.6", {"FREQGAP_NUMPY_AVX512_SORTS": "1"}) == {}
    assert sort_environment(INTEL, "2.4.6", {}) == {}


def _fresh(code: str, env: dict[str, str], *args: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES",
                                                              "FREQGAP_NUMPY_AVX512_SORTS")}
    out = subprocess.run([sys.executable, "-c", code, *args], env={**clean, **env, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.splitlines()[-1])


# The module loaded on its own, not through freqgap.counting (whose import already runs it
# with this machine's /proc/cpuinfo).
PROBE = (
    "import importlib.util, json, os, sys\n"
    f"spec = importlib.util.spec_from_file_location('numpy_sorts', {str(REPO / 'freqgap/runtime/numpy_sorts.py')!r})\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(module)\n"
    "prefer_fast_sorts = module.prefer_fast_sorts\n"
    "set_ = prefer_fast_sorts(sys.argv[1])\n"
    "import numpy._core._multiarray_umath as m\n"
    "again = prefer_fast_sorts()\n"
    "print(json.dumps({'set': set_, 'again': again, 'v4': bool(m.__cpu_features__.get('X86_V4')),\n"
    "                  'env': os.environ.get('NPY_DISABLE_CPU_FEATURES')}))\n")


def test_set_before_numpy_imports_so_numpy_leaves_avx512_aside(tmp_path):
    fake = tmp_path / "cpuinfo"
    fake.write_text(ZEN4)
    got = _fresh(PROBE, {}, str(fake))
    assert got["set"] == {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
    assert got["env"] == "X86_V4 AVX512_ICL AVX512_SPR"
    assert got["v4"] is False                   # numpy read it: its AVX-512 code is not dispatched
    assert got["again"] == {}                   # numpy imported: nothing more to do


def test_nothing_set_on_another_cpu_or_when_the_user_chose(tmp_path):
    fake = tmp_path / "cpuinfo"
    fake.write_text(INTEL)
    assert _fresh(PROBE, {}, str(fake))["set"] == {}
    fake.write_text(ZEN4)
    assert _fresh(PROBE, {"FREQGAP_NUMPY_AVX512_SORTS": "1"}, str(fake))["env"] is None
    assert _fresh(PROBE, {"NPY_DISABLE_CPU_FEATURES": "AVX512_SPR"}, str(fake))["env"] == "AVX512_SPR"
    assert _fresh(PROBE, {}, str(tmp_path / "missing"))["set"] == {}       # no /proc/cpuinfo


def test_importing_the_counting_package_sets_it_first():
    """The package's import runs it before any of its modules imports numpy (the workers'
    first import of the task code), with this machine's CPU."""
    got = _fresh("import json, os, freqgap.counting.partials, sys\n"
                 "print(json.dumps({'env': os.environ.get('NPY_DISABLE_CPU_FEATURES')}))", {})
    expected = sort_environment(Path("/proc/cpuinfo").read_text(errors="replace"),
                                __import__("importlib.metadata").metadata.version("numpy"), {})
    assert got["env"] == expected.get("NPY_DISABLE_CPU_FEATURES")
