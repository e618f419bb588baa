"""The Redis server that holds the classes shared by attnviz's replicas: start it, check it
answers, stop it, start it again on the same port and data.

Debian's `redis-server` (`apt-get install redis-server`), run in the foreground from a temporary
folder, no root and no system service: its configuration, its append-only file and its log are
all in that folder, and it writes nothing elsewhere. It listens on 127.0.0.1 only, in protected
mode, and asks for a password drawn at its start (128 bits; in its URL, `REDIS_URL_ENV`), so that
another program on the machine cannot read or change a class. The configuration is a file (mode
0600, in a folder only its user can open), so the password never shows in `ps`.

Persistence: append-only (`appendonly yes`) with `appendfsync always`. Redis writes every
change to the append-only file, and with `always` also flushes it to the disk, before it answers
the command, and it reads the file back when it starts: a change it has acknowledged (a
student's answer) is kept across a clean restart, a crash of the process (SIGKILL) and a crash
of the machine. (`everysec` would keep it across a restart or a crash of the process too, but
lose up to a second of answers if the machine stopped.) A class writes little (a join, a move,
an answer), so flushing each write costs little. Snapshots (`save`) are off: the append-only
file is the one copy.

Used by `python -m deploy.run --redis`, which gives `REDIS_URL_ENV` to every replica, and by the
tests (`tests/redis_support.py`). Every server started here is stopped at exit, on Ctrl-C and on
SIGTERM (`deploy.servers`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deploy import servers

if TYPE_CHECKING:  # the client is imported when first used: the test processes import this
    import redis as redis_client  # module at their start (tests/redis_support.py)

REDIS_SERVER = "/usr/bin/redis-server"  # Debian's package (`apt-get install redis-server`)
REDIS_URL_ENV = "ATTNVIZ_REDIS_URL"  # where attnviz finds the shared store of its classes
START_SECONDS = 30  # most time Redis may take to answer PING (it reads its append-only file)
POLL_S = 0.02  # how often `wait_ready` asks
HOST = "127.0.0.1"


def redis_missing() -> str | None:
    """Why Redis cannot run here, or None."""
    if Path(REDIS_SERVER).exists():
        return None
    where = f"redis-server not found at {REDIS_SERVER}"
    return f"{where}: install Debian's Redis (`apt-get install redis-server`)"


def config(folder: Path, port: int, password: str) -> str:
    """The text of `redis.conf`: loopback only, everything kept in `folder`, every
    acknowledged write on the disk (see the module's docstring)."""
    lines = [
        f"bind {HOST}",
        "protected-mode yes",
        f"port {port}",
        "daemonize no",  # in the foreground: `deploy.servers` watches and stops it
        f'dir "{folder}"',  # the append-only file, and any other file Redis writes
        f'logfile "{folder / "redis.log"}"',  # appended to across restarts
        'save ""',  # no snapshots: the append-only file is the one copy
        "appendonly yes",
        "appendfsync always",  # on the disk before the answer
        "databases 16",
        f"requirepass {password}",
    ]
    return "\n".join(lines) + "\n"


@dataclass
class Redis:
    """A redis-server on 127.0.0.1:`port` whose data is in `folder`."""

    folder: Path  # redis.conf, redis.log, appendonlydir/
    port: int
    password: str  # 128 bits, URL-safe
    server: servers.Server  # the running process (replaced by `start_again`)

    @property
    def url(self) -> str:
        """The address a replica is given (`REDIS_URL_ENV`): database 0, with the password."""
        return f"redis://:{self.password}@{HOST}:{self.port}/0"

    def client(self) -> redis_client.Redis:
        """A client of this server (the `redis` package), which fails fast when it is down."""
        import redis as redis_client

        return redis_client.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)

    def ping(self) -> bool:
        """True if the server answers PING now (False while it is down or still loading)."""
        import redis as redis_client

        try:
            with self.client() as client:
                return bool(client.ping())
        except redis_client.RedisError:
            return False

    def running(self) -> bool:
        """True while the process runs."""
        return self.server.process.poll() is None

    def wait_ready(self) -> Redis:
        """Wait until the server answers PING.

        Raises:
            RuntimeError: if it ends or does not answer within `START_SECONDS` (with its log).
        """
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.ping():
                self.server.healthy = time.time()
                return self
            if not self.running():
                break
            time.sleep(POLL_S)
        self.server.stop()
        raise RuntimeError(f"redis-server did not answer PING; its log ends:\n{self._log_end()}")

    def shutdown(self) -> None:
        """Stop the server cleanly (SIGTERM: Redis flushes its file and exits); keep its data."""
        self.server.stop()

    def kill(self) -> None:
        """Kill the server at once (SIGKILL, a crash); keep its data."""
        self.server.kill()

    def start_again(self) -> Redis:
        """Start the server again (after `shutdown` or `kill`) on the same port and data, and
        wait until it answers: it has read back everything it acknowledged."""
        if self.running():
            raise RuntimeError(f"redis-server is still running on port {self.port}")
        self.server = _spawn(self.folder, self.port)
        return self.wait_ready()

    def restart(self, crash: bool = False) -> Redis:
        """Stop (or, `crash=True`, kill) the server and start it again on the same port."""
        if crash:
            self.kill()
        else:
            self.shutdown()
        return self.start_again()

    def stop(self) -> None:
        """Stop the server for good and remove its folder."""
        self.server.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _log_end(self) -> str:
        own = self.folder / "redis.log"  # Redis's log, else what it printed before opening it
        log = own if own.exists() and own.stat().st_size else self.server.log
        return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


def _spawn(folder: Path, port: int) -> servers.Server:
    command = [REDIS_SERVER, str(folder / "redis.conf")]
    return servers.spawn("redis", command, folder, f"redis://{HOST}:{port}", {})


def start(port: int = 0) -> Redis:
    """Start redis-server on 127.0.0.1:`port` (0: a free port) from a new temporary folder and
    wait until it answers PING.

    Raises:
        RuntimeError: if redis-server is missing or does not start (with its log's end).
    """
    if reason := redis_missing():
        raise RuntimeError(reason)
    folder = Path(tempfile.mkdtemp(prefix="attnviz-redis-"))  # mode 0700
    port = port or servers.free_port()
    password = secrets.token_urlsafe(16)  # 16 random bytes: 128 bits
    conf = folder / "redis.conf"
    conf.touch(mode=0o600)
    conf.write_text(config(folder, port, password), encoding="utf-8")
    os.chmod(conf, 0o600)
    running = Redis(folder, port, password, _spawn(folder, port))
    try:
        return running.wait_ready()
    except RuntimeError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
