"""`RedisRunStore`: the runs of `store.RunStore` in Redis, shared by every replica pointing at
it (`ATTNVIZ_REDIS_URL`): one queue of distinct runs for all, each run trained once, watched
from any replica.

The queue is one Redis stream with one consumer group (`GROUP`); each replica is a consumer
(`consumer`: host, process, store). A replica's worker reads one entry at a time (XREADGROUP),
trains it, and acknowledges and deletes it when the run ends (XACK, XDEL). Redis's own pending
entries do the rest: while a replica trains, it claims its entry to itself every `heartbeat`
seconds (XCLAIM ... JUSTID, which sets the entry's idle time back to 0); a replica that dies stops
claiming, and once its entry has idled longer than `dead_after` seconds, a live replica takes it
over (XAUTOCLAIM) and trains the run again from the start (training is deterministic, and
`publish` adds only the epochs not yet there).

Keys, under `prefix` ("attnviz:runs:"): `seq` (run ids), `key:<run key>` (the id of the key's
run waiting, training or done), `run:<id>` (a hash: key, job, state, epochs, n_pairs,
time_limit, entry, started, setup, last, error, best, best_epoch, final, size), `run:<id>:reports`
(a list, index = epoch), `run:<id>:watchers` (a set: the sessions that have not left it; the
last one's leaving ends it), `run:<id>:seen` (a sorted set: watcher -> its last look, ms; the
watchers counted on the pages are those that looked within `watching_fresh` seconds, so a closed
tab stops counting), `queue` (the stream, field "run"), `training` (a set of run ids),
`replicas` (a sorted set: consumer -> its last look at the queue, ms by Redis's clock),
`finished` (a sorted set: run id -> last use, ms) and `finished:size` (bytes).

Every write that could race is one Lua script (atomic): 200 presses of one key queue one
entry. A stopped or failed run's keys expire after `ENDED_KEEP` seconds;
finished runs are evicted, least recently used first, beyond `finished_mb` MB.

A replica is alive while it looks at the queue (every `take`, every claim while it trains):
`replicas` counts those seen within `dead_after` seconds (Redis 7.0's consumer list does not:
a consumer appears there only once it has read an entry, and its idle time counts from then).
Each look also removes from the group the consumers that are no longer alive and hold no
entry (a dead replica's entry is first taken over by a live one, then its name goes).

The client must not decode responses (the runs' data are bytes).
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from typing import TypeVar

import redis

from attnviz.core.redis_url import answered, redis_client
from attnviz.learn.runs.store import (
    DEAD_AFTER,
    ENDED_KEEP,
    FINISHED_MB,
    GONE,
    HEARTBEAT,
    WATCHING_FRESH,
    Joined,
    Plan,
    Progress,
    RunMark,
    RunStatus,
    Taken,
    starts_in,
)

T = TypeVar("T")

PREFIX = "attnviz:runs:"
GROUP = "trainers"  # the replicas' consumer group on the queue
PLACE_FRESH = 0.5  # seconds a waiting run's place and estimate are reused for its other watchers
_NUMBERS = itertools.count(1)  # stores made in this process (their consumer names differ)

_DROP = """
local function drop(p, run, id, keep)
  local key = p .. 'key:' .. (redis.call('HGET', run, 'key') or '')
  if redis.call('GET', key) == id then redis.call('DEL', key) end
  for _, k in ipairs({run, run .. ':reports', run .. ':watchers', run .. ':seen'}) do
    redis.call('EXPIRE', k, keep)
  end
end
"""  # a stopped or failed run: no longer its key's run; readable for `keep` seconds more
SUBMIT = """
local p, id = ARGV[7], redis.call('GET', KEYS[1])
if id then
  local run = p .. 'run:' .. id
  local state = redis.call('HGET', run, 'state')
  if state == 'waiting' or state == 'training' then
    redis.call('SADD', run .. ':watchers', ARGV[3])
    redis.call('ZADD', run .. ':seen', ARGV[8], ARGV[3])
    return {id, 'shared'}
  elseif state == 'done' then
    local now = redis.call('TIME')
    redis.call('ZADD', KEYS[3], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000), id)
    return {id, 'finished'}
  end
