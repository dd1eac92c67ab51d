"""Help is instant, complete and consistent: every `--help` answers in well under a second,
no flag lacks help text, no help shows a machine path, and `make help` lists every target."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from freqgap.cli import COMMANDS, build_parser

REPO = Path(__file__).resolve().parents[2]
HELP_LIMIT_S = 1.0     # wall clock per `--help`, in a fresh interpreter (measured: 0.1-0.3 s)


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, parser) of every parser below `parser`, itself included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subparsers(sub, path + (name,))


def _all_commands() -> list[tuple[str, ...]]:
    return [path for path, _ in _subparsers(build_parser(all_commands=True))]


def _freqgap() -> list[str]:
    script = Path(sys.executable).parent / "freqgap"
    return [str(script)] if script.exists() else [sys.executable, "-m", "freqgap"]


@pytest.mark.parametrize("words", _all_commands(), ids=lambda w: " ".join(w) or "freqgap")
def test_help_is_instant(words):
    start = time.monotonic()
    out = subprocess.run([*_freqgap(), *words, "--help"], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    elapsed = time.monotonic() - start
    assert out.returncode == 0, out.stderr
    assert "usage: freqgap" in out.stdout
    assert elapsed < HELP_LIMIT_S, f"freqgap {' '.join(words)} --help took {elapsed:.2f} s"


def test_help_imports_no_heavy_library():
    """What keeps help instant: building every parser imports none of the heavy stacks."""
    code = ("import sys; from freqgap.cli import build_parser; build_parser(all_commands=True); "
            "heavy = [m for m in ('torch', 'transformers', 'pyspark', 'duckdb', 'matplotlib', "
            "'polars', 'pandas', 'pyarrow', 'numpy') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=REPO, check=True)
    assert out.stdout.strip() == ""


def test_every_flag_and_command_has_help():
    missing = []
    for words, parser in _subparsers(build_parser(all_commands=True)):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{' '.join(words)} {a.dest}" for a in action._choices_actions
                            if not a.help]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{' '.join(words)} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_help_shows_no_machine_path_and_defaults_from_conf():
    machine = [str(REPO), str(Path.home()), sys.prefix]
    for words, parser in _subparsers(build_parser(all_commands=True)):
        text = parser.format_help()
        for path in machine:
            assert path not in text, f"freqgap {' '.join(words)} --help shows {path}"
    count = " ".join(build_parser("count")._subparsers._group_actions[0].choices["count"]
                     .format_help().split())
    assert "(default: out/counts)" in count and "(conf/terms.yaml: 5)" in count


def test_every_command_is_in_the_table_and_has_run():
    import importlib

    for name, (module, summary) in COMMANDS.items():
        mod = importlib.import_module(module)
        assert callable(mod.add_arguments) and callable(mod.run) and summary


def test_suite_benchmarks_match_the_pipeline():
    from freqgap.cli.suite import BENCHMARKS
    from freqgap.suites.pipeline import SUITES

    assert set(BENCHMARKS) == set(SUITES)


def _make_targets() -> set[str]:
    """Every explicit target of the Makefile and mk/*.mk, from make's own database."""
    db = subprocess.run(["make", "-qp"], capture_output=True, text=True, cwd=REPO, timeout=60).stdout
    targets, skip = set(), False
    for line in db.splitlines():
        if line.startswith("# Not a target:"):
            skip = True
            continue
        m = re.match(r"^([a-zA-Z0-9][a-zA-Z0-9_-]*):", line)
        if m and not skip:
            targets.add(m.group(1))
        skip = False
    return targets


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_help_lists_every_target():
    env = {**os.environ, "MAKEFLAGS": ""}
    listed = subprocess.run(["make", "--no-print-directory", "help"], capture_output=True,
                            text=True, cwd=REPO, timeout=60, env=env, check=True).stdout
    words = set()
    for line in listed.splitlines():
        left = line.split("  ", 2)[1] if line.startswith("  make ") else ""
        words.update(left.replace("make ", "").split())
    targets = _make_targets()
    assert len(targets) > 20
    assert sorted(targets - words) == [], "targets without a `## description` in make help"


JOBS = {"count_terms": "count", "make_instances": "instances", "predict": "predict",
        "gaps": "gaps", "import_lm_eval": "import-lm-eval", "eval_suite": "suite",
        "generate_corpus": "corpus", "train_lm": "train", "simulate": "simulate"}


def test_every_job_script_is_a_shim_of_its_subcommand():
    assert sorted(p.stem for p in (REPO / "jobs").glob("*.py")) == sorted(JOBS)
    for script, command in JOBS.items():
        out = subprocess.run([sys.executable, str(REPO / "jobs" / f"{script}.py"), "--help"],
                             capture_output=True, text=True, timeout=60, cwd=REPO.parent)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"usage: freqgap {command} "), script


def test_shared_flags_work_before_and_after_a_nested_subcommand():
    for argv in (["suite", "--verbose", "neqa"], ["suite", "neqa", "--verbose"]):
        args = build_parser("suite").parse_args(argv + ["--data", "x", "--models", "m", "--out", "o"])
        assert args.verbose is True and args.models == ["m"]
    args = build_parser("suite").parse_args(["suite", "tinad", "--data", "x", "--models", "m",
                                             "--out", "o"])
    assert args.verbose is False and args.conf is None


@pytest.mark.parametrize("action, rest", [
    ("demo", ["--steps", "8"]),
    ("gaps", ["--counts", "c", "--instances", "i", "--predictions", "p"]),
])
def test_dynamics_actions_take_the_shared_flags_before_and_after(action, rest, tmp_path):
    for argv in (["dynamics", "--verbose", "--conf", str(tmp_path), action],
                 ["dynamics", action, "--verbose", "--conf", str(tmp_path)]):
        args = build_parser("dynamics").parse_args(argv + rest)
        assert args.verbose is True and args.conf == str(tmp_path) and args.action == action
    args = build_parser("dynamics").parse_args(["dynamics", action] + rest)
    assert args.verbose is False and args.conf is None
