"""A process's big working arrays, kept from one count task to the next.

Spark reuses a Python worker for task after task (`spark.python.worker.reuse`), and each count
task used to build its compiled finder (`compiled.CompiledFinder`: candidate arrays sized by
the largest chunk it has seen, vocabulary-sized tables) and the JSON reader's scratch
(`jsonscan.extract_records`) anew. A chunk as big as one whole document makes both grow: the
real-text corpus holds WordNet's dictionary as one 31.8 MB line, for which the reader's
scratch and the finder's candidate arrays took some 1.6 GB of address space and 100 MB of
heap in every task that met it. Freed at each task's end and made again in the next, they
left glibc's heap fragmented, so it grew in every run and the kernel zeroed fresh pages for
it (perf: the page faults of warm W = 10 runs in the JSON reader, the key-sum merges and
memmove). Kept in the process, they are made once: see docs/counting.md, "Measured".

An object is *leased*: while a task holds it nobody else in the process gets it (two count
generators iterated side by side get two), and it comes back only when the task ends
normally; after an error, or a generator closed early, it is dropped, since its state is
not known.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Hashable, Iterator, TypeVar

from freqgap.runtime import enabled as runtime_enabled

T = TypeVar("T")


class Pool:
    """Free objects by key; the `keep` keys used last are kept, older ones dropped (a
    notebook that counts under many rule sets does not keep a finder for each)."""

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._free: dict[Hashable, list] = {}

    @contextmanager
    def lease(self, key: Hashable, make: Callable[[], T]) -> Iterator[T]:
        """A free object for `key`, or `make()`; given back when the with-block ends
        without an exception."""
        if not runtime_enabled():          # stock: made for each task, as PySpark would
            yield make()
            return
        free = self._free.pop(key, [])
        obj = free.pop() if free else make()
        if free:
            self._free[key] = free            # most recently used last
        yield obj
        # Only a key with a free object holds a place: a lease that failed leaves none,
        # so it can't push out another key's object.
        back = self._free.pop(key, [])
        back.append(obj)
        self._free[key] = back
        while len(self._free) > self.keep:
            del self._free[next(iter(self._free))]

    def free_count(self, key: Hashable) -> int:
        return len(self._free.get(key, ()))


FINDERS = Pool()            # compiled finders by TermRules
READER_SCRATCH = Pool()     # the JSON reader's arrays (one key)