end
id = tostring(redis.call('INCR', p .. 'seq'))
local run = p .. 'run:' .. id
local entry = redis.call('XADD', KEYS[2], '*', 'run', id)
redis.call('HSET', run, 'key', ARGV[1], 'job', ARGV[2], 'state', 'waiting', 'epochs', ARGV[4],
           'n_pairs', ARGV[5], 'time_limit', ARGV[6], 'entry', entry, 'best_epoch', -1)
redis.call('SADD', run .. ':watchers', ARGV[3])
redis.call('ZADD', run .. ':seen', ARGV[8], ARGV[3])
redis.call('SET', KEYS[1], id)
return {id, 'new'}
"""  # KEYS: key:<key>, queue, finished; ARGV: key, job, watcher, epochs, n_pairs, time_limit,
# prefix, now (ms)
LEAVE = (
    _DROP
    + """
local p, id, run = ARGV[3], ARGV[4], KEYS[1]
redis.call('SREM', run .. ':watchers', ARGV[1])
redis.call('ZREM', run .. ':seen', ARGV[1])
local state = redis.call('HGET', run, 'state')
if not state then return false end
local n = redis.call('SCARD', run .. ':watchers')
local looking = redis.call('ZCOUNT', run .. ':seen', ARGV[6], '+inf')
if n == 0 and state == 'waiting' then
  state = 'stopped'
  redis.call('HSET', run, 'state', state)
  drop(p, run, id, tonumber(ARGV[5]))
end
local f = redis.call('HMGET', run, 'error', 'started', 'best', 'best_epoch')
return {state, looking, f[1] or '', f[2] or '', f[3] or '', f[4] or '-1',
        redis.call('LRANGE', run .. ':reports', ARGV[2], -1)}
"""
)  # KEYS: run:<id>; ARGV: watcher, since, prefix, id, seconds kept, looked since (ms)
START = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'waiting' and state ~= 'training' then return {state or 'gone', ''} end
redis.call('HSET', KEYS[1], 'state', 'training', 'started', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return {'training', redis.call('HGET', KEYS[1], 'job')}
"""  # KEYS: run:<id>, training; ARGV: id, now (s); a run nobody waits for is only acknowledged
KEEP = """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #p == 1 and p[1][2] == ARGV[2] then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
  return 1
end
return 0
"""  # KEYS: queue; ARGV: group, consumer, entry; 0: another replica has taken the entry over
PUBLISH = """
local n = redis.call('LLEN', KEYS[1] .. ':reports')
if tonumber(ARGV[1]) == n then
  redis.call('RPUSH', KEYS[1] .. ':reports', ARGV[2])
  redis.call('HSET', KEYS[1], 'last', ARGV[3])
  if n == 0 then redis.call('HSET', KEYS[1], 'setup', ARGV[3]) end
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'best', ARGV[4], 'best_epoch', ARGV[1]) end
end
return redis.call('SCARD', KEYS[1] .. ':watchers')
"""  # KEYS: run:<id>; ARGV: epoch, report, seconds, best weights ('' if not best)
FINISH = (
    _DROP
    + """
local p, id, run = ARGV[9], ARGV[1], KEYS[1]
redis.call('XACK', KEYS[2], ARGV[5], ARGV[6])
redis.call('XDEL', KEYS[2], ARGV[6])
redis.call('SREM', KEYS[3], id)
local state = redis.call('HGET', run, 'state')
if state ~= 'training' and state ~= 'waiting' then return 0 end
redis.call('HSET', run, 'state', ARGV[2], 'final', ARGV[3], 'error', ARGV[4])
if ARGV[2] ~= 'done' then
  drop(p, run, id, tonumber(ARGV[8]))
  return 1
end
redis.call('HDEL', run, 'best')  -- the final weights are the best epoch's
local size = redis.call('HSTRLEN', run, 'final')
for _, r in ipairs(redis.call('LRANGE', run .. ':reports', 0, -1)) do size = size + #r end
redis.call('HSET', run, 'size', size)
local now = redis.call('TIME')
redis.call('ZADD', KEYS[4], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000), id)
local total = redis.call('INCRBY', KEYS[5], size)
while total > tonumber(ARGV[7]) and redis.call('ZCARD', KEYS[4]) > 1 do
  local old = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  redis.call('ZREM', KEYS[4], old)
  local gone = p .. 'run:' .. old
  local f = redis.call('HMGET', gone, 'size', 'key')
  total = redis.call('DECRBY', KEYS[5], tonumber(f[1] or '0'))
  if f[2] and redis.call('GET', p .. 'key:' .. f[2]) == old then
    redis.call('DEL', p .. 'key:' .. f[2])
  end
  redis.call('DEL', gone, gone .. ':reports', gone .. ':watchers', gone .. ':seen')
end
return 1
"""
)  # KEYS: run:<id>, queue, training, finished, finished:size; ARGV: id, state, final, error,
# group, entry, bytes kept, seconds kept, prefix


