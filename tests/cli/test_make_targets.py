"""The Makefile's promises (issue 40, item 7): `make setup` writes nothing outside the
checkout (the Jupyter kernel is an opt-in target), and `make help` quotes simulate's
duration as the docs measured it."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.cli.test_help import REPO


def _recipe(target: str) -> str:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    m = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)*)", text, re.M)
    assert m, target
    return m.group(1)


def test_setup_installs_no_kernel_into_the_users_home():
    assert "ipykernel" not in _recipe("$(STAMP)")
    assert "ipykernel install --user" in _recipe("kernel")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_help_and_the_docs_agree_on_simulates_time():
    out = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True,
                         timeout=60).stdout
    line = next(line for line in out.splitlines() if line.split()[1:2] == ["simulate"])
    minutes = re.search(r"~(\d+) min", line)
    assert minutes, line
    docs = (REPO / "docs" / "demo_model.md").read_text(encoding="utf-8")
    assert f"{minutes.group(1)} minutes" in docs
    assert any(line.split()[1:2] == ["kernel"] for line in out.splitlines())
