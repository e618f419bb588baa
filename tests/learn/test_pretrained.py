"""Tests for learn/pretrained.py: the shipped checkpoints (nine seq2seq models, two
Transformers), their records, bad files."""

import json
from pathlib import Path

import numpy as np
import pytest

from attnviz.learn import (
    MissingCheckpointError,
    alignment_score,
    load_pretrained,
    make_pairs,
    pretrained,
    shipped_summaries,
)
from attnviz.learn.pretrained import load_lm, load_transformer
from attnviz.learn.translation.metrics import evaluate, head_alignment_scores

pytestmark = pytest.mark.slow  # loads and runs every shipped model

FRESH_SEED = 4242  # neither the training (0) nor the validation stream
COMBOS = [
    (t, s) for t in ("dates", "reverse", "german_numbers") for s in ("dot", "general", "concat")
]


@pytest.mark.parametrize(("task", "score"), COMBOS, ids=[f"{t}-{s}" for t, s in COMBOS])
def test_shipped_checkpoints_translate_and_align_fresh_pairs(task, score):
    weights = pretrained.checkpoint_path(task, score)
    assert len(weights.read_bytes()) < 1_000_000
    model = load_pretrained(task, score)
    pairs = make_pairs(task, 300, FRESH_SEED)
    result = evaluate(model, pairs)
    assert result.exact_match >= 0.99, result
    assert result.alignment >= 0.9, result
    assert model.stats.task == task and model.stats.score == score
    assert model.stats.val_char_accuracy >= 0.99


def test_records_are_plain_json_with_fresh_pair_numbers():
    summaries = [s for s in shipped_summaries() if s.score != "transformer"]
    assert {(s.task, s.score) for s in summaries} == set(COMBOS)
    for s in summaries:
        assert s.exact_match >= 0.99 and s.alignment >= 0.9 and 30_000 < s.parameters < 60_000
    record = json.loads(pretrained.checkpoint_path("dates", "dot", ".json").read_text())
    assert record["network"]["score"] == "dot" and record["fresh"]["pairs"] == 1000


def test_a_missing_checkpoint_says_how_to_regenerate(monkeypatch, tmp_path):
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path)
    with pytest.raises(MissingCheckpointError, match="python -m attnviz.learn.train_all") as err:
        load_pretrained("dates", "dot")
    assert isinstance(err.value, ValueError) and isinstance(err.value, FileNotFoundError)
    assert "dates_dot.npz is missing" in str(err.value)


def test_a_checkpoint_of_another_shape_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path)
    np.savez(tmp_path / "reverse_dot.npz", w000=np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="does not fit the architecture.*train_all"):
        load_pretrained("reverse", "dot")


