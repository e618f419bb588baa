"""Train a new model on a kept twin of its architecture, so that a process traces each
architecture's train step once, not once per run.

TensorFlow traces a Keras model's train step the first time `fit` runs it, and the traced step
belongs to that model's variables: a new model (another seed, another Train press) traces it
again. For the Learn page's translator that is ~6.5 s of a one-epoch run whose training itself
takes ~0.5 s (measured 2026-11-28 on 2 cores); its translation function's trace adds ~0.9 s.

Here a run still builds its own model, so its seed draws its initial weights exactly as before,
then trains a twin: a model of the same class, task, sizes and step size, compiled and traced by
an earlier run in this process. The twin is given every variable of the new model (its weights
and its random generators' states) and its optimizer's first state (no steps, Adam's slots at
0), so it trains as the new model would, on the same traced functions, bit for bit
(tests/learn/test_twins.py); the caller copies the weights it keeps back into the new model.

A twin in use is taken out of the kept ones: two runs of one architecture at once (two threads)
each have their own, and the process keeps at most `TWINS`, the least recently used dropped.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import keras
import numpy as np

TWINS = 8  # twins kept per process: a few architectures' (a translator is ~1 MB of weights)


@dataclass(frozen=True)
class _Twin:
    model: Any  # the twin: a translator or a language model (`.trainer` is its Keras model)
    first_state: tuple[np.ndarray, ...]  # its optimizer's variables right after compiling


_KEPT: OrderedDict[Hashable, _Twin] = OrderedDict()  # key -> twin not in use, oldest use first
_RUNNING: OrderedDict[Hashable, Any] = OrderedDict()  # key -> the twin to run models on
_RUNNING_LOCKS: dict[Hashable, threading.Lock] = {}  # key -> held while its twin runs
_LOCK = threading.Lock()


@contextmanager
def twin_of(
    model: Any, key: Hashable, make: Callable[[], Any], compile_: Callable[[Any], keras.Model]
) -> Iterator[Any]:
    """A twin of `model` to train in its place, holding `model`'s variables.

    Args:
        model: the new, built model (`.trainer`: its Keras model, not yet compiled).
        key: everything that makes two models twins: their class, task, sizes and step size.
        make: builds a new model of that architecture (a twin, when none is kept).
        compile_: compiles a model's trainer for training (its optimizer's variables made);
            returns the trainer.

    Yields:
        The twin, its trainer compiled and holding `model`'s variables, its optimizer in its
        first state. Its weights afterwards are not copied back: take what to keep from it.
    """
    try:
        hash(key)
    except TypeError:  # a key that cannot be kept: a twin for this run only
        key = None
    with _LOCK:
        twin = None if key is None else _KEPT.pop(key, None)
    if twin is None:
        made = make()
        trainer = compile_(made)
        first = tuple(keras.ops.convert_to_numpy(v) for v in trainer.optimizer.variables)
        twin = _Twin(made, first)
    _given(twin, model)
    try:
        yield twin.model
    finally:
        if key is not None:
            _keep(key, twin)


def _keep(key: Hashable, twin: _Twin) -> None:
    """Keep `twin` for the next run of `key`, the least recently used beyond `TWINS` dropped."""
    with _LOCK:
        _KEPT[key] = twin
        _KEPT.move_to_end(key)
        while len(_KEPT) > TWINS:
            _KEPT.popitem(last=False)


def _given(twin: _Twin, model: Any) -> None:
    """Give `twin` every variable of `model` and its optimizer's first state."""
    trainer = twin.model.trainer
    _copy_variables(twin.model, model)
    for variable, value in zip(trainer.optimizer.variables, twin.first_state, strict=True):
        variable.assign(value)
    trainer.stop_training = False


def _copy_variables(twin: Any, model: Any) -> None:
    """Give `twin`'s trainer every variable of `model`'s (weights, random generators' states)."""
    trainer, source = twin.trainer, model.trainer.variables
    if len(trainer.variables) != len(source):
        raise ValueError(
            f"The twin of {type(model).__name__} has {len(trainer.variables)} variables and the "
            f"model {len(source)}: they are not of one architecture (check the twin's key)."
        )
    for target, value in zip(trainer.variables, source, strict=True):
        if tuple(target.shape) != tuple(value.shape):
            raise ValueError(
                f"The twin's variable {target.path} is {tuple(target.shape)}, the model's "
                f"{value.path} {tuple(value.shape)}: not one architecture (check the twin's key)."
            )
        target.assign(value)


@contextmanager
def running_twin(model: Any, key: Hashable, make: Callable[[], Any]) -> Iterator[Any]:
    """A model of `model`'s architecture holding `model`'s variables, to run (translate) in its
    place: its inference functions were traced by an earlier use in this process, where a new
    model (each finished run's) would trace its own on its first use (about 1 s of a freshly
    trained translator's first translation, for each new model, on every server).

    Args:
        model: the model to run (`.trainer`: its Keras model).
        key: everything that makes two models twins: their class, task and sizes.
        make: builds a new model of that architecture (the twin, the first time).

    Yields:
        The twin of `key`, holding `model`'s variables; it runs as `model` would, bit for bit.
        One twin per key, used by one thread at a time (the others wait: a run is short, and
        a second twin would trace again); at most `TWINS` kept, the least recently used dropped.
    """
    with _LOCK:
        lock = _RUNNING_LOCKS.setdefault(key, threading.Lock())
    with lock:
        twin = _RUNNING.get(key)  # only the holder of this key's lock changes its entry
        if twin is None:
            twin = make()
        with _LOCK:
            _RUNNING[key] = twin
            _RUNNING.move_to_end(key)
            while len(_RUNNING) > TWINS:
                dropped, _ = _RUNNING.popitem(last=False)
                _RUNNING_LOCKS.pop(dropped, None)
        _copy_variables(twin, model)
        yield twin


@contextmanager
def runner(model: Any, function: str, key: Hashable, make: Callable[[], Any]) -> Iterator[Any]:
    """What runs `model`'s `tf.function` named `function`: `model` itself when it is `shared`
    (a shipped model, kept by the server and used by every session: it traces its own
    functions once) or that function is traced already, else its twin (`running_twin`, the
    same `key` and `make`), so that a new model (each finished run's) traces nothing."""
    if model.shared or getattr(model, function).experimental_get_tracing_count():
        yield model
        return
    with running_twin(model, key, make) as twin:
        yield twin


def forget_twins() -> None:
    """Drop every kept twin (the next run of each architecture traces again)."""
    with _LOCK:
        _KEPT.clear()
        _RUNNING.clear()
        _RUNNING_LOCKS.clear()
