"""Tests for learn/runs/codec.py: reports, weights and jobs to bytes and back, without pickles;
only the known dataclasses are rebuilt."""

from __future__ import annotations

import io
import json
import math
import pickle
import zipfile
from dataclasses import fields

import numpy as np
import pytest

from attnviz.learn.configs import LM_TRAINING, LMConfig, NetworkConfig, TrainConfig
from attnviz.learn.language.metrics import LMEvaluation
from attnviz.learn.language.model import Ablation, LMForward
from attnviz.learn.language.tasks import get_lm_task
from attnviz.learn.language.training import LMEpochReport, LMStats
from attnviz.learn.runs.codec import KNOWN, TREE, Job, dumps, loads


def assert_same(got, expected) -> None:
    """Equal, field by field and array by array (dtype and shape too), NaN equal to NaN."""
    assert type(got) is type(expected)
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    elif hasattr(expected, "__dataclass_fields__"):
        for f in fields(expected):
            assert_same(getattr(got, f.name), getattr(expected, f.name))
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e)
    elif isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for k in expected:
            assert_same(got[k], expected[k])
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected


def _lm_report(epoch: int = 3) -> LMEpochReport:
    """A language model's report as `train_lm` makes one: (L, H) = (1, 2), T = 4, V = 27."""
    rng = np.random.default_rng(0)
    evaluation = LMEvaluation(2.5, 0.25, math.nan, math.nan, rng.random((1, 2)),
                              np.array([[0.1, math.nan]]), 8, 0)  # fmt: skip
    forward = LMForward("abc", ("<s>", "a", "b", "c"), rng.random((1, 2, 4, 4)).astype(np.float32),
                        rng.random((4, 27)).astype(np.float32), ("a", "b", "c", "d"),
                        Ablation(((0, 1),), "mean"))  # fmt: skip
    return LMEpochReport(epoch, 2.75, 0.5, evaluation, 12.5, forward, True)


def test_a_language_model_report_round_trips():
    report = _lm_report()
    assert_same(loads(dumps(report)), report)
    assert_same(loads(dumps([report, None])), [report, None])


def test_jobs_round_trip_with_their_configs():
    for job in (
        Job("dates", NetworkConfig(score="concat", scale=True), TrainConfig(3, seed=5)),
        Job(get_lm_task("induction"), LMConfig(kv_heads=2), LM_TRAINING, "fit:x"),
        Job("text", LMConfig(position="alibi"), LM_TRAINING),
    ):
        assert loads(dumps(job)) == job


def test_records_and_plain_values_round_trip():
    stats = LMStats("induction", 0, 2, 1, 3.5, 64, 2.0, 0.5, math.nan, 1000,
                    ((0, math.nan, 1.0), (1, 2.0, math.inf)), ((0.5, 0.25),))  # fmt: skip
    assert_same(loads(dumps(stats)), stats)
    value = {"weights": [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((0,), np.int64)],
             "t": (1, "a", (True, None)), "d": {"$array": 1}}  # fmt: skip
    assert_same(loads(dumps(value)), value)  # a dict that looks like a tag stays a dict


@pytest.mark.parametrize(
    "value",
    [object(), {1: "a"}, np.array([object()]), b"bytes", {1, 2}, lambda: None],
    ids=["object", "int-keys", "object-array", "bytes", "set", "function"],
)
def test_values_it_cannot_store_are_refused(value):
    with pytest.raises(ValueError, match="cannot be stored"):
        dumps(value)


def _archive(tree: object, **arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    text = np.frombuffer(json.dumps(tree).encode(), np.uint8)
    np.savez(buffer, **{TREE: text}, **arrays)
    return buffer.getvalue()


def test_types_not_on_the_list_are_refused():
    assert "EpochReport" in KNOWN and "Job" in KNOWN
    for name in ("Popen", "TrainingRun", "os.system", 3):
        with pytest.raises(ValueError, match="not one a run stores"):
            loads(_archive({"$type": name, "fields": {}}))
    with pytest.raises(ValueError, match="must have the fields"):  # extra or missing fields
        loads(_archive({"$type": "TrainConfig", "fields": {"epochs": 3, "cmd": "rm"}}))
    config = dict(epochs=0, n_pairs=1, val_pairs=1, batch_size=1, learning_rate=0.1,
                  time_limit=1.0, seed=0)  # fmt: skip
    with pytest.raises(ValueError, match="epochs"):  # the type's own checks run
        loads(_archive({"$type": "TrainConfig", "fields": config}))


def test_pickles_and_other_bytes_are_refused():
    job = Job("dates", NetworkConfig(), TrainConfig())
    with pytest.raises(ValueError, match="pickled"):
        loads(pickle.dumps(job))
    object_array = io.BytesIO()
    np.save(object_array, np.array([job], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="not a training run's data"):
        loads(object_array.getvalue())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a0.npy", pickle.dumps(job))
    for data in (buffer.getvalue(), b"", b"PK\x03\x04junk", _archive({"$array": 9})):
        with pytest.raises(ValueError):
            loads(data)
    with pytest.raises(ValueError, match="must be bytes"):
        loads("text")


@pytest.mark.slow  # reads the shared tiny training
def test_real_reports_and_weights_round_trip(shared_tiny_run):
    originals = shared_tiny_run.originals  # as `train` made them: Translation probes
    assert [r.epoch for r in originals] == [0, 1, 2] and originals[0].probe.weights.size
    for report in originals:
        assert_same(loads(dumps(report)), report)
    model = shared_tiny_run.snapshots[0].model
    record = {"weights": model.get_weights(), "stats": model.stats}
    assert_same(loads(dumps(record)), record)
