"""`RedisStore`: the classes of `store.ClassStore` in Redis, shared by every server that points
at it (`ATTNVIZ_REDIS_URL`), so students on different replicas are in one class and a replica's
death loses nobody.

Keys, under `prefix` ("attnviz:class:"): `<code>` the class (a hash), `<code>:members` (a hash,
member -> nickname), `<code>:answers:<n>` (a hash, member -> answer). Every key of a class
expires when the class does (PEXPIREAT its `expires` field, set from Redis's own clock). Each
write is one Lua script, so it is atomic, and a write to an expired class cannot bring back a
key that never expires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import redis

from attnviz.classroom.errors import StoreDownError
from attnviz.classroom.store import EXPIRES, VERSION
from attnviz.core.redis_url import answered, redis_client

T = TypeVar("T")

PREFIX = "attnviz:class:"
CREATE = f"""
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = redis.call('TIME')
local expires = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[1])
redis.call('HSET', KEYS[1], '{VERSION}', 1, '{EXPIRES}', expires, unpack(ARGV, 2))
redis.call('PEXPIREAT', KEYS[1], expires)
return 1
"""  # KEYS: the class; ARGV: ttl in ms, then field, value, field, value...
UPDATE = f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
redis.call('HINCRBY', KEYS[1], '{VERSION}', 1)
return redis.call('HGETALL', KEYS[1])
"""  # KEYS: the class; ARGV: field, value...; the fields after, or nil when gone
PUT = f"""
local expires = redis.call('HGET', KEYS[1], '{EXPIRES}')
if not expires then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIREAT', KEYS[2], expires)
return 1
"""  # KEYS: the class, the hash written; ARGV: field, value; 0 when the class is gone


_answered = answered(StoreDownError, "The class's store")  # nothing was changed


class RedisStore:
    """The classes in Redis (see the module docstring); `client` decodes responses to text."""

    def __init__(self, client: redis.Redis, prefix: str = PREFIX) -> None:
        self._redis = client
        self._prefix = prefix
        self._create = client.register_script(CREATE)
        self._update = client.register_script(UPDATE)
        self._put = client.register_script(PUT)

    @classmethod
    def from_url(cls, url: str, prefix: str = PREFIX) -> RedisStore:
        """A store on the Redis at `url` ("redis://127.0.0.1:6390/0"), its connections
        `core.redis_url.redis_client`'s blocking pool (200 students answering at once wait
        for a connection instead of failing)."""
        return cls(redis_client(url, text=True, socket_timeout=5), prefix)

    def _key(self, code: str, *parts: object) -> str:
        return ":".join((f"{self._prefix}{code}", *map(str, parts)))

    @_answered
    def create(self, code: str, fields: Mapping[str, str], ttl: float) -> bool:
        pairs = [x for item in fields.items() for x in item]
        return bool(self._create(keys=[self._key(code)], args=[max(1, int(ttl * 1000)), *pairs]))

    @_answered
    def read(self, code: str) -> dict[str, str] | None:
        return self._redis.hgetall(self._key(code)) or None

    @_answered
    def update(self, code: str, changes: Mapping[str, str]) -> dict[str, str] | None:
        pairs = [x for item in changes.items() for x in item]
        flat = self._update(keys=[self._key(code)], args=pairs)
        return None if flat is None else dict(zip(flat[::2], flat[1::2], strict=True))

    @_answered
    def add_member(self, code: str, member: str, nickname: str) -> bool:
        keys = [self._key(code), self._key(code, "members")]
        return bool(self._put(keys=keys, args=[member, nickname]))

    @_answered
    def members(self, code: str) -> dict[str, str]:
        return self._redis.hgetall(self._key(code, "members"))

    @_answered
    def is_member(self, code: str, member: str) -> bool:
        return bool(self._redis.hexists(self._key(code, "members"), member))

    @_answered
    def put_answer(self, code: str, question: int, member: str, answer: str) -> bool:
        keys = [self._key(code), self._key(code, "answers", question)]
        return bool(self._put(keys=keys, args=[member, answer]))

    @_answered
    def answers(self, code: str, question: int) -> dict[str, str]:
        return self._redis.hgetall(self._key(code, "answers", question))
