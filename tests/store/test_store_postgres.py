"""What only the PostgreSQL store has to show: the database itself keeps the log
append-only (triggers, and a server role without UPDATE or DELETE), several stores on one
database (as several processes) stay gapless with one chain and one decision per command
id, and a restarted PostgreSQL gives clear errors, then works again.

The contract every store passes is tests/store/test_store_contract.py."""

from __future__ import annotations

import threading
import uuid

import pytest

from conteur.events.game import CommandRejected
from conteur.server.store.chain import verify_rows
from conteur.server.store.interface import Pending, StoreError, TokenRecord

psycopg = pytest.importorskip("psycopg")

from conteur.server.store.postgres import PostgresStore, grant_server_role  # noqa: E402


def ev(n: int) -> CommandRejected:
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


@pytest.fixture
def server_url(pg_cluster, pg_url):
    """The database set up by its owner, and the URL of the role the server logs in as."""
    PostgresStore(pg_url).close()  # the owner creates the tables
    role = "srv_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    grant_server_role(pg_url, role)
    yield pg_cluster.url(pg_url.rsplit("/", 1)[1], user=role, password="pw")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


def test_the_servers_role_appends_but_may_not_update_delete_or_truncate_the_log(server_url):
    with PostgresStore(server_url) as store:
        out = store.append_sync(Pending(session="s", events=[ev(1), ev(2)], device="d", command_id="c"))
        assert out.seqs == (1, 2)
        # everything the server does besides appending works with the role's grants
        store.add_tokens([TokenRecord(hash="h" * 64, role="player", character="anna", session="s")])
        assert store.revoke_tokens(session="s", character="anna") == ["h" * 64]
        # a phone's credential keeps the link it was made of (the role may insert it)
        store.add_tokens([TokenRecord(hash="d" * 64, role="player", character="bruno", session="s",
                                      parent="e" * 64)])
        assert [r.parent for r in store.live_tokens("s")] == ["e" * 64]
        assert store.token("d" * 64).parent == "e" * 64
        assert store.create_secret("s", b"seed") == b"seed"
        state = store.load_state("s")
        store.save_snapshot("s", state.head, state, keep=1)
        assert store.latest_snapshot("s")[0] == 2
    with psycopg.connect(server_url, autocommit=True) as conn:
        for sql in ("UPDATE events SET actor = 'mallory' WHERE seq = 1", "DELETE FROM events WHERE seq = 2",
                    "TRUNCATE events", "DELETE FROM commands", "UPDATE secrets SET seed = 'x'",
                    "DROP TRIGGER events_append_only ON events", "UPDATE tokens SET role = 'storyteller'"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
    with PostgresStore(server_url) as store:
        assert verify_rows(store.rows(), gapless=True) == (2, None)


def test_even_the_tables_owner_is_refused_by_the_triggers(pg_url):
    with PostgresStore(pg_url) as store:
        store.append_sync(Pending(session="s", events=[ev(1)], device="d", command_id="c"))
        store.create_secret("s", b"first")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql in ("UPDATE events SET actor = 'mallory'", "DELETE FROM events", "TRUNCATE events",
                    "DELETE FROM commands", "UPDATE secrets SET seed = 'x'"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(sql)


def test_a_role_that_may_not_create_tables_is_told_who_must(pg_cluster):
    name = pg_cluster.create_database()
    role = "bare_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    try:
        with pytest.raises(StoreError, match="may not create them.*pg-setup"):
            PostgresStore(pg_cluster.url(name, user=role, password="pw"))
        with pytest.raises(StoreError, match="no conteur chronicle"):
            PostgresStore(pg_cluster.url(name), create=False)
    finally:
        pg_cluster.drop_database(name)
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {role}")


def test_a_newer_schema_is_refused_by_name(pg_url):
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE conteur_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer conteur.*version 99"):
        PostgresStore(pg_url)


def test_acknowledged_appends_are_flushed(pg_url):
    # ``off`` in the server's configuration would acknowledge before the WAL is flushed
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER DATABASE " + pg_url.rsplit("/", 1)[1] + " SET synchronous_commit = off")
    with PostgresStore(pg_url) as store:
        assert store._connect().execute("SHOW synchronous_commit").fetchone()[0] == "on"


def test_stores_on_one_database_share_one_gapless_log_and_one_decision_per_command(pg_url):
    """Each store is what one server process holds: its own connections, writer thread and
    caches. They append to the same sessions at once; a command id sent to all of them
    is written once, and every store answers it with the same seqs."""
    stores = [PostgresStore(pg_url) for _ in range(3)]
    outcomes: dict[int, list] = {k: [] for k in range(len(stores))}
    try:
        def work(k: int) -> None:
            store = stores[k]
            for i in range(40):
                sid = f"s{i % 3}"
                outcomes[k].append(store.append_sync(Pending(
                    session=sid, events=[ev(i), ev(i)], device=f"p{k}", command_id=f"own-{i}")))
                # the same command, from the same device, reaching every process at once
                outcomes[k].append(store.append_sync(Pending(
                    session=sid, events=[ev(1000 + i)], device="phone", command_id=f"shared-{i}")))
        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(stores))]
        [t.start() for t in threads]
        [t.join() for t in threads]
        every = list(stores[0].rows())
        assert [r.seq for r in every] == list(range(1, len(every) + 1))
        assert len(every) == 3 * 40 * 2 + 40  # each shared command once
        assert verify_rows(every, gapless=True) == (len(every), None)
        for i in range(40):
            answers = {stores[k].outcome_of("phone", f"shared-{i}").seqs for k in range(len(stores))}
            assert len(answers) == 1
            shared = [o for k in outcomes for o in outcomes[k][1::2]][i::40]
            assert sum(not o.replayed for o in shared) == 1
        # each store's sessions, heads and reads agree with the log the others wrote
        for store in stores:
            for sid in ("s0", "s1", "s2"):
                seqs = [r.seq for r in every if r.session == sid]
                assert store.session_head(sid) == seqs[-1]
                assert [r.seq for r in store.read_after(sid)] == seqs
    finally:
        for store in stores:
            store.close()