_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
LOOK = (
    _NOW
    + """
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[2])))
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[2], ARGV[3])
if consumers.err then return 0 end  -- no queue or group yet
local gone = 0
for _, c in ipairs(consumers) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f['pending'] == 0 and not redis.call('ZSCORE', KEYS[1], f['name']) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[2], ARGV[3], f['name'])
    gone = gone + 1
  end
end
return gone
"""
)  # KEYS: replicas, queue; ARGV: consumer, dead after (ms), group; how many consumers went
REPLICAS = (
    _NOW
    + """
return redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[1]), '+inf')
"""
)  # KEYS: replicas; ARGV: dead after (ms)


class RunStoreDownError(ConnectionError):
    """Redis did not answer (restarting, the network): try again in a moment."""


_answered = answered(RunStoreDownError, "The training runs' store")


def _text(value: bytes | str | None, default: str = "") -> str:
    if value is None:
        return default
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class RedisRunStore:
    """The runs in Redis (see the module docstring)."""

    def __init__(
        self,
        client: redis.Redis,
        prefix: str = PREFIX,
        consumer: str | None = None,
        dead_after: float = DEAD_AFTER,
        heartbeat: float = HEARTBEAT,
        finished_mb: float = FINISHED_MB,
        place_fresh: float = PLACE_FRESH,
        watching_fresh: float = WATCHING_FRESH,
    ) -> None:
        self._redis = client
        self.prefix = prefix
        self.consumer = consumer or f"{socket.gethostname()}:{os.getpid()}:{next(_NUMBERS)}"
        self.dead_after = dead_after  # seconds an entry idles before another replica takes it
        self.heartbeat = heartbeat  # seconds between the claims of a training worker
        self.finished_bytes = int(finished_mb * 2**20)
        self.place_fresh = place_fresh  # seconds a place is reused (0: looked up every time)
        self.watching_fresh = watching_fresh  # seconds a watcher's look keeps it counted
        self._submit = client.register_script(SUBMIT)
        self._leave = client.register_script(LEAVE)
        self._start = client.register_script(START)
        self._keep = client.register_script(KEEP)
        self._publish = client.register_script(PUBLISH)
        self._finish = client.register_script(FINISH)
        self._look = client.register_script(LOOK)
        self._replicas = client.register_script(REPLICAS)
        self._group_made = False
        self._places: dict[str, tuple[float, tuple[int, float | None]]] = {}  # entry -> (when,
        # its place and estimate): one look at the queue serves all of a run's watchers here
        self._places_lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, **options) -> RedisRunStore:
        """A store on the Redis at `url` ("redis://127.0.0.1:6390/0"); `options` as `__init__`'s.
        Its connections are `core.redis_url.redis_client`'s blocking pool."""
        return cls(redis_client(url, text=False), **options)

    def _k(self, *parts: object) -> str:
        return self.prefix + ":".join(map(str, parts))

    def _run(self, run_id: str) -> str:
        return self._k("run", run_id)

    def _group(self) -> None:
        """Make the queue and its consumer group once (another replica may have made them)."""
        if self._group_made:
            return
        try:
            self._redis.xgroup_create(self._k("queue"), GROUP, id="0", mkstream=True)
        except redis.ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise
        self._group_made = True

    @_answered
    def submit(self, key: str, job: bytes, watcher: str, plan: Plan) -> Joined:
        self._group()
        keys = [self._k("key", key), self._k("queue"), self._k("finished")]
        args = [key, job, watcher, plan.epochs, plan.n_pairs, plan.time_limit, self.prefix,
                repr(time.time() * 1000)]  # fmt: skip
        run_id, source = self._submit(keys=keys, args=args)
        return Joined(_text(run_id), _text(source))

    @_answered
    def status(self, run_id: str, since: int = 0, watcher: str = "") -> RunStatus:
        run, now = self._run(run_id), time.time() * 1000
        pipe = self._redis.pipeline(transaction=True)
        if watcher:  # only a watcher of the run (xx: not one who left)
            pipe.zadd(f"{run}:seen", {watcher: now}, xx=True)
        pipe.hmget(run, "state", "error", "started", "entry")
        pipe.zcount(f"{run}:seen", now - self.watching_fresh * 1000, "+inf")
        pipe.lrange(f"{run}:reports", since, -1)
        (state, error, started, entry), watchers, reports = pipe.execute()[-3:]
        if state is None:
            return RunStatus(GONE, (), 0)
        state = _text(state)
        seconds = time.time() - float(started) if started else 0.0
        place, starts = (0, None)
        if state == "waiting":
            place, starts = self._fresh_place(_text(entry))
        return RunStatus(state, tuple(reports), watchers, _text(error),
                         seconds if state == "training" else 0.0, place, starts)  # fmt: skip

    @_answered
    def mark(self, run_id: str) -> RunMark:
        run = self._run(run_id)
        pipe = self._redis.pipeline(transaction=True)
        pipe.hmget(run, "state", "entry")
        pipe.llen(f"{run}:reports")
        (state, entry), reports = pipe.execute()
        if state is None:
            return RunMark(GONE)
        state = _text(state)
        place = self._fresh_place(_text(entry))[0] if state == "waiting" else 0
        return RunMark(state, int(reports), place)

    def _fresh_place(self, entry: str) -> tuple[int, float | None]:
        """`_place`, looked up at most every `PLACE_FRESH` seconds per entry in this process."""
        now = time.monotonic()
        with self._places_lock:
            found = self._places.get(entry)
            if found is not None and now - found[0] < self.place_fresh:
                return found[1]
        place = self._place(entry)
        with self._places_lock:
            fresh = {e: v for e, v in self._places.items() if now - v[0] < self.place_fresh}
            self._places = fresh
            self._places[entry] = (now, place)
        return place

    def _place(self, entry: str) -> tuple[int, float | None]:
        """The place in the queue of the run at stream `entry` and when it should start."""
        queue = self._k("queue")
        groups = {_text(g["name"]): g for g in self._redis.xinfo_groups(queue)}
        delivered = _text(groups[GROUP]["last-delivered-id"]) if GROUP in groups else "0-0"
        ahead_ids = [_text(f[b"run"]) for _, f in self._redis.xrange(queue, f"({delivered}",
                                                                      f"({entry}")]  # fmt: skip
        training_ids = [_text(r) for r in self._redis.smembers(self._k("training"))]
        pipe = self._redis.pipeline(transaction=False)
        for run_id in ahead_ids + training_ids:
            pipe.hmget(self._run(run_id), "state", "epochs", "n_pairs", "time_limit", "started",
                       "setup", "last")  # fmt: skip
            pipe.llen(f"{self._run(run_id)}:reports")
        rows = pipe.execute()
        now, ahead, training = time.time(), [], []
        for i in range(len(ahead_ids) + len(training_ids)):
            (state, epochs, n_pairs, limit, started, setup, last), n = rows[2 * i], rows[2 * i + 1]
            if state is None or epochs is None:
                continue
            plan = Plan(int(epochs), int(n_pairs), float(limit))
            if i < len(ahead_ids) and _text(state) == "waiting":
                ahead.append(plan)
            elif i >= len(ahead_ids) and _text(state) == "training" and started:
                elapsed = now - float(started)
                training.append(Progress.of(plan, n, float(setup or 0), float(last or 0), elapsed))
        return len(ahead) + 1, starts_in(training, ahead, self.replicas())

    @_answered
    def leave(self, run_id: str, watcher: str, since: int = 0) -> RunStatus:
        looked = repr(time.time() * 1000 - self.watching_fresh * 1000)
        args = [watcher, since, self.prefix, run_id, int(ENDED_KEEP), looked]
        found = self._leave(keys=[self._run(run_id)], args=args)
        if found is None:
            return RunStatus(GONE, (), 0)
        state, watchers, error, started, best, best_epoch, reports = found
        state = _text(state)
        seconds = time.time() - float(started) if started and state == "training" else 0.0
        return RunStatus(state, tuple(reports), int(watchers), _text(error), seconds,
                         best=best or None, best_epoch=int(best_epoch))  # fmt: skip

    @_answered
    def final(self, run_id: str) -> bytes | None:
        return self._redis.hget(self._run(run_id), "final") or None

    @_answered
    def take(self, timeout: float) -> Taken | None:
        self._group()
        self._looked()
        try:
            entries = self._next_entries(timeout)
        except redis.ResponseError as err:
            if "NOGROUP" not in str(err):
                raise
            self._group_made = False  # Redis lost its data (a flush, a restart): make it again
            return None
        if not entries:
            return None
        entry, fields = entries[0]
        run_id = _text(fields.get(b"run"))
        keys = [self._run(run_id), self._k("training")]
        state, job = self._start(keys=keys, args=[run_id, repr(time.time())])
        return Taken(run_id, job or b"", _text(entry), "training" if _text(state) == "training"
                     else "stopped")  # fmt: skip

    def _next_entries(self, timeout: float) -> list:
        """A dead consumer's entry idle beyond `dead_after` (claimed), else the next new one
        (waiting up to `timeout` seconds): one entry at most."""
        queue = self._k("queue")
        claimed = self._redis.xautoclaim(queue, GROUP, self.consumer,
                                         int(self.dead_after * 1000), "0-0", count=1)  # fmt: skip
        if claimed[1]:
            return claimed[1]
        read = self._redis.xreadgroup(GROUP, self.consumer, {queue: ">"}, count=1,
                                      block=max(1, int(timeout * 1000)))  # fmt: skip
        return read[0][1] if read else []

    @_answered
    def keep_alive(self, taken: Taken) -> bool:
        """Claim `taken`'s entry again (its idle time back to 0); False if another replica has
        taken it over (this one was thought dead): then this replica must let the run go."""
        self._looked()
        args = [GROUP, self.consumer, taken.entry]
        return bool(self._keep(keys=[self._k("queue")], args=args))

    def _looked(self) -> int:
        """This replica is alive now; the group's consumers no longer alive that hold no entry
        are removed (how many)."""
        args = [self.consumer, int(self.dead_after * 1000), GROUP]
        return int(self._look(keys=[self._k("replicas"), self._k("queue")], args=args))

    @_answered
    def publish(self, taken: Taken, epoch: int, report: bytes, seconds: float,
                best: bytes | None = None) -> int:  # fmt: skip
        args = [epoch, report, repr(float(seconds)), best or b""]
        return int(self._publish(keys=[self._run(taken.run_id)], args=args))

    @_answered
    def finish(self, taken: Taken, state: str, final: bytes | None, error: str = "") -> None:
        keys = [self._run(taken.run_id), self._k("queue"), self._k("training"),
                self._k("finished"), self._k("finished", "size")]  # fmt: skip
        args = [taken.run_id, state, final or b"", error, GROUP, taken.entry,
                self.finished_bytes, int(ENDED_KEEP), self.prefix]  # fmt: skip
        self._finish(keys=keys, args=args)

    @_answered
    def replicas(self) -> int:
        """Replicas seen looking at the queue within `dead_after` seconds, training or idle (at
        least 1: this one)."""
        args = [int(self.dead_after * 1000)]
        return max(1, int(self._replicas(keys=[self._k("replicas")], args=args)))
