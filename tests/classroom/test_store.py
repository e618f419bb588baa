"""The two stores behave alike: create once per code, atomic updates that move `version` on,
members and answers per question (a new answer replaces), expiry of every record, and no write
bringing back an expired class."""

from __future__ import annotations

import threading
import time

import pytest

from attnviz.classroom.store import MemoryStore


def test_create_once_then_read(store):
    assert store.create("ABCDEF", {"lesson": "2"}, ttl=60)
    assert not store.create("ABCDEF", {"lesson": "5"}, ttl=60)  # taken: left as it was
    fields = store.read("ABCDEF")
    assert fields["lesson"] == "2" and fields["version"] == "1"
    assert int(fields["expires"]) / 1000 == pytest.approx(time.time() + 60, abs=5)
    assert store.read("ZZZZZZ") is None


def test_update_moves_the_version_on(store):
    store.create("ABCDEF", {"lesson": "2"}, ttl=60)
    assert store.update("ABCDEF", {"lesson": "3"})["version"] == "2"
    after = store.update("ABCDEF", {})
    assert after["version"] == "3" and after["lesson"] == "3"
    assert store.update("ZZZZZZ", {"lesson": "1"}) is None
    assert store.read("ZZZZZZ") is None  # an update did not create it


def test_members_and_answers_replace(store):
    store.create("ABCDEF", {}, ttl=60)
    assert store.add_member("ABCDEF", "m1", "Ada") and store.add_member("ABCDEF", "m2", "")
    assert store.add_member("ABCDEF", "m1", "Ada L")
    assert store.members("ABCDEF") == {"m1": "Ada L", "m2": ""}
    assert store.is_member("ABCDEF", "m2") and not store.is_member("ABCDEF", "m3")
    assert store.put_answer("ABCDEF", 1, "m1", "a") and store.put_answer("ABCDEF", 1, "m1", "b")
    store.put_answer("ABCDEF", 2, "m1", "c")
    assert store.answers("ABCDEF", 1) == {"m1": "b"}  # answering again replaced it
    assert store.answers("ABCDEF", 2) == {"m1": "c"} and store.answers("ABCDEF", 3) == {}


def test_writes_to_an_unknown_class_change_nothing(store):
    assert not store.add_member("ZZZZZZ", "m1", "Ada")
    assert not store.put_answer("ZZZZZZ", 1, "m1", "a")
    assert store.members("ZZZZZZ") == {} and store.answers("ZZZZZZ", 1) == {}


def test_everything_expires_with_the_class(store):
    store.create("ABCDEF", {}, ttl=0.4)
    store.add_member("ABCDEF", "m1", "Ada")
    store.put_answer("ABCDEF", 1, "m1", "a")
    assert store.read("ABCDEF") is not None
    time.sleep(0.5)
    assert store.read("ABCDEF") is None and store.members("ABCDEF") == {}
    assert store.answers("ABCDEF", 1) == {}
    assert store.update("ABCDEF", {"lesson": "1"}) is None
    assert not store.put_answer("ABCDEF", 1, "m2", "b") and not store.add_member("ABCDEF", "x", "")
    assert store.create("ABCDEF", {}, ttl=60)  # the code is free again


def test_redis_keys_all_expire(redis_url):
    from attnviz.classroom.redis_store import RedisStore

    store = RedisStore.from_url(redis_url, prefix="test:ttl:")
    store.create("ABCDEF", {}, ttl=3600)
    store.add_member("ABCDEF", "m1", "")
    store.put_answer("ABCDEF", 4, "m1", "a")
    client = store._redis
    keys = client.keys("test:ttl:ABCDEF*")
    assert len(keys) == 3
    for key in keys:  # each key of the class expires with it: none lives on
        assert 3_590_000 < client.pttl(key) <= 3_600_000, key
    client.delete(*keys)


def test_concurrent_answers_all_counted_once(store):
    store.create("ABCDEF", {}, ttl=60)
    members = [f"m{k}" for k in range(40)]

    def answer(member: str) -> None:
        for value in range(5):  # each answers 5 times: the last one stays
            store.put_answer("ABCDEF", 1, member, f"{member}:{value}")
        store.update("ABCDEF", {})

    threads = [threading.Thread(target=answer, args=(m,)) for m in members]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.answers("ABCDEF", 1) == {m: f"{m}:4" for m in members}
    assert store.read("ABCDEF")["version"] == str(1 + len(members))  # no update lost


def test_memory_store_expires_by_its_clock():
    now = [1000.0]
    store = MemoryStore(clock=lambda: now[0])
    store.create("ABCDEF", {}, ttl=12 * 3600)
    now[0] += 12 * 3600 - 1
    assert store.read("ABCDEF") is not None
    now[0] += 1
    assert store.read("ABCDEF") is None


def test_redis_not_answering_is_said_in_words():
    from attnviz.classroom.errors import ClassError, StoreDownError
    from attnviz.classroom.redis_store import RedisStore

    store = RedisStore.from_url("redis://127.0.0.1:9/0")  # the discard port: nothing listens
    for call in (lambda: store.read("ABCDEF"), lambda: store.put_answer("ABCDEF", 1, "m", "a")):
        with pytest.raises(StoreDownError, match="not answering .*Try again in a moment"):
            call()
    assert issubclass(StoreDownError, ClassError)  # the pages show it as any class's message
