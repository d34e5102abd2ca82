"""The database dropping every connection (a restart, a failover) costs the site no request."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]


def test_requests_after_the_database_dropped_its_connections_are_served(stack):
    if not stack.database_url.startswith("postgres"):
        pytest.skip("SQLite has no server to drop connections")
    import psycopg

    stack.start_site()
    session = stack.login()
    for _ in range(4):  # the gunicorn workers that serve these now keep a connection (CONN_MAX_AGE)
        assert session.get(stack.base_url + "/submit/").status_code == 200
    server, database = stack.database_url.rsplit("/", 1)
    with psycopg.connect(server + "/postgres", autocommit=True) as connection:
        dropped = connection.execute(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()) AS terminated",
            [database],
        ).fetchone()[0]
    assert dropped >= 1
    # A kept connection the server dropped is found dead before the request uses it, and replaced.
    statuses = [session.get(stack.base_url + "/submit/").status_code for _ in range(6)]
    assert statuses == [200] * 6
