"""`freqgap`: one command with a subcommand per stage and tool.

The table below maps each subcommand to the module that defines it (`add_arguments(parser)`
and `run(args) -> int`) and a one-line summary. Only the chosen subcommand's module is
imported, and those modules import their stage lazily inside `run`, so `freqgap --help`
and `freqgap X --help` answer at once. Adding a subcommand is one line in COMMANDS.

The error model (freqgap.errors): a `FreqgapError` raised anywhere becomes
`freqgap <cmd>: error: <message>` on stderr and exit status 2, without a traceback;
argparse's own errors are one line with exit 2 as well; anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "count": ("freqgap.cli.count", "exact counts of numbers, words and their windowed pairs "
                                   "and triples in a corpus (Spark)"),
    "count-report": ("freqgap.cli.count_report", "the top number terms and a plot of what "
                                                 "`count` counted"),
    "instances": ("freqgap.cli.instances", "task instances, term sets and few-shot prompts "
                                           "from the counts"),
    "predict": ("freqgap.cli.predict", "greedy few-shot answers of a causal LM to the prompts"),
    "gaps": ("freqgap.cli.gaps", "the performance gap Δ from counts, instances and "
                                 "predictions (DuckDB)"),
    "query": ("freqgap.cli.query", "run SQL on the database of a gaps run, read-only"),
    "import-lm-eval": ("freqgap.cli.import_lm_eval", "import lm-evaluation-harness "
                                                     "--log_samples logs as predictions"),
    "export-lm-eval": ("freqgap.cli.export_lm_eval", "the prompts as lm-evaluation-harness "
                                                     "tasks (YAML + local dataset)"),
    "suite": ("freqgap.cli.suite", "negation, quantifier and QA suites: neqa, tinad, "
                                   "quantifiers, qa"),
    "corpus": ("freqgap.cli.corpus", "write a synthetic Pile-format corpus (conf/corpus.yaml)"),
    "train": ("freqgap.cli.train", "train a small GPT-NeoX LM and its tokenizer on a corpus"),
    "simulate": ("freqgap.cli.simulate", "Zipf vs uniform corpus: the gap caused by frequency "
                                         "alone"),
    "dynamics": ("freqgap.cli.dynamics", "Δ over training time: counts as of every checkpoint, Δ per checkpoint"),
    "demo": ("freqgap.cli.demo", "the whole chain on the bundled sample corpus and demo model"),
    "demo-entities": ("freqgap.cli.demo_entities", "invented facts, a model trained on them, "
                                                   "QA accuracy by relevant-document count"),
}


def job_main(command: str, argv: list[str] | None = None) -> int:
    """`jobs/<script>.py` shims: the same as `freqgap <command> ARGS`. Under spark-submit
    PySpark is then imported from its installed package, not from the zip Spark put first
    on the path (a cold count's driver starts faster: docs/performance.md)."""
    from freqgap.runtime.pyspark_path import prefer_installed_packages

    prefer_installed_packages()
    return main([command, *(sys.argv[1:] if argv is None else argv)])


def _chosen(argv: list[str]) -> str | None:
    """The subcommand named in argv (the first word that is not an option), if any."""
    words = iter(argv)
    for word in words:
        if word == "--conf":
            next(words, None)           # its value
        elif word in COMMANDS:
            return word
        elif not word.startswith("-"):
            return None
    return None


def build_parser(command: str | None = None, all_commands: bool = False):
    """The `freqgap` parser; only `command`'s arguments (or all, for tests) are filled in."""
    from freqgap.cli.common import HelpFormatter, Parser, common_parent

    parser = Parser(prog="freqgap", formatter_class=HelpFormatter,
                    description="freqgap: exact pretraining-corpus term counts joined with "
                    "few-shot accuracy, the performance gap of Razeghi et al. (2022).\n\n"
                    "Run `freqgap COMMAND --help` for a command's options. Relative paths are "
                    "taken from the current directory; --conf DIR (or $FREQGAP_CONF) replaces "
                    "files of conf/.")
    from freqgap import __version__
    parser.add_argument("--version", action="version", version=f"freqgap {__version__}",
                        help="print the version and exit")
    parser.add_argument("--online", dest="_global_online", action="store_true",
                        help="let Hugging Face libraries use the network (default: offline, "
                             "models from the local cache; also: FREQGAP_ONLINE=1)")
    parser.add_argument("--conf", dest="_global_conf", metavar="DIR",
                        help="directory of YAML files that replace those of the same name in "
                             "the default conf/ (also: $FREQGAP_CONF); also accepted after "
                             "COMMAND")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    parent = common_parent()
    for name, (module_name, summary) in COMMANDS.items():
        sp = sub.add_parser(name, help=summary, description=summary, parents=[parent],
                            formatter_class=HelpFormatter)
        if all_commands or name == command:
            module = importlib.import_module(module_name)
            if module.__doc__:
                sp.description = module.__doc__.strip()
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run)
            _name_nested(sp)
    return parser


def _name_nested(parser) -> None:
    """Nested subcommands (`suite neqa`, `dynamics demo`) name themselves in error lines."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.set_defaults(_prog=sub.prog)
                _name_nested(sub)


def _conf_option(argv: list[str]) -> str | None:
    """The value of --conf, read before the parsers are built (their defaults come from it)."""
    for i, word in enumerate(argv):
        if word == "--conf" and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("--conf="):
            return word.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `freqgap` console script and of the `jobs/*.py` shims."""
    from freqgap.cli.common import apply_conf_dir
    from freqgap.cli.offline import apply_offline
    from freqgap.errors import FreqgapError

    argv = list(sys.argv[1:] if argv is None else argv)
    apply_offline(argv)                # before any Hugging Face library is imported
    command = _chosen(argv)
    prog = f"freqgap {command}" if command else "freqgap"
    try:
        apply_conf_dir(_conf_option(argv))
        args, unknown = build_parser(command).parse_known_args(argv)
        prog = getattr(args, "_prog", None) or f"freqgap {args.command}"
        if unknown:                   # argparse would name the top-level parser, not the command
            print(f"{prog}: error: unrecognized arguments: {' '.join(unknown)} "
                  f"(see `{prog} --help`)", file=sys.stderr)
            return 2
        args._argv = argv
        from freqgap.cli.remote_paths import run_with_uris

        return run_with_uris(args)     # bucket inputs fetched, outputs published; else refused
    except BrokenPipeError:
        # The reader of our stdout went away (`freqgap query … | head`): not an error of ours.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except FreqgapError as exc:
        sys.stdout.flush()
        message = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        print(f"{prog}: error: {message or type(exc).__name__}", file=sys.stderr, flush=True)
        return 2
