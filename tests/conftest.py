"""Shared test setup: make `attnviz` and `reference` importable and keep TensorFlow quiet."""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before anything imports TensorFlow

ROOT = Path(__file__).parent.parent
for path in (ROOT, Path(__file__).parent):  # the repo (attnviz) and tests/ (reference.py)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
