"""Flags shared by every subcommand: one spelling per concept, checked before any work.

Every subcommand spells a concept the same way (`--out` for its output directory, comma
lists, `--limit`, `--seed(s)`, `--k`, `--model(s)`, `--revision(s)`, `--device`,
`--dtype`, `--verbose`, `--conf`). Numeric values are validated by their argparse type, so
a bad one stops the command with one line before anything is read or started. This module
imports nothing heavy: `freqgap X --help` must answer at once.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Callable

from freqgap.errors import UsageError
from freqgap.outdir import writable_dir  # noqa: F401 - re-exported: the one check (with the claim)

MIN_PROGRESS_INTERVAL_S = 0.5


class Parser(argparse.ArgumentParser):
    """argparse with the one error model: `freqgap <cmd>: error: <what>`, exit 2, one line."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's line breaks; appends a flag's default when it has one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or "default" in text or default in (None, False, [], "")
                or default is argparse.SUPPRESS or not action.option_strings):
            return text
        shown = ",".join(map(str, default)) if isinstance(default, (list, tuple)) else default
        return f"{text} (default: {str(shown).replace('%', '%%')})"


# ----------------------------------------------------------------------------- value types

def _typed(name: str, convert: Callable[[str], Any], ok: Callable[[Any], bool], what: str):
    """An argparse type that converts and checks, with a message naming the rule."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:      # int()/float() of the text only: not a number
            raise argparse.ArgumentTypeError(f"{what} expected, not {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{what} expected, not {text!r}")
        return value

    parse.__name__ = name
    return parse


positive_int = _typed("positive_int", int, lambda v: v > 0, "an integer >= 1")
non_negative_int = _typed("non_negative_int", int, lambda v: v >= 0, "an integer >= 0")
positive_float = _typed("positive_float", float, lambda v: v > 0 and v == v and v != float("inf"),
                        "a finite number > 0")
non_negative_float = _typed("non_negative_float", float,
                            lambda v: v >= 0 and v == v and v != float("inf"), "a finite number >= 0")
progress_interval = _typed("progress_interval", float,
                           lambda v: MIN_PROGRESS_INTERVAL_S <= v < float("inf"),
                           f"seconds >= {MIN_PROGRESS_INTERVAL_S}")


def comma_list(item: Callable[[str], Any] = str, name: str = "comma_list"):
    """'a,b' -> [item('a'), item('b')]; empty items are dropped, an empty list refused."""

    def parse(text: str) -> list[Any]:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"a comma-separated list expected, not {text!r}")
        return [item(p) for p in parts]

    parse.__name__ = name
    return parse


str_list = comma_list(str, "list")
int_list = comma_list(non_negative_int, "int_list")


# ----------------------------------------------------------------------------- shared flags

def add_out(p: argparse.ArgumentParser, default: str | None, what: str) -> None:
    """--out DIR: the stage's output directory (relative paths from the current directory)."""
    p.add_argument("--out", default=default, required=default is None, metavar="DIR",
                   help=f"output directory: {what}")


def add_force(p: argparse.ArgumentParser, what: str) -> None:
    """--force: the output guard (freqgap/outdir.py) replaces a result of other settings."""
    p.add_argument("--force", action="store_true", help=what)


def add_limit(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--limit", type=positive_int, metavar="N", help=f"at most N {what} (quick runs)")


def add_seed(p: argparse.ArgumentParser, default: int | None, what: str) -> None:
    p.add_argument("--seed", type=non_negative_int, default=default, help=what)


def add_seeds(p: argparse.ArgumentParser, default: list[int] | None, what: str) -> None:
    p.add_argument("--seeds", type=int_list, default=default, metavar="S,S,…",
                   help=f"comma-separated seeds: {what}")


def add_k(p: argparse.ArgumentParser, default: list[int] | None, what: str) -> None:
    p.add_argument("--k", type=int_list, default=default, metavar="K,K,…",
                   help=f"comma-separated numbers of shots: {what}")


def add_model(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--model", required=required,
                   help="alias in conf/models.yaml, Hugging Face id, or local model directory")


def add_models(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--models", type=str_list, required=required, metavar="M,M,…",
                   help="comma-separated aliases (conf/models.yaml), Hugging Face ids or "
                        "local model directories")


def add_revision(p: argparse.ArgumentParser) -> None:
    p.add_argument("--revision", help="model revision: branch, tag or commit (e.g. step1000 "
                                      "for Pythia; default: the registry's or main)")


def add_device(p: argparse.ArgumentParser) -> None:
    """--device, checked against what the installed torch can use while parsing."""
    from freqgap.cli.devices import device_name

    p.add_argument("--device", type=device_name,
                   help="cpu, cuda, cuda:1, mps … (default: cuda when available)")


def add_dtype(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dtype", choices=["float32", "float16", "bfloat16"],
                   help="weights' dtype (default: float32 on the CPU, the registry's on a GPU)")


def add_batch_size(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--batch-size", type=positive_int, metavar="N", help=what)


def add_progress_interval(p: argparse.ArgumentParser, default: float = 10.0) -> None:
    p.add_argument("--progress-interval", type=progress_interval, default=default, metavar="S",
                   help=f"seconds between progress lines (at least {MIN_PROGRESS_INTERVAL_S})")


def common_parent(nested: bool = False) -> argparse.ArgumentParser:
    """--conf, --online and --verbose, accepted by every subcommand. A nested subcommand (`suite
    neqa`) gets them without defaults, so it does not undo `freqgap suite --verbose neqa`."""
    default = argparse.SUPPRESS if nested else None
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--conf", metavar="DIR", default=default,
                        help="directory of YAML files that replace those of the same name in "
                             "the default conf/ (also: $FREQGAP_CONF)")
    parent.add_argument("--online", action="store_true", default=default if nested else False,
                        help="let Hugging Face libraries download models (default: offline; "
                             "also: FREQGAP_ONLINE=1)")
    parent.add_argument("--verbose", action="store_true",
                        default=default if nested else False,
                        help="show libraries' logs (Spark INFO, transformers) as well")
    return parent


def apply_conf_dir(value: str | None) -> None:
    """Make --conf DIR the override directory for every later conf/ read (and subprocess)."""
    from freqgap.paths import CONF_ENV

    if value is None:
        return
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UsageError(f"--conf {value}: not a directory; give a directory holding YAML "
                         "files that replace those of conf/ (e.g. gaps.yaml)")
    os.environ[CONF_ENV] = str(path.resolve())


def existing_path(option: str, value: str | os.PathLike, kind: str = "file or directory") -> Path:
    """Refuse a local input that does not exist, before any work starts."""
    path = Path(value).expanduser()
    if not path.exists():
        raise UsageError(f"{option} {value}: no such {kind}")
    return path