def test_pickles_are_never_loaded(monkeypatch, tmp_path):
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path)
    np.savez(tmp_path / "reverse_dot.npz", w000=np.array([{"code": 1}], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle=False"):
        load_pretrained("reverse", "dot")


@pytest.mark.parametrize(
    ("task", "score", "match"),
    [("dates", "bilinear", "`score` must be one of"), ("french", "dot", "`task` must be one of")],
    ids=["score", "task"],
)
def test_unknown_names_raise(task, score, match):
    with pytest.raises(ValueError, match=match):
        load_pretrained(task, score)


def test_alignment_score_is_in_range_for_a_shipped_model():
    model = load_pretrained("reverse", "general")
    score = alignment_score(model, make_pairs("reverse", 50, FRESH_SEED))
    assert 0.9 <= score <= 1.0


@pytest.mark.parametrize("task", ["dates", "reverse"])
def test_shipped_transformers_translate_fresh_pairs_and_a_cross_head_aligns(task):
    weights = pretrained.checkpoint_path(task, "transformer")
    assert len(weights.read_bytes()) < 2_000_000
    model = load_transformer(task)
    pairs = make_pairs(task, 300, FRESH_SEED)  # as the GRU checkpoints' test (train_all: 1000)
    result = evaluate(model, pairs)
    assert result.exact_match >= 0.99, result
    heads = head_alignment_scores(model, pairs[:300])  # (L, H)
    assert heads.shape == (2, 4) and heads.max() >= 0.9, heads
    assert result.alignment == pytest.approx(heads.max(), abs=0.03)  # the best head's
    assert model.stats.task == task and model.stats.score == "dot" and model.stats.scale


def test_transformer_records_and_summaries():
    rows = {s.task: s for s in shipped_summaries() if s.score == "transformer"}
    assert sorted(rows) == ["dates", "reverse"]
    for row in rows.values():
        assert row.exact_match >= 0.99 and row.alignment >= 0.9
        assert 100_000 < row.parameters < 300_000
    record = json.loads(pretrained.checkpoint_path("dates", "transformer", ".json").read_text())
    assert record["network"] == {"layers": 2, "heads": 4, "d_model": 64, "d_ff": 128, "rate": 0.0}


def test_only_tasks_with_a_recipe_have_a_shipped_transformer(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="`task` must be one of"):
        load_transformer("german_numbers")
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path)
    with pytest.raises(MissingCheckpointError, match="dates_transformer.npz is missing"):
        load_transformer("dates")
    np.savez(tmp_path / "dates_transformer.npz", w000=np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="does not fit the architecture"):
        load_transformer("dates")


def test_checkpoints_are_package_data_of_attnviz_learn():
    import attnviz.learn

    assert Path(attnviz.learn.__file__).parent / "checkpoints" == pretrained.CHECKPOINTS
    names = {p.name for p in pretrained.CHECKPOINTS.iterdir()}
    assert {f"{t}_{s}.{x}" for t, s in COMBOS for x in ("npz", "json")} <= names


def test_a_saved_checkpoint_loads_back_with_the_same_weights(monkeypatch, tmp_path):
    model = load_pretrained("dates", "dot")
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path / "checkpoints")
    path = pretrained.save_checkpoint(model, {"fresh": {"exact_match": 1.0}})
    assert path == tmp_path / "checkpoints" / "dates_dot.npz"
    assert sorted(p.name for p in path.parent.iterdir()) == ["dates_dot.json", "dates_dot.npz"]
    again = load_pretrained("dates", "dot")
    for saved, loaded in zip(model.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(saved, loaded)
    assert pretrained.read_record("dates", "dot")["fresh"] == {"exact_match": 1.0}
    assert again.stats == model.stats


def test_the_shipped_induction_model_and_its_record():
    model = load_lm("induction")
    assert len(pretrained.checkpoint_path("induction", "lm").read_bytes()) < 200_000
    assert model.stats.task == "induction" and model.stats.best_epoch > 0
    assert model.stats.parameters == model.parameter_count == 26_971
    record = pretrained.read_record("induction", "lm")
    assert record["network"] == {
        "layers": 2, "heads": 4, "d_model": 32, "d_ff": 128, "kv_heads": None,
        "position": "rope", "rope_theta": 10_000.0, "norm": "pre",
    }  # fmt: skip
    fresh = record["fresh"]
    assert fresh["sequences"] == 1000 and fresh["in_context_accuracy"] >= 0.95
    assert fresh["previous_token_head"] == [0, 2] and fresh["induction_head"] == [1, 0]
    heads = record["ablation"]["heads"]  # every head switched off alone, for the page
    assert (
        len(heads) == 8 and heads[4]["in_context_accuracy"] == fresh["ablated_in_context_accuracy"]
    )


def test_the_shipped_induction_record_shows_the_phase_change_head_by_head():
    from attnviz.learn.language.training import LMCurves

    model = load_lm("induction")
    curves = LMCurves.of_stats(model.stats, layers=2, heads=4)
    e = model.stats.epochs_run + 1  # epoch 0, untrained, first
    assert curves.previous_token.shape == curves.induction.shape == (e, 2, 4)
    assert np.isnan(curves.loss[0]) and not np.isnan(curves.loss[1:]).any()
    # the record's best-head columns are the maxima of its every-head scores
    rows = np.array(model.stats.history, dtype=float)
    np.testing.assert_allclose(curves.previous_token.max(axis=(1, 2)), rows[:, 6])
    np.testing.assert_allclose(np.nanmax(curves.induction, axis=(1, 2)), rows[:, 7])
    assert curves.induction[0, 1].max() < 0.3 < 0.8 < curves.induction[-1, 1, 0]  # it formed
    assert curves.previous_token[-1, 0, 2] >= 0.8
    with pytest.raises(ValueError, match="2 layers × 3 heads"):
        LMCurves.of_stats(model.stats, layers=2, heads=3)


def test_the_shipped_stories_model_beats_the_unigram_floor():
    model = load_lm("text")
    fresh = pretrained.read_record("text", "lm")["fresh"]
    assert fresh["loss"] < fresh["unigram_loss"] - 0.5  # 2.00 vs 3.04 nats a character
    v = 1 + 26 + 26 + 10 + len("\n !\"'(),-.:;?")  # <s>, letters, digits, space and marks
    assert model.stats.sequences == 512 and model.forward("The fox").probabilities.shape[1] == v


def test_language_model_checkpoints_are_checked_like_the_others(monkeypatch, tmp_path):
    assert pretrained.checkpoint_path("text", "lm").name == "text_lm.npz"
    with pytest.raises(ValueError, match='`task` must be one of "induction", "text"'):
        pretrained.checkpoint_path("dates", "lm")
    with pytest.raises(ValueError, match='`task` must be one of "induction", "text"'):
        load_lm("dates")
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path)
    with pytest.raises(MissingCheckpointError, match="induction_lm.npz is missing"):
        load_lm("induction")
    np.savez(tmp_path / "induction_lm.npz", w000=np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="does not fit the architecture"):
        load_lm("induction")


def test_a_saved_language_model_loads_back_with_the_same_weights(monkeypatch, tmp_path):
    model = load_lm("induction")
    monkeypatch.setattr(pretrained, "CHECKPOINTS", tmp_path)
    pretrained.save_checkpoint(model, {"fresh": {"in_context_accuracy": 1.0}})
    again = load_lm("induction")
    for saved, loaded in zip(model.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(saved, loaded)
    assert again.stats == model.stats
