"""numba's cached machine code loaded without first building its whole compiler.

Why: loading a function from numba's on-disk cache (`cache=True`) starts with
`target_context.refresh()`, which imports and installs every registry of numba's lowering
and typing implementations, what compiling needs. Loading cached code needs none of it:
the object code is linked as it is and the function's type comes from the cache's index.
In the worker daemon's preload that refresh is most of the first count's cache loads
(docs/performance.md), and every process that counts with the compiled finder pays it
once, the daemon of a cold run included.

A compile still refreshes first (numba's compiler does it itself: `compiler.py`), so a cache
miss, a new signature or a function defined later all compile as before. The patch is
applied only to the numba version it was read against, and only while
`Cache.load_overload` is still the method read here; otherwise numba runs unchanged.
"""

from __future__ import annotations

CHECKED_VERSIONS = ("0.68.1",)
_EXPECTED_NAMES = ("refresh", "_guard_against_spurious_io_errors", "_load_overload")
NUMBA_LOAD_OVERLOAD = None        # numba's own method, once replaced here


def _load_overload_without_refresh(self, sig, target_context):
    """numba's Cache.load_overload without `target_context.refresh()`, but with the one step
    of it that running compiled code needs: numba's runtime (NRT: the allocator behind
    arrays made in compiled code) initialised, as `CPUContext.load_additional_registries`
    does first."""
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)
    # None when the `with` block swallows an exception: the dispatcher then compiles


def load_cached_code_lazily() -> bool:
    """Install the patch once; True when numba's cache loads now skip the refresh."""
    from freqgap.runtime import enabled as runtime_enabled

    if not runtime_enabled():
        return False
    import numba
    from numba.core import caching

    global NUMBA_LOAD_OVERLOAD
    current = caching.Cache.load_overload
    if current is _load_overload_without_refresh:
        return True
    if numba.__version__ not in CHECKED_VERSIONS or current.__code__.co_names != _EXPECTED_NAMES:
        return False
    NUMBA_LOAD_OVERLOAD = current
    caching.Cache.load_overload = _load_overload_without_refresh
    return True

