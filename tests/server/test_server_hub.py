"""The hub on its own: seq order whatever order the listeners are called in, a slow device
dropped without slowing the others, resync from memory or from the store."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from conteur.events import session
from conteur.events.model import Actor
from conteur.events.sheets import MetSheet
from conteur.server.core.hub import Connection, Hub
from conteur.server.store.sqlite import Pending, SQLiteStore

ST = Actor(role="storyteller", name="st")
ANNA = Actor(role="player", character="anna", name="anna")
BRUNO = Actor(role="player", character="bruno", name="bruno")


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "c.db")
    yield s
    s.close()


def append(store: SQLiteStore, sess: str, *events) -> list[tuple[int, object]]:
    out = store.append_sync(Pending(session=sess, events=list(events)))
    return list(zip(out.seqs, events))


def scene(n: int) -> session.SceneOpened:
    return session.SceneOpened(scene=f"s{n}", name=f"Scene {n}")


class Phone:
    """A device whose socket writes are real coroutines; ``gate`` holds them (a slow phone)."""

    def __init__(self, viewer: Actor, sess: str = "night", *, max_queue: int = 100, slow: bool = False):
        self.got: list[dict] = []
        self.gate = asyncio.Event()
        if not slow:
            self.gate.set()
        self.dropped = False
        self.conn = Connection(self.send, viewer, sess, max_queue=max_queue, on_overflow=self.overflow)

    async def send(self, text: str) -> None:
        await self.gate.wait()
        self.got.append(msgspec.json.decode(text))

    def overflow(self, _conn) -> None:
        self.dropped = True

    def seqs(self) -> list[int]:
        return [f["seq"] for f in self.got if f["type"] == "event"]


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def until(done, what: str, timeout: float = 10.0) -> None:
    """Waits for ``done()``: a hole's read of the store runs in a thread."""
    try:
        async with asyncio.timeout(timeout):
            while not done():
                await asyncio.sleep(0.005)
    except TimeoutError:
        raise AssertionError(f"still waiting for {what}") from None


async def test_events_announced_out_of_order_reach_devices_in_seq_order_once(store):
    hub = Hub(store)
    hub.bind()
    phone = Phone(ST)
    hub.subscribe(phone.conn)
    phone.conn.start()
    phone.conn.go_live(0)
    first, second, third = (append(store, "night", scene(n))[0] for n in (1, 2, 3))
    hub._take("night", [third])  # the third commit's listener ran first
    hub._take("night", [first])
    hub._take("night", [second])
    await settle()
    assert phone.seqs() == [1, 2, 3]


async def test_events_of_other_sessions_fill_the_gaps_without_reaching_this_session(store):
    hub = Hub(store)
    hub.bind()
    phone = Phone(ST)
    hub.subscribe(phone.conn)
    phone.conn.start()
    phone.conn.go_live(0)
    append(store, "other", scene(1))
    mine = append(store, "night", scene(2))
    hub._take("night", mine)
    await until(lambda: hub.delivered == 2, "the other session's seq read from the store")
    await settle()
    assert phone.seqs() == [2]


async def test_a_slow_device_is_dropped_and_never_slows_the_others(store):
    hub = Hub(store)
    hub.bind()
    slow, quick = Phone(ST, max_queue=3, slow=True), Phone(ST)
    for phone in (slow, quick):
        hub.subscribe(phone.conn)
        phone.conn.start()
        phone.conn.go_live(0)
    for n in range(1, 11):
        hub._take("night", append(store, "night", scene(n)))
    await settle()
    assert quick.seqs() == list(range(1, 11))
    assert slow.dropped and slow.conn.closed


async def test_live_events_during_a_resync_wait_in_order_behind_it(store):
    for n in range(1, 6):
        append(store, "night", scene(n))
    hub = Hub(store, ring=2)  # the history comes from the store
    hub.bind()
    phone = Phone(ST)
    head = hub.subscribe(phone.conn)
    assert head == 5
    history = await hub.history("night", 1, head)
    hub._take("night", append(store, "night", scene(6)))  # arrives while resyncing
    for _seq, forms in history:
        await phone.send(forms.whole)
    phone.conn.start()
    phone.conn.go_live(head)
    await settle()
    assert phone.seqs() == [2, 3, 4, 5, 6]
    live = next(i for i, f in enumerate(phone.got) if f["type"] == "live")
    assert phone.got[live] == {"type": "live", "head": 5} and live == 4


async def test_a_resync_read_from_the_store_is_kept_for_the_next_device(store):
    for n in range(1, 5):
        append(store, "night", scene(n))
    hub = Hub(store, ring=10)
    hub.bind()
    from_disk = await hub.history("night", 0, 4)
    assert [s for s, _ in from_disk] == [1, 2, 3, 4]
    store.close()  # the next resync must not need the store
    from_memory = await hub.history("night", 1, 4)
    assert from_memory == from_disk[1:]


async def test_one_encoding_per_view_class_shared_by_every_socket(store):
    hub = Hub(store)
    hub.bind()
    phones = [Phone(v) for v in (ST, ANNA, BRUNO, BRUNO)]
    for phone in phones:
        hub.subscribe(phone.conn)
        phone.conn.start()
        phone.conn.go_live(0)
    added = session.CharacterAdded(character="anna", name="Anna", sheet=MetSheet(physical=6))
    hub._take("night", append(store, "night", added))
    queued = [p.conn.queue._queue[-1] for p in phones]  # the frames as queued, before sending
    assert queued[0] is queued[1]  # storyteller and owner share the whole form's string
    assert queued[2] is queued[3]  # both others share the public form's string
    assert '"sheet":null' in queued[2] and '"physical":6' in queued[0]


async def test_a_batching_device_behind_gets_its_backlog_as_one_batch_in_order(store):
    hub = Hub(store)
    hub.bind()
    slow = Phone(ST, slow=True)
    slow.conn.batching = True
    hub.subscribe(slow.conn)
    slow.conn.start()
    slow.conn.go_live(0)
    for n in range(1, 6):
        hub._take("night", append(store, "night", scene(n)))
    await settle()
    slow.gate.set()  # the phone's network comes back
    await settle()
    (message,) = slow.got  # one message for the whole backlog
    assert message["type"] == "batch"
    assert [f.get("seq", "live") for f in message["frames"]] == ["live", 1, 2, 3, 4, 5]
