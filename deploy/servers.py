"""Streamlit servers: start one, wait until it is healthy, read its memory, stop it.

The one launcher of the scripts and tests that run servers: the replicas of `deploy.cluster`
(and so `python -m deploy.run`), the benchmark (`bench/`), the browser tests and
`python -m bench.screenshots`. Every server started here is registered and stopped at exit, on
Ctrl-C and on SIGTERM, so a failed or interrupted run leaves nothing behind; the log folder and
those handlers are set up by the first server started, not on import. The benchmark's floor apps
run with the same server settings as attnviz (`attnviz.ui.frame.server_config`).
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.ui.frame import server_config

ROOT = Path(__file__).resolve().parent.parent  # the repository
START_SECONDS = 120  # most time a server may take to answer its health check
_RUNNING: list[Server] = []
_LOG_DIR: Path | None = None  # the one log folder, once a server has been started


@dataclass
class Server:
    """One server process: `streamlit run`, or another started by `spawn` (nginx)."""

    name: str  # "attnviz", "floor", or e.g. "nginx" (any process started by `spawn`)
    process: subprocess.Popen  # the process (for Streamlit: the Python process running it)
    url: str  # http://127.0.0.1:<port>
    log: Path  # its stdout and stderr
    launched: float  # time.time() just before the process was launched
    healthy: float = field(default=0.0)  # time.time() when /_stcore/health first answered "ok"

    def rss_mb(self) -> float:
        """Resident memory of the server process now, in MB (VmRSS)."""
        return _status_kb(self.process.pid, "VmRSS") / 1024

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the process has used so far; 0 once it has ended."""
        try:
            stat = Path(f"/proc/{self.process.pid}/stat").read_text()
        except OSError:
            return 0.0
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss_mb(self) -> float:
        """Highest resident memory of the server process so far, in MB (VmHWM)."""
        return _status_kb(self.process.pid, "VmHWM") / 1024

    def died(self) -> bool:
        """True if the process ended without `stop` (another program stopped or killed it)."""
        return self.process.poll() is not None and self in _RUNNING

    def kill(self) -> None:
        """Kill the process at once (SIGKILL: a crash, no clean-up) and forget it."""
        if self in _RUNNING:
            _RUNNING.remove(self)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """Terminate the process (kill it after 10 s) and forget it."""
        if self in _RUNNING:
            _RUNNING.remove(self)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _status_kb(pid: int, field_name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no {field_name}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SCRIPTS = {  # server name -> (script, folder it runs from)
    "attnviz": ("app.py", ROOT),
    "floor": ("floor_app.py", ROOT / "bench"),  # the benchmark's baselines
    "floor-model-view": ("floor_model_view.py", ROOT / "bench"),
    "floor-charts": ("floor_charts.py", ROOT / "bench"),
    "floor-exercise": ("floor_exercise.py", ROOT / "bench"),
    "floor-class": ("floor_class.py", ROOT / "bench"),
}


def start(name: str, port: int | None = None, env: dict[str, str] | None = None) -> Server:
    """Launch the attnviz app (`name="attnviz"`, from the repository root) or a benchmark floor
    app (`name="floor"`, `"floor-model-view"`, `"floor-charts"`, `"floor-exercise"` or
    `"floor-class"`, from `bench/`; see `SCRIPTS`) on `port` (default: a free one), with `env`
    added to the environment; returns at once (see `wait_healthy`)."""
    port = port or free_port()
    script, cwd = SCRIPTS[name]
    command = [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--server.headless", "true"]
    if name != "attnviz":  # attnviz reads them from .streamlit/config.toml, as a user's run does
        command += server_config.flags()
    env = {"TF_CPP_MIN_LOG_LEVEL": "2", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "0", **(env or {})}
    return spawn(name, command, cwd, f"http://127.0.0.1:{port}", env)


def spawn(name: str, command: list[str], cwd: Path, url: str, env: dict[str, str]) -> Server:
    """Launch any server process (a Streamlit app, nginx) answering at `url`, its output in
    `log_dir()`, registered to be stopped at exit; returns at once."""
    log = log_dir() / f"{name}-{url.rsplit(':', 1)[-1]}.log"
    launched = time.time()
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the benchmark, which stops the server
        )
    server = Server(name, process, url, log, launched)
    _RUNNING.append(server)
    return server


def log_dir() -> Path:
    """The temporary folder of the servers' logs; the first call makes it and registers the
    clean-up (at exit and on SIGTERM)."""
    global _LOG_DIR
    if _LOG_DIR is None:
        _LOG_DIR = Path(tempfile.mkdtemp(prefix="attnviz-servers-"))
        atexit.register(stop_all)
        if threading.current_thread() is threading.main_thread():  # only it may set handlers
            signal.signal(signal.SIGTERM, _on_sigterm)
    return _LOG_DIR


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError):
        return False


def wait_healthy(server: Server) -> Server:
    """Poll `/_stcore/health` every 50 ms; record when it first answered."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if _healthy(server.url):
            server.healthy = time.time()
            return server
        if server.process.poll() is not None:
            break
        time.sleep(0.05)
    tail = server.log.read_text(errors="replace")[-3000:]
    server.stop()
    raise RuntimeError(f"{server.name} server did not become healthy; its log ends:\n{tail}")


def launch(name: str) -> Server:
    """Start a server and wait until it is healthy."""
    return wait_healthy(start(name))


def died() -> list[str]:
    """Names of the servers that ended without being stopped here."""
    return [server.name for server in _RUNNING if server.died()]


def stop_all() -> None:
    """Stop every server still running (at exit, on Ctrl-C, on errors)."""
    for server in list(_RUNNING):
        server.stop()


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through `finally` blocks, then atexit
