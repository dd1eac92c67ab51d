"""A spy on freqgap.inference.hf.library_output, shared by the --verbose tests of predict
(tests/inference) and suite (tests/suites): what a model load was told, with the real
setting still applied."""

from __future__ import annotations


def spy_library_output(monkeypatch) -> list[bool]:
    """Record the `verbose` of every library_output call from now on (undone by monkeypatch)."""
    from freqgap.inference import hf

    seen: list[bool] = []
    real = hf.library_output

    def spy(verbose):
        seen.append(verbose)
        return real(verbose)

    monkeypatch.setattr(hf, "library_output", spy)
    return seen
