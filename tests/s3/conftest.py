"""One S3 server (tests/s3/server.py) for the whole test session; each test gets the
standard environment variables and a bucket of its own."""

from __future__ import annotations

import pytest

from tests.s3.server import S3Server


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    with S3Server(tmp_path_factory.mktemp("s3") / "server.log") as server:
        yield server


@pytest.fixture
def bucket(s3_server, monkeypatch) -> str:
    """s3://<a new bucket>, with this process's environment pointing at the server."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return f"s3://{s3_server.new_bucket()}"
