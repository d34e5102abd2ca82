"""The two configurations end-to-end tests run in: embedded (SQLite + on-disk broker) and PostgreSQL + Redis."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from tests.e2e.stack import Stack

POSTGRES_URL = os.environ.get("KGB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("KGB_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_SERVICES = os.environ.get("KGB_REQUIRE_SERVICES") == "1"


def reachable(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname, parsed.port), timeout=2):
            return True
    except OSError:
        return False


def need(url: str, what: str) -> None:
    if reachable(url):
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required here (KGB_REQUIRE_SERVICES=1) but {url} is unreachable")
    pytest.skip(f"{what} not reachable at {url}")


@pytest.fixture(params=["embedded", "postgres-redis"])
def stack(request, tmp_path) -> Iterator[Stack]:
    if request.param == "embedded":
        instance = Stack(
            data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", broker_url="filesystem://"
        )
        yield from _run(instance)
        return
    need(POSTGRES_URL, "PostgreSQL")
    need(REDIS_URL, "Redis")
    import psycopg

    name = "kgb_e2e_" + secrets.token_hex(4)
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    database_url = POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()  # no message of an earlier test may reach this database
    instance = Stack(data_dir=tmp_path, database_url=database_url, broker_url=REDIS_URL)
    try:
        yield from _run(instance)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run(instance: Stack) -> Iterator[Stack]:
    instance.prepare()
    try:
        yield instance
    finally:
        instance.stop()
