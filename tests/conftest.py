"""Shared test setup: keep TensorFlow quiet. The support modules (`reference`, `app_support`,
`browser_support`) are importable because pyproject.toml puts `tests/` on pytest's pythonpath."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before anything imports TensorFlow

# The browser fixtures, registered once so the session has one Chromium and one Playwright.
pytest_plugins = ["browser_support"]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test (`item.rep_call`), so fixtures can see a failure
    (the browser tests take a screenshot then)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
