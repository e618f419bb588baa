"""One seeding scheme: every seeded draw in attnviz (token embeddings, projections, score weights)
comes from `seeded_rng(seed, label)`, one random stream per (seed, label), the same in every
process (the label is hashed with BLAKE2b, never with Python's salted `hash()`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from attnviz.core.checks import check_int
from attnviz.core.limits import MAX_SEED


def check_seed(seed: Any, name: str = "seed") -> int:
    """`seed` as an int in [0, MAX_SEED], or a ValueError that says so."""
    return check_int(seed, name, low=0, high=MAX_SEED)


def seeded_rng(seed: int, label: str) -> np.random.Generator:
    """A random generator that depends only on `seed` and `label`, in every process."""
    data = label.encode("utf-8", errors="surrogatepass")
    digest = hashlib.blake2b(data, digest_size=16).digest()
    return np.random.default_rng([seed, int.from_bytes(digest, "little")])
