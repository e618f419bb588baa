"""The project's own promises: CI runs exactly the README's test command; pins are pins."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_ci_runs_the_readme_test_command_verbatim():
    commands = _readme_commands()
    tests = [c for c in commands if "pytest" in c]
    assert len(tests) == 1, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests[0] in ci


def test_readme_start_command_installs_and_runs_the_app():
    start = [c for c in _readme_commands() if "streamlit run app.py" in c]
    assert len(start) == 1 and "requirements.txt" in start[0]


def test_runtime_requirements_are_pinned():
    lines = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert lines and all("==" in line for line in lines), lines
    tensorflows = [line.split("==")[0] for line in lines if line.startswith("tensorflow")]
    assert sorted(tensorflows) == ["tensorflow", "tensorflow-cpu"]  # one per platform (markers)


def test_streamlit_config_sets_deliberate_limits():
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    for setting in (
        "maxUploadSize",
        "maxMessageSize",
        "gatherUsageStats = false",
        'fileWatcherType = "none"',
        'showErrorDetails = "none"',
        "postScriptGC = false",  # the load benchmark's 60 sessions need it (bench/README.md)
    ):
        assert setting in config, setting


def test_no_unsafe_calls_in_the_package():
    for path in (ROOT / "attnviz").rglob("*.py"):
        code = path.read_text(encoding="utf-8")
        for banned in (
            "eval(",
            "exec(",
            "pickle.load",
            "allow_pickle=True",
            "unsafe_allow_html=True",
            "shell=True",
        ):
            assert banned not in code, f"{banned} in {path.name}"


def test_app_py_is_an_st_app_serving_the_page_with_a_warm_up():
    # `streamlit run app.py` finds this st.App (as its CLI does) and serves the page script
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    assert 'st.App("attnviz/ui/page.py", lifespan=' in source
    assert (ROOT / "attnviz" / "ui" / "page.py").is_file()


def test_warm_up_traces_the_attention_graphs():
    from attnviz.core import attention
    from attnviz.ui.warmup import page_drawn, warm_up

    page_drawn()  # a page has drawn its controls: no wait
    warm_up()
    assert {(True, False, "-inf"), (True, True, "-inf")} <= set(attention._COMPILED)


def test_warm_up_waits_for_the_first_page_or_its_time_limit(monkeypatch):
    import threading
    import time

    from attnviz.ui import warmup

    monkeypatch.setattr(warmup, "PAGE_DRAWN", threading.Event())
    monkeypatch.setattr(warmup, "PAGE_WAIT_S", 0.3)
    start = time.perf_counter()
    warmup.warm_up()  # no page yet: waits its 0.3 s, then imports (already imported here)
    assert time.perf_counter() - start >= 0.3
    thread = threading.Thread(target=warmup.warm_up)
    monkeypatch.setattr(warmup, "PAGE_WAIT_S", 30.0)
    thread.start()
    time.sleep(0.1)
    assert thread.is_alive()  # waiting for a page
    warmup.page_drawn()  # what the page calls before it needs TensorFlow
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_the_page_script_finds_the_package_from_any_working_directory(tmp_path):
    # AppTest and `streamlit run attnviz/ui/page.py` put only the page's own folder on sys.path
    import subprocess
    import sys

    page = str(ROOT / "attnviz" / "ui" / "page.py")
    probe = (
        "import runpy, sys\n"
        "try:\n"
        f"    runpy.run_path({page!r})\n"  # main() needs a Streamlit session: stop at its import
        "except BaseException as err:\n"
        "    print(type(err).__name__)\n"
        "import attnviz.ui\n"
        "print('package from', attnviz.ui.__file__)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert f"package from {ROOT / 'attnviz' / 'ui' / '__init__.py'}" in out.stdout
