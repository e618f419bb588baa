"""`attnviz.view(model, tokenizer=...)`: the app on a model of yours, from a notebook or a script.

The model in memory is saved to a temporary folder (a keras-hub model and its tokenizer with
`save_to_preset`, any other Keras model as a `.keras` file), then `attnviz view` of that folder
or file runs in the background (the same command a terminal would run, so the same server: the
model is chosen here, never by a visitor). `view` waits until the server answers its health
check and its warm-up has loaded the model and run it once (the page then opens at once), and
returns the page's address; in IPython (Jupyter) it also shows the page in an IFrame. Servers
started here stop, and their folders go, when Python exits (or with `stop_all()`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnviz.cli import MODEL_PAGE, model_source
from attnviz.ui.frame.server_config import WARM_UP_ENV, WARM_UP_STEP_DONE

START_SECONDS = 120.0  # most time the server may take to answer its health check
READY_SECONDS = 300.0  # ... and then to load the model and run it once (its warm-up)
MODEL_READY = WARM_UP_STEP_DONE.format("model")  # the server log's line once the model is ready
IFRAME_HEIGHT = 900  # px of the IFrame shown in a notebook
_STARTED: list[Viewer] = []  # servers started here, stopped at exit


@dataclass(frozen=True)
class Viewer:
    """One app server started by `view`."""

    url: str  # the Your model page's address
    process: subprocess.Popen  # the `attnviz view` process (Streamlit's, on POSIX)
    folder: Path  # where the model was saved (and the server's log), removed at stop
    log: Path  # the server's output


def view(
    model: Any,
    tokenizer: Any = None,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
) -> str:
    """Start the app on `model` in the background and return the Your model page's address once
    the page is ready (the server's warm-up has loaded the model and run it once).

    Args:
        model: a Keras model or keras-hub model (backbone or task such as a causal LM) in
            memory, or what `attnviz view` takes: a `.keras` file, a keras-hub preset folder or
            a keras-hub preset name.
        tokenizer: a keras-hub tokenizer for a keras-hub model in memory (a keras-hub task
            brings its own); None: its preset's, or token ids are typed.
        port: the port (default: a free one); host: the address to listen on.

    Raises:
        ValueError: for a model that cannot be saved or found, or a tokenizer that does not fit.
        RuntimeError: if the server does not answer within `START_SECONDS`, or has not loaded
            the model within `READY_SECONDS` more (with its log's end).
    """
    folder = Path(tempfile.mkdtemp(prefix="attnviz-view-"))
    try:
        source = _saved(model, tokenizer, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    port = port or _free_port(host)
    log = folder / "server.log"
    command = [sys.executable, "-m", "attnviz.cli", "view", source, "--port", str(port),
               "--host", host]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)  # fmt: skip
    where = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    viewer = Viewer(f"http://{where}:{port}/{MODEL_PAGE}", process, folder, log)
    if not _STARTED:
        atexit.register(stop_all)
    _STARTED.append(viewer)
    try:
        _wait_healthy(viewer, f"http://{'127.0.0.1' if where == 'localhost' else host}:{port}")
        _wait_ready(viewer)
    except RuntimeError:
        _STARTED.remove(viewer)
        _stop(viewer)
        raise
    _show(viewer.url)
    return viewer.url


def stop_all() -> None:
    """Stop every server `view` started and remove their folders."""
    while _STARTED:
        _stop(_STARTED.pop())


def _stop(viewer: Viewer) -> None:
    """Terminate the server (kill it after 10 s) and remove its folder."""
    if viewer.process.poll() is None:
        viewer.process.terminate()
        try:
            viewer.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            viewer.process.kill()
            viewer.process.wait(timeout=10)
    shutil.rmtree(viewer.folder, ignore_errors=True)


def _saved(model: Any, tokenizer: Any, folder: Path) -> str:
    """What `attnviz view` is given for `model`: a path or name as it is, else the model saved
    in `folder` (a keras-hub preset folder, or `model.keras`)."""
    if isinstance(model, (str, os.PathLike)):
        if tokenizer is not None:
            raise ValueError(
                "`tokenizer` goes with a model in memory; a preset brings its own and a .keras "
                f"file takes token ids. Received a path or name: {os.fspath(model)!r}."
            )
        try:
            return model_source(os.fspath(model))
        except Exception as err:  # argparse's ArgumentTypeError: the same message as the CLI's
            raise ValueError(str(err)) from None
    hub = sys.modules.get("keras_hub")
    if hub is not None and isinstance(model, (hub.models.Backbone, hub.models.Task)):
        return _saved_preset(hub, model, tokenizer, folder / "preset")
    import keras

    if not isinstance(model, keras.Model):
        raise ValueError(
            "`model` must be a Keras model, a keras-hub model, or a path or preset name. "
            f"Received: {type(model).__name__}."
        )
    if tokenizer is not None:
        raise ValueError(
            "`tokenizer` goes with a keras-hub model (saved with it as a preset); a plain Keras "
            f"model takes token ids. Received a {type(model).__name__} and a tokenizer."
        )
    path = folder / "model.keras"
    model.save(path)
    return str(path)


def _saved_preset(hub: Any, model: Any, tokenizer: Any, preset: Path) -> str:
    if tokenizer is not None and not isinstance(tokenizer, hub.tokenizers.Tokenizer):
        raise ValueError(
            "`tokenizer` must be a keras-hub tokenizer (keras_hub.tokenizers.Tokenizer). "
            f"Received: {type(tokenizer).__name__}."
        )
    preset.mkdir()
    model.save_to_preset(str(preset))
    if tokenizer is not None:
        tokenizer.save_to_preset(str(preset))
    return str(preset)


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1" if host in ("0.0.0.0", "localhost") else host, 0))
        return sock.getsockname()[1]


def _wait_healthy(viewer: Viewer, base: str) -> None:
    """Poll the server's health check every 0.1 s until it answers "ok"."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and viewer.process.poll() is None:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    tail = viewer.log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"The attnviz server did not start; its log ends:\n{tail}")


def _wait_ready(viewer: Viewer) -> None:
    """Wait until the server's warm-up has loaded the model and run it once (`MODEL_READY` in
    its log): the page then opens at once, not ~10 s after the address came back. Without a
    warm-up (`ATTNVIZ_WARM_UP=0` in the environment) the page loads the model itself."""
    if os.environ.get(WARM_UP_ENV, "1").strip() == "0":
        return
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline and viewer.process.poll() is None:
        if MODEL_READY in viewer.log.read_text(errors="replace"):
            return
        time.sleep(0.1)
    tail = viewer.log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"The attnviz server did not load the model; its log ends:\n{tail}")


def _show(url: str) -> None:
    """In IPython, show the page (an IFrame) and its address; elsewhere print the address."""
    shell = sys.modules.get("IPython")
    if shell is not None and shell.get_ipython() is not None:
        from IPython.display import IFrame, display

        display(IFrame(url, width="100%", height=IFRAME_HEIGHT))
    print(f"attnviz: your model at {url}", flush=True)
