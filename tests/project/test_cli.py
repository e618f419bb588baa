"""Tests for attnviz/cli.py: the `attnviz` command's options and the Streamlit command it runs
(nothing is started here: `os.execve` is replaced by a recorder), and, marked slow, `attnviz
view` starting a real server on a tiny model."""

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from attnviz import cli
from attnviz.ui.frame.server_config import MODEL_ENV, flags

ROOT = Path(__file__).parents[2]
SERVER = ROOT / "attnviz" / "ui" / "app" / "server.py"


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
        cli.build_parser().parse_args(["show"])
    assert "invalid choice: 'show'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["serve", "--server.port", "1"])
    assert "unrecognized arguments: --server.port 1" in capsys.readouterr().err


def test_help_names_the_options_and_the_serve_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: attnviz")
    for word in ("--port", "--host", "serve", "view", "--version"):
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


@pytest.fixture
def keras_file(tmp_path) -> Path:
    """A file named like a .keras model (the command only checks that it is there)."""
    path = tmp_path / "mine.keras"
    path.write_bytes(b"PK")
    return path


def test_view_takes_a_keras_file_a_preset_folder_or_a_preset_name(keras_file, tmp_path):
    args = cli.build_parser().parse_args(["view", str(keras_file), "--port", "8600"])
    assert (args.command, args.model, args.port) == ("view", str(keras_file.resolve()), 8600)
    (tmp_path / "config.json").write_text("{}")
    assert cli.build_parser().parse_args(["view", str(tmp_path)]).model == str(tmp_path)
    name = cli.build_parser().parse_args(["--host", "127.0.0.1", "view", "gpt2_base_en"])
    assert (name.model, name.host) == ("gpt2_base_en", "127.0.0.1")  # keras-hub checks it later


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("missing.keras", "no such file or folder: './missing.keras'"),
        ("folder", "a folder without config.json: "),
        ("notes.txt", "not a .keras file: "),
    ],
    ids=["missing", "not-a-preset", "not-keras"],
)
def test_view_refuses_what_is_no_model(given, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["view", f"./{given}"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert f"argument MODEL: {said}" in error and "keras-hub preset name" in error


def test_view_becomes_streamlit_with_the_model_in_its_environment(executed, keras_file, capsys):
    with pytest.raises(ExecutedError):
        cli.main(["view", str(keras_file), "--port", "8600", "--host", "127.0.0.1"])
    ((_, argv, env),) = executed
    assert argv == cli.streamlit_command(argv[4], 8600, "127.0.0.1")
    assert env[MODEL_ENV] == str(keras_file.resolve())
    said = capsys.readouterr().out
    assert f"Your model, {keras_file.resolve()}: http://127.0.0.1:8600/model" in said


def test_serve_never_passes_a_model_on(executed, monkeypatch):
    monkeypatch.setenv(MODEL_ENV, "/somewhere/else.keras")  # left in a shell, say
    with pytest.raises(ExecutedError):
        cli.main(["serve"])
    ((_, _, env),) = executed
    assert MODEL_ENV not in env


@pytest.mark.slow
def test_attnviz_view_starts_a_server_that_serves_the_page(tmp_path):
    from user_models import mha_keras_file

    from deploy import servers

    model = mha_keras_file(tmp_path / "tiny.keras")
    port = servers.free_port()
    command = [sys.executable, "-m", "attnviz.cli", "view", str(model), "--port", str(port),
               "--host", "127.0.0.1"]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    server = servers.wait_healthy(servers.spawn("attnviz-view", command, ROOT, url, {}))
    try:
        with urllib.request.urlopen(f"{url}/model", timeout=10) as page:
            assert page.status == 200 and b'<div id="root">' in page.read()
        assert f"Your model, {model}: http://127.0.0.1:{port}/model" in server.log.read_text()
    finally:
        server.stop()
