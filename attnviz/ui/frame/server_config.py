"""The Streamlit server options attnviz runs with: one home, no streamlit import.

`.streamlit/config.toml` says the same for `streamlit run app.py` in a checkout (a test checks
that they agree); the `attnviz` command (`attnviz.cli`), which runs from wherever attnviz is
installed and so has no such file, passes them as `--section.option value` flags (`flags`);
the benchmark's floor apps get them the same way, so they run with attnviz's settings.
"""

from __future__ import annotations

# The model `attnviz view MODEL` chose: a path or keras-hub preset name in the server's
# environment, read by the "Your model" page. Only the person starting the server sets it; no
# URL field or upload can (see `attnviz.ui.pages.model`).
MODEL_ENV = "ATTNVIZ_MODEL"
# "0" in the server's environment: no warm-up at start (`attnviz.ui.app.server`); each page then
# loads what it needs on its first open. For small machines and for tests whose servers never
# open the trained models' pages.
WARM_UP_ENV = "ATTNVIZ_WARM_UP"
# The server log's line once a warm-up step is done ({}: its name, a page's for its models):
# `attnviz.view` returns once the Your model page's ("model") is in the log.
WARM_UP_STEP_DONE = "attnviz warm-up: {} done"

SERVER_CONFIG: dict[str, dict[str, bool | int | str]] = {  # section -> option -> value
    "server": {
        "headless": True,  # no browser opened on the server's machine
        "maxUploadSize": 20,  # MB per uploaded Q/K/V file (the parser also checks 20 MB)
        "maxMessageSize": 64,  # MB per message to the browser (heatmaps are kept under ~2 MB)
        "fileWatcherType": "none",  # no file watcher: no rescans of TensorFlow's modules
        "runOnSave": False,
        "enableXsrfProtection": True,
    },
    "browser": {
        "gatherUsageStats": False,
    },
    "client": {
        "showErrorDetails": "none",  # never send a traceback to the page
        "toolbarMode": "viewer",
    },
    "global": {
        # pages and lessons set controls before drawing them: not a mistake to warn about
        "disableWidgetStateDuplicationWarning": True,
    },
    "runner": {
        "fastReruns": True,
        # no full garbage collection after every run: Python's own collector runs as needed
        # (measured: 36 -> 30 ms of CPU per run, -17 %; 60 sessions' p95 2.2-2.8 s -> 0.38 s)
        "postScriptGC": False,
    },
}


def flag_value(value: bool | int | str) -> str:
    """How `streamlit run` takes an option's value on its command line ("true", "20", "none")."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def flags(config: dict[str, dict[str, bool | int | str]] = SERVER_CONFIG) -> list[str]:
    """`config` as `streamlit run` flags: `["--server.headless", "true", ...]`."""
    found = []
    for section, options in config.items():
        for option, value in options.items():
            found += [f"--{section}.{option}", flag_value(value)]
    return found
