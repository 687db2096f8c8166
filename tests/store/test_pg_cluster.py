"""The throwaway PostgreSQL cluster the PostgreSQL store's tests run against (pg_support)."""

from __future__ import annotations

import pytest


def test_the_cluster_answers_on_loopback_and_wants_a_password(pg_cluster, pg_url):
    import psycopg

    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT current_database()").fetchone()[0] == pg_url.rsplit("/", 1)[1]
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == "127.0.0.1"
    # every role needs its password, so a test of the server role's privileges means something
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(pg_cluster.url(password="wrong")).close()
