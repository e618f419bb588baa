"""The self-check every inspected model in the suite must pass (a test support module: tests/ is
on pytest's pythonpath).

`attnviz.inspect` recomputes each call's output from what it recorded (the weights times the
values, through the layer's output projection) and compares it with what the layer returned in
the same run (`AttentionCall.verified`). `assert_verified` holds every call of a result to it:
checked and within `TOLERANCE` of the layer's own output (relative to its largest value, at
least 1), or not checked for one of the reasons the caller expects. `inspected` is `inspect`
followed by that assertion: the tests use it wherever they inspect a model.
"""

from __future__ import annotations

from typing import Any

from attnviz.heads import inspect

TOLERANCE = 1e-5  # float32 sums of products, recomputed in numpy: a few ulps of the output


def assert_verified(result: Any, unchecked: dict[str, str] | None = None) -> None:
    """Every call of `result` agrees with its layer's own output to `TOLERANCE`, except the
    calls named in `unchecked` (key -> a part of the reason they must state for not being
    checked)."""
    unchecked = unchecked or {}
    for call in result.calls:
        verified = call.verified
        if call.key in unchecked:
            assert not verified.checked, (call.key, verified)
            assert unchecked[call.key] in verified.reason, (call.key, verified.reason)
            continue
        assert verified.checked, f"{call.key}: {verified.describe()}"
        assert verified.agrees(TOLERANCE), f"{call.key}: {verified.describe()} ({verified})"
        assert verified.describe().startswith("checked against the layer's"), verified


def inspected(model: Any, inputs: Any, **call_kwargs: Any) -> Any:
    """`attnviz.inspect(model, inputs, **call_kwargs)`, every call held to `assert_verified`."""
    result = inspect(model, inputs, **call_kwargs)
    assert_verified(result)
    return result
