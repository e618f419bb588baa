"""The nginx configuration that puts K identical attnviz replicas behind one address.

Sticky sessions with open-source nginx (no `sticky` directive there), by a cookie nginx sets:

- A request without the cookie (a new visitor's first page load) goes to the replicas in turn
  (`upstream attnviz_new`, round robin).
- Every response carries `Set-Cookie: attnviz_replica=r<i>`, where r<i> is the replica that
  answered (read from `$upstream_addr`, the last address nginx tried). The browser sends it
  back with every later request: static files, the health checks, uploads, downloads and the
  websocket `/_stcore/stream`, where the Streamlit session lives.
- `map $cookie_attnviz_replica` sends a request carrying r<i> to `upstream attnviz_r<i>`, whose
  first server is replica i and whose other servers are `backup`s: while replica i is up, all of
  its sessions' requests reach it; when it is down, nginx passes to a backup, whose answer
  re-sets the cookie, so the session sticks to its new replica from then on.

Only the names r1..rK are accepted from the cookie (anything else counts as a new visitor), so
the cookie cannot make nginx connect anywhere else. Each response also says who answered in
`X-Attnviz-Replica`, and the access log records it beside the cookie that was sent.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

COOKIE = "attnviz_replica"
HEADER = "X-Attnviz-Replica"
UPLOAD_MB = 25  # attnviz accepts 20 MB uploads (.streamlit/config.toml), plus the form's overhead


def replica_id(index: int) -> str:
    """The cookie value of replica `index` (0-based): "r1", "r2", ..."""
    return f"r{index + 1}"


def _upstreams(addresses: list[str]) -> list[str]:
    """The round-robin group for new visitors, then one sticky group per replica."""
    lines = ["    upstream attnviz_new {  # new visitors: each replica in turn"]
    lines += [f"        server {a} max_fails=1 fail_timeout=5s;" for a in addresses]
    lines += ["    }"]
    for i, address in enumerate(addresses):
        lines += [f"    upstream attnviz_{replica_id(i)} {{  # sessions of replica {i + 1}"]
        lines += [f"        server {address} max_fails=1 fail_timeout=5s;"]
        lines += [f"        server {other} backup;" for other in addresses if other != address]
        lines += ["    }"]
    return lines


def _maps(addresses: list[str]) -> list[str]:
    """Cookie -> group, answering address -> replica name, websocket upgrade headers."""
    lines = [f"    map $cookie_{COOKIE} $attnviz_group {{", "        default attnviz_new;"]
    lines += [f"        {replica_id(i)} attnviz_{replica_id(i)};" for i in range(len(addresses))]
    lines += ["    }", "    map $upstream_addr $attnviz_served_by {  # the last address tried"]
    lines += ['        default "";']
    for i, address in enumerate(addresses):
        pattern = address.replace(".", "\\.")
        lines += [f'        "~(^|[ ,]){pattern}$" {replica_id(i)};']
    lines += ["    }", "    map $http_upgrade $connection_upgrade {", "        default upgrade;"]
    lines += ['        "" close;', "    }"]
    return lines


def _server(listen: str) -> list[str]:
    cookie = f"{COOKIE}=$attnviz_served_by; Path=/; HttpOnly; SameSite=Lax"
    return [
        "    server {",
        f"        listen {listen};",
        "        location / {",
        "            proxy_pass http://$attnviz_group;",
        "            proxy_http_version 1.1;",
        "            proxy_set_header Host $http_host;  # with the port: Streamlit checks Origin",
        "            proxy_set_header Upgrade $http_upgrade;",
        "            proxy_set_header Connection $connection_upgrade;",
        "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
        "            proxy_set_header X-Forwarded-Proto $scheme;",
        "            proxy_connect_timeout 2s;  # a replica that is down is passed over quickly",
        "            proxy_read_timeout 1d;  # a websocket stays open for the whole lesson",
        "            proxy_send_timeout 1d;",
        f'            add_header Set-Cookie "{cookie}" always;',
        f"            add_header {HEADER} $attnviz_served_by always;",
        "        }",
        "    }",
    ]


def render(replicas: list[int], listen: str, prefix: Path) -> str:
    """nginx.conf for the replicas on 127.0.0.1:`replicas` ports, nginx listening on `listen`
    (e.g. "127.0.0.1:8080"), every file nginx writes (pid, logs, temp files) under `prefix`.

    nginx runs in the foreground (`daemon off`) and logs errors to stderr.
    """
    addresses = [f"127.0.0.1:{port}" for port in replicas]
    temp = [f"    {kind}_temp_path {prefix / kind};" for kind in
            ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")]  # fmt: skip
    user = [f"user {getpass.getuser()};"] if os.geteuid() == 0 else []  # workers write temp files
    log_format = (
        '\'$msec $status "$request" upstream=$upstream_addr '
        f"cookie=$cookie_{COOKIE} served_by=$attnviz_served_by'"
    )
    return "\n".join(
        [
            f"# attnviz: {len(replicas)} replicas behind nginx, sticky by the {COOKIE} cookie.",
            "# Written by deploy/nginx_config.py; see deploy/README_SECTIONS.md.",
            "daemon off;",
            "worker_processes 1;",
            *user,
            f"pid {prefix / 'nginx.pid'};",
            "error_log stderr warn;",
            "events {",
            "    worker_connections 4096;  # two per session: browser side and replica side",
            "}",
            "http {",
            f"    log_format attnviz {log_format};",
            f"    access_log {prefix / 'access.log'} attnviz;",
            *temp,
            f"    client_max_body_size {UPLOAD_MB}m;",
            *_upstreams(addresses),
            *_maps(addresses),
            *_server(listen),
            "}",
            "",
        ]
    )
