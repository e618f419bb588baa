"""Tests for attnviz/cli.py: the `attnviz` command's options and the Streamlit command it runs
(nothing is started here: `os.execve` is replaced by a recorder)."""

import subprocess
import sys
from pathlib import Path

import pytest

from attnviz import cli
from attnviz.ui.server_config import flags

ROOT = Path(__file__).parents[2]
SERVER = ROOT / "attnviz" / "ui" / "server.py"


class ExecutedError(Exception):
    """Raised by the recorder instead of replacing the process."""


@pytest.fixture
def executed(monkeypatch) -> list:
    """What `serve` would have run: [(program, argv, env)]."""
    calls = []

    def record(program, argv, env):
        calls.append((program, argv, env))
        raise ExecutedError

    monkeypatch.setattr(cli.os, "execve", record)
    monkeypatch.setattr(cli.os, "name", "posix")
    return calls


@pytest.mark.parametrize(
    ("argv", "port", "host", "command"),
    [
        ([], None, None, None),
        (["--port", "8600"], 8600, None, None),
        (["--host", "127.0.0.1", "--port", "1"], 1, "127.0.0.1", None),
        (["serve"], None, None, "serve"),
        (["serve", "--port", "65535", "--host", "0.0.0.0"], 65535, "0.0.0.0", "serve"),
        (["--port", "8600", "serve"], 8600, None, "serve"),  # kept when given before
    ],
    ids=["plain", "port", "host-and-port", "serve", "serve-options", "options-before-serve"],
)
def test_the_command_line(argv, port, host, command):
    args = cli.build_parser().parse_args(argv)
    assert (args.port, args.host, args.command) == (port, host, command)


@pytest.mark.parametrize("port", ["0", "65536", "-1", "http", "85.5"])
def test_a_bad_port_is_refused_with_the_allowed_range(port, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["--port", port])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert f"argument --port: must be a whole number from 1 to 65535. Received: '{port}'" in error


def test_unknown_commands_and_options_are_refused(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["view"])
    assert "invalid choice: 'view'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["serve", "--server.port", "1"])
    assert "unrecognized arguments: --server.port 1" in capsys.readouterr().err


def test_help_names_the_options_and_the_serve_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: attnviz")
    for word in ("--port", "--host", "serve", "--version"):
        assert word in text


def test_the_streamlit_command_has_the_server_options_then_port_and_host():
    command = cli.streamlit_command("server.py", 8600, "127.0.0.1")
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", "server.py"]
    assert command[5:-4] == flags()
    assert command[-4:] == ["--server.port", "8600", "--server.address", "127.0.0.1"]
    assert cli.streamlit_command("server.py", None, None)[5:] == flags()  # Streamlit's defaults


def test_serve_becomes_streamlit_running_the_packaged_server(executed, monkeypatch):
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    with pytest.raises(ExecutedError):
        cli.main(["--port", "8600", "--host", "127.0.0.1"])
    ((program, argv, env),) = executed
    assert program == sys.executable and argv[0] == sys.executable
    assert Path(argv[4]) == SERVER and Path(argv[4]).is_file()
    assert argv == cli.streamlit_command(argv[4], 8600, "127.0.0.1")
    assert env["TF_CPP_MIN_LOG_LEVEL"] == "2"  # TensorFlow's start-up chatter off
    assert env["PATH"]  # the rest of the environment is kept


def test_the_command_imports_no_streamlit_before_it_runs_it():
    probe = "import sys\nfrom attnviz import cli\ncli.build_parser()\nprint(sorted(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules = done.stdout
    assert "'streamlit'" not in modules and "'tensorflow'" not in modules
