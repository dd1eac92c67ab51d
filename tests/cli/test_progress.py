"""Progress lines: whole counts as integers, a readable rate, an ETA (issue 40, item 7)."""

from __future__ import annotations

import io

from freqgap.progress import Progress, format_amount, format_rate


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_whole_counts_print_as_integers_with_rate_and_eta():
    clock, out = Clock(), io.StringIO()
    p = Progress("predict demo", total=1982, unit="prompts", interval=0, stream=out, clock=clock)
    clock.now = 10.0
    p.update(done=400, force=True)
    line = out.getvalue().strip()
    assert line.startswith("[predict demo] 400/1,982 prompts (20%), 40 prompts/s, ETA 40s")
    assert ".0" not in line


def test_a_short_stage_of_steps():
    clock, out = Clock(), io.StringIO()
    p = Progress("gaps", total=6, unit="steps", interval=0, stream=out, clock=clock)
    clock.now = 0.226
    p.update(advance=1, force=True)
    assert out.getvalue().startswith("[gaps] 1/6 steps (17%), 4.42 steps/s, ETA 1s")


def test_fractional_amounts_and_slow_rates():
    assert format_amount(12.25) == "12.2" and format_amount(3.0) == "3" and format_amount(1e6) == "1,000,000"
    assert format_rate(0.004, "steps") == "4m10s per step"
    assert format_rate(2500.0, "MB") == "2,500 MB/s"
    assert format_rate(0.0, "tasks") == "? tasks/s"
