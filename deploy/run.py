"""Serve attnviz from K replicas behind nginx: one command starts them all, Ctrl-C stops them all.

    .venv/bin/python -m deploy.run                      # 2 replicas, http://127.0.0.1:8080
    .venv/bin/python -m deploy.run --replicas 3 --host 0.0.0.0 --port 8080   # a classroom LAN

(from the repository root).

Each replica is `streamlit run app.py` on a free loopback port; nginx (Debian's package, run in
the foreground from a temporary folder, no root needed) listens on --host:--port, upgrades the
websocket and keeps each session on its replica by a cookie (see deploy/nginx_config.py). A
replica that dies is started again on its port; its users' pages reconnect meanwhile through
another replica and show the same view (every input lives in the URL). Ctrl-C, SIGTERM or a
failure stops nginx and every replica.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time

from deploy import cluster, servers

CHECK_S = 1.0  # how often the processes are checked


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--replicas", type=int, default=2, help="attnviz servers (default 2)")
    parser.add_argument("--host", default="127.0.0.1", help="nginx's address (0.0.0.0: all)")
    parser.add_argument("--port", type=int, default=8080, help="nginx's port (default 8080)")
    args = parser.parse_args(argv)
    if args.replicas < 1:
        parser.error(f"--replicas must be at least 1. Received {args.replicas}.")
    return args


def _describe(running: cluster.Cluster) -> str:
    lines = [f"attnviz on {running.url} ({len(running.replicas)} replicas behind nginx)"]
    for i, replica in enumerate(running.replicas):
        lines.append(f"  r{i + 1}: {replica.url} (pid {replica.process.pid}, log {replica.log})")
    lines.append(f"  nginx: pid {running.nginx.process.pid}, config {running.prefix}/nginx.conf,")
    lines.append(f"         access log {running.prefix}/access.log, errors {running.nginx.log}")
    lines.append("Ctrl-C stops everything.")
    return "\n".join(lines)


def _watch(running: cluster.Cluster) -> None:
    """Restart replicas that die; return if nginx does."""
    while True:
        time.sleep(CHECK_S)
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
    print(f"starting {args.replicas} replicas and nginx ...", flush=True)
    running = None
    try:
        running = cluster.start(args.replicas, host=args.host, port=args.port)
        print(_describe(running), flush=True)
        _watch(running)
    except KeyboardInterrupt:
        print("\nstopping", flush=True)
        return 0
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        if running is not None:
            running.stop()
        servers.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
