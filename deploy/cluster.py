"""K identical attnviz servers behind nginx, on loopback ports: start them, find them, stop them.

Each replica is `streamlit run app.py --server.port P --server.headless true` on 127.0.0.1,
started by `deploy.servers` (logs in one temporary folder, every process stopped at exit, on
Ctrl-C and on SIGTERM). The replicas share one cookie secret
(`server.cookieSecret`, drawn once per process), so a cookie one replica signed (Streamlit's
session middleware, `st.login`) stays valid when its browser moves to another. nginx runs in
the foreground with its own prefix folder (config, pid, access log, temp files), so it needs no
root and touches nothing of the system's nginx.

Each replica's TensorFlow runs its operations on its share of the machine's cores
(`replica_env`: cores // replicas threads, at least 1), as one does for each worker of a
multi-process server: with every replica sizing its thread pools for all the cores, the pools of
K replicas outnumbered the cores K times, and a page run's small operations (a 16-token
attention, a translation's decoding) spent more CPU handing work to pool threads than doing it.
A variable that the caller's environment or `env` sets already is left as it is.

Used by `python -m deploy.run` (the command), `tests/project/test_deploy.py` and the load
benchmark (`python -m bench.benchmark --only load --through-nginx K`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from deploy import servers
from deploy.nginx_config import COOKIE, HEADER, render, replica_id

NGINX = "/usr/sbin/nginx"  # Debian's package (`apt-get install nginx`)
__all__ = [
    "COOKIE",
    "HEADER",
    "NGINX",
    "TF_THREADS",
    "Cluster",
    "nginx_missing",
    "replica_env",
    "start",
]


@dataclass
class Cluster:
    """Replicas of one app and the nginx in front of them."""

    replicas: list[servers.Server]  # replica i answers as `replica_id(i)`: "r1", "r2", ...
    nginx: servers.Server  # its url is the cluster's address
    prefix: Path  # nginx's folder: nginx.conf, access.log, temp files
    env: dict[str, str] = field(default_factory=dict)  # added to every replica's environment

    @property
    def url(self) -> str:
        """Where users go: nginx's address."""
        return self.nginx.url

    def replica(self, name: str) -> servers.Server:
        """The replica called `name` ("r1", ...)."""
        return self.replicas[int(name.removeprefix("r")) - 1]

    def restart(self, name: str) -> servers.Server:
        """Start replica `name` again on its port (after it died) and wait until it is up."""
        index = int(name.removeprefix("r")) - 1
        old = self.replicas[index]
        old.kill()
        self.replicas[index] = servers.wait_healthy(_start_replica(old.name, _port(old), self.env))
        return self.replicas[index]

    def died(self) -> list[str]:
        """The replicas (by name) and nginx ("nginx") that ended without being stopped."""
        named = [(replica_id(i), s) for i, s in enumerate(self.replicas)]
        return [name for name, s in [*named, ("nginx", self.nginx)] if s.died()]

    def stop(self) -> None:
        """Stop nginx, then the replicas; remove nginx's folder."""
        self.nginx.stop()
        for replica in self.replicas:
            replica.stop()
        shutil.rmtree(self.prefix, ignore_errors=True)


_SECRET = secrets.token_hex(32)  # one per process: replicas restarted later get the same


def _port(server: servers.Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


TF_THREADS = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")  # read when TF starts


def replica_env(
    replicas: int, env: dict[str, str] | None = None, cores: int | None = None
) -> dict[str, str]:
    """`env` plus, for each of TensorFlow's two thread pools, a replica's share of `cores`
    (default: the cores this process may run on): cores // replicas threads, at least 1; a
    variable that `env` or this process's environment sets already is left to it."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    share = str(max(1, (cores or 1) // max(1, replicas)))
    given = {**os.environ, **(env or {})}
    return {**{name: share for name in TF_THREADS if name not in given}, **(env or {})}


def _start_replica(
    app: str, port: int | None = None, env: dict[str, str] | None = None
) -> servers.Server:
    env = {**(env or {}), "STREAMLIT_SERVER_COOKIE_SECRET": _SECRET}
    return servers.start(app, port=port, env=env)


def nginx_missing() -> str | None:
    """Why nginx cannot run here, or None."""
    if not Path(NGINX).exists():
        return f"nginx not found at {NGINX}: install Debian's nginx (`apt-get install nginx`)"
    return None


def start(
    replicas: int,
    app: str = "attnviz",
    host: str = "127.0.0.1",
    port: int = 0,
    env: dict[str, str] | None = None,
) -> Cluster:
    """Start `replicas` servers of `app` ("attnviz", or the benchmark's "floor") and nginx in
    front of them on `host`:`port` (0: a free port); returns when nginx answers health checks.
    `env` is added to every replica's environment, also of those restarted later (e.g.
    `ATTNVIZ_REDIS_URL`, `deploy.redis`: the replicas then share their classes), with each
    replica's share of the cores for TensorFlow's threads (`replica_env`).

    Raises:
        ValueError: for fewer than 1 replica.
        RuntimeError: if nginx is missing or a process does not start (with its log's end).
    """
    if replicas < 1:
        raise ValueError(f"A cluster needs at least 1 replica. Received replicas={replicas}.")
    if reason := nginx_missing():
        raise RuntimeError(reason)
    env = replica_env(replicas, env)  # with TensorFlow's threads: a replica's share of the cores
    started = [_start_replica(app, env=env) for _ in range(replicas)]  # they start side by side
    for server in started:
        servers.wait_healthy(server)
    prefix = Path(tempfile.mkdtemp(prefix="attnviz-nginx-"))
    port = port or servers.free_port()
    config = prefix / "nginx.conf"
    listen = f"{host}:{port}"
    config.write_text(render([_port(s) for s in started], listen, prefix), encoding="utf-8")
    command = [NGINX, "-p", str(prefix), "-e", "stderr", "-c", str(config)]
    local = "127.0.0.1" if host in ("0.0.0.0", "") else host
    nginx = servers.spawn("nginx", command, prefix, f"http://{local}:{port}", {})
    cluster = Cluster(started, nginx, prefix, dict(env or {}))
    try:
        servers.wait_healthy(nginx)
    except RuntimeError:
        cluster.stop()
        raise
    return cluster