def test_a_restarted_postgresql_gives_clear_errors_then_works_again(pg_cluster, pg_url):
    with PostgresStore(pg_url) as store:
        store.append_sync(Pending(session="s", events=[ev(1)], device="d", command_id="1"))
        store.head()  # the reading connection is open
        pg_cluster.restart()
        # the first use of each old connection fails, saying PostgreSQL was unavailable,
        # and writes nothing; the next one reconnects
        for attempt in range(2):
            try:
                out = store.append_sync(Pending(session="s", events=[ev(2)], device="d", command_id="2"))
                break
            except StoreError as exc:
                assert "nothing was written" in str(exc)
        else:
            pytest.fail("the store did not reconnect after PostgreSQL restarted")
        assert out.seqs == (2,)
        try:
            head = store.head()
        except StoreError as exc:
            assert "unavailable" in str(exc)
            head = store.head()
        assert head == 2
        assert verify_rows(store.rows(), gapless=True) == (2, None)


def test_server_processes_share_a_database_a_simulation_holds_it_alone(pg_url):
    """Server processes (serve, init) hold the database together; a simulation, which
    must be reproducible, is refused beside them and they beside it."""
    from conteur.server.store.dbfile import DatabaseInUse
    from conteur.server.store.factory import writing

    with writing(pg_url) as first:
        with pytest.raises(DatabaseInUse, match="in use by another conteur"):
            with writing(pg_url):
                pass
        with pytest.raises(DatabaseInUse, match="in use by a simulation"):
            with writing(pg_url, shared=True):
                pass
        first.append_sync(Pending(session="s", events=[ev(1)]))
    with writing(pg_url, shared=True) as one, writing(pg_url, shared=True) as two:
        assert one.head() == two.head() == 1
        with pytest.raises(DatabaseInUse, match="in use by another conteur"):
            with writing(pg_url):
                pass
