"""Tests for core/seeding.py: one random stream per (seed, label), the same in every process."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.core.limits import MAX_SEED
from attnviz.core.seeding import check_seed, seeded_rng

ROOT = Path(__file__).parents[2]


def test_same_seed_and_label_same_stream_else_different():
    first = seeded_rng(3, "weights\0W_Q").standard_normal(5)
    np.testing.assert_array_equal(first, seeded_rng(3, "weights\0W_Q").standard_normal(5))
    assert not np.array_equal(first, seeded_rng(4, "weights\0W_Q").standard_normal(5))
    assert not np.array_equal(first, seeded_rng(3, "weights\0W_K").standard_normal(5))


def test_the_stream_does_not_depend_on_python_hash_salt():
    code = "from attnviz.core.seeding import seeded_rng; print(seeded_rng(7, 'ü').integers(1e9))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={"PYTHONHASHSEED": salt, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
        ).stdout
        for salt in ("1", "2")
    }
    assert outs == {f"{seeded_rng(7, 'ü').integers(1e9)}\n"}


def test_check_seed_bounds():
    assert check_seed(0) == 0 and check_seed(MAX_SEED) == MAX_SEED
    with pytest.raises(ValueError, match=r"`seed` must be from 0 to 4294967295\. Received: -1"):
        check_seed(-1)
