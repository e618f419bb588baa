"""Shared test setup: keep TensorFlow quiet, and start the longest test files first. The support
modules (`reference`, `app_support`, `browser_support`) are importable because pyproject.toml
puts `tests/` on pytest's pythonpath."""

import functools
import gc
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import hypothesis_support
import pytest

# Python writes each module's compiled bytecode the first time a test process imports it, and
# every later process (the other test process, the servers, the subprocesses) reads it, even where
# PYTHONDONTWRITEBYTECODE is set (as on the CI machine). The README's command installs the
# packages without compiling them: a full run imports 5,500 of the 11,000 modules installed
# (measured 2026-11-27: compiling them all at install made the command 24 s longer; the test
# processes compile what they import in about 8 CPU-s; with no bytecode at all, every process
# that imports TensorFlow took 9 s instead of 4 s). Set before pytest-xdist starts its processes.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before anything imports TensorFlow
# One thread per TensorFlow op pool in each test process and in the servers the tests start
# (they inherit the environment): the test processes, the server and Chromium already share
# two cores, and TensorFlow's own pools of two threads each only made them wait on each other
# (measured 2026-11-27, the training and Transformer tests, `-n 2`, two runs each: 92-95 s and
# 177-179 CPU-s with TensorFlow's default, 81-89 s and 146-164 CPU-s with one thread). No test
# depends on it: each compares runs of one process, or scores within bounds.
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
# numpy's OpenBLAS likewise (read when numpy is first imported, which is after this file): its
# second thread spun waiting beside the other test process (measured 2026-11-27, the quick run,
# two runs each: 77-89 CPU-s and 41-49 s with two threads, 72-80 CPU-s and 39-44 s with one).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# XLA's compiled programs kept on disk for the whole test run, shared by the test processes and
# the servers they start (all inherit the environment; the folder is made once, here, before
# pytest-xdist starts its processes): the language model's train step is the same program in
# several tests (the same configuration trained with two seeds, a run and its twin), and XLA's
# compile costs more CPU than a short run itself (measured 2026-11-28: one short run of the tests'
# small model, 19 CPU-s compiling, 8.5 CPU-s reading the compiled step back; the same losses bit
# for bit). TensorFlow's own cache: `--tf_xla_persistent_cache_directory`.
XLA_CACHE_VAR = "ATTNVIZ_TEST_XLA_CACHE"  # the folder; the process that made it removes it
_MADE_XLA_CACHE = XLA_CACHE_VAR not in os.environ
if _MADE_XLA_CACHE:
    os.environ[XLA_CACHE_VAR] = tempfile.mkdtemp(prefix="attnviz-xla-")
_XLA_CACHE = os.environ[XLA_CACHE_VAR]
if "tf_xla_persistent_cache_directory" not in os.environ.get("TF_XLA_FLAGS", ""):
    os.environ["TF_XLA_FLAGS"] = (
        os.environ.get("TF_XLA_FLAGS", "") + f" --tf_xla_persistent_cache_directory={_XLA_CACHE}"
    ).strip()

# The browser fixtures, registered once so the session has one Chromium and one Playwright; the
# Redis fixtures likewise (one redis-server per test process).
pytest_plugins = ["browser_support", "redis_support"]

