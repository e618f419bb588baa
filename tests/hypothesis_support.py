"""How many examples a property test draws: all of them in the full run, a fifth (at least 10) in
the quick run (`-m "not slow"`, which `conftest.pytest_configure` marks by setting `QUICK_RUN_VAR`
before any test module is imported). The quick run is the edit-and-check loop; the full run, in
CI, draws every example. Tests whose `@settings` name no count get the quick profile's."""

import os

from hypothesis import settings

QUICK_RUN_VAR = "ATTNVIZ_QUICK_RUN"  # "1" in the quick run
QUICK_SHARE = 5  # the quick run draws 1/QUICK_SHARE of each test's examples
QUICK_LEAST = 10  # and never fewer than this


def quick_run() -> bool:
    """True in the quick run."""
    return os.environ.get(QUICK_RUN_VAR) == "1"


def examples(n: int) -> int:
    """`n` in the full run; n / `QUICK_SHARE` (at least `QUICK_LEAST`) in the quick run."""
    return max(QUICK_LEAST, n // QUICK_SHARE) if quick_run() else n


settings.register_profile(
    "quick", max_examples=max(QUICK_LEAST, settings.default.max_examples // QUICK_SHARE)
)
