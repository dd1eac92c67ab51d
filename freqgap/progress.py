"""A progress line with rate and ETA, printed at most every `interval` seconds.

Used by every stage that can run longer than a few seconds. Writes to stderr so that a
stage's stdout stays clean for its summary.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    """`1h02m`, `3m05s`, `42s`."""
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def format_amount(value: float) -> str:
    """A whole count as an integer (`400`, `1,982`), a fractional one (MB) with one decimal."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


def format_rate(per_second: float, unit: str) -> str:
    """`12.3 prompts/s` (three significant digits), or, below one unit a second, how long
    one unit takes (`4m10s per step`): a reader of a slow stage wants that, not `0.004/s`."""
    if per_second <= 0:
        return f"? {unit}/s"
    if per_second >= 1:
        return f"{per_second:,.3g} {unit}/s" if per_second < 1000 else f"{per_second:,.0f} {unit}/s"
    return f"{format_duration(1 / per_second)} per {unit.rstrip('s') or unit}"


class Progress:
    """Tracks done/total units and prints `label done/total unit, rate, ETA` lines."""

    def __init__(self, label: str, total: float | None, unit: str = "items",
                 interval: float = 10.0, stream: TextIO | None = None,
                 scale: float = 1.0, clock=time.monotonic) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.scale = scale
        self.clock = clock
        self.start = clock()
        self.last_print = self.start
        self.done = 0.0

    def rate(self) -> float:
        """Units per second since the start."""
        elapsed = self.clock() - self.start
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta(self) -> float:
        """Seconds left at the current rate (inf when unknown)."""
        rate = self.rate()
        if self.total is None or rate <= 0:
            return float("inf")
        return max(self.total - self.done, 0) / rate

    def line(self, extra: str = "") -> str:
        """The text of one progress line."""
        total = "?" if self.total is None else format_amount(self.total / self.scale)
        pct = "" if not self.total else f" ({100 * self.done / self.total:.0f}%)"
        text = (f"[{self.label}] {format_amount(self.done / self.scale)}/{total} {self.unit}"
                f"{pct}, {format_rate(self.rate() / self.scale, self.unit)}, "
                f"ETA {format_duration(self.eta())}, elapsed {format_duration(self.clock() - self.start)}")
        return f"{text}, {extra}" if extra else text

    def update(self, done: float | None = None, advance: float = 0.0, extra: str = "",
               force: bool = False) -> bool:
        """Set or advance the count; print if the interval has passed. Returns True if printed."""
        if done is not None:
            self.done = done
        self.done += advance
        now = self.clock()
        if force or now - self.last_print >= self.interval:
            self.last_print = now
            print(self.line(extra), file=self.stream, flush=True)
            return True
        return False
