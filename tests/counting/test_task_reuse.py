"""The per-process pools of a count task's working arrays (freqgap/runtime/task_reuse.py)."""

from __future__ import annotations

import json

import pytest

from freqgap.runtime.task_reuse import FINDERS, READER_SCRATCH, Pool
from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")


def test_a_returned_object_is_leased_again_and_a_held_one_is_not():
    pool = Pool()
    made = []

    def make():
        made.append(object())
        return made[-1]

    with pool.lease("k", make) as first:
        with pool.lease("k", make) as second:      # held: the second user gets its own
            assert second is not first
    assert pool.free_count("k") == 2
    with pool.lease("k", make) as again:
        assert again in (first, second)
    assert len(made) == 2


def test_an_object_is_dropped_after_an_error_and_old_keys_are_forgotten():
    pool = Pool(keep=2)
    with pytest.raises(RuntimeError):
        with pool.lease("k", dict):
            raise RuntimeError("task failed")
    assert pool.free_count("k") == 0
    for key in ("a", "b", "c"):
        with pool.lease(key, dict):
            pass
    assert [pool.free_count(k) for k in ("a", "b", "c")] == [0, 1, 1]


def test_a_failed_lease_takes_no_place_from_another_keys_object():
    pool = Pool(keep=2)
    for key in ("a", "b"):
        with pool.lease(key, dict):
            pass
    with pytest.raises(RuntimeError):
        with pool.lease("c", dict):
            raise RuntimeError("task failed")
    with pool.lease("d", dict):
        pass
    assert [pool.free_count(k) for k in ("a", "b", "c", "d")] == [0, 1, 0, 1]


def _rows(texts):
    payload = b"\n".join(json.dumps({"text": t, "meta": {"pile_set_name": "s"}}).encode() for t in texts)
    return [(0, 1, payload, False, None)]


def _counts(batches):
    out = {}
    for batch in batches:
        for kind, key, n in zip(*(batch.column(i).to_pylist() for i in range(3))):
            out[(kind, key)] = out.get((kind, key), 0) + n
    return out


def test_count_tasks_reuse_the_finder_and_never_share_a_held_scratch():
    """A finished count task gives its finder and reader scratch back; a task that starts
    while a scratch is held gets another one, and the counts do not depend on reuse."""
    from freqgap.counting.engines import engine_name
    from freqgap.counting.partials import count_lines
    from freqgap.counting.rules import TermRules

    if engine_name() != "numba":
        pytest.skip("the pools serve the compiled engine")
    rules = TermRules(window=7)
    big = ["12 hours " * 20_000 + "5 days 17"]            # one long document, then small ones
    small = ["3 days and 4 hours", "7 8 9 10 11 12", "no terms here"]
    first = _counts(count_lines(_rows(big), rules, "fail", {0: "big"}))
    assert FINDERS.free_count(rules) == 1
    with FINDERS.lease(rules, lambda: None) as finder:
        grown = finder._found.shape[1]
    with READER_SCRATCH.lease("json", dict) as held:
        assert held.get("n", 0) >= len(_rows(big)[0][2])     # grown by the long document
        before = dict(held)
        text_start = held["arrays"][0][:64].copy()           # the long document's text
        reused = _counts(count_lines(_rows(small), rules, "fail", {0: "small"}))
        assert held.keys() == before.keys() and all(held[k] is before[k] for k in held)
        assert (held["arrays"][0][:64] == text_start).all()   # not written by the other task
    with FINDERS.lease(rules, lambda: None) as finder:       # the same finder, as grown
        assert finder is not None and finder._found.shape[1] == grown
    FINDERS._free.clear()
    READER_SCRATCH._free.clear()
    assert _counts(count_lines(_rows(small), rules, "fail", {0: "small"})) == reused
    assert _counts(count_lines(_rows(big), rules, "fail", {0: "big"})) == first
