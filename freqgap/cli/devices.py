"""`--device`: checked against what this torch can use before anything is loaded.

A device that the installed torch cannot use (`cuda` on its CPU build, a GPU index past the
last one, a misspelling such as `gpu`) used to surface as a traceback from deep inside
model loading, after the prompts and weights had been read. The argparse type below turns
each of them into one line at parse time; torch is imported only for an accelerator name.
"""

from __future__ import annotations

import argparse
import re

_NAME = re.compile(r"(cpu|cuda|mps)(?::(\d+))?")


def _cuda_problem(index: int | None) -> str | None:
    import torch

    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        return (f"this torch {torch.__version__} ({build}) sees no CUDA device; use --device cpu, "
                "or install torch's CUDA build on a machine with a GPU (README, \"GPU inference\")")
    count = torch.cuda.device_count()
    if index is not None and index >= count:
        return f"only {count} CUDA device(s) are visible (cuda:0 … cuda:{count - 1})"
    return None


def _mps_problem() -> str | None:
    import torch

    if not torch.backends.mps.is_available():
        return "this torch sees no Apple MPS device; use --device cpu"
    return None


def device_problem(text: str) -> str | None:
    """Why `text` is not a device this torch can use, or None when it is."""
    m = _NAME.fullmatch(text.strip().lower())
    if not m:
        return "not a device name; use cpu, cuda, cuda:N (a GPU index) or mps"
    kind, index = m.group(1), m.group(2)
    if kind == "cpu":
        return None if index in (None, "0") else "the CPU has no index; use cpu"
    if kind == "mps":
        return _mps_problem()
    return _cuda_problem(None if index is None else int(index))


def device_name(text: str) -> str:
    """argparse type of --device: the normalised name, or one line saying why not."""
    problem = device_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}")
    return text.strip().lower()
