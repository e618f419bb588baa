"""Serve attnviz from K replicas behind nginx: one command starts them all, Ctrl-C stops them all.

    .venv/bin/python -m deploy.run                      # 2 replicas, http://127.0.0.1:8080
    .venv/bin/python -m deploy.run --replicas 3 --host 0.0.0.0 --port 8080   # a classroom LAN
    .venv/bin/python -m deploy.run --redis             # classes shared by the replicas

(from the repository root).

Each replica is `streamlit run app.py` on a free loopback port; nginx (Debian's package, run in
the foreground from a temporary folder, no root needed) listens on --host:--port, upgrades the
websocket and keeps each session on its replica by a cookie (see deploy/nginx_config.py). A
replica that dies is started again on its port; its users' pages reconnect meanwhile through
another replica and show the same view (every input lives in the URL). Ctrl-C, SIGTERM or a
failure stops nginx and every replica.

With --redis it first starts Debian's redis-server on loopback (`deploy.redis`: a temporary
folder, append-only persistence, a password drawn at start) and gives every replica its address
in ATTNVIZ_REDIS_URL=redis://...@127.0.0.1:<port>/0, so that a class (its members, moves and
answers) lives in Redis, not in one replica: students on different replicas are in the same
room, and a replica's death loses nobody. A Redis that dies is started again on its port and
data. Without --redis each replica keeps its classes in its own memory: a class then needs
--redis with more than one replica. Ctrl-C stops Redis too and removes its folder.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time

from deploy import cluster, redis, servers

CHECK_S = 1.0  # how often the processes are checked


def _parse(argv: list[str] | None) -> argparse.Namespace:
    paragraphs = __doc__.split("\n\n")
    parser = argparse.ArgumentParser(
        prog="python -m deploy.run",
        description=paragraphs[0],
        epilog=next(p for p in paragraphs if p.startswith("With --redis")),
    )
    parser.add_argument("--replicas", type=int, default=2, help="attnviz servers (default 2)")
    parser.add_argument("--host", default="127.0.0.1", help="nginx's address (0.0.0.0: all)")
    parser.add_argument("--port", type=int, default=8080, help="nginx's port (default 8080)")
    parser.add_argument(
        "--redis",
        action="store_true",
        help="start redis-server on loopback and give every replica its address "
        f"({redis.REDIS_URL_ENV}): classes shared by the replicas. Without it each replica "
        "keeps its classes in its own memory, so a class needs --redis with more than one "
        "replica",
    )
    args = parser.parse_args(argv)
    if args.replicas < 1:
        parser.error(f"--replicas must be at least 1. Received {args.replicas}.")
    return args


def replica_env(store: redis.Redis | None) -> dict[str, str]:
    """What every replica's environment adds: Redis's address, if there is one."""
    return {redis.REDIS_URL_ENV: store.url} if store is not None else {}


def _describe(running: cluster.Cluster, store: redis.Redis | None) -> str:
    lines = [f"attnviz on {running.url} ({len(running.replicas)} replicas behind nginx)"]
    for i, replica in enumerate(running.replicas):
        lines.append(f"  r{i + 1}: {replica.url} (pid {replica.process.pid}, log {replica.log})")
    lines.append(f"  nginx: pid {running.nginx.process.pid}, config {running.prefix}/nginx.conf,")
    lines.append(f"         access log {running.prefix}/access.log, errors {running.nginx.log}")
    if store is not None:
        pid, env = store.server.process.pid, redis.REDIS_URL_ENV
        lines.append(f"  redis: 127.0.0.1:{store.port}, pid {pid}, data and log in {store.folder};")
        lines.append(f"         its address is in every replica's {env}")
    elif len(running.replicas) > 1:
        lines.append("  no --redis: each replica keeps its own classes (a class needs --redis)")
    lines.append("Ctrl-C stops everything.")
    return "\n".join(lines)


def _watch(running: cluster.Cluster, store: redis.Redis | None) -> None:
    """Restart replicas and Redis when they die; raise if nginx does."""
    while True:
        time.sleep(CHECK_S)
        if store is not None and store.server.died():
            print("redis stopped; starting it again on its port and data", flush=True)
            store.start_again()
            print("redis is back", flush=True)
        for name in running.died():
            if name == "nginx":
                tail = running.nginx.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"nginx stopped; its log ends:\n{tail}")
            print(f"replica {name} stopped; starting it again", flush=True)
            running.restart(name)
            print(f"replica {name} is back", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Start the cluster, keep its replicas up until Ctrl-C, then stop everything."""
    args = _parse(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in background
    also = "Redis, " if args.redis else ""
    print(f"starting {also}{args.replicas} replicas and nginx ...", flush=True)
    running = store = None
    try:
        store = redis.start() if args.redis else None
        env = replica_env(store)
        running = cluster.start(args.replicas, host=args.host, port=args.port, env=env)
        print(_describe(running, store), flush=True)
        _watch(running, store)
    except KeyboardInterrupt:
        print("\nstopping", flush=True)
        return 0
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        if running is not None:
            running.stop()
        if store is not None:
            store.stop()
        servers.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
