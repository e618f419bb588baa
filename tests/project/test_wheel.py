"""`pip install .` gives a working attnviz outside the checkout.

The wheel is built from a copy of the repository (`pip wheel --no-deps --no-build-isolation`:
offline, with the setuptools that requirements-dev.txt pins) and installed with `--no-deps`
into a temporary `--target` folder. Then, from another directory, with that folder first on
PYTHONPATH and this environment's site-packages for the dependencies: a shipped model is
loaded and translates a date, the shipped presets are read, the installed page script runs
(AppTest), and the installed `attnviz` command answers `--help` and serves the app.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from deploy import servers

ROOT = Path(__file__).resolve().parents[2]
BUILD_S = 300  # most time building or installing may take
IGNORED = (".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
           ".hypothesis", "results")  # fmt: skip

pytestmark = pytest.mark.slow


def _run(command: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_S, **kwargs)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the repository (the checkout is left untouched)."""
    wanted = SpecifierSet(_build_requirement())
    if version("setuptools") not in wanted:
        pytest.fail(
            f"setuptools {version('setuptools')} cannot build attnviz (pyproject.toml asks for "
            f"setuptools{wanted}): pip install -r requirements-dev.txt",
            pytrace=False,
        )
    source = tmp_path_factory.mktemp("source") / "attnviz"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*IGNORED))
    out = tmp_path_factory.mktemp("wheels")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)])
    (found,) = out.glob("attnviz-*.whl")
    return found


def _build_requirement() -> str:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (requirement,) = project["build-system"]["requires"]
    return requirement.removeprefix("setuptools")


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> Path:
    """The folder the wheel was installed into (`pip install --no-deps --target`)."""
    target = tmp_path_factory.mktemp("target")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "--no-deps", "--no-index", "-q", "--target", str(target), str(wheel)])
    return target


@pytest.fixture(scope="module")
def elsewhere(installed: Path, tmp_path_factory) -> dict:
    """`subprocess.run` arguments for another directory, the installed attnviz first."""
    paths = [str(installed), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONNOUSERSITE": "1"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return {"cwd": tmp_path_factory.mktemp("elsewhere"), "env": env}


def test_the_wheel_holds_the_package_its_data_and_nothing_else(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"attnviz", wheel.name.split("-py3")[0] + ".dist-info"}, tops  # no tests/...
    checkpoints = {Path(n).name for n in names if n.startswith("attnviz/learn/checkpoints/")}
    shipped = {p.name for p in (ROOT / "attnviz" / "learn" / "checkpoints").iterdir()}
    assert checkpoints == shipped and "dates_dot.npz" in checkpoints
    presets = {Path(n).name for n in names if n.startswith("attnviz/inputs/preset_files/")}
    assert presets == {p.name for p in (ROOT / "attnviz" / "inputs" / "preset_files").iterdir()}
    served = {"attnviz/ui/app/server.py", "attnviz/ui/app/page.py", "attnviz/cli.py"}
    assert served <= set(names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[console_scripts]\nattnviz = attnviz.cli:main" in text


def test_the_installed_package_translates_a_date_and_runs_its_page(installed, elsewhere):
    probe = f"""
import json, sys
import attnviz
from attnviz.inputs.presets import shipped_presets
from attnviz.learn import load_pretrained
from streamlit.testing.v1 import AppTest

model = load_pretrained("dates", "dot")
page = AppTest.from_file({str(installed / "attnviz/ui/app/page.py")!r}, default_timeout=180)
page.query_params["mode"] = "matrices"  # the explorer (the start page draws one picture)
page.run()
print(json.dumps({{
    "package": attnviz.__file__,
    "checkout": any("{ROOT}" == p for p in sys.path),
    "date": model.translate("22 November 2026").output,
    "presets": list(shipped_presets())[:1],
    "page_errors": [e.value for e in page.exception] + [e.value for e in page.error],
    "charts": len(page.get("plotly_chart")),
}}))
"""
    done = _run([sys.executable, "-c", probe], **elsewhere)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["package"] == str(installed / "attnviz" / "__init__.py")
    assert not found["checkout"]
    assert found["date"] == "2026-11-22"
    assert found["presets"] == ["01_numpy_lab"]
    assert found["page_errors"] == [] and found["charts"] >= 4


def _script(installed: Path) -> Path:
    return installed / ("Scripts/attnviz.exe" if os.name == "nt" else "bin/attnviz")


def test_the_installed_attnviz_command_answers_help(installed, elsewhere):
    done = _run([str(_script(installed)), "--help"], **elsewhere)
    assert done.stdout.startswith("usage: attnviz") and "--port" in done.stdout


def test_the_installed_attnviz_command_serves_the_app(installed, elsewhere):
    port = servers.free_port()
    command = [str(_script(installed)), "--port", str(port), "--host", "127.0.0.1"]
    server = servers.spawn("attnviz-installed", command, elsewhere["cwd"],
                           f"http://127.0.0.1:{port}", elsewhere["env"])  # fmt: skip
    try:
        servers.wait_healthy(server)
        with urllib.request.urlopen(f"{server.url}/", timeout=30) as response:
            assert "<title>Streamlit</title>" in response.read().decode()
        if sys.platform == "linux":  # the command became Streamlit serving the installed app
            argv = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().split(b"\0")
            assert str(installed / "attnviz" / "ui" / "app" / "server.py").encode() in argv, argv
    finally:
        server.stop()
