"""The scripts are packages: `bench` and `deploy` import as packages from the repository root,
run with `python -m`, and nothing in the repository edits `sys.path` (but the page script, which
Streamlit and AppTest run on their own)."""

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STREAMLIT_SCRIPTS = {
    "floor_app",
    "floor_model_view",
    "floor_charts",
    "floor_class",
    "floor_class_page",
}  # run by `streamlit run`,
# not imported
MODULES = [
    f"{folder}.{path.stem}"
    for folder in ("bench", "deploy")
    for path in sorted((ROOT / folder).glob("*.py"))
    if path.stem not in STREAMLIT_SCRIPTS
]


@pytest.mark.parametrize("module", MODULES)
def test_every_script_module_imports_as_part_of_its_package(module):
    imported = importlib.import_module(module)
    assert Path(imported.__file__).resolve().parent.name == module.split(".")[0]


def test_no_code_edits_sys_path():
    edits = re.compile(r"sys\.path[ \t]*(\.(insert|append|extend|remove)\b|\[|\+=|=)")
    sources = [ROOT / "app.py"]
    sources += [
        p
        for folder in ("attnviz", "bench", "deploy", "tests")
        for p in (ROOT / folder).rglob("*.py")
    ]
    found = [
        str(path.relative_to(ROOT))
        for path in sources
        if edits.search(path.read_text(encoding="utf-8"))
    ]
    assert found == [], found  # the page script too: the package is imported as a package


@pytest.mark.parametrize("module", ["deploy.run", "bench.benchmark"])
def test_the_commands_run_with_python_m(module):
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m {module}")
