"""`freqgap` runs offline unless the user opts in (`--online` or FREQGAP_ONLINE=1).

Without this, a model id that is not in the local Hugging Face cache made transformers
retry the hub for about a minute (dozens of log lines) on a machine without network, and
with network a typo in `--model` downloaded gigabytes unasked. Offline, such a model is
refused at once (freqgap.cli.model_check names the cache that was searched). An explicit
HF_HUB_OFFLINE in the environment is the user's choice and is left as it is.
"""

from __future__ import annotations

import os

ONLINE_ENV = "FREQGAP_ONLINE"
ONLINE_FLAG = "--online"
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def wants_online(argv: list[str]) -> bool:
    """--online among the arguments, or FREQGAP_ONLINE set to a true value."""
    return ONLINE_FLAG in argv or os.environ.get(ONLINE_ENV, "").lower() in ("1", "true", "yes")


def is_offline() -> bool:
    """Whether the Hugging Face hub is off for this process."""
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def apply_offline(argv: list[str]) -> None:
    """Set the hub's offline variables unless online was asked for or they are set already."""
    if wants_online(argv):
        return
    for name in OFFLINE_VARS:
        os.environ.setdefault(name, "1")
