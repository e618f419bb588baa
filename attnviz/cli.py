"""The `attnviz` command: start the app, from wherever attnviz is installed.

    attnviz                          # http://localhost:8501, as `streamlit run app.py` would
    attnviz --port 8600 --host 127.0.0.1
    attnviz serve --port 8600        # the same, named (`serve` is the default command)
    attnviz view my_model.keras      # the app with your model: http://localhost:8501/model
    attnviz view ./preset_folder     # a keras-hub preset folder, or a preset name (gpt2_base_en)

`attnviz` runs `python -m streamlit run` on the installed `attnviz/ui/app/server.py` with the
server options of `attnviz.ui.frame.server_config` (the ones `.streamlit/config.toml` gives a
checkout) as `--section.option` flags, plus `--server.port` and `--server.address` when given.
`view` also puts the model (an absolute path, or the preset name) in the server's environment
(`server_config.MODEL_ENV`), where the "Your model" page reads it: only the person starting the
server chooses a model, never a visitor. This module never imports Streamlit or TensorFlow
(`attnviz --help` answers at once); on POSIX the process then becomes Streamlit's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import as_file, files
from pathlib import Path

from attnviz.heads.user_model import PRESET_CONFIG, looks_like_path
from attnviz.ui.frame import server_config

PROG = "attnviz"
COMMANDS = ("serve", "view")  # the subcommands; none given means "serve"
MODEL_PAGE = "model"  # the URL path of the page that shows the chosen model


def _port(text: str) -> int:
    """A TCP port number, for argparse."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 1 to 65535. Received: {text!r}. Try --port 8501."
        )
    return port


def _add_serve_options(parser: argparse.ArgumentParser, default: object = None) -> None:
    """`--port` and `--host`, on the main parser (default None) and on `serve`'s (SUPPRESS,
    so `attnviz --port 1 serve` keeps the port given before the command)."""
    parser.add_argument(
        "--port", type=_port, default=default, help="the port to listen on (Streamlit's: 8501)"
    )
    parser.add_argument(
        "--host",
        default=default,
        metavar="ADDRESS",
        help="the address to listen on, e.g. 127.0.0.1 for this machine only or 0.0.0.0 for "
        "a classroom's network (Streamlit's default: every address)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line: serve options, and one subcommand per entry of `COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="attnviz, an interactive attention visualiser: start the app and open the "
        "address it prints in a browser.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    _add_serve_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    serve = commands.add_parser("serve", help="start the app (what plain `attnviz` does)")
    _add_serve_options(serve, argparse.SUPPRESS)
    view = commands.add_parser(
        "view",
        help="start the app with your model on its Your model page",
        description="Start the app with your own model: every layer × head of its attention "
        "on the text you type, at /model.",
    )
    view.add_argument(
        "model",
        type=model_source,
        metavar="MODEL",
        help="a .keras file, a keras-hub preset folder (from save_to_preset) or a keras-hub "
        "preset name such as gpt2_base_en (keras-hub downloads it; needs attnviz[hub])",
    )
    _add_serve_options(view, argparse.SUPPRESS)
    return parser


def model_source(text: str) -> str:
    """The model `attnviz view` was given, for argparse: an existing `.keras` file or preset
    folder as an absolute path, or a preset name as it is (keras-hub checks it when loading)."""
    if not looks_like_path(text):
        return text
    path = Path(text).expanduser()
    if path.is_file() and path.suffix == ".keras":
        return str(path.resolve())
    if path.is_dir() and (path / PRESET_CONFIG).is_file():
        return str(path.resolve())
    what = "no such file or folder" if not path.exists() else (
        f"a folder without {PRESET_CONFIG}" if path.is_dir() else "not a .keras file"
    )  # fmt: skip
    raise argparse.ArgumentTypeError(
        f"{what}: {text!r}. Give a .keras file, a keras-hub preset folder (holding "
        f"{PRESET_CONFIG}) or a keras-hub preset name."
    )


def _version() -> str:
    try:
        return version("attnviz")
    except PackageNotFoundError:  # a checkout that was never installed
        return "(not installed)"


def streamlit_command(script: str, port: int | None, host: str | None) -> list[str]:
    """The `python -m streamlit run` command line serving `script` with attnviz's options."""
    command = [sys.executable, "-m", "streamlit", "run", script, *server_config.flags()]
    if port is not None:
        command += ["--server.port", str(port)]
    if host is not None:
        command += ["--server.address", host]
    return command


def serve(port: int | None = None, host: str | None = None, model: str | None = None) -> int:
    """Run the app's server until it stops (Ctrl-C); its exit status. With `model` (a path or
    preset name), the Your model page shows that model.

    On POSIX this process becomes the server (`os.execve`), so Ctrl-C, SIGTERM and a process
    manager reach Streamlit itself; on Windows the server is a child process waited for.
    """
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
    env.pop(server_config.MODEL_ENV, None)  # only `attnviz view` chooses a model
    if model is not None:
        env[server_config.MODEL_ENV] = model
        where = "localhost" if host in (None, "0.0.0.0", "::") else host
        print(f"Your model, {model}: http://{where}:{port or 8501}/{MODEL_PAGE}", flush=True)
    with as_file(files("attnviz.ui.app") / "server.py") as script:  # a real file when installed
        command = streamlit_command(str(script), port, host)
        if os.name == "posix":
            sys.stdout.flush()
            os.execve(sys.executable, command, env)  # does not return
        process = subprocess.Popen(command, env=env)
        try:
            return process.wait()
        except KeyboardInterrupt:  # Ctrl-C reached Streamlit too: let it shut down
            return process.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: the command line) and run the command; its exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "view":
        return serve(port=args.port, host=args.host, model=args.model)
    return serve(port=args.port, host=args.host)  # `serve`, given or not


if __name__ == "__main__":
    sys.exit(main())