# The files that take longest (`--durations` of the full run, 2026-11-27, with the grouping
# working), longest first; the browser files' tests form one group (below), 160 s in all, which
# starts first. Under `pytest -n 3 --dist loadgroup` each group of tests runs whole in one
# process, the groups taken in collection order: starting these first keeps one process from
# getting a long file when the others are nearly done.
LONGEST_FIRST = (
    "tests/ui/test_browser_explorer.py",
    "tests/ui/test_browser_models.py",
    "tests/ui/test_browser_views.py",
    "tests/ui/classroom/test_browser_class.py",
    "tests/project/test_deploy.py",
    "tests/learn/runs/test_replicas.py",
    "tests/ui/pages/test_learn.py",
    "tests/learn/translation/test_training.py",
    "tests/learn/test_pretrained.py",
    "tests/learn/translation/test_transformer_translator.py",
    "tests/heads/test_inspection_hub.py",
    "tests/learn/runs/test_training_run.py",
    "tests/learn/language/test_training.py",
    "tests/ui/test_app.py",
    "tests/project/test_project.py",
    "tests/ui/pages/test_language_model.py",
    "tests/project/test_install.py",
    "tests/project/test_wheel.py",
)
# The group of the tests that drive Chromium (the session's server, or their own servers as the
# deploy test's replicas): one process runs them all, one at a time, while the others run the
# rest; two servers and two browsers at once slowed every page down (measured: the browser tests
# took 471 s instead of 387 s). The deploy test's replicas and three users are such a second set.
BROWSER_GROUP = "browser"
BROWSER_FIXTURES = {"app_url", "browser"}


SLOW_MODULE = re.compile(r"^pytestmark\s*=[^\n]*\bslow\b", re.MULTILINE)  # a file all slow


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the quick run (`-m "not slow"`), a test file whose every test is slow (its module
    `pytestmark` says so) is not even imported: it would be deselected whole, after its imports
    (keras-hub, Playwright, the servers' helpers) had cost each test process seconds."""
    if not _quick_run(config) or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return True if SLOW_MODULE.search(collection_path.read_text(encoding="utf-8")) else None


def pytest_configure(config: pytest.Config) -> None:
    """Keep the collection order below for pytest-xdist (which would otherwise order the groups
    by how many tests they hold); in the quick run, property tests draw fewer examples
    (`hypothesis_support`), in every test process (each runs this before importing a test)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if _quick_run(config):
        os.environ[hypothesis_support.QUICK_RUN_VAR] = "1"
        hypothesis.settings.load_profile("quick")


def _quick_run(config: pytest.Config) -> bool:
    return config.option.markexpr.strip() == "not slow"


def pytest_unconfigure(config: pytest.Config) -> None:
    """The process that made the XLA cache's folder removes it (the others only used it)."""
    if _MADE_XLA_CACHE:
        shutil.rmtree(_XLA_CACHE, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files of `LONGEST_FIRST` first, in that order, the others after, as collected; each
    test in the group of its file (`xdist_group`), the tests using Chromium (a fixture of
    `BROWSER_FIXTURES`) in `BROWSER_GROUP`."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_path(item), len(rank)))
    for item in items:
        uses_browser = not BROWSER_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
        group = BROWSER_GROUP if uses_browser else _path(item)
        item.add_marker(pytest.mark.xdist_group(group))


def _path(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


@pytest.fixture(scope="session", autouse=True)
def _components_scanned_once() -> Iterator[None]:
    """Every AppTest reads the installed components from one scan, as a server does.

    AppTest's first run of each new session scans the metadata of every installed package for
    Streamlit components (`streamlit.components.v2.manifest_scanner`): ~0.6 s here, most of what
    a fresh session costs, paid by hundreds of tests. A server scans once at its start. The
    packages do not change during a test run, so the first scan's result serves them all."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    first = functools.cache(lambda: tuple(scan()))
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(first())
    try:
        yield
    finally:
        manifest_scanner.scan_component_manifests = scan


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a test file's last test (its fixtures torn down), collect its garbage and move what
    is still alive out of the garbage collector's reach, as the app's server does after its
    warm-up (`ui.app.warmup`): the imported packages, the session's fixtures and caches, which
    live as long as the test process.

    With TensorFlow imported, a full collection walks its ~300,000 objects (0.25 s here), and
    the objects a test process keeps make full collections frequent: an AppTest run that takes
    15 ms in a fresh process took 0.5 s after a test file that imported TensorFlow; 40 % of the
    quick run's time was the collector's (measured with `gc.callbacks`)."""
    if nextitem is None or nextitem.path != item.path:
        gc.collect()
        gc.freeze()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test (`item.rep_call`), so fixtures can see a failure
    (the browser tests take a screenshot then)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
