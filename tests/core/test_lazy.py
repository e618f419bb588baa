"""Tests for core/lazy.py: names imported from their home module on first use."""

import sys
import types

import pytest

from attnviz.core.lazy import lazy_names


def test_a_name_is_imported_once_then_kept_and_listed():
    module = types.ModuleType("lazy_probe")
    sys.modules["lazy_probe"] = module
    try:
        get, names = lazy_names("lazy_probe", {"sqrt": "math"})
        assert get("sqrt")(9.0) == 3.0
        assert "sqrt" in vars(module)  # later look-ups skip the function
        assert "sqrt" in names()
        with pytest.raises(AttributeError, match="module 'lazy_probe' has no attribute 'nope'"):
            get("nope")
    finally:
        del sys.modules["lazy_probe"]
