"""Training runs shared by everyone who asks for the same one: what the app's Train button starts.

- `training_run`: `TrainingRun`, the run as a session sees it (start, snapshot, stop);
- `key`: the key of a run, from everything that determines its result;
- `codec`: reports, weights and jobs as bytes and back (no pickles);
- `store`: the `RunStore` interface and this process's `MemoryRunStore`; `redis_store`: the
  same in Redis, one queue for every replica; `from_env`: which one this server uses;
- `worker`: the thread of a process that trains the queue's runs one at a time;
- `models`: a finished run's model, rebuilt once per process.

Its names are imported on first use (`core.lazy`): `attnviz.learn.runs.store` and the others
stay free of TensorFlow, which `training_run` imports.
"""

from attnviz.core.lazy import lazy_names

_STORE, _RUN = "attnviz.learn.runs.store", "attnviz.learn.runs.training_run"
_HOMES = {
    "Progress": _STORE,
    "starts_in": _STORE,
    "QUEUE": _RUN,
    "RunSnapshot": _RUN,
    "TrainingQueue": _RUN,
    "TrainingRun": _RUN,
    "model_from": _RUN,
    "training_active": _RUN,
}
__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
