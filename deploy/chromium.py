"""The browser that opens attnviz in the tests, the benchmark and the screenshots: Debian's
Chromium (`apt-get install chromium`), headless, driven by Playwright. Nothing here downloads a
browser (never `playwright install`).
"""

from __future__ import annotations

import os
import shutil

CHROMIUM = "/usr/bin/chromium"  # Debian's package
CHROMIUM_ARGS = [  # headless, and nothing running in the background that could skew a timing
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NO_CHROMIUM = (
    f"Chromium not found at {CHROMIUM} or on PATH: install Debian's chromium "
    "(`apt-get install chromium`)"
)
NO_PLAYWRIGHT = (
    "Playwright not importable: install the `playwright` Python package "
    "(`pip install -r requirements-dev.txt`; never `playwright install`)"
)


def chromium_path() -> str | None:
    """Where Chromium is: `CHROMIUM`, else `chromium` on PATH; None if neither."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    return shutil.which("chromium")


def browser_missing() -> str | None:
    """Why Playwright cannot drive Chromium here, or None if it can."""
    if chromium_path() is None:
        return NO_CHROMIUM
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return NO_PLAYWRIGHT
    return None
