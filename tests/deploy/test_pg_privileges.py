"""Least privilege for the role ``conteur serve`` logs in as (deploy/postgresql.md,
"What the server's role may do"): it appends and reads; it may not append with a seq of
its choosing or off its session's chain tip, move the chain tips or the log's head but by
appending, make a storyteller's token, or replace or delete a snapshot another role wrote.
Each right it must not have is tried here, on the real database."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import msgspec
import pytest

psycopg = pytest.importorskip("psycopg")

from conteur.events.game import CommandRejected  # noqa: E402
from conteur.server.store.chain import GENESIS, row_hash, verify_rows  # noqa: E402
from conteur.server.store.interface import Pending, StoreError, TokenRecord  # noqa: E402
from conteur.server.store.postgres import GRANTS, PostgresStore, grant_server_role  # noqa: E402

GUIDE = Path(__file__).resolve().parents[2] / "deploy" / "postgresql.md"
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE")


def ev(n: int):
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


@pytest.fixture
def server_url(pg_cluster, pg_url):
    PostgresStore(pg_url).close()  # the owner creates the tables
    role = "srv_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    grant_server_role(pg_url, role)
    yield pg_cluster.url(pg_url.rsplit("/", 1)[1], user=role, password="pw")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


def refused(conn, sql: str, args: tuple = ()) -> str:
    with pytest.raises(psycopg.Error) as caught:
        with conn.transaction():
            conn.execute(sql, args)
    return str(caught.value)


def test_the_servers_role_appends_but_may_not_choose_a_seq_nor_move_a_chain_tip(pg_url, server_url):
    with PostgresStore(server_url) as store:
        assert store.append_sync(Pending(session="s", events=[ev(1), ev(2)], device="d", command_id="c")).seqs == (1, 2)
        tip = store.read_after("s")[-1].hash
    data = msgspec.json.encode(ev(3))
    with psycopg.connect(server_url, autocommit=True) as conn:
        def row(seq: int, prev: str, session: str = "s") -> tuple:
            digest = row_hash(prev, seq, session, "command_rejected", data, "mallory", "d", "", "now")
            return (seq, session, "command_rejected", data, "mallory", "d", "", "now", prev, digest)

        insert = "INSERT INTO events VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        # a seq of its choosing: above the next, or one already there
        assert "next seqs only" in refused(conn, insert, row(7, tip))
        assert "duplicate key" in refused(conn, insert, row(2, tip))
        # the next seq, off the session's chain tip (a forked history), or a new session's
        # first row not at the genesis
        assert "chain tip" in refused(conn, insert, row(3, GENESIS))
        assert "chain tip" in refused(conn, insert, row(3, tip, session="t"))
        # the tips and the log's head, but by appending
        for sql in ("UPDATE heads SET hash = 'x'", "INSERT INTO heads VALUES ('u', 9, 9, 'x')",
                    "DELETE FROM heads", "UPDATE log_head SET seq = 9",
                    "SELECT seq FROM log_head FOR UPDATE"):
            assert "permission denied" in refused(conn, sql), sql
        # and the next seq on its tip is what an append is
        conn.execute(insert, row(3, tip))
        assert conn.execute("SELECT seq FROM log_head").fetchone()[0] == 3
        assert conn.execute("SELECT last, hash FROM heads WHERE session = 's'").fetchone() == (3, row(3, tip)[9])
    with PostgresStore(server_url) as store:
        assert verify_rows(list(store.rows()), gapless=True) == (3, None)
        assert store.append_sync(Pending(session="s", events=[ev(4)], device="d", command_id="c4")).seqs == (4,)


def test_the_servers_role_makes_no_storytellers_token_and_keeps_off_others_snapshots(pg_url, server_url):
    with PostgresStore(pg_url) as owner:
        owner.append_sync(Pending(session="s", events=[ev(1), ev(2)], device="d", command_id="c"))
        state = owner.load_state("s")
        owner.save_snapshot("s", 1, state)  # the owner's (a replay by hand, say)
    with PostgresStore(server_url) as store:
        store.add_tokens([TokenRecord(hash="p" * 64, role="player", character="anna", session="s"),
                          TokenRecord(hash="o" * 64, role="observer", session="s")])
        with pytest.raises(StoreError, match="nothing was written"):
            store.add_tokens([TokenRecord(hash="t" * 64, role="storyteller")])
        assert store.token("t" * 64) is None and store.token("p" * 64) is not None
        # its own snapshots it saves and thins; the owner's stays
        store.save_snapshot("s", 2, state, keep=1)
        assert store.latest_snapshot("s")[0] == 2
    with psycopg.connect(server_url, autocommit=True) as conn:
        assert "row-level security" in refused(
            conn, "INSERT INTO tokens (hash, role, name, created) VALUES ('z', 'storyteller', '', 'now')")
        assert "permission denied" in refused(conn, "UPDATE tokens SET role = 'storyteller'")
        assert conn.execute("DELETE FROM snapshots WHERE seq = 1").rowcount == 0
        assert conn.execute("UPDATE snapshots SET state = 'x' WHERE seq = 1").rowcount == 0
        assert "row-level security" in refused(
            conn, "INSERT INTO snapshots (session, seq, version, state, writer) VALUES ('s', 5, 1, 'x', 'owner')")
        assert [r[0] for r in conn.execute("SELECT seq FROM snapshots ORDER BY seq")] == [1, 2]


def test_the_servers_role_makes_a_storytellers_token_only_as_a_live_storyteller_links_device(pg_url, server_url):
    """The one storyteller row the server's role may write: the credential a live
    storyteller link turns into on its device (``Tokens.spend``). With no link, a
    player's, an unknown one or a revoked storyteller's as its parent, the database
    refuses the row itself (the ``tokens_add`` policy)."""
    from conteur.server.core.auth import Tokens, digest, grant_id

    with PostgresStore(pg_url) as owner:
        made = Tokens(owner)
        link, player, revoked = (made.issue("storyteller", session="s", name="tablet"),
                                 made.issue("player", character="anna", session="s"),
                                 made.issue("storyteller", session="s", name="lost tablet"))
        assert made.revoke_grants([grant_id(digest(revoked))]) == 1
    with PostgresStore(server_url) as store:
        tokens = Tokens(store)
        credential, grant = tokens.spend(digest(link), tokens.check(link))
        kept = tokens.check(credential)
        assert kept is not None and kept.role == "storyteller" and kept.device and kept.id == grant.id
        for parent in (None, digest(player), digest(revoked), "f" * 64):
            row = TokenRecord(hash=uuid.uuid4().hex * 2, role="storyteller", session="s", parent=parent)
            with pytest.raises(StoreError, match="nothing was written"):
                store.add_tokens([row])
            assert store.token(row.hash) is None, parent
        # a player's device credential from a player's link stays the server's to make
        assert tokens.spend(digest(player), tokens.check(player))[1].device
    with psycopg.connect(server_url, autocommit=True) as conn:
        insert = ("INSERT INTO tokens (hash, role, session, name, created, parent) "
                  "VALUES (%s, 'storyteller', 's', '', 'now', %s)")
        for parent in (None, digest(player), digest(revoked)):
            assert "row-level security" in refused(conn, insert, (uuid.uuid4().hex, parent)), parent
        conn.execute(insert, ("allowed", digest(link)))  # under a live storyteller link
        assert conn.execute("SELECT parent FROM tokens WHERE hash = 'allowed'").fetchone()[0] == digest(link)
        # nor can it turn a player's row into a storyteller's afterwards
        assert "permission denied" in refused(conn, "UPDATE tokens SET parent = %s", (digest(link),))


def guide_rights() -> dict[str, set[str]]:
    """The table of deploy/postgresql.md: table -> the privileges it lists."""
    section = GUIDE.read_text().split("What the server's role may do", 1)[1].split("No UPDATE, DELETE", 1)[0]
    rights = {}
    for table, listed in re.findall(r"^\| `(\w+)` \| ([^|]*) \|", section, re.M):
        rights[table] = {p for p in PRIVILEGES if p in listed}
    return rights


def test_the_guide_lists_the_servers_rights_exactly(pg_url, server_url):
    role = server_url.split("://", 1)[1].split(":", 1)[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        def has(table: str, privilege: str) -> bool:
            # UPDATE on one column (tokens.revoked) counts as UPDATE, as the guide says it
            check = "has_any_column_privilege" if privilege in ("SELECT", "INSERT", "UPDATE") else "has_table_privilege"
            return conn.execute(f"SELECT {check}(%s, %s, %s)", (role, table, privilege)).fetchone()[0]

        held = {table: {p for p in PRIVILEGES if has(table, p)} for table in GRANTS}
    assert guide_rights() == held
