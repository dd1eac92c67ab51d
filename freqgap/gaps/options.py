"""Settings of one `make gaps` run: conf/gaps.yaml, then command-line overrides.

One dataclass so that the job, the notebook, the benchmark and the tests all describe a run
the same way, and the manifest records exactly what was used.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from freqgap.config import ConfigError, load_conf
BINNINGS = ("rank", "quantile")
INTERVALS = ("keys", "seeds+keys")
FREQ_DEFS = ("1", "1,2", "1,y", "1,2,3", "1,2,y")


@dataclasses.dataclass
class GapsOptions:
    """Everything a run depends on; relative paths are taken from the current directory."""

    counts: str = "out/counts"
    instances: str = "out/instances"
    predictions: str = "out/predictions/*/"
    results: str = "results"
    models: list[str] | None = None
    tasks: list[str] | None = None
    freq_defs: list[str] | None = None
    binning: str = "rank"
    bin_percent: int = 10
    min_seen_keys: int = 20
    interval: str = "seeds+keys"
    boot_reps: int = 1000
    boot_seed: int = 0
    boot_level: float = 0.95
    memory_limit: str | None = "2GB"
    threads: int | None = None
    temp_directory: str | None = None
    tables: dict[str, Any] = dataclasses.field(default_factory=dict)
    task_labels: dict[str, str] = dataclasses.field(default_factory=dict)
    plots: dict[str, Any] = dataclasses.field(default_factory=dict)
    paper_reference: dict[str, Any] = dataclasses.field(default_factory=dict)
    paper_ks: list[int] = dataclasses.field(default_factory=lambda: [0, 2, 4, 8, 16])
    make_plots: bool = True
    # Accept counts other than those the instances were made from (docs/DATA.md).
    counts_mismatch_ok: bool = False
    # Other counts (another rule set over the same corpus): Δ over them too, and the shift
    # (freqgap.gaps.compare, docs/gaps.md).
    compare_counts: str | None = None

    def path(self, value: str) -> Path:
        """A configured path; a relative one is taken from the current directory, like
        every other command's paths."""
        return Path(value).expanduser()

    def check_predictions_pattern(self) -> None:
        """A folder holding prediction folders (`mypred`, not `mypred/*/`) is named as
        such, with the glob that selects them, before its missing manifest is reported
        as an unfinished stage."""
        import glob

        from freqgap.errors import UsageError
        from freqgap.manifest import MANIFEST_NAME

        for match in sorted(glob.glob(str(self.path(self.predictions)))):
            folder = Path(match)
            if not folder.is_dir() or (folder / MANIFEST_NAME).exists():
                continue
            inner = sorted(p.parent.name for p in folder.glob(f"*/{MANIFEST_NAME}"))
            if inner:
                shown = ", ".join(inner[:3]) + (", …" if len(inner) > 3 else "")
                raise UsageError(
                    f"--predictions {self.predictions}: {folder} holds prediction folders "
                    f"({shown}), not predictions itself; pass them with a glob: "
                    f"--predictions '{folder}/*/'")

    def validate(self) -> "GapsOptions":
        """Reject settings that would give a meaningless Δ, naming the setting."""
        if self.binning not in BINNINGS:
            raise ConfigError(f"gaps: binning must be one of {BINNINGS}, not {self.binning!r}")
        if not isinstance(self.bin_percent, int) or not 0 < self.bin_percent <= 50:
            raise ConfigError(f"gaps: bin_percent must be an integer in 1..50, not {self.bin_percent!r}")
        if self.binning == "quantile" and 100 % self.bin_percent:
            raise ConfigError(f"gaps: quantile binning needs a bin_percent that divides 100 "
                              f"(10 = the original's 10 bins), not {self.bin_percent}")
        if not isinstance(self.min_seen_keys, int) or self.min_seen_keys < 2:
            raise ConfigError(f"gaps: min_seen_keys must be an integer >= 2, not "
                              f"{self.min_seen_keys!r}")
        if self.interval not in INTERVALS:
            raise ConfigError(f"gaps: interval must be one of {INTERVALS}, not {self.interval!r}")
        if self.boot_reps < 0:
            raise ConfigError("gaps: bootstrap reps must be >= 0")
        if not 0 < self.boot_level < 1:
            raise ConfigError("gaps: bootstrap level must be in (0, 1)")
        if self.compare_counts is not None and \
                self.path(self.compare_counts).resolve() == self.path(self.counts).resolve():
            raise ConfigError(f"gaps: --compare-counts {self.compare_counts} is --counts itself; "
                              "give the counts of the other rule set")
        for d in self.freq_defs or []:
            if d not in FREQ_DEFS:
                raise ConfigError(f"gaps: unknown frequency definition {d!r}; known: {FREQ_DEFS}")
        return self

    def to_dict(self) -> dict[str, Any]:
        """The options as recorded in the manifest."""
        return dataclasses.asdict(self)


def options_from_conf(conf: dict[str, Any] | None = None, **overrides: Any) -> GapsOptions:
    """Options from conf/gaps.yaml (or a given mapping), with non-None overrides applied."""
    conf = load_conf("gaps") if conf is None else conf
    boot = conf.get("bootstrap") or {}
    db = conf.get("duckdb") or {}
    opts = GapsOptions(
        counts=conf.get("counts", "out/counts"),
        instances=conf.get("instances", "out/instances"),
        predictions=conf.get("predictions", "out/predictions/*/"),
        results=conf.get("results", "results"),
        models=conf.get("models"),
        tasks=conf.get("tasks"),
        freq_defs=[str(d) for d in conf["freq_defs"]] if conf.get("freq_defs") else None,
        binning=conf.get("binning", "rank"),
        bin_percent=conf.get("bin_percent", 10),
        min_seen_keys=conf.get("min_seen_keys", 20),
        interval=boot.get("interval", "seeds+keys"),
        boot_reps=int(boot.get("reps", 1000)),
        boot_seed=int(boot.get("seed", 0)),
        boot_level=float(boot.get("level", 0.95)),
        memory_limit=db.get("memory_limit", "2GB"),
        threads=db.get("threads"),
        temp_directory=db.get("temp_directory"),
        tables=conf.get("tables") or {},
        task_labels=conf.get("task_labels") or {},
        plots=conf.get("plots") or {},
        paper_reference=conf.get("paper_reference") or {},
        paper_ks=[int(k) for k in ((load_conf("tasks").get("grids") or {}).get("paper") or {})
                  .get("ks", [0, 2, 4, 8, 16])],
    )
    for name, value in overrides.items():
        if value is None:
            continue
        if not hasattr(opts, name):
            raise ConfigError(f"gaps: unknown option {name!r}")
        setattr(opts, name, value)
    return opts.validate()
