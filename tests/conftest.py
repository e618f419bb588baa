"""Shared test setup: keep TensorFlow quiet and make `reference.py` importable."""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before anything imports TensorFlow

TESTS = str(Path(__file__).parent)
if TESTS not in sys.path:  # pytest's default import mode does this too; importlib mode does not
    sys.path.insert(0, TESTS)
