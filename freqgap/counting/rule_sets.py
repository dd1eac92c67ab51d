"""Named rule sets (SPEC §2, rule sets): `--rules NAME` takes its term-rule values from
conf/rule_sets.yaml, laid over conf/terms.yaml.

Why a name: a count is compared with a study's only under that study's rules, and a set
of values given flag by flag is easily given half; the name is recorded in the manifest
(when not the default) and the set's values cannot be changed by other flags.
"""

from __future__ import annotations

from typing import Any, Iterable

from freqgap.config import ConfigError, load_conf
from freqgap.counting.rules import RAZEGHI, RULE_SETS, TermRules

DEFAULT = RAZEGHI


def rule_set_values(name: str) -> dict[str, Any]:
    """The term-rule values of the named set (conf/rule_sets.yaml)."""
    sets = load_conf("rule_sets")
    if set(sets) != set(RULE_SETS):
        raise ConfigError(f"conf/rule_sets.yaml names {sorted(sets)}, but freqgap knows the rule "
                          f"sets {list(RULE_SETS)}: restore the file")
    if name not in sets:
        raise ConfigError(f"unknown rule set {name!r}: expected one of {', '.join(RULE_SETS)}")
    return dict(sets[name] or {})


def term_rules(name: str, overrides: dict[str, Any], extra_words: Iterable[str] = ()) -> TermRules:
    """The rules of conf/terms.yaml, then the named set's values, then `overrides` (None:
    not given). An override of a value the set fixes is refused, naming its flag (the
    setting's name as a flag: max_order -> --max-order), as are extra vocabulary words
    where the set fixes the vocabulary."""
    values = rule_set_values(name)
    extra_words = list(extra_words)
    clash = [k for k, v in overrides.items() if v is not None and k in values]
    if extra_words and "vocab" in values:
        clash.append("vocab")
    if clash:
        flags = ", ".join("--" + k.replace("_", "-") for k in sorted(clash))
        raise ConfigError(f"--rules {name} fixes {flags}: drop it, or count with --rules "
                          f"{DEFAULT} and your own values")
    data = {**{k: v for k, v in overrides.items() if v is not None}, **values}
    if name != DEFAULT:
        data["rule_set"] = name
    return TermRules.from_conf(data, extra_words=extra_words)
