"""numba's cached code loads without the compiler's registries, and compiling still works
after such a load (freqgap/runtime/numba_cache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from freqgap.runtime import enabled as runtime_enabled, numba_cache

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]

MODULE = textwrap.dedent("""
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def doubled_sum(values):
        out = np.empty(values.shape[0], values.dtype)      # an array of numba's runtime
        for i in range(values.shape[0]):
            out[i] = 2 * values[i]
        return out.sum()
""")

# Calls doubled_sum once per dtype named in argv; after each, whether numba's compiler had
# refreshed its registries by then.
SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from numba.core import base
    refreshes = []
    original = base.BaseContext.refresh
    base.BaseContext.refresh = lambda self: (refreshes.append(1), original(self))[1]
    from freqgap.counting.engines import words  # noqa: F401 - installs the patch, as the finder does
    import cached_module
    for dtype in sys.argv[1:]:
        print(cached_module.doubled_sum(np.arange(10, dtype=dtype)), bool(refreshes))
""")


def _run(tmp_path: Path, *dtypes: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
           "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *dtypes], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()


def test_cached_code_loads_without_a_refresh_and_a_new_signature_still_compiles(tmp_path):
    (tmp_path / "cached_module.py").write_text(MODULE)
    assert _run(tmp_path, "int64") == ["90", "True"]                  # compiled, then cached
    # int64 loads from the cache without numba's registries (and runs: its array comes from
    # numba's runtime); float64, not cached yet, then compiles as usual
    assert _run(tmp_path, "int64", "float64") == ["90", "False", "90.0", "True"]
    assert _run(tmp_path, "float64", "int64") == ["90.0", "False", "90", "False"]


def test_left_alone_on_a_numba_it_was_not_read_against(monkeypatch):
    import numba
    from numba.core import caching

    from freqgap.counting.engines import words  # noqa: F401 - installs the patch
    assert caching.Cache.load_overload is numba_cache._load_overload_without_refresh
    monkeypatch.setattr(caching.Cache, "load_overload", numba_cache.NUMBA_LOAD_OVERLOAD)
    monkeypatch.setattr(numba, "__version__", "0.99.0")
    assert numba_cache.load_cached_code_lazily() is False
    assert caching.Cache.load_overload is numba_cache.NUMBA_LOAD_OVERLOAD
    monkeypatch.setattr(numba, "__version__", numba_cache.CHECKED_VERSIONS[0])

    def changed(self, sig, target_context):
        return None
    monkeypatch.setattr(caching.Cache, "load_overload", changed)
    assert numba_cache.load_cached_code_lazily() is False
    assert caching.Cache.load_overload is changed
    monkeypatch.setattr(caching.Cache, "load_overload", numba_cache.NUMBA_LOAD_OVERLOAD)
    assert numba_cache.load_cached_code_lazily() is True
    assert caching.Cache.load_overload is numba_cache._load_overload_without_refresh


def test_the_finder_loaded_this_way_counts_as_the_numpy_one():
    """A fresh process whose finder comes from the cache this way (the suite compiled it
    already) counts a text exactly as the numpy engine does."""
    code = textwrap.dedent("""
        import json, os
        from numba.core import caching
        from freqgap.counting import partials
        from freqgap.runtime import numba_cache
        from freqgap.counting.rules import TermRules
        text = "In 1990 , 3 hours and 12 days ; 7 weeks 1990 12 3 4 5 6 7 8 years 10 \\u212a 5"
        record = json.dumps({"text": text}).encode()

        def counts(engine):
            os.environ["FREQGAP_ENGINE"] = engine
            got = {}
            for batch in partials.count_lines([(0, 1, record, False, None)], TermRules(), "fail", {0: "x"}):
                for kind, key, n in zip(*(c.to_pylist() for c in batch.columns)):
                    got[(kind, key)] = got.get((kind, key), 0) + n
            return got
        compiled = counts("numba")
        print(caching.Cache.load_overload is numba_cache._load_overload_without_refresh,
              compiled == counts("numpy"), len(compiled))
    """)
    partials_warm = ("from freqgap.counting import partials; from freqgap.counting.rules import TermRules; "
                     "list(partials.count_lines([(0, 1, b'{\"text\": \"5 hours 7\"}', False, None)], "
                     "TermRules(), 'fail', {0: 'x'}))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", partials_warm], env=env, check=True, timeout=600)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    patched, same, keys = proc.stdout.split()
    assert (patched, same) == ("True", "True") and int(keys) > 20
